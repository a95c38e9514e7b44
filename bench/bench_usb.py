"""Copy-in and copy-out rates through the emulated ASM2464 (mock pyusb backend -> custom-firmware model
-> PCIe topology -> emulated AMD GPU), and the cost of one register access, the AM driver's hot path.

Prints one figure per line:
  usb sram_copyin_MBps=..     host -> bridge SRAM (0xF2 + bulk OUT, 256 KiB transfers)
  usb sram_copyout_MBps=..    bridge SRAM -> host (0xF2 + bulk IN)
  usb bar_copyin_MBps=..      host -> VRAM through BAR0 (0xF0 stream + bulk OUT, 4 MiB transfers)
  usb bar_copyout_MBps=..     VRAM -> host through BAR0 (0xF0 stream + bulk IN)
  usb reg_read_us=..          one 32-bit MMIO read through BAR5 (0xF0 OUT + 0xF0 IN)
  usb reg_write_us=..         one 32-bit MMIO write (0xF0 OUT, posted)
These are emulation rates (Python on this host), not USB rates: a real enclosure is bounded by the
USB link (about 1 GB/s at 10 Gb/s) and by the bridge's 8051 for streamed BAR access."""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402


def rate(fn, nbytes: int, repeat: int) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(repeat):
        fn()
    return nbytes * repeat / (time.perf_counter() - t) / 1e6


def per_call_us(fn, repeat: int) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - t) / repeat * 1e6


def main() -> None:
    from gputwin.drivers.pci import read32, write32
    from gputwin.drivers.usb import open_usb_pci
    from gputwin.emu.amd.soc.function import AmdGpuFunction
    from gputwin.mock.usb import usb_gpu

    function = AmdGpuFunction("gfx1100")
    backend, _ = usb_gpu(function)
    dev = open_usb_pci(backend)
    sram, bar0, bar5 = dev.dma_windows()[0], dev.bar(0), dev.bar(5)
    chunk = np.random.default_rng(0).integers(0, 256, 256 << 10, np.uint8).tobytes()
    big = chunk * 16
    print(f"usb sram_copyin_MBps={rate(lambda: sram.write(0, chunk), len(chunk), 200):.0f}")
    print(f"usb sram_copyout_MBps={rate(lambda: sram.read(0, len(chunk)), len(chunk), 200):.0f}")
    print(f"usb bar_copyin_MBps={rate(lambda: bar0.write(0, big), len(big), 20):.0f}")
    print(f"usb bar_copyout_MBps={rate(lambda: bar0.read(0, len(big)), len(big), 20):.0f}")
    function.regs.add(0x100, "BENCH_SCRATCH")
    print(f"usb reg_read_us={per_call_us(lambda: read32(bar5, 0x400), 5000):.1f}")
    print(f"usb reg_write_us={per_call_us(lambda: write32(bar5, 0x400, 1), 5000):.1f}")


if __name__ == "__main__":
    main()
