"""Float arithmetic through execute(): exact bits for NaN, +-0, denormals, infinities, ties, modes."""
from fractions import Fraction

import numpy as np
import pytest

from gputwin.errors import IllegalInstruction
from gputwin.emu.amd.valu import execute

from .helpers import C, L, MODE, V, f16, f32, f64, fill, group, inst, round_frac, u64

QNAN, SNAN = 0x7FC00000, 0x7F800005
SPECIALS = np.array([0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x7F800000, 0xFF800000, QNAN, SNAN,
                     0x3F800000, 0xBF800000, 0x7F7FFFFF, 0x00800000, 0x3F800001, 0x4B000001, 0x33800000,
                     0xB3800001], np.uint32)


def _pairs():
    a = np.repeat(SPECIALS, SPECIALS.size)
    b = np.tile(SPECIALS, SPECIALS.size)
    return a.reshape(8, 32), b.reshape(8, 32)


def _ref_binop(a, b, op):
    """numpy float32 IEEE result, with NaNs replaced by the GPU's rule (first NaN source quieted, else
    the canonical 0x7fc00000)."""
    with np.errstate(all="ignore"):
        r = op(a.view(np.float32), b.view(np.float32)).view(np.uint32)
    nan_a = (a & 0x7FFFFFFF) > 0x7F800000
    nan_b = (b & 0x7FFFFFFF) > 0x7F800000
    rn = (r & 0x7FFFFFFF) > 0x7F800000
    fixed = np.where(nan_a, a | 0x400000, np.where(nan_b, b | 0x400000, np.uint32(QNAN)))
    return np.where(rn, fixed, r).astype(np.uint32)


@pytest.mark.parametrize("name,op", [("v_add_f32", np.add), ("v_mul_f32", np.multiply),
                                     ("v_sub_f32", np.subtract)])
def test_f32_binop_special_value_matrix(name, op):
    a, b = _pairs()
    g = group(8)
    fill(g, 1, a)
    fill(g, 2, b)
    execute(g, inst(name, "VOP2", vdst=V(0), src0=V(1), src1=V(2)))
    np.testing.assert_array_equal(g.vgpr(0), _ref_binop(a, b, op))


def test_subrev_swaps_operands():
    g = group(1)
    fill(g, 1, np.float32(1.0))
    fill(g, 2, np.float32(4.0))
    execute(g, inst("v_subrev_f32", "VOP2", vdst=V(0), src0=V(1), src1=V(2)))
    assert g.vgpr(0)[0, 0] == f32(3.0)


def _mode(denorm32=3, denorm_hi=3, rnd=0):
    return (MODE & ~0xFF) | (denorm_hi << 6) | (denorm32 << 4) | rnd


def test_f32_denormals_flushed_in_and_out_when_disabled():
    g = group(1, mode=_mode(denorm32=0))
    fill(g, 1, np.array([0x00000001, 0x80000001, 0x00800000, 0x00800000], np.uint32).repeat(8))
    fill(g, 2, np.array([0x00800000, 0x00000000, 0xBF000000, 0x3F000000], np.uint32).repeat(8))
    execute(g, inst("v_add_f32", "VOP2", vdst=V(0), src0=V(1), src1=V(2)))
    execute(g, inst("v_mul_f32", "VOP2", vdst=V(3), src0=V(1), src1=V(2)))
    got_add, got_mul = g.vgpr(0)[0, ::8], g.vgpr(3)[0, ::8]
    # denormal inputs read as +-0; a result that is denormal (2^-126 * 0.5) flushes to +0
    want_add = [0x00800000, 0x00000000, f32(np.float32(2.0 ** -126) - np.float32(0.5)),
                f32(np.float32(2.0 ** -126) + np.float32(0.5))]       # -0 + +0 is +0
    np.testing.assert_array_equal(got_add, want_add)
    np.testing.assert_array_equal(got_mul, [0, 0x80000000, 0x80000000, 0])


