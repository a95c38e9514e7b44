"""The scheduler: divergent groups reconverge and merge, barriers hold split workgroups, counters."""
from __future__ import annotations


import numpy as np
import pytest

from gputwin.emu.amd.executor import Executor
from gputwin.emu.watchdog import Watchdog
from gputwin.emu.amd.program import Program
from gputwin.emu.amd.wave import WaveGroup
from tests.emu.amd.helpers import asm, make_ctx

DIVERGE = """
s_cmp_eq_u32 s0, 0
s_cbranch_scc1 other
s_add_u32 s1, s1, 1
s_branch join
other:
s_add_u32 s1, s1, 2
s_add_u32 s1, s1, 2
join:
s_add_u32 s1, s1, 10
s_add_u32 s1, s1, 10
s_endpgm
"""


def execute(text, n, sgpr0, waves_per_group=1):
    ctx = make_ctx(waves_per_group=waves_per_group, nwg=n // waves_per_group)
    g = WaveGroup(ctx, np.arange(n), np.arange(n) // waves_per_group, wave64=False, mode=0, pc=0)
    g.set_exec(np.ones((n, 32), bool))
    g.s[0] = sgpr0
    ended = []
    ex = Executor(ctx, Program(asm(text)), Watchdog(), on_end=ended.append)
    ex.run([g])
    return ex, ended


def test_divergent_paths_reconverge_into_one_group():
    ex, ended = execute(DIVERGE, 4, [0, 1, 0, 1])
    assert len(ended) == 1 and sorted(ended[0].waves.tolist()) == [0, 1, 2, 3]
    s1 = dict(zip(ended[0].waves.tolist(), ended[0].s[1].tolist()))
    assert s1 == {0: 24, 1: 21, 2: 24, 3: 21}
    # 2 shared + 2 on either path + 3 after the join, per wave: each instruction counted once per wave
    assert ex.wave_insts == 4 * 2 + 2 * 2 + 2 * 2 + 4 * 3
    assert ex.lane_ops == 32 * ex.wave_insts


def test_uniform_groups_never_split():
    ex, ended = execute(DIVERGE, 8, 1)
    assert len(ended) == 1 and ex.wave_insts == 8 * 7


def test_barrier_waits_for_every_wave_of_the_workgroup():
    # wave 1 of each workgroup takes a long detour before the barrier; wave 0 arrives first and must wait
    text = """
s_getreg_b32 s6, hwreg(HW_REG_HW_ID1, 0, 5)
s_cmp_eq_u32 s6, 0
s_cbranch_scc1 wait
s_mov_b32 s7, 50
spin:
s_sub_u32 s7, s7, 1
s_cmp_lg_u32 s7, 0
s_cbranch_scc1 spin
wait:
s_barrier
s_endpgm
"""
    ex, ended = execute(text, 4, 0, waves_per_group=2)
    # all four waves pass the barrier; wave 0s (no detour) were parked until the wave 1s arrived
    assert sum(g.n for g in ended) == 4
    assert ex.wave_insts == 4 * 5 + 2 * (1 + 3 * 50)


def test_execz_branch_over_vector_only_code_does_not_split():
    # waves 1 and 3 have EXEC = 0: hardware skips the v_add; running through it changes nothing for them
    text = "s_cbranch_execz skip\nv_add_nc_u32 v1, v1, 5\ns_waitcnt vmcnt(0)\nskip:\ns_mov_b32 s2, 7\ns_endpgm"
    ctx = make_ctx(nwg=4)
    g = WaveGroup(ctx, np.arange(4), np.arange(4), wave64=False, mode=0, pc=0)
    ex_mask = np.zeros((4, 32), bool)
    ex_mask[[0, 2]] = True
    g.set_exec(ex_mask)
    ended = []
    ex = Executor(ctx, Program(asm(text)), Watchdog(), on_end=ended.append)
    ex.run([g])
    assert len(ended) == 1 and ended[0].vgpr(1)[:, 0].tolist() == [5, 0, 5, 0]
    assert ex.wave_insts == 4 * 3 + 2 * 2             # the skipping waves' two instructions are not counted


def test_execz_branch_over_scalar_code_splits():
    text = "s_cbranch_execz skip\ns_mov_b32 s3, 1\nskip:\ns_endpgm"
    ctx = make_ctx(nwg=2)
    g = WaveGroup(ctx, np.arange(2), np.arange(2), wave64=False, mode=0, pc=0)
    g.set_exec(np.array([[True] * 32, [False] * 32]))
    ended = []
    Executor(ctx, Program(asm(text)), Watchdog(), on_end=ended.append).run([g])
    final = WaveGroup.merge(ended)
    assert dict(zip(final.waves.tolist(), final.s[3].tolist())) == {0: 1, 1: 0}


def test_a_spinning_wave_lets_the_wave_it_waits_for_progress():
    # wave 0 spins (at a lower PC) until wave 1 sets a flag in LDS; wave 1's code sits after the loop
    text = """
s_getreg_b32 s6, hwreg(HW_REG_HW_ID1, 0, 5)
v_mov_b32 v1, 0
s_cmp_eq_u32 s6, 1
s_cbranch_scc1 producer
spin:
ds_load_b32 v2, v1
s_waitcnt lgkmcnt(0)
v_readfirstlane_b32 s7, v2
s_cmp_eq_u32 s7, 0
s_cbranch_scc1 spin
s_endpgm
producer:
v_mov_b32 v3, 9
ds_store_b32 v1, v3
s_endpgm
"""
    ctx = make_ctx(waves_per_group=2, nwg=1, lds_bytes=4)
    g = WaveGroup(ctx, np.arange(2), np.zeros(2, np.int64), wave64=False, mode=0, pc=0)
    g.set_exec(np.ones((2, 32), bool))
    ended = []
    Executor(ctx, Program(asm(text)), Watchdog(), on_end=ended.append).run([g])
    assert sorted(w for e in ended for w in e.waves.tolist()) == [0, 1]


def test_an_else_block_ending_in_a_branch_back_runs_inert_instead_of_splitting(monkeypatch):
    # LLVM's if/else inside a loop: the else block is `s_cbranch_execz join; <vector body>; s_branch join`.
    # A wave whose lanes all took the then-side has EXEC = 0 there and runs the else block as no-ops.
    text = """
s_mov_b32 s1, 3
s_mov_b32 s5, 0
s_branch body
join:
s_or_b32 exec_lo, exec_lo, s5
s_sub_u32 s1, s1, 1
s_cmp_lg_u32 s1, 0
s_cbranch_scc0 done
body:
s_mov_b32 s5, exec_lo
v_cmpx_eq_u32 1, v1
s_xor_b32 s5, exec_lo, s5
v_add_nc_u32 v2, 10, v2
s_and_not1_saveexec_b32 s5, s5
s_cbranch_execz join
v_add_nc_u32 v2, 1, v2
s_branch join
done:
s_endpgm
"""
    ctx = make_ctx(nwg=3)
    g = WaveGroup(ctx, np.arange(3), np.arange(3), wave64=False, mode=0, pc=0)
    g.set_exec(np.ones((3, 32), bool))
    v1 = np.zeros((3, 32), np.uint32)
    v1[0] = 1                       # wave 0: every lane then-side; wave 1: every lane else-side
    v1[2, ::3] = 1                  # wave 2: mixed
    g.set_vgpr(1, v1)
    monkeypatch.setattr(WaveGroup, "take", lambda *a: pytest.fail("the group split"))
    ended = []
    ex = Executor(ctx, Program(asm(text)), Watchdog(), on_end=ended.append)
    ex.run([g])
    assert len(ended) == 1
    assert (ended[0].vgpr(2) == np.where(v1 == 1, 30, 3)).all()
    # 3 + 3 * (6 body + 4 join) + s_endpgm per wave, plus the else block (2) on waves 1 and 2 only
    assert ex.wave_insts == 3 * (3 + 3 * 10 + 1) + 2 * 3 * 2
