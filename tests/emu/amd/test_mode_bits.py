"""s_setreg on MODE per architecture (gputwin/emu/amd/mode_bits.py, docs/mode.md): modelled and inert fields
are stored and read back; setting a field that would change what the wave does but is not modelled
(exception enables, trap-after-instruction, VSKIP, CSP) or a reserved bit raises IllegalInstruction naming
it; writing zeros there is harmless. Kernels are assembled here and run through run_dispatch."""
from __future__ import annotations

import re

import numpy as np
import pytest

from gputwin.emu.amd import mode_bits
from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.isa import assemble
from gputwin.emu.amd.standalone import Arena
from gputwin.errors import IllegalInstruction

STORE = {"gfx942": "global_store_dword v0, v1, s[0:1]"}


def mode_after(arch: str, setreg: str) -> int:
    """MODE (s_getreg_b32 of the whole register) after `setreg`, as the kernel stores it."""
    store = STORE.get(arch, "global_store_b32 v0, v1, s[0:1]")
    text = f"{setreg}\ns_getreg_b32 s4, hwreg(HW_REG_MODE)\nv_mov_b32 v1, s4\nv_mov_b32 v0, 0\n{store}\ns_endpgm\n"
    arena = Arena()
    out = arena.alloc(4)
    run_dispatch(arena.mem, Dispatch(code_address=0x40000, code=assemble(text, arch), block=(1, 1, 1),
                                     wave64=arch == "gfx942", user_sgprs=[out & 0xFFFFFFFF, out >> 32],
                                     rsrc2=2 << 1), arch=arch)
    return int(arena.array(out, np.uint32, 1)[0])


def imm(offset: int, size: int, value: int) -> str:
    return f"s_setreg_imm32_b32 hwreg(HW_REG_MODE, {offset}, {size}), {value:#x}"


@pytest.mark.parametrize("arch,offset,size,name", [
    ("gfx1100", 10, 1, "LOD_CLAMPED"), ("gfx1100", 27, 1, "DISABLE_PERF"), ("gfx1100", 23, 1, "FP16_OVFL"),
    ("gfx1200", 24, 1, "SCALAR_PREFETCH_EN"), ("gfx1200", 27, 1, "DISABLE_PERF"), ("gfx1200", 23, 1, "FP16_OVFL"),
    ("gfx942", 26, 1, "DISABLE_PERF"), ("gfx942", 10, 1, "LOD_CLAMPED"), ("gfx942", 23, 1, "FP16_OVFL"),
    ("gfx942", 0, 4, "FP_ROUND")])
def test_modelled_and_inert_fields_are_stored(arch, offset, size, name):
    value = (1 << size) - 1
    assert mode_bits.field_of(mode_bits.family(arch), offset).startswith(name)
    assert mode_after(arch, imm(offset, size, value)) >> offset & value == value


@pytest.mark.parametrize("arch,offset,size,name", [
    ("gfx1100", 12, 1, "EXCP_EN (bit 12)"), ("gfx1100", 14, 8, "EXCP_EN (bit 14)"),
    ("gfx1100", 11, 1, "TRAP_AFTER_INST (bit 11)"), ("gfx1100", 31, 1, "reserved bit 31"),
    ("gfx1100", 24, 1, "reserved bit 24"),
    ("gfx1200", 12, 1, "reserved bit 12"), ("gfx1200", 26, 1, "reserved bit 26"),
    ("gfx942", 28, 1, "VSKIP (bit 28)"), ("gfx942", 29, 3, "CSP (bit 29)"), ("gfx942", 11, 1, "DEBUG (bit 11)"),
    ("gfx942", 16, 1, "EXCP_EN (bit 16)")])
def test_unmodelled_fields_fail_closed_naming_the_field(arch, offset, size, name):
    fam = mode_bits.family(arch)
    with pytest.raises(IllegalInstruction, match=re.escape(f"MODE {name} set to 1 is not modelled on {fam}")):
        mode_after(arch, imm(offset, size, (1 << size) - 1))


def test_s_setreg_b32_from_an_sgpr_is_checked_too():
    with pytest.raises(IllegalInstruction, match="EXCP_EN"):
        mode_after("gfx1100", "s_mov_b32 s5, 0x43f0\ns_setreg_b32 hwreg(HW_REG_MODE), s5")
    # the whole register restored with the unmodelled fields at zero: fine (what a save/restore does)
    assert mode_after("gfx1100", "s_mov_b32 s5, 0x88003f5\ns_setreg_b32 hwreg(HW_REG_MODE), s5") == 0x88003F5


def test_zeros_in_unmodelled_fields_are_harmless():
    assert mode_after("gfx1100", imm(11, 11, 0)) & 0x3FF800 == 0
    assert mode_after("gfx942", imm(28, 4, 0)) >> 28 == 0


def test_tables_cover_distinct_bits():
    for fam, fields in mode_bits.FIELDS.items():
        seen = 0
        for name, lo, width, kind in fields:
            bits = ((1 << width) - 1) << lo
            assert not seen & bits, (fam, name)
            assert kind in (mode_bits.MODELLED, mode_bits.INERT, mode_bits.UNMODELLED)
            seen |= bits


@pytest.mark.parametrize("rsrc1,rsrc2,name", [(1 << 22, 0, "COMPUTE_PGM_RSRC1.DEBUG_MODE"),
                                              (0, 1 << 26, "COMPUTE_PGM_RSRC2.EXCP_EN = 0x4"),
                                              (0, 1 << 30, "COMPUTE_PGM_RSRC2.EXCP_EN = 0x40")])
def test_descriptor_exception_enables_and_debug_mode_fail_closed(rsrc1, rsrc2, name):
    code = assemble("s_endpgm", "gfx1100")
    run_dispatch(Arena().mem, Dispatch(code_address=0x40000, code=code, rsrc2=1 << 14 | 1 << 13))  # inert ones
    with pytest.raises(IllegalInstruction, match=re.escape(name)):
        run_dispatch(Arena().mem, Dispatch(code_address=0x40000, code=code, rsrc1=rsrc1, rsrc2=rsrc2))
