"""DPP on VOP3P (v_fma_mix*, v_dot2_f32_f16: the packed entries LLVM 19 gives _e64_dpp forms on gfx11):
src0's dword moves across lanes before op_sel picks halves; lanes DPP leaves invalid keep their VDST.
The lane movement is recomputed here from the RDNA3 guide's DPP definitions; values from exact fractions."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from tests.emu.amd.helpers import run
from tests.emu.amd.valu.helpers import round_frac

LANE = np.arange(32)
MODE = 0x3F0


def _f16_pairs(rng):
    lo = (rng.standard_normal(32) * 4).astype(np.float16)
    hi = (rng.standard_normal(32) * 4).astype(np.float16)
    return lo, hi, lo.view(np.uint16).astype(np.uint32) | hi.view(np.uint16).astype(np.uint32) << 16


def _mix(a16, b16, c32):
    exact = Fraction(float(a16)) * Fraction(float(b16)) + Fraction(float(c32))
    v = round_frac(exact, 24, -126, 127) if exact else 0.0
    return int(np.float32(v).view(np.uint32))


def test_fma_mix_f32_row_shl_leaves_invalid_lanes_unwritten():
    rng = np.random.default_rng(31)
    alo, _, a = _f16_pairs(rng)
    blo, _, b = _f16_pairs(rng)
    c = (rng.standard_normal(32)).astype(np.float32)
    g = run("v_fma_mix_f32 v0, v1, v2, v3 op_sel_hi:[1,1,0] row_shl:1 row_mask:0xf bank_mask:0xf",
            n=1, mode=MODE, vgprs={0: 0xDEADBEEF, 1: a, 2: b, 3: c.view(np.uint32)})
    for lane in range(32):
        if lane % 16 == 15:                              # source lane outside the row: no write
            assert g.vgpr(0)[0, lane] == 0xDEADBEEF
        else:
            assert g.vgpr(0)[0, lane] == _mix(alo[lane + 1], blo[lane], c[lane]), lane


def test_fma_mixlo_f16_dpp8_reads_zero_from_inactive_lanes_and_keeps_the_high_half():
    rng = np.random.default_rng(32)
    alo, ahi, a = _f16_pairs(rng)
    blo, _, b = _f16_pairs(rng)
    c = (rng.standard_normal(32)).astype(np.float32)
    exec_mask = np.ones((1, 32), bool)
    exec_mask[0, [2, 9]] = False
    g = run("v_fma_mixlo_f16 v0, v1, v2, v3 op_sel:[1,0,0] op_sel_hi:[1,1,0] dpp8:[7,6,5,4,3,2,1,0]",
            n=1, mode=MODE, exec_mask=exec_mask, vgprs={0: 0xABCD0000, 1: a, 2: b, 3: c.view(np.uint32)})
    for lane in range(32):
        got = int(g.vgpr(0)[0, lane])
        if not exec_mask[0, lane]:
            assert got == 0xABCD0000
            continue
        src = (lane & ~7) + 7 - (lane & 7)
        a16 = ahi[src] if exec_mask[0, src] else np.float16(0)       # FI=0: an inactive source reads 0
        exact = Fraction(float(a16)) * Fraction(float(blo[lane])) + Fraction(float(c[lane]))
        want = int(np.float16(round_frac(exact, 11, -14, 15)).view(np.uint16)) if exact else 0
        assert got == 0xABCD0000 | want, lane


def test_dot2_f32_f16_quad_perm_bank_mask_and_bound_ctrl():
    rng = np.random.default_rng(33)
    a_lo, a_hi = rng.integers(-8, 8, 32).astype(np.float16), rng.integers(-8, 8, 32).astype(np.float16)
    b_lo, b_hi = rng.integers(-8, 8, 32).astype(np.float16), rng.integers(-8, 8, 32).astype(np.float16)
    pack = lambda lo, hi: lo.view(np.uint16).astype(np.uint32) | hi.view(np.uint16).astype(np.uint32) << 16  # noqa: E731
    c = rng.integers(-100, 100, 32).astype(np.float32)
    g = run("v_dot2_f32_f16 v0, v1, v2, v3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0x5 bound_ctrl:1",
            n=1, mode=MODE, vgprs={0: 0x12345678, 1: pack(a_lo, a_hi), 2: pack(b_lo, b_hi), 3: c.view(np.uint32)})
    for lane in range(32):
        got = int(g.vgpr(0)[0, lane])
        if not (0x5 >> ((lane >> 2) & 3)) & 1:           # banks 1 and 3 are masked off
            assert got == 0x12345678
            continue
        src = (lane & ~3) + [1, 0, 3, 2][lane & 3]
        want = float(a_lo[src]) * float(b_lo[lane]) + float(a_hi[src]) * float(b_hi[lane]) + float(c[lane])
        assert got == int(np.float32(want).view(np.uint32)), lane