def test_f32_denormals_kept_when_enabled():
    g = group(1)
    fill(g, 1, np.uint32(0x00000003))
    fill(g, 2, np.float32(0.5))
    execute(g, inst("v_mul_f32", "VOP2", vdst=V(0), src0=V(1), src1=V(2)))
    assert g.vgpr(0)[0, 0] == 0x00000002          # 3 * 2^-149 * 0.5 = 1.5 ulp -> tie to even (2)


@pytest.mark.parametrize("rmode,mname", [(1, "up"), (2, "down"), (3, "rtz")])
def test_f32_add_mul_fma_directed_rounding(rmode, mname):
    rng = np.random.default_rng(rmode)
    a = (rng.standard_normal(64) * 1e3).astype(np.float32).reshape(2, 32)
    b = (rng.standard_normal(64) * 1e-3).astype(np.float32).reshape(2, 32)
    g = group(2, mode=_mode(rnd=rmode | (rmode << 2)))
    fill(g, 1, a)
    fill(g, 2, b)
    execute(g, inst("v_add_f32", "VOP2", vdst=V(0), src0=V(1), src1=V(2)))
    execute(g, inst("v_mul_f32", "VOP2", vdst=V(3), src0=V(1), src1=V(2)))
    execute(g, inst("v_fma_f32", vdst=V(4), src0=V(1), src1=V(2), src2=V(1)))
    fa, fb = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    rf = lambda q: round_frac(q, 24, -126, 127, mname)
    want_add = np.array([rf(Fraction(x) + Fraction(y)) for x, y in zip(fa, fb)], np.float32)
    want_mul = np.array([rf(Fraction(x) * Fraction(y)) for x, y in zip(fa, fb)], np.float32)
    want_fma = np.array([rf(Fraction(x) * Fraction(y) + Fraction(x)) for x, y in zip(fa, fb)], np.float32)
    np.testing.assert_array_equal(g.vgpr(0).ravel(), want_add.view(np.uint32))
    np.testing.assert_array_equal(g.vgpr(3).ravel(), want_mul.view(np.uint32))
    np.testing.assert_array_equal(g.vgpr(4).ravel(), want_fma.view(np.uint32))


def test_unmodelled_rounding_mode_fails_closed_naming_it():
    g = group(1, mode=_mode(rnd=3 << 2))
    with pytest.raises(IllegalInstruction, match="toward-zero"):
        execute(g, inst("v_add_f64", vdst=V(0, 2), src0=V(2, 2), src1=V(4, 2)))
    with pytest.raises(IllegalInstruction, match="v_rcp_f32.*nearest|FP_ROUND"):
        g2 = group(1, mode=_mode(rnd=1))
        execute(g2, inst("v_rcp_f32", "VOP1", vdst=V(0), src0=V(1)))


def test_fma_f32_cancellation_and_inline_constants():
    g = group(1)
    x = np.float32(1 + 2.0 ** -23)
    fill(g, 1, x)
    # fma(x, x, -1.0): exact value 2^-22 + 2^-46, a separate multiply would lose the 2^-46
    execute(g, inst("v_fma_f32", vdst=V(0), src0=V(1), src1=V(1), src2=C(243)))
    want = round_frac(Fraction(float(x)) ** 2 - 1, 24, -126, 127)
    assert g.vgpr(0)[0, 0] == f32(want)


def test_fmac_uses_destination_as_addend_and_exec_masks_lanes():
    exec_ = np.zeros((1, 32), bool)
    exec_[0, ::2] = True
    g = group(1, exec_=exec_)
    fill(g, 0, np.float32(10.0))
    fill(g, 1, np.float32(2.0))
    fill(g, 2, np.float32(3.0))
    execute(g, inst("v_fmac_f32", "VOP2", vdst=V(0), src0=V(1), src1=V(2)))
    np.testing.assert_array_equal(g.vgpr(0)[0, ::2], f32(16.0))
    np.testing.assert_array_equal(g.vgpr(0)[0, 1::2], f32(10.0))


