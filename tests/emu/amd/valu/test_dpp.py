"""DPP16 / DPP8 source lane movement: row shifts and rotates, mirrors, quad_perm, share/xmask, masks."""
import numpy as np
import pytest

from gputwin.emu.amd.isa.inst import Dpp
from gputwin.emu.amd.valu import execute

from .helpers import V, fill, group, inst

LANES = np.arange(64, dtype=np.uint32)
OLD = np.uint32(0xDEAD)


def _mov(dpp, wave64=False, exec_=None):
    g = group(1, wave64=wave64, exec_=exec_)
    L = g.lanes
    fill(g, 1, LANES[:L][None] + 100)
    fill(g, 0, np.full((1, L), OLD, np.uint32))
    execute(g, inst("v_mov_b32", "VOP1", vdst=V(0), src0=V(1), dpp=dpp))
    return g.vgpr(0)[0].astype(np.int64)


def _expect(src, L=32, bound_ctrl=False):
    """src: source lane per lane (-1 invalid) -> value each lane ends with."""
    src = np.asarray(src)
    return np.where(src >= 0, src + 100, 0 if bound_ctrl else int(OLD))


def _rows(fn, L=32):
    return np.array([fn(i // 16 * 16, i % 16) for i in range(L)])


@pytest.mark.parametrize("n", [1, 5, 15])
@pytest.mark.parametrize("bc", [False, True])
def test_row_shl_shr_ror(n, bc):
    got = _mov(Dpp("dpp16", 0x100 | n, bound_ctrl=bc))
    np.testing.assert_array_equal(got, _expect(_rows(lambda b, r: b + r + n if r + n < 16 else -1), bound_ctrl=bc))
    got = _mov(Dpp("dpp16", 0x110 | n, bound_ctrl=bc))
    np.testing.assert_array_equal(got, _expect(_rows(lambda b, r: b + r - n if r >= n else -1), bound_ctrl=bc))
    got = _mov(Dpp("dpp16", 0x120 | n, bound_ctrl=bc))
    np.testing.assert_array_equal(got, _expect(_rows(lambda b, r: b + (r - n) % 16)))


def test_mirrors_share_xmask_and_quad_perm_in_wave64():
    L = 64
    cases = {
        0x140: lambda b, r: b + 15 - r,
        0x141: lambda b, r: b + (r // 8) * 8 + 7 - r % 8,
        0x153: lambda b, r: b + 3,
        0x165: lambda b, r: b + (r ^ 5),
        0b00_01_10_11: lambda b, r: b + (r // 4) * 4 + (3 - r % 4),      # quad_perm:[3,2,1,0]
        0b01_01_00_10: lambda b, r: b + (r // 4) * 4 + [2, 0, 1, 1][r % 4],
    }
    for ctrl, fn in cases.items():
        np.testing.assert_array_equal(_mov(Dpp("dpp16", ctrl), wave64=True), _expect(_rows(fn, L), L), err_msg=hex(ctrl))


def test_row_and_bank_masks_disable_writes():
    got = _mov(Dpp("dpp16", 0x140, row_mask=0b10, bank_mask=0b0101))
    want = _expect(_rows(lambda b, r: b + 15 - r))
    lane = np.arange(32)
    enabled = (lane >= 16) & np.isin((lane % 16) // 4, [0, 2])
    np.testing.assert_array_equal(got, np.where(enabled, want, int(OLD)))


@pytest.mark.parametrize("fi", [False, True])
def test_inactive_source_lanes_need_fetch_inactive(fi):
    ex = np.ones((1, 32), bool)
    ex[0, 3] = False
    got = _mov(Dpp("dpp16", 0x101, bound_ctrl=True, fi=fi), exec_=ex)
    want = _expect(_rows(lambda b, r: b + r + 1 if r + 1 < 16 else -1), bound_ctrl=True)
    if not fi:
        want[2] = 0                     # lane 2 reads inactive lane 3 -> invalid -> bound_ctrl zero
    want[3] = int(OLD)                  # lane 3 itself is inactive and keeps its value
    np.testing.assert_array_equal(got, want)


def test_dpp8_selects_and_inactive_sources_read_zero():
    sel = (7, 6, 5, 4, 0, 1, 2, 3)
    ex = np.ones((1, 32), bool)
    ex[0, 9] = False
    got = _mov(Dpp("dpp8", sel=sel), exec_=ex)
    lane = np.arange(32)
    src = (lane & ~7) + np.array(sel)[lane & 7]
    want = src + 100
    want[src == 9] = 0
    want[9] = int(OLD)
    np.testing.assert_array_equal(got, want)


def test_dpp_applies_to_src0_of_vop2_only():
    g = group(1)
    fill(g, 1, LANES[:32][None])
    fill(g, 2, np.full((1, 32), 1000, np.uint32))
    execute(g, inst("v_add_nc_u32", "VOP2", vdst=V(0), src0=V(1), src1=V(2), dpp=Dpp("dpp16", 0x140)))
    np.testing.assert_array_equal(g.vgpr(0)[0], _rows(lambda b, r: b + 15 - r) + 1000)


def test_invalid_dpp_ctrl_fails_closed():
    from gputwin.errors import IllegalInstruction
    with pytest.raises(IllegalInstruction, match="DPP_CTRL 0x130"):
        _mov(Dpp("dpp16", 0x130))
