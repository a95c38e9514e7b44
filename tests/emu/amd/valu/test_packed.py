"""VOP3P packed math, v_fma_mix* and dot products (WMMA: test_wmma.py); VOPD dual issue."""
from fractions import Fraction

import numpy as np
import pytest

from gputwin.emu.amd.isa.inst import Inst
from gputwin.emu.amd.valu import execute

from .helpers import C, L, V, VCC, bf16, f16, f32, fill, group, inst, round_frac



def _pk(lo, hi):
    return (f16(hi).astype(np.uint32) << 16) | f16(lo).astype(np.uint32)


def test_pk_add_f16_op_sel_and_neg_halves():
    g = group(1)
    fill(g, 1, _pk(np.float16(1.5), np.float16(-4.0)))
    fill(g, 2, _pk(np.float16(0.25), np.float16(8.0)))
    # lo = src0.hi + (-src1.lo) ; hi = src0.lo + src1.hi(negated by neg_hi)
    execute(g, inst("v_pk_add_f16", "VOP3P", vdst=V(0), src0=V(1), src1=V(2), op_sel=(True, False, False, False),
                    op_sel_hi=(False, True, True), neg=(False, True, False), neg_hi=(False, True, False)))
    assert g.vgpr(0)[0, 0] == _pk(np.float16(-4.25), np.float16(-6.5))


def test_pk_fma_and_mul_against_rounded_reference(rng):
    a = (rng.standard_normal(64) * 10).astype(np.float16).reshape(2, 32)
    b = (rng.standard_normal(64)).astype(np.float16).reshape(2, 32)
    g = group(1)
    fill(g, 1, _pk(a[0], a[1]))
    fill(g, 2, _pk(b[0], b[1]))
    execute(g, inst("v_pk_fma_f16", "VOP3P", vdst=V(0), src0=V(1), src1=V(2), src2=V(1)))
    r = lambda x, y: round_frac(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(x)), 11, -14, 15)
    want_lo = np.array([r(x, y) for x, y in zip(a[0], b[0])], np.float16)
    want_hi = np.array([r(x, y) for x, y in zip(a[1], b[1])], np.float16)
    np.testing.assert_array_equal(g.vgpr(0)[0], _pk(want_lo, want_hi))


def test_pk_inline_constant_is_low_half_with_zero_high_half_and_int_clamp():
    g = group(1)
    fill(g, 1, _pk(np.float16(1.0), np.float16(3.0)))
    execute(g, inst("v_pk_add_f16", "VOP3P", vdst=V(0), src0=V(1), src1=C(244)))        # + (2.0, 0.0)
    assert g.vgpr(0)[0, 0] == _pk(np.float16(3.0), np.float16(3.0))
    execute(g, inst("v_pk_mul_f16", "VOP3P", vdst=V(6), src0=V(1), src1=C(244), op_sel_hi=(True, False, True)))
    assert g.vgpr(6)[0, 0] == _pk(np.float16(2.0), np.float16(6.0))                   # hi reads the low half
    fill(g, 2, np.uint32(0xFFF0_7FF0))
    execute(g, inst("v_pk_add_u16", "VOP3P", vdst=V(3), src0=V(2), src1=L(0x0020_0020), clamp=True))
    execute(g, inst("v_pk_add_i16", "VOP3P", vdst=V(4), src0=V(2), src1=L(0x0020_0020), clamp=True))
    execute(g, inst("v_pk_add_u16", "VOP3P", vdst=V(5), src0=V(2), src1=L(0x0020_0020)))
    assert g.vgpr(3)[0, 0] == 0xFFFF_8010
    assert g.vgpr(4)[0, 0] == 0x0010_7FFF
    assert g.vgpr(5)[0, 0] == 0x0010_8010


@pytest.mark.parametrize("const,op_sel_hi,want", [
    (193, (True, True, True), 0x0002_0004),      # -1: sign-extended to 32 bits, both halves 0xFFFF (clang's
                                                 # (x, y) + (-1, -1) is `v_pk_add_u16 v, v, -1`)
    (131, (True, False, True), 0x0006_0008),     # 3 with op_sel_hi:[1,0]: (x, y) + (3, 3)
    (131, (True, True, True), 0x0003_0008),      # 3: the high half of the 32-bit constant is 0
    (244, (True, True, True), 0x4003_0005),      # 2.0: the f32 pattern 0x40000000 (hardware-recorded)
])
def test_pk_integer_inline_constants_are_32_bit(const, op_sel_hi, want):
    g = group(1)
    fill(g, 1, np.uint32(0x0003_0005))
    execute(g, inst("v_pk_add_u16", "VOP3P", vdst=V(0), src0=V(1), src1=C(const), op_sel_hi=op_sel_hi))
    assert g.vgpr(0)[0, 0] == want