def test_fmamk_and_fmaak_literal_k():
    g = group(1)
    fill(g, 1, np.float32(3.0))
    fill(g, 2, np.float32(5.0))
    execute(g, inst("v_fmamk_f32", "VOP2", vdst=V(0), src0=V(1), k=L(int(f32(2.0))), src1=V(2)))
    execute(g, inst("v_fmaak_f32", "VOP2", vdst=V(3), src0=V(1), src1=V(2), k=L(int(f32(2.0)))))
    assert g.vgpr(0)[0, 0] == f32(11.0) and g.vgpr(3)[0, 0] == f32(17.0)


def test_min_max_ieee_nan_rules_and_signed_zero():
    a = np.array([QNAN, 0x3F800000, SNAN, 0x80000000, 0x00000000, 0x40000000] * 6, np.uint32)[:32]
    b = np.array([0x3F800000, QNAN, 0x3F800000, 0x00000000, 0x80000000, 0x3F800000] * 6, np.uint32)[:32]
    g = group(1)
    fill(g, 1, a)
    fill(g, 2, b)
    execute(g, inst("v_min_f32", "VOP2", vdst=V(0), src0=V(1), src1=V(2)))
    execute(g, inst("v_max_f32", "VOP2", vdst=V(3), src0=V(1), src1=V(2)))
    np.testing.assert_array_equal(g.vgpr(0)[0, :6], [0x3F800000, 0x3F800000, SNAN | 0x400000, 0x80000000,
                                                     0x80000000, 0x3F800000])
    np.testing.assert_array_equal(g.vgpr(3)[0, :6], [0x3F800000, 0x3F800000, SNAN | 0x400000, 0x00000000,
                                                     0x00000000, 0x40000000])


def test_med3_and_minmax_f32():
    g = group(1)
    fill(g, 1, np.float32(5.0))
    fill(g, 2, np.float32(-1.0))
    fill(g, 3, np.float32(2.0))
    execute(g, inst("v_med3_f32", vdst=V(0), src0=V(1), src1=V(2), src2=V(3)))
    execute(g, inst("v_maxmin_f32", vdst=V(4), src0=V(1), src1=V(2), src2=V(3)))
    execute(g, inst("v_minmax_f32", vdst=V(5), src0=V(1), src1=V(2), src2=V(3)))
    assert g.vgpr(0)[0, 0] == f32(2.0) and g.vgpr(4)[0, 0] == f32(2.0) and g.vgpr(5)[0, 0] == f32(2.0)


@pytest.mark.parametrize("dx10,want_nan", [(True, 0), (False, QNAN)])
def test_clamp_and_omod_outside_ieee_mode(dx10, want_nan):
    g = group(1, mode=(MODE & ~0x200) if dx10 else MODE & ~0x300)
    fill(g, 1, np.array([f32(0.3), f32(0.7), f32(-0.2), QNAN] * 8, np.uint32))
    execute(g, inst("v_mul_f32", vdst=V(0), src0=V(1), src1=C(242), omod=1, clamp=True))
    np.testing.assert_array_equal(g.vgpr(0)[0, :4], [f32(np.float32(0.3) * 2), f32(1.0), 0, want_nan])
    execute(g, inst("v_add_f32", vdst=V(2), src0=V(1), src1=C(128), omod=3))
    assert g.vgpr(2)[0, 1] == f32(np.float32(0.7) / 2)


def test_omod_is_ignored_in_ieee_mode():
    g = group(1)
    fill(g, 1, np.float32(0.3))
    execute(g, inst("v_mul_f32", vdst=V(0), src0=V(1), src1=C(242), omod=1))
    assert g.vgpr(0)[0, 0] == f32(0.3)


def test_abs_neg_modifiers_only_touch_sign():
    g = group(1)
    fill(g, 1, np.uint32(0xFF800005))         # negative signalling NaN: abs/neg do not quiet it...
    fill(g, 2, np.float32(-2.0))
    execute(g, inst("v_mul_f32", vdst=V(0), src0=V(2), src1=C(242), abs=(True, False, False),
                    neg=(True, False, False)))
    assert g.vgpr(0)[0, 0] == f32(-2.0)
    execute(g, inst("v_add_f32", vdst=V(3), src0=V(1), src1=C(128), abs=(True, False, False)))
    assert g.vgpr(3)[0, 0] == 0x7FC00005      # ...but the add quiets the (now positive) NaN


