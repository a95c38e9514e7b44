"""The ASM2464 USB-to-PCIe bridge, modelled (docs/usb.md): bridge.Asm2464Enclosure puts a PCIe function
behind the chip; its `firmware` is what a USB host talks to."""
from gputwin.emu.usb.bridge import Asm2464Enclosure

__all__ = ["Asm2464Enclosure"]
