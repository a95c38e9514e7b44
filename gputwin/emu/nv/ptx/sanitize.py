"""The sanitizers' hook into the PTX emulator (gputwin/emu/sanitizer/ holds the checkers; docs/sanitizers.md).

A launch with checkers on runs its CTAs in `SanitizedBatch`es: every memory access already goes through
`Batch.access` (which resolves generic addresses, checks alignment and the shared/local bounds), so the
subclass checks each resolved access there, and turns off the gathers that bypass it. Findings name the
warp, thread and block, the PTX statement and its line. The barriers call `barrier_released` when a
phase completes. An unsanitized launch builds a plain Batch: nothing here runs."""
from __future__ import annotations

import numpy as np

from gputwin.emu.nv.ptx.keys import DEPTH, EXIT, WAIT
from gputwin.emu.nv.ptx.state import Batch
from gputwin.emu.sanitizer import checks, memcheck
from gputwin.emu.sanitizer.checks import ATOMIC, LOAD, STORE, describe
from gputwin.emu.sanitizer.racecheck import NONE
from gputwin.emu.sanitizer.report import Finding

TERMS = ("warp", "thread", "block")
INDEPENDENT_THREADS = 70     # sm_70 (Volta) and later schedule a warp's threads independently
NAMED_BARRIERS = 16
ATOMIC_OPS = ("atom", "red")