def test_f16_add_and_fma_against_fractions():
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(64) * 30).astype(np.float16)
    b = (rng.standard_normal(64) * 0.01).astype(np.float16)
    g = group(2)
    fill(g, 1, a.reshape(2, 32))
    fill(g, 2, b.reshape(2, 32))
    execute(g, inst("v_add_f16", "VOP2", vdst=V(0), src0=V(1), src1=V(2)))
    execute(g, inst("v_fma_f16", vdst=V(3), src0=V(1), src1=V(2), src2=V(2)))
    r16 = lambda q: round_frac(q, 11, -14, 15)
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    want_add = np.array([r16(Fraction(x) + Fraction(y)) for x, y in zip(fa, fb)], np.float16)
    want_fma = np.array([r16(Fraction(x) * Fraction(y) + Fraction(y)) for x, y in zip(fa, fb)], np.float16)
    np.testing.assert_array_equal((g.vgpr(0) & 0xFFFF).ravel(), want_add.view(np.uint16))
    np.testing.assert_array_equal((g.vgpr(3) & 0xFFFF).ravel(), want_fma.view(np.uint16))


def test_f16_vop3_op_sel_reads_and_writes_high_halves_preserving_the_other():
    g = group(1)
    fill(g, 1, np.uint32((int(f16(1.5)) << 16) | int(f16(7.0))))
    fill(g, 2, np.uint32(int(f16(0.25))))
    fill(g, 0, np.uint32(0xABCD1234))
    execute(g, inst("v_add_f16", vdst=V(0), src0=V(1), src1=V(2), op_sel=(True, False, False, True)))
    assert g.vgpr(0)[0, 0] == (int(f16(1.75)) << 16) | 0x1234


def test_f16_true16_register_halves_in_vop2():
    g = group(1)
    fill(g, 1, np.uint32((int(f16(2.0)) << 16) | int(f16(3.0))))
    fill(g, 0, np.uint32(0x5555AAAA))
    # v_add_f16 v0.h, v1.h, v1.l: the decoder reports the VGPR fields' bit 7 (high half) as op_sel
    execute(g, inst("v_add_f16", "VOP2", vdst=V(0), src0=V(1), src1=V(1), op_sel=(True, False, False, True)))
    assert g.vgpr(0)[0, 0] == (int(f16(5.0)) << 16) | 0xAAAA


def test_f64_add_mul_fma_with_literal_high_dword():
    g = group(1)
    fill(g, 2, np.float64(1.25))
    execute(g, inst("v_add_f64", vdst=V(0, 2), src0=V(2, 2), src1=L(0x40080000)))      # literal = 3.0
    assert u64(g, 0)[0, 0] == f64(4.25)
    execute(g, inst("v_mul_f64", vdst=V(4, 2), src0=V(2, 2), src1=C(246)))               # 4.0
    assert u64(g, 4)[0, 0] == f64(5.0)
    execute(g, inst("v_fma_f64", vdst=V(6, 2), src0=V(2, 2), src1=C(248), src2=C(241)))  # 1/(2pi), -0.5
    inv2pi = float(np.uint64(0x3FC45F306DC9C882).view(np.float64))    # the hardware's f64 constant
    want = round_frac(Fraction(1.25) * Fraction(inv2pi) - Fraction(1, 2), 53, -1022, 1023)
    assert u64(g, 6)[0, 0] == f64(want)


def test_f64_min_max_and_dx9_mul():
    g = group(1)
    fill(g, 2, np.float64(-3.0))
    execute(g, inst("v_max_f64", vdst=V(0, 2), src0=V(2, 2), src1=C(128)))
    assert u64(g, 0)[0, 0] == f64(0.0)
    fill(g, 4, np.uint32(0x7F800000))
    execute(g, inst("v_mul_dx9_zero_f32", "VOP2", vdst=V(5), src0=V(4), src1=C(128)))
    assert g.vgpr(5)[0, 0] == 0                  # 0 * inf is +0 in the legacy multiply