def test_pk_shifts_and_min_max_int():
    g = group(1)
    fill(g, 1, np.uint32(0x0011_0003))
    fill(g, 2, np.uint32(0x8000_F00F))
    execute(g, inst("v_pk_ashrrev_i16", "VOP3P", vdst=V(0), src0=V(1), src1=V(2)))
    assert g.vgpr(0)[0, 0] == 0xC000_FE01
    execute(g, inst("v_pk_max_i16", "VOP3P", vdst=V(3), src0=V(1), src1=V(2)))
    execute(g, inst("v_pk_max_u16", "VOP3P", vdst=V(4), src0=V(1), src1=V(2)))
    assert g.vgpr(3)[0, 0] == 0x0011_0003 and g.vgpr(4)[0, 0] == 0x8000_F00F


def test_pk_fmac_vop2_accumulates_into_destination():
    g = group(1)
    fill(g, 0, _pk(np.float16(1.0), np.float16(2.0)))
    fill(g, 1, _pk(np.float16(3.0), np.float16(4.0)))
    execute(g, inst("v_pk_fmac_f16", "VOP2", vdst=V(0), src0=V(1), src1=V(1)))
    assert g.vgpr(0)[0, 0] == _pk(np.float16(10.0), np.float16(18.0))


def test_fma_mix_f32_sources_and_mixlo_single_rounding():
    g = group(1)
    fill(g, 1, _pk(np.float16(1.5), np.float16(-2.0)))
    fill(g, 2, np.float32(1.0 / 3.0))
    fill(g, 0, np.uint32(0xABCD0000))
    # src0 = f16 hi half (-2.0), src1 = f32 (1/3), src2 = abs(f16 lo) (1.5)
    execute(g, inst("v_fma_mix_f32", "VOP3P", vdst=V(3), src0=V(1), src1=V(2), src2=V(1),
                    op_sel=(True, False, False, False), op_sel_hi=(True, False, True), neg_hi=(False, False, True)))
    want = round_frac(Fraction(-2) * Fraction(float(np.float32(1 / 3))) + Fraction(3, 2), 24, -126, 127)
    assert g.vgpr(3)[0, 0] == f32(want)
    execute(g, inst("v_fma_mixlo_f16", "VOP3P", vdst=V(0), src0=V(1), src1=V(2), src2=V(1),
                    op_sel=(True, False, False, False), op_sel_hi=(True, False, True)))
    want16 = round_frac(Fraction(-2) * Fraction(float(np.float32(1 / 3))) + Fraction(3, 2), 11, -14, 15)
    assert g.vgpr(0)[0, 0] == 0xABCD0000 | int(f16(want16))


def test_dot2_f32_f16_and_bf16():
    g = group(1)
    fill(g, 1, _pk(np.float16(1.5), np.float16(2.0)))
    fill(g, 2, _pk(np.float16(4.0), np.float16(-0.25)))
    fill(g, 3, np.float32(10.0))
    execute(g, inst("v_dot2_f32_f16", "VOP3P", vdst=V(0), src0=V(1), src1=V(2), src2=V(3)))
    assert g.vgpr(0)[0, 0] == f32(1.5 * 4 - 0.5 + 10)
    fill(g, 4, (bf16(3.0).astype(np.uint32) << 16) | bf16(0.5).astype(np.uint32))
    execute(g, inst("v_dot2_f32_bf16", "VOP3P", vdst=V(5), src0=V(4), src1=V(4), src2=C(242)))
    assert g.vgpr(5)[0, 0] == f32(9 + 0.25 + 1)


def test_dot2_f16_f16_and_bf16_bf16_halves_by_op_sel():
    g = group(1)
    fill(g, 1, _pk(np.float16(1.5), np.float16(2.0)))
    fill(g, 2, _pk(np.float16(4.0), np.float16(-0.25)))
    fill(g, 3, np.uint32((int(f16(100.0)) << 16) | int(f16(1.0))))
    fill(g, 0, np.uint32(0x0000BEEF))
    execute(g, inst("v_dot2_f16_f16", vdst=V(0), src0=V(1), src1=V(2), src2=V(3), op_sel=(False, False, True, True)))
    assert g.vgpr(0)[0, 0] == (int(f16(105.5)) << 16) | 0xBEEF
    b = (bf16(3.0).astype(np.uint32) << 16) | bf16(0.5).astype(np.uint32)
    fill(g, 4, b)
    execute(g, inst("v_dot2_bf16_bf16", vdst=V(5), src0=V(4), src1=V(4), src2=C(242)))
    assert g.vgpr(5)[0, 0] & 0xFFFF == int(bf16(10.25))


