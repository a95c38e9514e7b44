"""Which register module describes each IP of an arch: GC 11.0 / MMHUB 3.0 / OSSSYS 6.0 on Navi 3x (gfx11),
GC 12.0 / MMHUB 4.1 / OSSSYS 7.0 on Navi 4x (gfx12)."""
from __future__ import annotations

from types import ModuleType

from gputwin.abi.amdgpu import gc_11_0, gc_12_0, mmhub_3_0, mmhub_4_1, osssys_6_0, osssys_7_0


def family(arch: str) -> str:
    if arch.startswith("gfx11"):
        return "gfx11"
    if arch.startswith("gfx12"):
        return "gfx12"
    raise ValueError(f"no AM register layout for {arch} (gfx11 and gfx12 are modelled)")


def gc(arch: str) -> ModuleType:
    return {"gfx11": gc_11_0, "gfx12": gc_12_0}[family(arch)]


def mmhub(arch: str) -> ModuleType:
    return {"gfx11": mmhub_3_0, "gfx12": mmhub_4_1}[family(arch)]


def osssys(arch: str) -> ModuleType:
    return {"gfx11": osssys_6_0, "gfx12": osssys_7_0}[family(arch)]