class SanitizedBatch(Batch):
    def __init__(self, launch, plan, ctas: np.ndarray, session):
        super().__init__(launch, plan, ctas)
        self.sanitizer = session
        self.ctas = ctas
        session.start_batch(self.nctas * self.shared_size, self.nctas)
        races = session.races
        if races is not None:
            races.track_warps(self.W, self.tpc_padded // 32, self.nctas * NAMED_BARRIERS)
            if int(launch.arch[3:]) >= INDEPENDENT_THREADS:
                races.track_lanes(self.W)

    # the full-mask gathers read memory without Batch.access: a sanitized batch takes the checked path,
    # except for shared loads when racecheck is off (the gather itself refuses any lane out of bounds)
    def gather_global(self, base, offset, nbytes, out, generic) -> bool:
        return False

    def gather_shared(self, base, offset, nbytes, out) -> bool:
        return self.sanitizer.races is None and super().gather_shared(base, offset, nbytes, out)

    def access(self, ins, space: str, addrs: np.ndarray, idx: np.ndarray, nbytes: int, write: bool):
        addrs = addrs.astype(np.uint64, copy=False)
        if space in ("", "generic"):
            if addrs.size and (addrs >> np.uint64(48)).any():   # shared/local windows: resolved by
                return super().access(ins, space, addrs, idx, nbytes, write)   # a call back into access
            space = "global"
        kind = ATOMIC if ins.op in ATOMIC_OPS else STORE if write else LOAD
        if space == "shared" and self.sanitizer.on("memcheck"):
            self._shared_bounds(ins, addrs, idx, nbytes, kind)
        where = super().access(ins, space, addrs, idx, nbytes, write)
        if isinstance(where[0], str) and where[0] == "global" and addrs.size:
            checks.global_access(self.sanitizer, self.mem, addrs, nbytes, kind,
                                 lambda checker, what, i, **facts: self.finding(ins, checker, what, idx[i], **facts))
        elif space == "shared" and self.sanitizer.races is not None and kind != ATOMIC and addrs.size:
            self._race(ins, addrs, idx, nbytes, kind)
        return where

    # --- reports ---------------------------------------------------------------------------------------
    def finding(self, ins, checker: str, what: str, thread: int, **facts) -> Finding:
        """A Finding at batch thread `thread`: its warp and thread in the block, the block, the statement."""
        cta, t = divmod(int(thread), self.tpc_padded)
        return Finding(checker, what, instruction=ins.text, source_line=ins.line, wave=t // 32,
                       lane=t, workgroup=self.sanitizer.workgroup(int(self.ctas[cta])), terms=TERMS, **facts)

    def _shared_bounds(self, ins, addrs, idx, nbytes, kind) -> None:
        """Shared accesses past the block's static + dynamic bytes fault in the emulator (as on hardware);
        memcheck reports them first, in its own terms."""
        limit = self.shared_limit
        bad = memcheck.outside_range(addrs.view(np.int64), nbytes, limit)
        if bad is not None:
            i = int(np.argmax(bad))
            self.sanitizer.report(self.finding(
                ins, "memcheck", f"invalid {describe(kind, 'shared', nbytes)}", idx[i], address=int(addrs[i]),
                size=nbytes, write=kind != LOAD, lanes=int(bad.sum()),
                detail=memcheck.past_the_end(int(addrs[i]), nbytes, limit,
                                             f"the block's {limit} bytes of shared memory (static + dynamic)")))

    def _race(self, ins, addrs, idx, nbytes, kind) -> None:
        flat = self.shared_base[idx] + addrs.view(np.int64)
        race = self.sanitizer.races.access(flat, idx // 32, self.cta_of[idx], nbytes, kind == STORE, idx % 32)
        if race is not None:
            per = self.tpc_padded // 32
            earlier = "read" if race.kind == "write-after-read" else "wrote"
            if race.other_lane != NONE:       # two threads of one warp (independent thread scheduling)
                warp = race.other_wave % per
                other = "several threads of the same warp" if race.other_lane < 0 else \
                    f"thread {warp * 32 + race.other_lane} of the same warp"
                detail = f"{other} {earlier} it with no __syncwarp (bar.warp.sync) or barrier in between"
            else:
                other = "several warps" if race.other_wave < 0 else f"warp {race.other_wave % per}"
                detail = f"{other} {earlier} it with no barrier in between"
            self.sanitizer.report(self.finding(
                ins, "racecheck", f"shared-memory {race.kind} race on {nbytes} bytes", idx[race.index],
                address=int(addrs[race.index]), size=nbytes, write=kind == STORE, lanes=race.lanes, detail=detail))


def barrier_arrived(b: SanitizedBatch, warps: np.ndarray, slots: np.ndarray) -> None:
    """Warps passed bar.arrive at the phases `slots` (block * 16 + barrier): racecheck's release."""
    if b.sanitizer.races is not None:
        b.sanitizer.races.arrived(warps, slots)


def barrier_released(b: SanitizedBatch, parked: np.ndarray, ctas: np.ndarray, waiters: np.ndarray,
                     waiter_slots: np.ndarray, done: np.ndarray) -> None:
    """Phases `done` (block * 16 + barrier) of named barriers completed, in the blocks `ctas` (barriers.py),
    releasing the warps `waiters` parked at `waiter_slots`, and `parked` the threads released from
    count-less barriers (the whole block's). racecheck: the waiters acquire what every arrival of their
    phase (bar.arrive or bar.sync) released, and the blocks start a new epoch (for several readers and
    threads of one warp); synccheck checks each block's released threads all waited at one bar.sync (not
    at different ones: divergent barriers) and none had exited instead."""
    san = b.sanitizer
    if san.races is not None:
        san.races.completed(waiters, waiter_slots, done)
        san.races.barrier(ctas)
    if not san.on("synccheck"):
        return
    code = b.plan.code
    at = np.where(parked, (b.key - WAIT - 1) & (DEPTH - 1), -1).reshape(b.nctas, -1)   # the bar's pc
    hi = at.max(axis=1)
    lo = np.where(at >= 0, at, np.iinfo(np.int64).max).min(axis=1)
    exited = (b.valid & (b.key >= EXIT)).reshape(b.nctas, -1)
    mismatch, partial = (hi >= 0) & (lo != hi), (hi >= 0) & exited.any(axis=1)
    for c in np.flatnonzero(mismatch | partial):     # blocks with a finding only: the common case loops not
        first = int(np.argmax(at[c] >= 0))
        thread = int(c) * b.tpc_padded + first
        if mismatch[c]:
            lines = " and ".join(f"PTX line {code[int(p)].line}" for p in (lo[c], hi[c]))
            other = int(np.argmax((at[c] >= 0) & (at[c] != at[c][first])))
            same_warp = other // 32 == first // 32
            san.report(b.finding(code[int(at[c][first])], "synccheck",
                                 "divergent barrier" if same_warp else "barrier mismatch", thread,
                                 detail=f"threads of one {'warp' if same_warp else 'block'} waited at different "
                                        f"bar.sync statements ({lines}; thread {other} at the other)"))
        else:
            n = int(exited[c].sum())
            san.report(b.finding(code[int(hi[c])], "synccheck", "barrier not reached by the whole block", thread,
                                 detail=f"{n} of its {int(b.valid.reshape(b.nctas, -1)[c].sum())} threads had "
                                        f"exited instead (bar.sync is undefined unless every thread of the "
                                        f"block reaches it)"))


def warp_synced(b: SanitizedBatch, m) -> None:
    """Threads `m` (None: all) passed bar.warp.sync: with lanes tracked, racecheck orders their warps'
    earlier shared accesses before their later ones."""
    races = b.sanitizer.races
    if races is not None and races.wsync is not None:
        races.warp_synced((b.valid if m is None else m).reshape(b.W, 32).any(axis=1))
