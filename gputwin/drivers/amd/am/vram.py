"""The driver's reach into VRAM: through BAR0 where the (possibly resized) aperture covers the range, else
dword by dword through the MM_INDEX/MM_DATA window (slow, but it reaches all of VRAM with a 256 MiB BAR)."""
from __future__ import annotations

from gputwin.drivers.amd.am.mmio import Mmio
from gputwin.drivers.pci import BarIO


class Vram:
    def __init__(self, bar: BarIO, mmio: Mmio):
        self.bar, self.mmio = bar, mmio

    def read(self, offset: int, size: int) -> bytes:
        if offset + size <= self.bar.size:
            return self.bar.read(offset, size)
        return self.mmio.vram_read(offset, size)

    def write(self, offset: int, data: bytes) -> None:
        if offset + len(data) <= self.bar.size:
            self.bar.write(offset, data)
        else:
            self.mmio.vram_write(offset, data)
