"""VOPC compares: lane masks in VCC / SDST / EXEC, unordered predicates, v_cmp_class."""
import numpy as np
import pytest

from gputwin.emu.amd.valu import execute

from .helpers import EXEC, C, S, V, VCC, f16, fill, group, inst

VALS = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5], np.float32)
A = np.repeat(VALS, 8)
B = np.tile(VALS, 8)
PRED = {
    "lt": lambda a, b: a < b, "eq": lambda a, b: a == b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
    "lg": lambda a, b: (a < b) | (a > b), "ge": lambda a, b: a >= b, "o": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
    "u": lambda a, b: np.isnan(a) | np.isnan(b), "nge": lambda a, b: ~(a >= b), "nlg": lambda a, b: ~((a < b) | (a > b)),
    "ngt": lambda a, b: ~(a > b), "nle": lambda a, b: ~(a <= b), "neq": lambda a, b: ~(a == b),
    "nlt": lambda a, b: ~(a < b), "f": lambda a, b: np.zeros(a.shape, bool),
    "t": lambda a, b: np.ones(a.shape, bool),
}


@pytest.mark.parametrize("p", sorted(PRED))
def test_f32_predicates_in_wave64_to_vcc(p):
    g = group(1, wave64=True)
    fill(g, 1, A[None])
    fill(g, 2, B[None])
    execute(g, inst(f"v_cmp_{p}_f32", "VOPC", sdst=S(VCC), src0=V(1), src1=V(2)))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(g.lane_mask(VCC)[0], PRED[p](A, B))


def test_f64_and_f16_compares():
    g = group(1)
    fill(g, 2, np.array([1.0, np.nan, -3.0, 2.0] * 8, np.float64))
    fill(g, 4, np.float64(1.0))
    execute(g, inst("v_cmp_nlt_f64", sdst=S(10), src0=V(2, 2), src1=V(4, 2)))
    np.testing.assert_array_equal(g.lane_mask(10)[0, :4], [True, True, False, True])
    fill(g, 6, f16(np.array([0.5, 1.0, 1.5, np.nan] * 8, np.float16)))
    execute(g, inst("v_cmp_gt_f16", "VOPC", sdst=S(VCC), src0=V(6), src1=V(4)))   # v4 low half is 0
    np.testing.assert_array_equal(g.lane_mask(VCC)[0, :4], [True, True, True, False])


def test_inactive_lanes_write_zero_bits():
    ex = np.zeros((2, 32), bool)
    ex[:, :5] = True
    g = group(2, exec_=ex)
    g.set_lane_mask(VCC, np.ones((2, 32), bool))
    fill(g, 1, np.uint32(3))
    execute(g, inst("v_cmp_eq_u32", "VOPC", sdst=S(VCC), src0=V(1), src1=V(1)))
    assert list(g.sgpr(VCC)) == [0x1F, 0x1F]


def test_int_compares_signed_unsigned_64():
    g = group(1)
    vals = np.array([0, 1, 0xFFFFFFFF, 0x80000000], np.uint32)
    fill(g, 1, np.repeat(vals, 8))
    fill(g, 2, np.tile(vals, 8))
    execute(g, inst("v_cmp_lt_i32", sdst=S(4), src0=V(1), src1=V(2)))
    execute(g, inst("v_cmp_lt_u32", sdst=S(6), src0=V(1), src1=V(2)))
    a, b = np.repeat(vals, 8), np.tile(vals, 8)
    np.testing.assert_array_equal(g.lane_mask(4)[0], a.view(np.int32) < b.view(np.int32))
    np.testing.assert_array_equal(g.lane_mask(6)[0], a < b)
    fill(g, 8, np.array([2 ** 63, 5, 2 ** 64 - 1, 0] * 8, np.uint64))
    execute(g, inst("v_cmp_gt_i64", sdst=S(10), src0=V(8, 2), src1=V(8, 2)))
    assert not g.lane_mask(10).any()
    execute(g, inst("v_cmp_ge_u64", sdst=S(12), src0=V(8, 2), src1=C(133)))
    np.testing.assert_array_equal(g.lane_mask(12)[0, :4], [True, True, True, False])


def test_cmpx_writes_exec_only_from_active_lanes():
    ex = np.ones((1, 32), bool)
    ex[0, 16:] = False
    g = group(1, exec_=ex)
    g.set_lane_mask(VCC, np.zeros((1, 32), bool))
    fill(g, 1, np.arange(32, dtype=np.uint32)[None])
    execute(g, inst("v_cmpx_gt_u32", "VOPC", src0=V(1), src1=C(133)))
    np.testing.assert_array_equal(g.exec[0], (np.arange(32) > 5) & (np.arange(32) < 16))
    assert g.sgpr(VCC)[0] == 0                       # gfx11 v_cmpx does not write VCC
    assert g.sgpr(EXEC)[0] == 0xFFC0


def test_cmp_class_every_class_bit():
    vals = np.array([0x7F800001, 0x7FC00000, 0xFF800000, 0xBF800000, 0x80000001, 0x80000000, 0x00000000,
                     0x00000001, 0x3F800000, 0x7F800000], np.uint32)
    g = group(1)
    fill(g, 1, np.resize(vals, 32))
    fill(g, 2, np.resize(np.array([1 << i for i in range(10)], np.uint32), 32))
    execute(g, inst("v_cmp_class_f32", "VOPC", sdst=S(VCC), src0=V(1), src1=V(2)))
    assert g.lane_mask(VCC)[0, :10].all()
    fill(g, 3, np.resize(np.array([1 << ((i + 1) % 10) for i in range(10)], np.uint32), 32))
    execute(g, inst("v_cmp_class_f32", sdst=S(8), src0=V(1), src1=V(3)))
    assert not g.lane_mask(8)[0, :10].any()
