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

A handler may return a Native control (native/tier.py): the group is at the header of a compiled loop;
each wave runs through it on its own and the group splits by where the waves left it (docs/emulator-jit.md).

The watchdog (gputwin/emu/watchdog.py): each wave counts the instructions it executes (WaveGroup.insts);
a group stops exactly when one of its waves reaches the per-wave budget. The wall clock is read when a
group starts running and every CHECK_EVERY steps of it, so short and long groups alike are covered.
"""
from __future__ import annotations

import time

import numpy as np

from gputwin.emu.amd import sanitize
from gputwin.emu.amd.control import BARRIER, END, Diverge
from gputwin.emu.amd.native.tier import Native
from gputwin.emu.amd.wave import WaveGroup
from gputwin.emu.progress import Progress
from gputwin.emu.watchdog import CHECK_EVERY, Watchdog
from gputwin.errors import GpuFault, GpuHang

QUANTUM = 1 << 14    # steps the lowest-PC group may run while others wait, before they get a turn
NO_LIMIT = 1 << 62
SPENT = "quantum spent"


class _Stop(Exception):
    """A watchdog limit was reached while running a group; run() turns it into a GpuHang with the state."""


class Executor:
    def __init__(self, ctx, program, watchdog: Watchdog, on_end=None, progress: Progress | None = None):
        self.ctx, self.program = ctx, program
        self.watchdog = watchdog
        self.progress = progress
        self.on_end = on_end            # called with each group that reaches s_endpgm (tests, tracing)
        self.wave_insts = 0
        self.lane_ops = 0

    def run(self, groups: list[WaveGroup]) -> None:
        """Run `groups` until every wave has ended (see the module docstring)."""
        self._live = (groups,)
        try:
            self._run(groups)
        except _Stop as stop:
            raise self.watchdog.hang(str(stop), self._state()) from None

    def _state(self) -> str:
        """What progress was seen and where the waves still running are, for a hang message."""
        ctx, p = self.ctx, self.progress
        done = (p.waves_done if p else 0) + int(ctx.ended.sum())
        live = [g for part in self._live for g in part]
        total = (p.waves_total if p else 0) or done + sum(g.n for g in live)
        at: dict[int, int] = {}
        for g in live:
            at[g.pc] = at.get(g.pc, 0) + g.n
        where = ", ".join(f"{n} at pc={ctx.code_address + pc:#x} (code offset {pc:#x})"
                          for pc, n in sorted(at.items(), key=lambda kv: -kv[1])[:4])
        more = f" and {len(at) - 4} more PCs" if len(at) > 4 else ""
        return (f"{done} of {total} waves finished, {(p.wave_insts if p else 0) + self.wave_insts} wave-instructions "
                f"executed; waves still running: {where}{more}")

    def _run(self, groups: list[WaveGroup]) -> None:
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
                runnable.remove(g)
                limit = NO_LIMIT
            else:
                pc = min(x.pc for x in runnable)
                same = [x for x in runnable if x.pc == pc]
                g = same[0]
                if len(same) > 1:
                    mates = [x for x in same if x.can_merge(g)]
                    g = WaveGroup.merge(mates)
                    same = mates
                gone = set(map(id, same))
                runnable = [x for x in runnable if id(x) not in gone]
                limit = min((x.pc for x in runnable), default=NO_LIMIT)
            self._live = ([g], runnable, parked)
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
                if ctx.sanitizer is not None:
                    sanitize.barrier_arrived(ctx, self.program, g)
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
        if released and ctx.sanitizer is not None:
            sanitize.barrier_released(ctx, self.program, released)
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

    def _native(self, g: WaveGroup, native: Native, done: int):
        """Run `g` (at a loop header) through a compiled region (native/tier.py); `done` instructions of
        this turn are not yet in g.insts. Returns the scheduler's (Diverge, pc) or None (g.pc set)."""
        counts, exit_pc, lanes = native.run(g, self.watchdog.wave_insts - done - g.insts)
        g.insts += counts
        total = int(counts.sum())
        self.wave_insts += total
        self.ctx.steps += total
        self.lane_ops += lanes
        to = Diverge.by_value(exit_pc)
        if to.__class__ is int:
            g.pc = to
            return None
        return (to, 0)

    def _run_group(self, g: WaveGroup, limit: int, quantum: int):
        """Step `g` until it must yield; returns None (passed `limit`), SPENT (ran `quantum` steps), END,
        BARRIER or (Diverge, fall-through pc). Raises _Stop at a watchdog limit."""
        step = self.program.step
        steps = self.program.steps
        wd = self.watchdog
        if time.monotonic() > wd.deadline:
            raise _Stop(wd.time_cause())
        show = self.progress.show if self.progress is not None else None
        left = wd.wave_insts - int(g.insts.max()) if g.n else NO_LIMIT   # steps until the budget is spent
        stop = min(quantum, left)
        pc = g.pc
        count = 0
        lanes = 0
        check = CHECK_EVERY
        try:
            while True:
                if count >= stop:
                    g.pc = pc
                    if count >= left:
                        raise _Stop(f"a wave executed {wd.wave_insts} instructions without ending "
                                    f"(GPUTWIN_WATCHDOG_INSTS)")
                    return SPENT
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
                elif r.__class__ is Native:
                    count -= 1                       # the region counts its first instruction itself
                    lanes -= g.exec_count
                    return self._native(g, r, count)
                elif self._skip_inert(st, r):
                    pc = st[1]
                else:
                    return (r, st[1])
                check -= 1
                if check == 0:
                    check = CHECK_EVERY
                    if time.monotonic() > wd.deadline:
                        g.pc = pc
                        raise _Stop(wd.time_cause())
                    if show is not None:
                        show(self.wave_insts + count * g.n, int(self.ctx.ended.sum()))
                if pc >= limit:
                    g.pc = pc
                    return None
        except GpuFault as e:
            if e.pc is None:
                e.pc = self.ctx.code_address + g.pc
            if e.wave is None and g.n:
                e.wave = int(g.waves[0])
            raise
        finally:
            g.insts += count
            self.wave_insts += count * g.n
            self.lane_ops += lanes
            self.ctx.steps += count * g.n
