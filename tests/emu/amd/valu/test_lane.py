"""Cross-lane instructions: readlane / readfirstlane / writelane, permlanes, swap, movrel."""
import numpy as np

from gputwin.emu.amd.valu import execute

from .helpers import C, M0, S, V, fill, group, inst

VALS = (np.arange(64, dtype=np.uint32)[None] * 7 + np.array([[0], [1000]], np.uint32))


def _g(wave64=False, exec_=None):
    g = group(2, wave64=wave64, exec_=exec_)
    fill(g, 1, VALS[:, :g.lanes])
    return g


def test_readlane_per_wave_sgpr_result():
    g = _g()
    execute(g, inst("v_readlane_b32", sdst=S(5), src0=V(1), src1=C(128 + 35)))   # lane 35 & 31 = 3
    np.testing.assert_array_equal(g.sgpr(5), VALS[:, 3])
    g.set_sgpr(6, np.array([4, 31], np.uint32))
    execute(g, inst("v_readlane_b32", sdst=S(7), src0=V(1), src1=S(6)))
    np.testing.assert_array_equal(g.sgpr(7), [VALS[0, 4], VALS[1, 31]])


def test_readfirstlane_uses_first_active_lane():
    ex = np.zeros((2, 64), bool)
    ex[0, 10:] = True
    ex[1, 40] = True
    g = _g(wave64=True, exec_=ex)
    execute(g, inst("v_readfirstlane_b32", "VOP1", sdst=S(3), src0=V(1)))
    np.testing.assert_array_equal(g.sgpr(3), [VALS[0, 10], VALS[1, 40]])


def test_writelane_ignores_exec():
    g = _g(exec_=np.zeros((2, 32), bool))
    g.set_sgpr(4, np.array([111, 222], np.uint32))
    execute(g, inst("v_writelane_b32", vdst=V(1), src0=S(4), src1=C(128 + 6)))
    want = VALS[:, :32].copy()
    want[:, 6] = [111, 222]
    np.testing.assert_array_equal(g.vgpr(1), want)


def test_permlane16_and_x16():
    g = _g()
    sel = [(i * 5 + 3) % 16 for i in range(16)]
    s1 = sum(v << (4 * i) for i, v in enumerate(sel[:8]))
    s2 = sum(v << (4 * i) for i, v in enumerate(sel[8:]))
    g.set_sgpr(10, np.uint32(s1))
    g.set_sgpr(11, np.uint32(s2))
    execute(g, inst("v_permlane16_b32", vdst=V(0), src0=V(1), src1=S(10), src2=S(11)))
    lane = np.arange(32)
    np.testing.assert_array_equal(g.vgpr(0), VALS[:, (lane & ~15) + np.array(sel)[lane & 15]])
    execute(g, inst("v_permlanex16_b32", vdst=V(2), src0=V(1), src1=S(10), src2=S(11)))
    np.testing.assert_array_equal(g.vgpr(2), VALS[:, ((lane & ~15) ^ 16) + np.array(sel)[lane & 15]])


def test_permlane64_swaps_halves_of_wave64():
    g = _g(wave64=True)
    execute(g, inst("v_permlane64_b32", "VOP1", vdst=V(0), src0=V(1)))
    np.testing.assert_array_equal(g.vgpr(0), np.concatenate([VALS[:, 32:], VALS[:, :32]], axis=1))


def test_swap_and_movrel_with_per_wave_m0():
    g = _g()
    fill(g, 2, np.uint32(9))
    execute(g, inst("v_swap_b32", "VOP1", vdst=V(1), src0=V(2)))
    np.testing.assert_array_equal(g.vgpr(2), VALS[:, :32])
    assert (g.vgpr(1) == 9).all()
    fill(g, 20, np.uint32(20))
    fill(g, 21, np.uint32(21))
    g.set_sgpr(M0, np.array([0, 1], np.uint32))
    execute(g, inst("v_movrels_b32", "VOP1", vdst=V(5), src0=V(20)))
    np.testing.assert_array_equal(g.vgpr(5)[:, 0], [20, 21])
    execute(g, inst("v_movreld_b32", "VOP1", vdst=V(30), src0=C(128 + 3)))
    assert (g.vgpr(30)[0] == 3).all() and (g.vgpr(31)[1] == 3).all() and (g.vgpr(31)[0] == 0).all()
