"""gfx11 16-bit VOP1/VOP2/VOPC e32 forms whose 8-bit VGPR fields name a register's high half (bit 7).

LLVM 19 only assembles a few of them (v_add_f16/v_mul_f16/v_mov_b16 with -mattr=+real-true16); the hardware
executes all of them. The words below are LLVM's encodings of the low-half forms (llvm-mc-19 -mcpu=gfx1100
-show-encoding) with bit 7 of the VGPR fields set by hand. References: numpy float16 arithmetic (add/mul of
two f16 values rounded once: exact through f32), exact fractions for the FMA, and the same instruction on
the low halves (the path verified before) for every lane, NaNs included.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tests.emu.amd.helpers import run
from tests.emu.amd.valu.helpers import round_frac

MODE = 0x3F0       # keep f32 and f16 denormals, IEEE, round to nearest even
HARD = np.array([0x0000, 0x8000, 0x0001, 0x83FF, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
                 0x7E00, 0x7C01, 0x3555, 0x0400, 0x1400, 0x5640], np.uint16)   # ±0, denormals, max, inf, NaNs


def _vop2(op, vdst, vsrc1, src0):
    return op << 25 | vdst << 17 | vsrc1 << 9 | src0


def _vop1(op, vdst, src0):
    return 0x7E000000 | vdst << 17 | op << 9 | src0


def _vopc(op, vsrc1, src0):
    return 0x7C000000 | op << 17 | vsrc1 << 9 | src0


V_ADD_F16, V_MUL_F16, V_FMAC_F16 = 50, 53, 54                      # VOP2 opcodes (LLVM's encodings)
V_CVT_F32_F16, V_CVT_I16_F16, V_MOV_B16, V_CVT_F16_F32 = 11, 83, 28, 10   # VOP1
V_CMP_LT_F16 = 1                                                   # VOPC


def _data(seed, n=2):
    rng = np.random.default_rng(seed)
    lo = rng.choice(HARD, (n, 32)) if seed % 2 else rng.integers(0, 1 << 16, (n, 32), dtype=np.uint16)
    hi = rng.integers(0, 1 << 16, (n, 32), dtype=np.uint16)
    hi[:, :16] = HARD
    return lo.astype(np.uint32), hi.astype(np.uint32)


def _run_words(words, vgprs, exec_mask=None, n=2):
    text = "\n".join(f".long {w:#010x}" for w in words)
    return run(text, n=n, vgprs=vgprs, mode=MODE, exec_mask=exec_mask)


def _f16(bits):
    return np.asarray(bits, np.uint16).view(np.float16)


def _is_nan16(bits):
    return (bits & 0x7C00) == 0x7C00 and (bits & 0x3FF) != 0


@pytest.mark.parametrize("op,ref", [(V_ADD_F16, np.add), (V_MUL_F16, np.multiply)])
def test_vop2_f16_high_halves_match_float16_and_the_low_half_form(op, ref):
    lo2, hi2 = _data(1)
    lo3, hi3 = _data(2)
    keep = np.uint32(0x1234)
    exec_mask = np.ones((2, 32), bool)
    exec_mask[1, 5::3] = False
    v2, v3 = lo2 | hi2 << 16, lo3 | hi3 << 16
    # v1.h = v2.h op v3.l, then v4.l = v2.h op v3.h, then the low-half form on moved data: v6 = v7 op v8
    g = _run_words([_vop2(op, 0x81, 3, 256 + 0x82), _vop2(op, 4, 0x83, 256 + 0x82), _vop2(op, 6, 8, 256 + 7)],
                   {1: keep, 2: v2, 3: v3, 4: 0xAAAA0000, 7: hi2, 8: lo3}, exec_mask)
    r1, r4, r6 = g.vgpr(1), g.vgpr(4), g.vgpr(6)
    on = exec_mask
    assert np.all(r1[~on] == keep) and np.all(r4[~on] == 0xAAAA0000)
    assert np.all(r1 & 0xFFFF == keep)                       # the low half is kept
    assert np.all(r4 >> 16 == 0xAAAA)                        # a .l destination keeps the high half
    assert np.array_equal((r1 >> 16)[on], (r6 & 0xFFFF)[on])  # same bits as the low-half form
    with np.errstate(all="ignore"):
        want_1 = ref(_f16(hi2), _f16(lo3)).view(np.uint16)
        want_4 = ref(_f16(hi2), _f16(hi3)).view(np.uint16)
    for got, want in (((r1 >> 16)[on], want_1[on]), ((r4 & 0xFFFF)[on], want_4[on])):
        nan = np.array([_is_nan16(int(w)) for w in want])
        assert np.array_equal(got[~nan], want[~nan])
        assert all(_is_nan16(int(x)) and x & 0x200 for x in got[nan])   # quiet NaN


def test_vop2_fmac_f16_high_halves_round_once():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 1 << 16, (1, 32), dtype=np.uint16)
    b = rng.integers(0, 1 << 16, (1, 32), dtype=np.uint16)
    c = rng.integers(0, 1 << 16, (1, 32), dtype=np.uint16)
    a[0, :4], b[0, :4], c[0, :4] = [0x3C01, 0x0001, 0x8000, 0x7BFF], [0x3C01, 0x3800, 0x0000, 0x4000], \
        [0x8C00, 0x8001, 0x8000, 0x7BFF]                       # a tie-free FMA, a denormal, -0 + -0, overflow
    # v_fmac_f16 v1.h, v2.h, v3.h: v1.h = v2.h * v3.h + v1.h; v1.l untouched
    g = _run_words([_vop2(V_FMAC_F16, 0x81, 0x83, 256 + 0x82)],
                   {1: c.astype(np.uint32) << 16 | 0x5555, 2: a.astype(np.uint32) << 16,
                    3: b.astype(np.uint32) << 16}, n=1)
    got = g.vgpr(1)
    assert np.all(got & 0xFFFF == 0x5555)
    for lane in range(32):
        x, y, z = (float(_f16(v[0, lane])) for v in (a, b, c))
        if not all(np.isfinite([x, y, z])):
            continue
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        if exact == 0:
            want = 0x8000 if (np.signbit(x) ^ np.signbit(y)) and np.signbit(z) else 0
        else:
            want = int(np.float16(round_frac(exact, 11, -14, 15)).view(np.uint16))
        assert int(got[0, lane]) >> 16 == want, (lane, hex(a[0, lane]), hex(b[0, lane]), hex(c[0, lane]))


def test_vop1_conversions_read_and_write_high_halves():
    lo, hi = _data(3)
    v2 = lo | hi << 16
    # v_cvt_f32_f16 v1, v2.h; v_cvt_i16_f16 v3.h, v2.l; v_mov_b16 v4.h, v2.h; v_cvt_f16_f32 v5.h, v1
    g = _run_words([_vop1(V_CVT_F32_F16, 1, 256 + 0x82), _vop1(V_CVT_I16_F16, 0x83, 256 + 2),
                    _vop1(V_MOV_B16, 0x84, 256 + 0x82), _vop1(V_CVT_F16_F32, 0x85, 256 + 1),
                    _vop1(V_CVT_F32_F16, 6, 256 + 2)],
                   {2: v2, 3: 0x0000BEEF, 4: 0x0000CAFE, 5: 0x0000F00D})
    f = _f16(hi).astype(np.float32)
    nan = np.isnan(f)
    assert np.array_equal(g.vgpr(1)[~nan], f[~nan].view(np.uint32))
    assert np.all(np.isnan(g.vgpr(1)[nan].view(np.float32)))
    with np.errstate(invalid="ignore"):
        x = _f16(lo).astype(np.float64)
        want_i16 = np.where(np.isnan(x), 0, np.clip(np.trunc(np.nan_to_num(x)), -32768, 32767)).astype(np.int64)
    assert np.array_equal(g.vgpr(3) >> 16, want_i16.astype(np.uint16).astype(np.uint32))
    assert np.all(g.vgpr(3) & 0xFFFF == 0xBEEF)
    assert np.array_equal(g.vgpr(4), hi << 16 | 0xCAFE)
    # f16 -> f32 -> f16 round trip of the non-NaN values is exact
    assert np.array_equal((g.vgpr(5) >> 16)[~nan], hi[~nan]) and np.all(g.vgpr(5) & 0xFFFF == 0xF00D)
    f_lo = _f16(lo).astype(np.float32)
    assert np.array_equal(g.vgpr(6)[~np.isnan(f_lo)], f_lo[~np.isnan(f_lo)].view(np.uint32))


def test_vopc_f16_compares_high_halves():
    lo, hi = _data(5)
    lo3, hi3 = _data(6)
    # v_cmp_lt_f16 vcc_lo, v2.h, v3.h, then s_mov_b32 s0, vcc_lo
    g = _run_words([_vopc(V_CMP_LT_F16, 0x83, 256 + 0x82), 0xBE80006A],
                   {2: lo | hi << 16, 3: lo3 | hi3 << 16})
    with np.errstate(invalid="ignore"):
        want = _f16(hi) < _f16(hi3)
    got = (g.s[0][:, None].astype(np.uint64) >> np.arange(32, dtype=np.uint64)) & np.uint64(1)
    assert np.array_equal(got.astype(bool), want)


def test_dpp16_source_high_half_moves_across_lanes():
    lo, hi = _data(7, n=1)
    lo3, _ = _data(8, n=1)
    # v_add_f16_dpp v1.h, v2.h, v3.l row_shl:1 row_mask:0xf bank_mask:0xf (LLVM's encoding of the .l form,
    # fa060264 020101ff, with bit 7 set in VDST and in the DPP dword's VGPR byte)
    g = _run_words([_vop2(V_ADD_F16, 0x81, 3, 0xFA), 0xFF010100 | 0x82],
                   {1: 0x0000BEEF, 2: lo | hi << 16, 3: lo3}, n=1)
    got = g.vgpr(1)[0]
    for lane in range(32):
        if lane % 16 == 15:                                   # shifted in from outside the row: no write
            assert got[lane] == 0x0000BEEF
            continue
        with np.errstate(all="ignore"):
            want = int((_f16(hi[0, lane + 1]) + _f16(lo3[0, lane])).view(np.uint16))
        if _is_nan16(want):
            assert _is_nan16(int(got[lane]) >> 16)
        else:
            assert got[lane] == want << 16 | 0xBEEF, lane
