"""Register access of the AM driver over the MMIO BAR (BAR5).

Three paths, as the hardware provides them:
  direct     a register whose byte offset lies inside the BAR is a plain 32-bit BAR access;
  MM_INDEX   MM_INDEX / MM_INDEX_HI / MM_DATA (dwords 0, 6, 1 of every Navi's BAR): with bit 31 of MM_INDEX
             set the window reaches VRAM (the byte address is MM_INDEX[30:0] | MM_INDEX_HI << 31), which is
             how the driver reads VRAM before BAR0 is usable (the discovery table, top of VRAM);
  SMN        PCIE_INDEX2 / PCIE_INDEX2_HI / PCIE_DATA2 (NBIO dwords 0xE, 0x11, 0xF): the system management
             network, where registers beyond the BAR (and other dies' blocks) live.
Those index registers sit at fixed offsets (the NBIO's first segment starts at 0), so they work before the
discovery table is known; everything else is addressed by `Reg` through the discovered bases."""
from __future__ import annotations

import time

from gputwin.abi.amdgpu import Reg
from gputwin.abi.amdgpu.nbio import MM_DATA, MM_INDEX, MM_INDEX_HI, MM_INDEX_VRAM, PCIE_DATA2, PCIE_INDEX2, \
    PCIE_INDEX2_HI
from gputwin.drivers.pci import BarIO, read32, write32


class Mmio:
    def __init__(self, bar: BarIO, bases: dict[tuple[str, int], tuple[int, ...]] | None = None):
        self.bar = bar
        self.bases = bases or {}   # filled from the discovery table once it has been read

    def address(self, reg: Reg, inst: int = 0) -> int:
        return reg.address(self.bases, inst)

    def read(self, reg: Reg, inst: int = 0) -> int:
        return self.read_dword(self.address(reg, inst))

    def write(self, reg: Reg, value: int, inst: int = 0) -> None:
        self.write_dword(self.address(reg, inst), value)

    def read_dword(self, dword: int) -> int:
        """A register by dword address: direct when the BAR reaches it, else through the SMN window."""
        if 4 * dword + 4 <= self.bar.size:
            return read32(self.bar, 4 * dword)
        return self.smn_read(4 * dword)

    def write_dword(self, dword: int, value: int) -> None:
        if 4 * dword + 4 <= self.bar.size:
            write32(self.bar, 4 * dword, value)
        else:
            self.smn_write(4 * dword, value)

    # --- SMN (PCIE_INDEX2/DATA2): byte addresses on the system management network
    def smn_read(self, address: int) -> int:
        self._smn_select(address)
        return read32(self.bar, 4 * PCIE_DATA2)

    def smn_write(self, address: int, value: int) -> None:
        self._smn_select(address)
        write32(self.bar, 4 * PCIE_DATA2, value)

    def _smn_select(self, address: int) -> None:
        write32(self.bar, 4 * PCIE_INDEX2_HI, address >> 32)
        write32(self.bar, 4 * PCIE_INDEX2, address & 0xFFFFFFFF)

    # --- MM_INDEX/MM_DATA into VRAM: dword-granular reads and writes of VRAM by byte address
    def vram_read(self, address: int, size: int) -> bytes:
        if address % 4 or size % 4:
            raise ValueError(f"MM_INDEX VRAM access of {size} bytes at {address:#x} is not dword-aligned")
        out = bytearray()
        for a in range(address, address + size, 4):
            self._mm_select(a)
            out += read32(self.bar, 4 * MM_DATA).to_bytes(4, "little")
        return bytes(out)

    def vram_write(self, address: int, data: bytes) -> None:
        if address % 4 or len(data) % 4:
            raise ValueError(f"MM_INDEX VRAM access of {len(data)} bytes at {address:#x} is not dword-aligned")
        for i in range(0, len(data), 4):
            self._mm_select(address + i)
            write32(self.bar, 4 * MM_DATA, int.from_bytes(data[i:i + 4], "little"))

    def _mm_select(self, address: int) -> None:
        write32(self.bar, 4 * MM_INDEX_HI, address >> 31)
        write32(self.bar, 4 * MM_INDEX, (address & 0x7FFFFFFF) | MM_INDEX_VRAM)


class PollTimeout(TimeoutError):
    pass


def wait_until(read, done, what: str, timeout: float) -> int:
    """Poll `read()` until `done(value)`; the last value, or PollTimeout naming what never happened. The
    emulated GPU answers synchronously, so the first read decides there; real hardware takes milliseconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() >= deadline:
            raise PollTimeout(f"{what} (last value {value:#x}, waited {timeout:g} s)")
        time.sleep(0.0005)
