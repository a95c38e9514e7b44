"""The sixteen named barriers of each CTA (bar/barrier .sync, .arrive, .red; PTX ISA "bar, barrier").

Operand a names a barrier 0..15; operand b, when given, is how many threads take part (a multiple of the
warp size; bar.arrive needs one), else every thread of the CTA does. A barrier counts warps: a warp has
arrived when its live threads all have (bar.sync and bar.red park them; bar.arrive lets them run on). When
the warps that arrived in the current phase reach the count (without a count: every warp of the CTA that
has a live thread), the phase completes: its parked threads are released and the barrier starts afresh.

Completion is checked when threads arrive and, by the executor, when no thread can run (exits shrink a
count-less barrier's quorum). Parked threads whose barrier can never complete hang on hardware: a GpuHang
(synccheck reports it first). Ids outside 0..15, counts that are not a multiple of 32, a warp whose lanes
name different barriers and a bar.arrive without a count are IllegalInstruction (fail closed)."""
from __future__ import annotations

import numpy as np

from gputwin.emu.nv.ptx.keys import DEPTH, EXIT, WAIT
from gputwin.errors import GpuHang, IllegalInstruction

NAMED = 16
WARP = 32


class Barriers:
    def __init__(self, b):
        self.b = b
        self.at = np.full(b.T, -1, np.int64)        # the barrier a parked thread waits at (-1: none)
        self.count = np.zeros(b.T, np.int64)        # its thread count (0: the whole CTA)
        self.arrived = np.zeros((b.nctas, NAMED), np.int64)   # warps that passed bar.arrive this phase
        self.expect = np.zeros((b.nctas, NAMED), np.int64)    # the thread count they gave
        self.wpc = b.tpc_padded // WARP             # warps per CTA

    def reach(self, ins, m, barrier, count, wait: bool) -> None:
        """Threads `m` (None: all) execute a barrier instruction: `barrier`/`count` give operands a and b
        (count None: absent); `wait` parks them until the phase completes."""
        b = self.b
        if m is None and self._whole_block_at_once(barrier, count):
            b.key += 1                    # every warp of every block arrived together: the phase completes
            if b.sanitizer is not None:
                from gputwin.emu.nv.ptx.sanitize import barrier_arrived, barrier_released
                warps = np.arange(b.W)
                slots = warps // self.wpc * NAMED + int(barrier())
                if wait:
                    barrier_released(b, b.valid if count is None else np.zeros(b.T, bool), np.arange(b.nctas),
                                     warps, slots, np.unique(slots))
                else:
                    barrier_arrived(b, warps, slots)
                    barrier_released(b, np.zeros(b.T, bool), np.arange(b.nctas), warps[:0], slots[:0],
                                     np.unique(slots))
            self._finish_reductions()
            return
        lanes = np.flatnonzero(b.valid if m is None else m & b.valid)
        if lanes.size == 0:
            return
        ids = np.broadcast_to(barrier(), (b.T,))[lanes].astype(np.int64)
        cnt = np.zeros(lanes.size, np.int64) if count is None else \
            np.broadcast_to(count(), (b.T,))[lanes].astype(np.int64)
        self._validate(ins, lanes, ids, cnt, wait)
        if wait:
            b.key[lanes] += WAIT + 1
            self.at[lanes], self.count[lanes] = ids, cnt
        else:
            b.key[lanes] += 1                                     # on to the next instruction
            first = np.r_[True, np.diff(lanes // WARP) != 0]      # one arrival per warp
            cta, bar = lanes[first] // b.tpc_padded, ids[first]
            given = self.expect[cta, bar]
            if ((given != 0) & (given != cnt[first])).any():
                raise IllegalInstruction(f"{ins.text} at PTX line {ins.line}: warps arrive at one barrier with "
                                         f"different thread counts (undefined in PTX)")
            np.add.at(self.arrived, (cta, bar), 1)
            self.expect[cta, bar] = cnt[first]
            if b.sanitizer is not None:
                from gputwin.emu.nv.ptx.sanitize import barrier_arrived
                barrier_arrived(b, lanes[first] // WARP, cta * NAMED + bar)
        self.complete()

    def _whole_block_at_once(self, barrier, count) -> bool:
        """The common case, decided without per-thread work: every thread of the batch (no exits, no
        padding: the executor's full mask) executes one barrier whose count, if any, is the whole block,
        with no arrivals pending."""
        a = barrier()
        if np.ndim(a) or not 0 <= int(a) < NAMED or self.arrived.any():
            return False
        if count is None:
            return True
        n = count()
        return not np.ndim(n) and int(n) == self.b.tpc_padded

    def _finish_reductions(self) -> None:
        """Run the bar.red results whose threads have all been released."""
        b = self.b
        if not b.pending_red:
            return
        still = (b.key >= WAIT) & (b.key < EXIT)
        for red in [r for r in b.pending_red if not (r[0] & still).any()]:
            red[1]()
            b.pending_red.remove(red)

    def _validate(self, ins, lanes, ids, cnt, wait) -> None:
        where = f"{ins.text} at PTX line {ins.line}"
        bad = ids >= NAMED
        if bad.any():
            raise IllegalInstruction(f"{where}: barrier {int(ids[np.argmax(bad)])} (a CTA has barriers 0..15)")
        bad = (cnt % WARP != 0) | (cnt < 0)
        if bad.any():
            raise IllegalInstruction(f"{where}: thread count {int(cnt[np.argmax(bad)])} is not a multiple of the "
                                     f"warp size")
        if not wait and (cnt == 0).any():
            raise IllegalInstruction(f"{where}: bar.arrive needs a nonzero thread count")
        warp = lanes // WARP
        split = (warp[1:] == warp[:-1]) & ((ids[1:] != ids[:-1]) | (cnt[1:] != cnt[:-1]))
        if split.any():
            raise IllegalInstruction(f"{where}: lanes of warp {int(warp[np.argmax(split)]) % self.wpc} name "
                                     f"different barriers or counts")

    def complete(self) -> bool:
        """Complete every phase whose warps have all arrived: release its parked threads. True if any were."""
        b = self.b
        W, nctas = b.W, b.nctas
        parked_flat = (b.key >= WAIT) & (b.key < EXIT)
        if not self.arrived.any() and not parked_flat.any():
            return False
        live = (b.valid & (b.key < EXIT)).reshape(W, WARP)
        parked = parked_flat.reshape(W, WARP)
        waiting = parked.any(axis=1)
        whole = waiting & (parked == live).all(axis=1)          # every live lane of the warp waits
        at = self.at.reshape(W, WARP)
        wid = np.where(parked, at, -1).max(axis=1)
        wcnt = np.where(parked, self.count.reshape(W, WARP), 0).max(axis=1)
        wcta = np.arange(W) // self.wpc
        here = np.bincount(wcta[whole] * NAMED + wid[whole], minlength=nctas * NAMED).reshape(nctas, NAMED)
        count = self.expect.copy()
        count[wcta[waiting], wid[waiting]] = wcnt[waiting]
        quorum = np.where(count > 0, count // WARP, live.any(axis=1).reshape(nctas, self.wpc).sum(axis=1)[:, None])
        done = (here + self.arrived >= quorum) & ((here > 0) | (self.arrived > 0))
        if not done.any():
            return False
        released = parked_flat & done[b.cta_of, np.maximum(self.at, 0)]
        whole_cta = released & (self.count == 0)
        if b.sanitizer is not None:     # the warps released, each with the phase it waited for
            first = np.flatnonzero(released.reshape(W, WARP).any(axis=1))
            lane0 = first * WARP + np.argmax(released.reshape(W, WARP)[first], axis=1)
            waiters, waiter_slots = first, b.cta_of[lane0] * NAMED + self.at[lane0]
        b.key[released] -= WAIT
        self.at[released] = -1
        self.arrived[done] = 0
        self.expect[done] = 0
        if b.sanitizer is not None:
            from gputwin.emu.nv.ptx.sanitize import barrier_released
            barrier_released(b, whole_cta, np.flatnonzero(done.any(axis=1)), waiters, waiter_slots,
                             np.flatnonzero(done.reshape(-1)))
        self._finish_reductions()
        return bool(released.any())

    def stuck(self, plan) -> None:
        """No thread can run and no phase completes: the parked threads wait forever (a hang on hardware)."""
        b = self.b
        parked = (b.key >= WAIT) & (b.key < EXIT)
        t = int(np.argmax(parked))
        cta, bar, cnt = t // b.tpc_padded, int(self.at[t]), int(self.count[t])
        live = (b.valid & (b.key < EXIT)).reshape(b.nctas, -1)[cta]
        waiting = parked.reshape(b.nctas, -1)[cta] & (self.at.reshape(b.nctas, -1)[cta] == bar)
        need = f"{cnt} threads" if cnt else f"all {int(live.sum())} live threads of the block"
        ins = plan.code[int((b.key[t] - WAIT - 1) & (DEPTH - 1))]
        detail = (f"barrier {bar} waits for {need}; {int(waiting.sum())} threads wait there and "
                  f"{int(self.arrived[cta, bar]) * WARP} arrived with bar.arrive, and no other thread can arrive")
        if b.sanitizer is not None and b.sanitizer.on("synccheck"):
            b.sanitizer.report(b.finding(ins, "synccheck", "barrier never completes", t, detail=detail))
        raise GpuHang(f"PTX kernel {plan.kernel}: {ins.text} at PTX line {ins.line} in block {cta}: {detail} "
                      f"(the block hangs on hardware)")
