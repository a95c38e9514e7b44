"""The scheduler: runs WaveGroups of one dispatch batch until every wave has ended.

Policy: always run the runnable group with the lowest PC, after merging every group parked at that same
PC into it. A group runs until it ends, waits at s_barrier, diverges (split into one group per target),
or its PC passes the lowest PC of another group (then that one gets its turn and the two merge where
their PCs meet). This reconverges divergent control flow at the first common PC, like the hardware's
EXEC-mask structured code, while keeping every step vectorised over all waves that agree. A group that
loops for QUANTUM steps while others wait hands every other group one turn out of PC order, so waves
that spin on a flag another wave sets still make progress.

s_barrier: a group parks after the barrier; the waves of a workgroup are released once every wave of it
has either arrived or ended. All groups parked with nothing runnable is a deadlock -> GpuHang.
"""
from __future__ import annotations

import time

import numpy as np

from gputwin.emu.amd.control import BARRIER, END
from gputwin.emu.amd.wave import WaveGroup
from gputwin.errors import GpuFault, GpuHang

CHECK_EVERY = 1024   # steps between watchdog checks
QUANTUM = 1 << 14    # steps the lowest-PC group may run while others wait, before they get a turn
NO_LIMIT = 1 << 62
SPENT = "quantum spent"


class Executor:
    def __init__(self, ctx, program, deadline: float, on_end=None):
        self.ctx, self.program, self.deadline = ctx, program, deadline
        self.on_end = on_end            # called with each group that reaches s_endpgm (tests, tracing)
        self.wave_insts = 0
        self.lane_ops = 0
        self.budget = CHECK_EVERY        # steps until the next watchdog check (shared by all groups)

    def run(self, groups: list[WaveGroup]) -> None:
        ctx = self.ctx
        runnable = list(groups)
        parked: list[WaveGroup] = []
        turns: list[WaveGroup] = []      # groups owed a turn out of PC order (forward progress)
        while runnable or parked:
            if not runnable:
                runnable, parked = self._release(parked)
                if not runnable:
                    raise GpuHang(f"s_barrier deadlock: {sum(g.n for g in parked)} waves wait forever "
                                  f"(pc={ctx.code_address + parked[0].pc:#x})")
                continue
            g = turns.pop() if turns else None
            if g is not None and any(g is x for x in runnable):
                runnable = [x for x in runnable if x is not g]
                limit = NO_LIMIT
            else:
                pc = min(x.pc for x in runnable)
                same = [x for x in runnable if x.pc == pc]
                g = same[0]
                if len(same) > 1:
                    mates = [x for x in same if x.can_merge(g)]
                    g = WaveGroup.merge(mates)
                    same = mates
                runnable = [x for x in runnable if not any(x is y for y in same)]
                limit = min((x.pc for x in runnable), default=NO_LIMIT)
            result = self._run_group(g, limit, QUANTUM if runnable else NO_LIMIT)
            if result is None:                       # passed another group's PC: take turns
                runnable.append(g)
            elif result is SPENT:                    # a long loop while others wait: let each run once
                turns = list(runnable)
                runnable.append(g)
            elif isinstance(result, tuple):          # Diverge, fall-through pc
                for sel, target in result[0].parts:
                    part = g.take(sel)
                    part.pc = result[1] if target is None else target
                    runnable.append(part)
            elif result == END:
                if self.on_end is not None:
                    self.on_end(g)
                ctx.ended += np.bincount(g.wg, minlength=ctx.ended.size)
                if parked:
                    released, parked = self._release(parked)
                    runnable += released
            else:                                    # BARRIER
                parked.append(g)
                released, parked = self._release(parked)
                runnable += released

    def _release(self, parked):
        """Split parked groups into (released, still parked) by whole workgroups."""
        ctx = self.ctx
        arrived = ctx.ended.copy()
        for g in parked:
            arrived += np.bincount(g.wg, minlength=arrived.size)
        done = arrived >= ctx.waves_per_group
        released, waiting = [], []
        for g in parked:
            sel = done[g.wg]
            if sel.all():
                released.append(g)
            elif sel.any():
                released.append(g.take(sel))
                waiting.append(g.take(~sel))
            else:
                waiting.append(g)
        return released, waiting

    def _skip_inert(self, st, r) -> bool:
        """An s_cbranch_execz over code that waves with EXEC = 0 run without effect: rather than split the
        group, let the skipping waves run through it (their instructions are taken off wave_insts)."""
        if st[2] is None or st[2].op != "s_cbranch_execz":
            return False
        (taken, target), = [p for p in r.parts if p[1] is not None]
        k = self.program.inert_run(st[1], target)
        if k is None:
            return False
        self.wave_insts -= int(np.count_nonzero(taken)) * k
        return True

    def _run_group(self, g: WaveGroup, limit: int, quantum: int):
        """Step `g` until it must yield; returns None (passed `limit`), SPENT (ran `quantum` steps), END,
        BARRIER or (Diverge, fall-through pc)."""
        step = self.program.step
        steps = self.program.steps
        pc = g.pc
        count = 0
        lanes = 0
        budget = self.budget
        try:
            while True:
                st = steps.get(pc) or step(pc)
                g.pc = pc
                lanes += g.exec_count
                count += 1
                r = st[0](g)
                if r is None:
                    pc = st[1]
                elif r.__class__ is int:
                    if r < 0:
                        if r == END:
                            return END
                        g.pc = st[1]
                        return BARRIER
                    pc = r
                elif self._skip_inert(st, r):
                    pc = st[1]
                else:
                    return (r, st[1])
                budget -= 1
                if budget == 0:
                    budget = CHECK_EVERY
                    if time.monotonic() > self.deadline:
                        g.pc = pc
                        raise GpuHang(f"dispatch exceeded the watchdog (pc={self.ctx.code_address + pc:#x}, "
                                      f"{g.n} waves still running)")
                if pc >= limit:
                    g.pc = pc
                    return None
                if count >= quantum:
                    g.pc = pc
                    return SPENT
        except GpuFault as e:
            if e.pc is None:
                e.pc = self.ctx.code_address + g.pc
            if e.wave is None and g.n:
                e.wave = int(g.waves[0])
            raise
        finally:
            self.budget = max(budget, 1)
            self.wave_insts += count * g.n
            self.lane_ops += lanes
            self.ctx.steps += count * g.n
