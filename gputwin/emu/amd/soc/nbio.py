"""The emulated NBIO (the bus interface): the index/data windows every Navi has at fixed BAR offsets.

  MM_INDEX / MM_INDEX_HI / MM_DATA   with MM_INDEX bit 31 set, MM_DATA reads and writes the VRAM dword at
                                     MM_INDEX[30:0] | MM_INDEX_HI << 31; with it clear, the register at byte
                                     address MM_INDEX (amdgpu_device_mm_access / the legacy indirect path);
  PCIE_INDEX2(_HI) / PCIE_DATA2      the SMN window: byte address INDEX2_HI:INDEX2; the register file is
                                     the SMN space seen from this function (an address the BAR does not
                                     reach is still decoded; one no block models fails closed).
Other NBIO registers the boot touches (doorbell aperture, HDP flush/remap, memory size) register here too."""
from __future__ import annotations

from dataclasses import dataclass

from gputwin.abi.amdgpu.nbio import MM_DATA, MM_INDEX, MM_INDEX_HI, MM_INDEX_VRAM, PCIE_DATA2, PCIE_INDEX2, \
    PCIE_INDEX2_HI
from gputwin.emu.amd.soc.regfile import RegisterError


@dataclass
class Nbio:
    function: object   # AmdGpuFunction

    def _mm_data_read(self) -> int:
        kind, where = self._mm_target()
        if kind == "vram":
            return int.from_bytes(self.function.vram[where:where + 4].tobytes(), "little")
        return self.function.regs.read(where)

    def _mm_data_write(self, value: int) -> None:
        kind, where = self._mm_target()
        if kind == "vram":
            self.function.vram[where:where + 4] = memoryview(value.to_bytes(4, "little"))
        else:
            self.function.regs.write(where, value)

    def _mm_target(self) -> tuple[str, int]:
        regs = self.function.regs
        index = regs.value(MM_INDEX)
        if index & MM_INDEX_VRAM:
            address = (index & 0x7FFFFFFF) | regs.value(MM_INDEX_HI) << 31
            if address % 4 or address + 4 > self.function.vram_size:
                raise RegisterError(f"{self.function.name}: MM_DATA access to VRAM byte {address:#x} is outside "
                                    f"VRAM ({self.function.vram_size:#x} bytes) or not dword-aligned")
            return "vram", address
        if index % 4:
            raise RegisterError(f"{self.function.name}: MM_INDEX {index:#x} is not a dword register address")
        return "reg", index // 4

    def _smn_dword(self) -> int:
        regs = self.function.regs
        address = regs.value(PCIE_INDEX2) | regs.value(PCIE_INDEX2_HI) << 32
        if address % 4:
            raise RegisterError(f"{self.function.name}: SMN address {address:#x} is not dword-aligned")
        return address // 4

    def _smn_read(self) -> int:
        return self.function.regs.read(self._smn_dword())

    def _smn_write(self, value: int) -> None:
        self.function.regs.write(self._smn_dword(), value)


def attach(function) -> Nbio:
    nbio = Nbio(function)
    regs = function.regs
    regs.add(MM_INDEX, "MM_INDEX")
    regs.add(MM_INDEX_HI, "MM_INDEX_HI")
    regs.add(MM_DATA, "MM_DATA", read=nbio._mm_data_read, write=nbio._mm_data_write)
    regs.add(PCIE_INDEX2, "BIF_BX0_PCIE_INDEX2")
    regs.add(PCIE_INDEX2_HI, "BIF_BX0_PCIE_INDEX2_HI")
    regs.add(PCIE_DATA2, "BIF_BX0_PCIE_DATA2", read=nbio._smn_read, write=nbio._smn_write)
    return nbio
