"""The emulated NBIO (the bus interface): the index/data windows every Navi has at fixed BAR offsets.

  MM_INDEX / MM_INDEX_HI / MM_DATA   with MM_INDEX bit 31 set, MM_DATA reads and writes the VRAM dword at
                                     MM_INDEX[30:0] | MM_INDEX_HI << 31; with it clear, the register at byte
                                     address MM_INDEX (amdgpu_device_mm_access / the legacy indirect path);
  PCIE_INDEX2(_HI) / PCIE_DATA2      the SMN window: byte address INDEX2_HI:INDEX2; the register file is
                                     the SMN space seen from this function (an address the BAR does not
                                     reach is still decoded; one no block models fails closed).
Also what the boot programs: RCC_DOORBELL_APER_EN (the doorbell BAR decodes only once enabled), the HDP
flush (GPU_HDP_FLUSH_REQ/DONE, and REMAP_HDP_MEM_FLUSH_CNTL, which places a write-to-flush register at the
byte offset it holds, as amdgpu's remap page at 0x7F000). The emulated VRAM is coherent with the host, so a
flush only counts (`hdp_flushes`); the remap is modelled so a flush to a wrong offset fails."""
from __future__ import annotations

from dataclasses import dataclass

from gputwin.abi.amdgpu import ip_bases
from gputwin.abi.amdgpu import nbio as n
from gputwin.abi.amdgpu.nbio import MM_DATA, MM_INDEX, MM_INDEX_HI, MM_INDEX_VRAM, PCIE_DATA2, PCIE_INDEX2, \
    PCIE_INDEX2_HI
from gputwin.emu.amd.soc.regfile import RegisterError


@dataclass
class Nbio:
    function: object   # AmdGpuFunction
    remap_dword: int = 0             # REMAP_HDP_MEM_FLUSH_CNTL's own address
    done_dword: int = 0              # GPU_HDP_FLUSH_DONE's
    hdp_flushes: int = 0
    flush_dword: int | None = None   # where REMAP_HDP_MEM_FLUSH_CNTL placed the flush register

    def reset(self) -> None:
        """Mode-1 reset: the doorbell aperture is closed again (the BIF keeps its remap and windows)."""
        self.function.doorbells.enabled = False

    def _doorbell_aperture(self, value: int) -> None:
        self.function.doorbells.enabled = bool(value & 1)

    def _flush(self, _value: int = 0) -> None:
        self.hdp_flushes += 1

    def _remap_flush(self, value: int) -> None:
        regs = self.function.regs
        if value % 4:
            raise RegisterError(f"{self.function.name}: HDP flush remap offset {value:#x} is not dword-aligned")
        if value // 4 != self.flush_dword and value // 4 in regs:
            raise RegisterError(f"{self.function.name}: HDP flush remap offset {value:#x} lands on "
                                f"{regs.get(value // 4).name}")
        if self.flush_dword is not None:
            regs.remove(self.flush_dword)
        self.flush_dword = value // 4
        regs.add(self.flush_dword, "HDP_MEM_FLUSH_CNTL (remapped)", write=self._flush)
        regs.get(self.remap_dword).value = value   # reads back what was written

    def _flush_request(self, value: int) -> None:
        self._flush()
        self.function.regs.get(self.done_dword).value = value   # each requested client reports done at once

    def _mm_data_read(self) -> int:
        kind, where = self._mm_target()
        if kind == "vram":
            return int.from_bytes(self.function.vram[where:where + 4].tobytes(), "little")
        return self.function.regs.read(where)

    def _mm_data_write(self, value: int) -> None:
        kind, where = self._mm_target()
        if kind == "vram":
            self.function.vram[where:where + 4] = memoryview(value.to_bytes(4, "little"))
            self.function.host_wrote(where, 4)
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
        return "reg", self._not_a_data_window(index // 4, "MM_INDEX")

    def _smn_dword(self) -> int:
        regs = self.function.regs
        address = regs.value(PCIE_INDEX2) | regs.value(PCIE_INDEX2_HI) << 32
        if address % 4:
            raise RegisterError(f"{self.function.name}: SMN address {address:#x} is not dword-aligned")
        return self._not_a_data_window(address // 4, "PCIE_INDEX2")

    def _not_a_data_window(self, dword: int, index: str) -> int:
        """A window may not point at a data register (its own or the other's): that would access itself."""
        if dword in (MM_DATA, PCIE_DATA2):
            raise RegisterError(f"{self.function.name}: {index} points at the data window register at dword "
                                f"{dword:#x}")
        return dword

    def _smn_read(self) -> int:
        return self.function.regs.read(self._smn_dword())

    def _smn_write(self, value: int) -> None:
        self.function.regs.write(self._smn_dword(), value)


def attach(function) -> Nbio:
    bases = ip_bases(function.arch)
    nbio = Nbio(function, remap_dword=n.REMAP_HDP_MEM_FLUSH_CNTL.address(bases),
                done_dword=n.GPU_HDP_FLUSH_DONE.address(bases))
    regs = function.regs
    regs.add(MM_INDEX, "MM_INDEX")
    regs.add(MM_INDEX_HI, "MM_INDEX_HI")
    regs.add(MM_DATA, "MM_DATA", read=nbio._mm_data_read, write=nbio._mm_data_write)
    regs.add(PCIE_INDEX2, "BIF_BX0_PCIE_INDEX2")
    regs.add(PCIE_INDEX2_HI, "BIF_BX0_PCIE_INDEX2_HI")
    regs.add(PCIE_DATA2, "BIF_BX0_PCIE_DATA2", read=nbio._smn_read, write=nbio._smn_write)
    function.doorbells.enabled = False   # until the driver sets RCC_DOORBELL_APER_EN
    regs.add(n.RCC_DOORBELL_APER_EN.address(bases), n.RCC_DOORBELL_APER_EN.name, write=nbio._doorbell_aperture)
    regs.add(n.BIF_DOORBELL_INT_CNTL.address(bases), n.BIF_DOORBELL_INT_CNTL.name)
    regs.add(nbio.remap_dword, n.REMAP_HDP_MEM_FLUSH_CNTL.name, write=nbio._remap_flush)
    regs.add(n.GPU_HDP_FLUSH_REQ.address(bases), n.GPU_HDP_FLUSH_REQ.name, write=nbio._flush_request)
    regs.add_read_only(nbio.done_dword, n.GPU_HDP_FLUSH_DONE.name, 0)
    return nbio