@pytest.mark.parametrize("signed", [(False, False), (True, False), (True, True)])
def test_dot4_iu8_signedness_from_neg_bits(signed, rng):
    a = rng.integers(0, 1 << 32, (1, 32), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, (1, 32), dtype=np.uint64).astype(np.uint32)
    g = group(1)
    fill(g, 1, a)
    fill(g, 2, b)
    fill(g, 3, np.int32(-5))
    execute(g, inst("v_dot4_i32_iu8", "VOP3P", vdst=V(0), src0=V(1), src1=V(2), src2=V(3),
                    neg=(signed[0], signed[1], False)))
    def elems(v, s):
        e = [(int(v) >> (8 * k)) & 0xFF for k in range(4)]
        return [x - 256 if s and x >= 128 else x for x in e]
    want = [-5 + sum(x * y for x, y in zip(elems(p, signed[0]), elems(q, signed[1]))) for p, q in zip(a[0], b[0])]
    np.testing.assert_array_equal(g.vgpr(0)[0].view(np.int32), want)


def test_dot4_u32_u8_clamp():
    g = group(1)
    fill(g, 1, np.uint32(0xFFFFFFFF))
    fill(g, 2, np.uint32(0xFFFFFFFF))
    execute(g, inst("v_dot4_u32_u8", "VOP3P", vdst=V(0), src0=V(1), src1=V(2), src2=L(0xFFFFFF00), clamp=True))
    assert g.vgpr(0)[0, 0] == 0xFFFFFFFF


def _half(op, **kw):
    return inst(op, "VOPD", **kw)


def test_vopd_halves_read_before_either_writes():
    g = group(1)
    fill(g, 1, np.uint32(111))
    fill(g, 2, np.uint32(222))
    d = Inst(op="v_dual", encoding="VOPD", opcode=0, size=8,
             vopd=(_half("v_mov_b32", vdst=V(1), src0=V(2)), _half("v_mov_b32", vdst=V(2), src0=V(1))))
    execute(g, d)
    assert g.vgpr(1)[0, 0] == 222 and g.vgpr(2)[0, 0] == 111


def test_vopd_fmaak_cndmask_and_dot2acc():
    g = group(1)
    fill(g, 1, np.float32(2.0))
    fill(g, 2, np.float32(3.0))
    fill(g, 3, _pk(np.float16(1.0), np.float16(2.0)))
    fill(g, 4, np.float32(0.5))
    sel = np.zeros((1, 32), bool)
    sel[0, ::3] = True
    g.set_lane_mask(VCC, sel)
    k = L(int(f32(10.0)))
    d = Inst(op="v_dual", encoding="VOPD", opcode=0, size=12,
             vopd=(_half("v_fmaak_f32", vdst=V(5), src0=V(1), src1=V(2), k=k),
                   _half("v_cndmask_b32", vdst=V(6), src0=V(1), src1=V(2))))
    execute(g, d)
    assert (g.vgpr(5) == f32(16.0)).all()
    np.testing.assert_array_equal(g.vgpr(6)[0], np.where(sel[0], f32(3.0), f32(2.0)))
    d2 = Inst(op="v_dual", encoding="VOPD", opcode=0, size=8,
              vopd=(_half("v_dot2acc_f32_f16", vdst=V(4), src0=V(3), src1=V(3)),
                    _half("v_add_nc_u32", vdst=V(7), src0=C(129), src1=V(4))))
    execute(g, d2)
    assert g.vgpr(4)[0, 0] == f32(5.5) and g.vgpr(7)[0, 0] == int(f32(0.5)) + 1


def test_packed_ops_leave_inactive_lanes_untouched():
    ex = np.zeros((1, 32), bool)
    ex[0, 1::2] = True
    g = group(1, exec_=ex)
    fill(g, 0, np.uint32(0xCAFEF00D))
    fill(g, 1, _pk(np.float16(1.0), np.float16(2.0)))
    execute(g, inst("v_pk_mul_f16", "VOP3P", vdst=V(0), src0=V(1), src1=V(1)))
    execute(g, inst("v_fma_mix_f32", "VOP3P", vdst=V(2), src0=V(1), src1=V(1), src2=V(1)))
    np.testing.assert_array_equal(g.vgpr(0)[0], np.where(ex[0], _pk(np.float16(1.0), np.float16(4.0)), 0xCAFEF00D))
    np.testing.assert_array_equal(g.vgpr(2)[0], np.where(ex[0], f32(2.0), 0))