def test_f64_denormals_follow_the_f16_f64_denorm_field():
    tiny = np.float64(2.0 ** -1070)                    # f64 denormal
    for denorm_hi, want in ((3, (tiny * 2).view(np.uint64)), (0, np.uint64(0))):
        g = group(1, mode=_mode(denorm_hi=denorm_hi))
        fill(g, 2, tiny)
        execute(g, inst("v_add_f64", vdst=V(0, 2), src0=V(2, 2), src1=V(2, 2)))
        assert u64(g, 0)[0, 0] == want
    g = group(1, mode=_mode(denorm32=0))               # the f32 field does not touch f64
    fill(g, 2, tiny)
    execute(g, inst("v_add_f64", vdst=V(0, 2), src0=V(2, 2), src1=V(2, 2)))
    assert u64(g, 0)[0, 0] == (tiny * 2).view(np.uint64)


def test_f16_min_max_med3_and_ldexp():
    g = group(1)
    a = np.resize(np.array([1.0, -2.0, np.nan, 0.0], np.float16), 32)
    b = np.resize(np.array([0.5, -0.0, 3.0, -0.0], np.float16), 32)
    fill(g, 1, f16(a).astype(np.uint32))
    fill(g, 2, f16(b).astype(np.uint32))
    execute(g, inst("v_max_f16", "VOP2", vdst=V(0), src0=V(1), src1=V(2)))
    np.testing.assert_array_equal(g.vgpr(0)[0, :4] & 0xFFFF, f16(np.array([1.0, -0.0, 3.0, 0.0], np.float16)))
    execute(g, inst("v_med3_f16", vdst=V(3), src0=V(1), src1=V(2), src2=C(242)))
    np.testing.assert_array_equal(g.vgpr(3)[0, :4] & 0xFFFF, f16(np.array([1.0, -0.0, 1.0, 0.0], np.float16)))
    fill(g, 4, np.uint32(0xFFF1))                        # i16 exponent -15
    execute(g, inst("v_ldexp_f16", vdst=V(5), src0=V(1), src1=V(4)))
    np.testing.assert_array_equal(g.vgpr(5)[0, :2] & 0xFFFF, f16(np.array([2.0 ** -15, -2.0 ** -14], np.float16)))


def test_f64_ldexp_takes_the_whole_exponent_range():
    g = group(1)
    x = np.resize(np.array([1.0, 1.5, 2.0 ** -1074, 1.0, 1.0, 0.75, -3.0, 2.0 ** 1000], np.float64), 32)
    e = np.resize(np.array([420, 1000, 2000, -1074, -1100, 1024, 2200, -2100], np.int32), 32)
    fill(g, 2, x)
    fill(g, 4, e.view(np.uint32))
    execute(g, inst("v_ldexp_f64", vdst=V(0, 2), src0=V(2, 2), src1=V(4)))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(u64(g, 0)[0, :8], np.ldexp(x[:8], e[:8]).view(np.uint64))


@pytest.mark.parametrize("s0,s1,s2,want", [
    (2.0, 3.0, 1.0, 0x40C00000), (2.0, 3.0, 0.0, 0xFF7FFFFF), (2.0, 3.0, -0.0, 0xFF7FFFFF),
    (2.0, 3.0, float("nan"), 0xFF7FFFFF), (2.0, float("-inf"), 1.0, 0xFF7FFFFF), (2.0, float("nan"), 1.0, 0xFF7FFFFF),
    (2.0, -3.4028234663852886e38, 1.0, 0xFF7FFFFF), (0.0, float("inf"), 1.0, 0x00000000),   # DX9: 0 * inf = +0
    (-2.0, 3.0, 5.0, 0xC0C00000)])
def test_mullit_guard_and_dx9_multiply(s0, s1, s2, want):
    g = group(1)
    for reg, v in ((1, s0), (2, s1), (3, s2)):
        fill(g, reg, np.float32(v))
    execute(g, inst("v_mullit_f32", vdst=V(0), src0=V(1), src1=V(2), src2=V(3)))
    assert g.vgpr(0)[0, 0] == want
