"""The frame buffer's window in the memory-controller (MC) address space, as the VBIOS leaves it: MMHUB's
FB_LOCATION_BASE/TOP (16 MiB units). Firmware engines (PSP, SMU) and the hub's system aperture reach VRAM
through it: MC address = FB base + VRAM offset. The GMC block reuses `vram_view` for physical accesses."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gputwin.abi.amdgpu import ip_bases, mmhub_module
from gputwin.emu.amd.soc.regfile import RegisterError

FB_BASE = 0x80_0000_0000   # where Navi VBIOSes place VRAM in the MC space (FB_LOCATION_BASE 0x8000)
FB_UNIT = 1 << 24


@dataclass
class FbAperture:
    function: object
    base: int

    def vram_offset(self, mc_address: int, size: int, what: str) -> int:
        offset = mc_address - self.base
        if offset < 0 or offset + size > self.function.vram_size:
            raise RegisterError(f"{self.function.name}: {what} at MC address {mc_address:#x} (+{size:#x}) is outside "
                                f"the frame buffer [{self.base:#x}, {self.base + self.function.vram_size:#x})")
        return offset

    def vram_view(self, mc_address: int, size: int, what: str) -> np.ndarray:
        """The VRAM bytes behind an MC address range (a view: writes land in VRAM)."""
        offset = self.vram_offset(mc_address, size, what)
        return self.function.vram[offset:offset + size]


def attach(function, mmhub_version: tuple[int, int, int]) -> FbAperture:
    mmhub = mmhub_module(mmhub_version)
    fb = FbAperture(function, FB_BASE)
    bases = ip_bases(function.arch)
    for reg, value in ((mmhub.MMMC_VM_FB_LOCATION_BASE, FB_BASE // FB_UNIT),
                       (mmhub.MMMC_VM_FB_LOCATION_TOP, (FB_BASE + function.vram_size - 1) // FB_UNIT)):
        function.regs.add_read_only(reg.address(bases), reg.name, value)
    return fb
