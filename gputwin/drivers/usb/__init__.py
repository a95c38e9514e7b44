"""GPUs behind an ASM2464 USB-to-PCIe bridge running tinygrad's custom firmware, on pyusb (docs/usb.md):
transport.py (USB transfers), protocol.py (the firmware protocol), bringup.py (PCIe enumeration, BARs,
Resizable BAR), device.py (the result as a gputwin.drivers.pci.PciDevice)."""
from __future__ import annotations

from gputwin.drivers.usb.bringup import MEM_WINDOW, PREF_WINDOW, BringUp
from gputwin.drivers.usb.device import UsbPciDevice
from gputwin.drivers.usb.errors import BridgeNotFound, LinkDown, TlpError, UsbBridgeError, UsbTransferError
from gputwin.drivers.usb.protocol import Asm2464Protocol
from gputwin.drivers.usb.transport import CUSTOM_FIRMWARE_IDS, STOCK_FIRMWARE_IDS, UsbTransport, find_bridges

__all__ = ["open_usb_pci", "list_bridges", "UsbPciDevice", "BridgeNotFound", "LinkDown", "TlpError",
           "UsbBridgeError", "UsbTransferError"]


def list_bridges(backend=None) -> list[str]:
    """One line per ASM2464 pyusb can see (custom firmware first, then stock firmware it cannot drive)."""
    lines = [f"ASM2464 (custom firmware) USB {d.idVendor:04x}:{d.idProduct:04x} bus {d.bus} address {d.address}"
             for d in find_bridges(backend)]
    lines += [f"ASM2464 (stock firmware: flash the custom firmware to use it) USB {d.idVendor:04x}:{d.idProduct:04x} "
              f"bus {d.bus} address {d.address}" for d in find_bridges(backend, STOCK_FIRMWARE_IDS)]
    return lines


def open_usb_pci(backend=None, index: int = 0, *, mem_window=MEM_WINDOW, pref_window=PREF_WINDOW,
                 link_timeout_s: float = 2.0, **protocol_options) -> UsbPciDevice:
    """Open the `index`-th ASM2464 with the custom firmware, power the PCIe slot, bring up the hierarchy
    behind it and return the endpoint. backend=None uses libusb (a real enclosure); raises
    BridgeNotFound saying what was looked for when there is none."""
    bridges = find_bridges(backend)
    if index >= len(bridges):
        ids = ", ".join(f"{v:04x}:{p:04x}" for v, p in CUSTOM_FIRMWARE_IDS)
        raise BridgeNotFound(f"no ASM2464 bridge #{index} with the custom firmware (USB ids {ids}); "
                             f"{len(bridges)} found")
    transport = UsbTransport(bridges[index])
    try:
        proto = Asm2464Protocol(transport, **protocol_options)
        proto.power_on(link_timeout_s)
        hierarchy, bars = BringUp(proto, mem_window, pref_window).run()
    except BaseException:
        transport.close()          # release the interface: another attempt (or process) can claim it
        raise
    return UsbPciDevice(proto, hierarchy, bars)
