"""The emulated AMD GPU's PCIe function: config space with the real vendor/device ids of the emulated
chip, and the BARs a driver maps (amdgpu_device.c / the PCI ids of Navi 31 and Navi 48):
  BAR0  VRAM aperture, 64-bit prefetchable, resizable (starts at 256 MiB like most boards' firmware)
  BAR2  doorbells, 64-bit prefetchable, 2 MiB
  BAR5  MMIO registers, 32-bit, 1 MiB
VRAM is one lazily backed host mapping of the full VRAM size (pages cost memory only when touched). The
IP blocks in this package register their MMIO registers on `regs` and their doorbells on `doorbells`."""
from __future__ import annotations

import mmap
import struct

import numpy as np

from gputwin import sanitizer_config
from gputwin.emu.amd.gpu import GPU, PROFILES
from gputwin.emu.amd.soc.regfile import RegisterError, RegisterFile
from gputwin.emu.pcie import MIB, BarSpec, PcieFunction

AMD_VENDOR_ID = 0x1002
DISPLAY_VGA = 0x030000
BAR_VRAM, BAR_DOORBELL, BAR_MMIO = 0, 2, 5
DOORBELL_BAR_SIZE = 2 * MIB
MMIO_BAR_SIZE = 1 * MIB
_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)   # Linux value; Python 3.11 lacks the constant


def lazy_zeroed(size: int) -> np.ndarray:
    """size zero bytes whose pages are only backed when written (VRAM of many GiB on a small host)."""
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE)
    return np.frombuffer(m, np.uint8)


class Doorbells:
    """The doorbell BAR: 32- or 64-bit writes at byte offsets a block claimed (a queue's doorbell)."""

    def __init__(self, name: str):
        self.name = name
        self.enabled = True   # NBIO's RCC_DOORBELL_APER_EN gates decoding where the board models it
        self._handlers: dict[int, callable] = {}

    def claim(self, offset: int, handler) -> None:
        self._handlers[offset] = handler

    def release(self, offset: int) -> None:
        self._handlers.pop(offset, None)

    def write(self, offset: int, data: bytes) -> None:
        if not self.enabled:
            raise RegisterError(f"{self.name}: doorbell write at offset {offset:#x} while the doorbell aperture is "
                                f"disabled (RCC_DOORBELL_APER_EN)")
        handler = self._handlers.get(offset)
        if handler is None or len(data) not in (4, 8):
            raise RegisterError(f"{self.name}: doorbell write of {len(data)} bytes at offset {offset:#x} "
                                f"reaches no queue")
        handler(int.from_bytes(data, "little"))


class AmdGpuFunction(PcieFunction):
    def __init__(self, arch: str = "gfx1100", *, vram_size: int | None = None, name: str | None = None):
        self.profile = PROFILES[arch]
        self.arch = arch
        name = name or self.profile.marketing_name
        self.vram_size = vram_size or self.profile.local_mem_size
        sizes = tuple(MIB << n for n in range(8, 16) if MIB << n <= 1 << (self.vram_size - 1).bit_length())
        super().__init__(name, AMD_VENDOR_ID, self.profile.device_id, DISPLAY_VGA, [
            BarSpec(BAR_VRAM, 256 * MIB, name="VRAM", resizable=sizes),
            BarSpec(BAR_DOORBELL, DOORBELL_BAR_SIZE, name="doorbells"),
            BarSpec(BAR_MMIO, MMIO_BAR_SIZE, is64=False, prefetchable=False, name="MMIO")])
        self.vram = lazy_zeroed(self.vram_size)
        # initcheck's record of which VRAM bytes were written, kept with VRAM (the GMC's regions view it)
        self.vram_written = lazy_zeroed(self.vram_size).view(bool) if "initcheck" in sanitizer_config.checkers() \
            else None
        self.regs = RegisterFile(name)
        self.doorbells = Doorbells(name)
        self.gpu = GPU(arch, name=name)   # the engines: command processor, SDMA, shader cores

    def bar_read(self, bar: int, offset: int, size: int) -> bytes:
        if bar == BAR_VRAM:
            return self.vram[offset:offset + size].tobytes()
        if bar == BAR_MMIO:
            return b"".join(struct.pack("<I", self.regs.read(d)) for d in self._dwords(offset, size))
        raise RegisterError(f"{self.name}: read of {size} bytes from BAR{bar} (doorbells are write-only)")

    def bar_write(self, bar: int, offset: int, data: bytes) -> None:
        if bar == BAR_VRAM:
            self.vram[offset:offset + len(data)] = np.frombuffer(data, np.uint8)
            self.host_wrote(offset, len(data))
        elif bar == BAR_MMIO:
            for i, d in enumerate(self._dwords(offset, len(data))):
                self.regs.write(d, struct.unpack_from("<I", data, 4 * i)[0])
        else:
            self.doorbells.write(offset, data)

    def host_wrote(self, offset: int, size: int) -> None:
        """The host wrote VRAM [offset, offset+size) (through BAR0 or the MM_DATA window): initcheck."""
        if self.vram_written is not None:
            self.vram_written[offset:offset + size] = True

    def _dwords(self, offset: int, size: int) -> range:
        if offset % 4 or size % 4:
            raise RegisterError(f"{self.name}: MMIO access of {size} bytes at {offset:#x} is not dword-aligned")
        return range(offset // 4, (offset + size) // 4)
