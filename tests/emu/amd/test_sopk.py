"""SOPK: 16-bit immediates (sign/zero extension, s_addk overflow), s_call_b64, s_getreg/s_setreg."""
from __future__ import annotations

import pytest

from gputwin.errors import IllegalInstruction
from tests.emu.amd.helpers import M32, run, sgpr, sgpr64


def test_sopk_immediates_sign_extend_and_addk_overflows():
    g = run("s_movk_i32 s0, 0x8000\ns_mov_b32 s1, 0x7fffffff\ns_addk_i32 s1, 0x1\ns_mulk_i32 s2, 0xfffe\n"
            "s_cmovk_i32 s3, 0x1234", sgprs={2: 3, 3: 9})
    assert [sgpr(g, i) for i in range(4)] == [0xFFFF8000, 0x80000000, (3 * -2) & M32, 0x1234]
    assert g.scc.tolist() == [True, True]


def test_getreg_and_setreg_mode():
    g = run("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0xb\ns_getreg_b32 s0, hwreg(HW_REG_MODE)\n"
            "s_mov_b32 s1, 3\ns_setreg_b32 hwreg(HW_REG_MODE, 4, 2), s1\ns_getreg_b32 s2, hwreg(HW_REG_MODE, 4, 4)",
            mode=0x3F0)
    assert sgpr(g, 0) == 0x3FB
    assert sgpr(g, 2) == 0xF and g.mode == 0x3FB


def test_hw_id_reports_wave_in_workgroup():
    g = run("s_getreg_b32 s0, hwreg(HW_REG_HW_ID1)", n=4, waves_per_group=2)
    assert [sgpr(g, 0, w) & 0x1F for w in range(4)] == [0, 1, 0, 1]


def test_unmodelled_hardware_register_is_an_error_naming_it():
    with pytest.raises(IllegalInstruction, match="hardware register 5"):
        run("s_getreg_b32 s0, hwreg(HW_REG_GPR_ALLOC)")


def test_call_saves_the_return_address_and_jumps():
    g = run("""s_call_b64 s[4:5], func
s_mov_b32 s0, 1
s_branch done
func:
s_mov_b32 s1, 2
s_setpc_b64 s[4:5]
done:
s_nop 0""", n=1)
    assert sgpr64(g, 4) == 0x1000 + 4 and sgpr(g, 0) == 1 and sgpr(g, 1) == 2
