"""Operand fetch: inline constants per operand type, literals, scalar/special sources, EXEC masking."""
import numpy as np
import pytest

from gputwin.emu.amd.valu import execute
from gputwin.emu.amd.valu.operands import inline_const
from gputwin.errors import IllegalInstruction

from .helpers import C, L, S, V, f16, f32, f64, fill, group, inst, u64
from gputwin.emu.amd.isa.inst import Operand


@pytest.mark.parametrize("index,value", [(240, 0.5), (241, -0.5), (242, 1.0), (243, -1.0), (244, 2.0),
                                         (245, -2.0), (246, 4.0), (247, -4.0)])
def test_float_inline_constants_follow_operand_type(index, value):
    assert inline_const(index, "f32") == int(f32(value))
    assert inline_const(index, "f16") == int(f16(value))
    assert inline_const(index, "f64") == int(f64(value))


def test_integer_inline_constants_sign_extend_to_width():
    assert inline_const(128, "u32") == 0 and inline_const(192, "i32") == 64
    assert inline_const(193, "i32") == 0xFFFFFFFF and inline_const(208, "i64") == 2 ** 64 - 16
    assert inline_const(200, "i16") == 0xFFF8
    assert inline_const(248, "f32") == 0x3E22F983 and inline_const(248, "f16") == 0x3118


def test_integer_constant_on_float_operand_is_raw_bits():
    g = group(1)
    fill(g, 1, np.float32(1.0))
    execute(g, inst("v_add_f32", vdst=V(0), src0=V(1), src1=C(129)))     # "1" is the bit pattern 0x1
    assert g.vgpr(0)[0, 0] == f32(np.float32(1.0) + np.uint32(1).view(np.float32))


@pytest.mark.parametrize("lit,typ_op,want", [
    (0x80000001, "v_lshlrev_b64", 0x0000_0000_8000_0001),         # unsigned: zero-extended
    (0x80000001, "v_cmp_eq_i64", None)])
def test_literal_extension_for_64bit_integers(lit, typ_op, want):
    g = group(1)
    if want is not None:
        execute(g, inst(typ_op, vdst=V(0, 2), src0=C(128), src1=L(lit)))
        assert u64(g, 0)[0, 0] == want
    else:
        fill(g, 2, np.uint64(0xFFFF_FFFF_8000_0001))              # signed: sign-extended literal matches
        execute(g, inst(typ_op, sdst=S(4), src0=V(2, 2), src1=L(lit)))
        assert g.lane_mask(4).all()


def test_sgpr_and_special_sources_broadcast_per_wave():
    g = group(2)
    g.set_sgpr(7, np.array([5, 9], np.uint32))
    g.scc = np.array([True, False])
    execute(g, inst("v_add_nc_u32", vdst=V(0), src0=S(7), src1=Operand("special", 253)))
    np.testing.assert_array_equal(g.vgpr(0)[:, 0], [6, 9])
    g.set_exec(np.zeros((2, 32), bool) | np.array([[True], [False]]))
    execute(g, inst("v_mov_b32", "VOP3", vdst=V(1), src0=Operand("special", 252)))   # src_execz
    assert (g.vgpr(1)[0] == 0).all() and (g.vgpr(1)[1] == 0).all()


def test_f64_sgpr_pair_source():
    g = group(1)
    bits = int(f64(3.5))
    g.set_sgpr(10, np.uint32(bits & 0xFFFFFFFF))
    g.set_sgpr(11, np.uint32(bits >> 32))
    execute(g, inst("v_add_f64", vdst=V(0, 2), src0=S(10, 2), src1=C(242)))
    assert u64(g, 0)[0, 0] == f64(4.5)


def test_exec_masked_lanes_untouched_for_64bit_results():
    ex = np.zeros((1, 32), bool)
    ex[0, 3] = True
    g = group(1, exec_=ex)
    fill(g, 0, np.uint64(0x1111_2222_3333_4444))
    execute(g, inst("v_lshlrev_b64", vdst=V(0, 2), src0=C(132), src1=V(0, 2)))
    got = u64(g, 0)[0]
    assert got[3] == 0x1112_2223_3334_4440 and (np.delete(got, 3) == 0x1111_2222_3333_4444).all()


def test_unmodelled_instruction_and_sources_fail_closed():
    g = group(1)
    with pytest.raises(IllegalInstruction, match="v_cubeid_f32"):
        execute(g, inst("v_cubeid_f32", vdst=V(0), src0=V(1), src1=V(2), src2=V(3)))
    with pytest.raises(IllegalInstruction, match="lds_direct"):
        execute(g, inst("v_mov_b32", "VOP1", vdst=V(0), src0=Operand("special", 254)))
    with pytest.raises(IllegalInstruction, match="clamp"):
        execute(g, inst("v_and_b32", vdst=V(0), src0=V(1), src1=V(2), clamp=True))


@pytest.mark.parametrize("index,low", [(235, 0), (236, 0xFFFFFFFF), (237, 0), (238, 0xFFFFFFFF)])
def test_64bit_aperture_source_reads_the_full_address(index, low):
    from gputwin.emu.amd.hwreg import PRIVATE_APERTURE_HI, SHARED_APERTURE_HI
    from tests.emu.amd.helpers import make_ctx
    g = group(2)
    g.ctx = make_ctx()
    want = (SHARED_APERTURE_HI if index < 237 else PRIVATE_APERTURE_HI) << 32 | low
    execute(g, inst("v_lshrrev_b64", vdst=V(0, 2), src0=C(128), src1=Operand("special", index)))
    assert (u64(g, 0) == want).all()                      # the constant-shift fast path
    execute(g, inst("v_lshrrev_b64", vdst=V(2, 2), src0=V(9), src1=Operand("special", index)))
    assert (u64(g, 2) == want).all()                      # the table path (per-lane shift count, 0 here)
    fill(g, 4, np.uint64(want))
    execute(g, inst("v_cmp_eq_u64", "VOPC", sdst=S(106), src0=Operand("special", index), src1=V(4, 2)))
    assert g.lane_mask(106).all()
