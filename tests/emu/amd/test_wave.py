"""WaveGroup: the register-file API the VALU semantics use (docs/contracts.md), splitting and merging."""
from __future__ import annotations

import numpy as np
import pytest

from gputwin.emu.amd.wave import WaveGroup, compact
from gputwin.errors import IllegalInstruction


def group(n=3, wave64=False):
    g = WaveGroup(None, np.arange(n), np.zeros(n, np.int64), wave64=wave64, mode=0x3F0, pc=0)
    g.set_exec(np.ones((n, g.lanes), bool))
    return g


def test_lane_masks_round_trip_through_sgpr_pairs_in_wave64():
    g = group(wave64=True)
    m = np.random.default_rng(0).random((3, 64)) < 0.5
    g.set_lane_mask(106, m)
    assert (g.lane_mask(106) == m).all()
    words = g.s[106].astype(np.uint64) | g.s[107].astype(np.uint64) << np.uint64(32)
    assert (words == (m * (np.uint64(1) << np.arange(64, dtype=np.uint64))).sum(axis=1)).all()
    g.set_sgpr(107, np.zeros(3, np.uint32))                   # a write to the high half is seen
    assert not g.lane_mask(106)[:, 32:].any()


def test_exec_writes_through_sgprs_and_masks_agree():
    g = group()
    g.set_sgpr(126, np.array([1, 0, 0xFFFFFFFF], np.uint32))
    assert g.exec_count == 33 and not g.exec_full and g.exec[0, 0] and not g.exec[1].any()
    g.set_lane_mask(126, np.ones((3, 32), bool))
    assert g.exec_full and g.sgpr(126).tolist() == [0xFFFFFFFF] * 3


def test_set_vgpr_honours_exec_and_explicit_masks():
    g = group(n=1)
    g.set_vgpr(5, np.arange(32)[None])
    g.set_sgpr(126, np.array([0xF], np.uint32))
    g.set_vgpr(5, np.full((1, 32), 99))
    assert g.vgpr(5)[0, :5].tolist() == [99, 99, 99, 99, 4]
    g.set_vgpr(5, 7, mask=np.eye(1, 32, 31, dtype=bool))
    assert g.vgpr(5)[0, 31] == 7 and g.vgpr(5)[0, 30] == 30
    g.set_vgpr(6, np.array([[3]]))                            # one value per wave broadcasts to its lanes
    assert g.vgpr(6)[0, :4].tolist() == [3, 3, 3, 3] and g.vgpr(6)[0, 4] == 0
    g.set_vgpr(7, np.arange(32), mask=np.ones((1, 32), bool))  # one value per lane
    assert g.vgpr(7)[0, 31] == 31
    assert not g.vgpr(5).flags.writeable                      # stored arrays are immutable


def test_special_scalar_operands_and_null():
    g = group()
    g.scc = np.array([True, False, True])
    g.set_sgpr(124, np.ones(3, np.uint32))
    assert g.sgpr(124).tolist() == [0, 0, 0]
    assert g.sgpr(253).tolist() == [1, 0, 1]
    g.set_sgpr(126, np.array([0, 1, 0], np.uint32))
    assert g.sgpr(252).tolist() == [1, 0, 1]                  # execz
    with pytest.raises(IllegalInstruction, match="scalar destination 200 is not writable"):
        g.set_sgpr(200, 0)


def test_take_and_merge_keep_per_wave_state():
    g = group(n=4)
    g.set_vgpr(1, np.arange(4)[:, None] + np.zeros((1, 32), np.uint32))
    g.s[3] = [10, 11, 12, 13]
    a, b = g.take(np.array([True, False, True, False])), g.take(np.array([False, True, False, True]))
    b.set_vgpr(2, np.full((2, 32), 5))
    m = WaveGroup.merge([a, b])
    assert m.waves.tolist() == [0, 2, 1, 3] and m.s[3].tolist() == [10, 12, 11, 13]
    assert m.vgpr(1)[:, 0].tolist() == [0, 2, 1, 3] and m.vgpr(2)[:, 0].tolist() == [0, 0, 5, 5]


def test_a_vgpr_written_from_an_sgpr_does_not_follow_later_sgpr_writes():
    g = group(n=2)
    g.s[0] = [5, 6]
    g.set_vgpr(3, g.sgpr(0)[:, None])                         # what v_mov_b32 v3, s0 hands over
    g.set_sgpr(0, np.array([7, 8], np.uint32))
    assert g.vgpr(3)[:, 0].tolist() == [5, 6]


