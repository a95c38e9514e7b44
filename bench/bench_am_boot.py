"""The AM boot on the emulated board, attached in-process: wall time of the whole boot per chip, and of the
discovery step alone through each way of reaching the top of VRAM (the MM_INDEX window with a 256 MiB BAR0,
and BAR0 resized to cover VRAM), with the number of MMIO accesses each takes.

Prints one line per figure: `am_boot <arch> ms=..`, `am_discovery <path> ms=.. mmio_accesses=..`."""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

GIB = 1 << 30
REPEATS = 5


class CountingBar:
    """A BAR wrapper that counts accesses (each is one TLP over USB)."""

    def __init__(self, bar):
        self.bar, self.name, self.size, self.accesses = bar, bar.name, bar.size, 0

    def read(self, offset, size):
        self.accesses += 1
        return self.bar.read(offset, size)

    def write(self, offset, data):
        self.accesses += 1
        self.bar.write(offset, data)


def board(arch, large_bar=False):
    from gputwin.emu.amd.soc.board import build
    from gputwin.mock.pci import DirectPciDevice
    f = build(arch, vram_size=GIB)
    if large_bar:
        f.config_write(0x108, ((GIB >> 20).bit_length() - 1) << 8)   # Resizable BAR control: BAR0 = 1 GiB
    return DirectPciDevice(f)


def main() -> None:
    from gputwin.drivers.amd.am.boot import boot
    from gputwin.drivers.amd.am.discovery import read_discovery
    from gputwin.drivers.amd.am.mmio import Mmio
    from gputwin.drivers.amd.am.vram import Vram
    for arch in ("gfx1100", "gfx1201"):
        best = min(_timed(lambda pci=board(arch): boot(pci)) for _ in range(REPEATS))   # a fresh cold board each
        print(f"am_boot {arch} ms={best * 1e3:.2f}")
    for path, large in (("mm_index", False), ("bar0", True)):
        pci = board("gfx1100", large)
        mmio_bar, vram_bar = CountingBar(pci.bar(5)), CountingBar(pci.bar(0))
        mmio = Mmio(mmio_bar)
        best = min(_timed(lambda: read_discovery(mmio, Vram(vram_bar, mmio))) for _ in range(REPEATS))
        print(f"am_discovery {path} ms={best * 1e3:.2f} mmio_accesses={(mmio_bar.accesses + vram_bar.accesses) // REPEATS}")


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
