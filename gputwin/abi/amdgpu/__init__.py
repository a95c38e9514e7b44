"""Register definitions of the AMD GPU's IP blocks as the kernel-less driver (gputwin/drivers/amd/am/) and
the emulated SoC (gputwin/emu/amd/soc/) share them. One module per IP version holds its `Reg`s (offsets and
segment indices as Linux amdgpu's asic_reg/*_offset.h give them: `regX` and `regX_BASE_IDX`).

A register's dword address is `bases[(ip, instance)][reg.segment] + reg.offset`. The driver takes `bases`
from the IP discovery table it reads out of VRAM; only the emulated chip uses `ip_bases(arch)`, to publish
that table and to place its blocks' registers."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reg:
    name: str
    ip: str        # the IP as amdgpu names its hardware ids: "GC", "MMHUB", "OSSSYS", "MP0", "MP1", "NBIO", ...
    segment: int   # index into the IP instance's base-address list (regX_BASE_IDX)
    offset: int    # dword offset within that segment (regX)

    def address(self, bases: dict[tuple[str, int], tuple[int, ...]], inst: int = 0) -> int:
        """The register's dword address in the MMIO space, given the bases of the chip's IP instances."""
        try:
            return bases[(self.ip, inst)][self.segment] + self.offset
        except (KeyError, IndexError):
            raise KeyError(f"{self.name}: the chip publishes no base for {self.ip} instance {inst} "
                           f"segment {self.segment}") from None


# The segment bases of the Navi family (the layout of amdgpu's navi10_ip_offset.h, which Navi 3x/4x keep and
# report in their discovery tables). SDMA v6/v7 registers live in the GC register space, so the SDMA
# instances publish the GC bases (their register offsets differ per engine).
_GC = (0x00001260, 0x0000A000, 0x0001C000, 0x02402C00)
_MP = (0x00016000, 0x00DC0000, 0x00E00000, 0x00E40000, 0x0243FC00)
_NAVI_BASES: dict[tuple[str, int], tuple[int, ...]] = {
    ("GC", 0): _GC,
    ("SDMA0", 0): _GC,
    ("SDMA1", 0): _GC,
    ("MMHUB", 0): (0x0001A000, 0x02408800),
    ("ATHUB", 0): (0x00000C00, 0x02408C00),
    ("OSSSYS", 0): (0x000010A0, 0x0240A000),
    ("HDP", 0): (0x00000F20, 0x0240A400),
    ("NBIO", 0): (0x00000000, 0x00000014, 0x00000D20, 0x00010400, 0x0241B000, 0x04040000),
    ("MP0", 0): _MP,
    ("MP1", 0): _MP,
}

ARCHS = ("gfx1100", "gfx1201")


def ip_bases(arch: str) -> dict[tuple[str, int], tuple[int, ...]]:
    """The segment bases the emulated chip of `arch` publishes in its IP discovery table."""
    if arch not in ARCHS:
        raise ValueError(f"no AM register layout for {arch} (known: {', '.join(ARCHS)})")
    return dict(_NAVI_BASES)


def mmhub_module(version: tuple[int, int, int]):
    """The MMHUB register module for a discovered MMHUB version."""
    from gputwin.abi.amdgpu import mmhub_3_0, mmhub_4_1
    modules = {(3, 0): mmhub_3_0, (4, 1): mmhub_4_1}
    if version[:2] not in modules:
        raise ValueError(f"no register definitions for MMHUB {'.'.join(map(str, version))}")
    return modules[version[:2]]