def test_compact_views_registers_stored_per_wave_or_uniform():
    g = group()
    assert (g.vgpr(5) == 0).all() and compact(g.vgpr(5)).ndim == 0      # unwritten: one zero, no memory
    g.set_vgpr(1, np.array([[7], [8], [9]], np.uint32))                  # one value per wave
    col = compact(g.vgpr(1))
    assert col.shape == (3, 1) and col[:, 0].tolist() == [7, 8, 9]
    full = np.arange(96, dtype=np.uint32).reshape(3, 32)
    g.set_vgpr(2, full)
    assert compact(g.vgpr(2)) is g.vgpr(2)
    ex = np.ones((3, 32), bool)
    ex[1, 4] = False
    g.set_exec(ex)
    g.set_vgpr(1, np.uint32(3))                                          # a partial write makes it per lane
    assert compact(g.vgpr(1)).shape == (3, 32) and int(g.vgpr(1)[1, 4]) == 8


@pytest.mark.parametrize("lanes_disagree", [True, False], ids=["lanes-disagree", "whole-waves"])
@pytest.mark.parametrize("shape", [(6, 32), (6, 1), (32,), ()], ids=["per-lane", "per-wave", "lane-row", "scalar"])
def test_masked_writes_on_a_divergent_exec_keep_inactive_lanes_bit_for_bit(shape, lanes_disagree):
    rng = np.random.default_rng(11)
    g = group(n=6)
    old = rng.integers(0, 1 << 32, (6, 32), dtype=np.uint64).astype(np.uint32)
    g.set_vgpr(4, old)
    # two selects are used: bitwise where lanes of a wave disagree, where() when waves are wholly on or off
    ex = rng.random((6, 32)) < 0.5 if lanes_disagree else np.array([[1], [0], [1], [1], [0], [0]], bool) & \
        np.ones((1, 32), bool)
    g.set_exec(ex)
    value = rng.integers(0, 1 << 32, shape, dtype=np.uint64).astype(np.uint32)
    g.set_vgpr(4, value)
    full = np.broadcast_to(value, (6, 32))
    want = [[int(full[w, lane]) if ex[w, lane] else int(old[w, lane]) for lane in range(32)] for w in range(6)]
    assert g.vgpr(4).tolist() == want
    other = rng.random((6, 32)) < 0.3                             # an explicit mask instead of EXEC
    g.set_vgpr(4, np.uint32(0xFFFFFFFF), mask=other)
    assert g.vgpr(4).tolist() == [[0xFFFFFFFF if other[w, lane] else want[w][lane] for lane in range(32)]
                                  for w in range(6)]


def test_exec_hi_reads_zero_in_wave32_and_counts_lanes_in_wave64():
    g = group(n=2)
    g.set_sgpr(127, np.array([5, 5], np.uint32))
    assert g.s[127].tolist() == [0, 0] and g.exec_full        # wave32: EXEC_HI is not part of EXEC
    g = group(n=2, wave64=True)
    g.set_sgpr(127, np.array([0, 1], np.uint32))
    assert g.exec_count == 32 + 33 and g.exec[1, 32] and not g.exec[0, 32:].any()


def test_take_and_merge_carry_each_waves_instruction_count():
    g = group(n=4)
    g.insts += np.array([5, 6, 7, 8])
    a, b = g.take(np.array([0, 2])), g.take(np.array([1, 3]))
    b.insts += 100
    assert WaveGroup.merge([a, b]).insts.tolist() == [5, 7, 106, 108]


def test_take_from_a_big_group_keeps_every_sgpr_row():
    rng = np.random.default_rng(12)
    g = group(n=700)                                  # big enough for the live-rows path
    g.s[[0, 5, 104, 125]] = rng.integers(1, 1 << 32, (4, 700), dtype=np.uint64).astype(np.uint32)
    sel = rng.random(700) < 0.4
    part = g.take(sel)
    assert (part.s == g.s[:, sel]).all() and part.s.flags.c_contiguous and part.s.flags.writeable


def test_take_keeps_per_wave_and_uniform_registers_compact():
    g = group(n=3)
    g.set_vgpr(6, np.array([[3], [4], [5]], np.uint32))     # one value per wave
    g.set_vgpr(7, np.uint32(9))                             # one value for all
    g.set_vgpr(8, np.arange(32, dtype=np.uint32))           # one value per lane
    part = g.take(np.array([2, 0]))
    assert compact(part.vgpr(6)).tolist() == [[5], [3]] and compact(part.vgpr(7)) == 9
    assert part.vgpr(6).tolist() == [[5] * 32, [3] * 32] and part.vgpr(8).tolist() == [list(range(32))] * 2
    assert part.vgpr(9).tolist() == [[0] * 32] * 2           # never written: zeros
