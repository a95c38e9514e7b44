"""racecheck across queues: a kernel or copy on one queue touching device memory that work on another queue
wrote (or, for a write, read) with no happens-before chain between the two.

Happens-before is tracked with a vector clock per queue (the queues of one emulated GPU):
  * each kernel dispatch or copy is an operation: its queue's own clock component ticks, and the operation
    is (queue, tick). Work on one queue is ordered by the queue (engines here finish each operation
    before the next packet);
  * a signal write by an engine (PM4 RELEASE_MEM / WRITE_DATA, SDMA FENCE) releases: the written dword
    remembers (value, the writing queue's clock);
  * a GPU-side wait that is satisfied (PM4 WAIT_REG_MEM, SDMA POLL_REGMEM) acquires: the waiting queue's
    clock joins the clock of the write whose value it saw (the last write of that dword);
  * the host orders work by waiting on signals too, and that wait is invisible to the emulator (it reads
    signal memory with plain loads). Under the sanitizer the driver announces it: before a submission, a
    marker packet the real engines skip ("host observed the signal at S >= v",
    gputwin.abi.amd_pm4.GPUTWIN_NOP_HOST_OBSERVED) makes the queue acquire the clock of the first write of
    S that reached v.
Operation a happens before operation b (on queue q) when they share a queue or q's clock has a's tick.

The shadow keeps, per byte of device memory an operation touched, the last writing operation and, per
queue, the last reading operation. An access conflicts with a previous write (any access) or read (for a
write) by an operation that does not happen before it. What it cannot see: orderings made outside the
engines and the announced host observations (another process, a CPU write into mapped memory); signals
written by shaders (flags in memory polled by a kernel) are data accesses, not releases."""
from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from gputwin.abi.amd_pm4 import GPUTWIN_NOP_HOST_OBSERVED
from gputwin.emu.sanitizer.initcheck import byte_offsets, dense

NONE = -1


@dataclass
class Op:
    queue: str
    tick: int
    what: str            # "kernel at 0x...", "SDMA copy of 256 bytes" (for reports)


@dataclass
class Conflict:
    kind: str            # read-after-write, write-after-write, write-after-read
    index: int           # the first conflicting byte (into the bytes given)
    other: Op


class Releases:
    """The values engines wrote to one signal dword, in order, each with the writer's clock."""

    def __init__(self):
        self.values: list[int] = []
        self.clocks: list[dict[str, int]] = []
        self.monotonic = True      # a timeline's values only grow: first_reaching bisects

    def add(self, value: int, clock: dict[str, int]) -> None:
        self.monotonic &= not self.values or value >= self.values[-1]
        self.values.append(value)
        self.clocks.append(clock)

    def first_reaching(self, value: int) -> dict[str, int] | None:
        if self.monotonic:
            i = bisect.bisect_left(self.values, value)
            return self.clocks[i] if i < len(self.values) else None
        return next((c for v, c in zip(self.values, self.clocks) if v >= value), None)


class QueueRaces:
    def __init__(self):
        self.clock: dict[str, dict[str, int]] = {}
        self.ops: list[Op] = []
        self._op_queue: list[int] = []      # per operation: its queue's number (ordered_table's arrays)
        self._op_tick: list[int] = []
        self._queue_ids: dict[str, int] = {}
        self.releases: dict[int, Releases] = {}   # dword address -> what engines wrote there, in order
        self.current: int | None = None     # the operation running
        self._table: np.ndarray | None = None   # _ordered_table of the current operation
        self._first_unordered: int | None = None   # its _horizon

    def _vc(self, queue: str) -> dict[str, int]:
        return self.clock.setdefault(queue, {})

    # --- operations and synchronisation -------------------------------------------------------------
    def begin(self, queue: str, what: str) -> None:
        vc = self._vc(queue)
        vc[queue] = vc.get(queue, 0) + 1
        self.ops.append(Op(queue, vc[queue], what))
        self._op_queue.append(self._queue_ids.setdefault(queue, len(self._queue_ids)))
        self._op_tick.append(vc[queue])
        self.current, self._table, self._first_unordered = len(self.ops) - 1, None, None

    def end(self) -> None:
        self.current = None

    def release(self, queue: str, address: int, value: int, nbytes: int = 4) -> None:
        """An engine of `queue` wrote `value` (nbytes, little-endian) at `address`."""
        snapshot = dict(self._vc(queue))
        for off in range(0, nbytes, 4):
            self.releases.setdefault(address + off, Releases()).add((value >> (8 * off)) & 0xFFFFFFFF, snapshot)

    def acquire_last(self, queue: str, address: int) -> None:
        """A wait of `queue` on the dword at `address` was satisfied by the value last written there."""
        hist = self.releases.get(address)
        if hist is not None:
            self._join(queue, hist.clocks[-1])

    def acquire_reached(self, queue: str, address: int, value: int) -> None:
        """The host observed the 64-bit timeline at `address` at `value` or more: `queue` acquires the first
        write that reached it (the low dword's history; a timeline's high dword stays 0 below 2**32)."""
        hist = self.releases.get(address)
        clock = None if hist is None else hist.first_reaching(value)
        if clock is not None:
            self._join(queue, clock)

    def _join(self, queue: str, other: dict[str, int]) -> None:
        vc = self._vc(queue)
        for q, t in other.items():
            if t > vc.get(q, 0):
                vc[q] = t

    def _ordered_table(self) -> np.ndarray:
        """Bool per operation id (and True at index -1, NONE): does it happen before the current one?
        Made once per operation (no acquire happens while one runs)."""
        if self._table is None:
            me = self.ops[self.current]
            vc = self._vc(me.queue)
            seen = np.array([vc.get(q, 0) for q in self._queue_ids], np.int64)   # in queue-number order
            queue, tick = np.array(self._op_queue), np.array(self._op_tick)
            self._table = np.append((queue == self._queue_ids[me.queue]) | (seen[queue] >= tick), True)
        return self._table

    # --- accesses -----------------------------------------------------------------------------------------
    def access(self, region, offsets, write: bool) -> Conflict | None:
        """The current operation touches bytes `offsets` (an int64 array, or a slice) of `region` (an
        emu.memory.Region, which carries the shadow): check them against earlier operations, then record."""
        if self.current is None:
            return None
        me = self.ops[self.current]
        shadow = region.queue_shadow
        if shadow is None:    # "max": the highest operation id recorded; None: writers; a queue: its readers
            shadow = region.queue_shadow = {"max": NONE, None: np.full(region.data.size, NONE, np.int32)}
        found = None
        if shadow["max"] >= self._horizon():      # else every operation it holds is ordered before this one
            found = self._check(shadow[None][offsets], "write-after-write" if write else "read-after-write")
            if found is None and write:
                for q, readers in shadow.items():
                    if q not in (None, "max", me.queue):
                        found = self._check(readers[offsets], "write-after-read")
                        if found is not None:
                            break
        if write:
            shadow[None][offsets] = self.current
        else:
            readers = shadow.get(me.queue)
            if readers is None:
                readers = shadow[me.queue] = np.full(region.data.size, NONE, np.int32)
            readers[offsets] = self.current
        shadow["max"] = self.current
        return found

    def _horizon(self) -> int:
        """The lowest operation id not ordered before the current one (len(ops) when there is none)."""
        if self._first_unordered is None:
            table = self._ordered_table()[:-1]
            self._first_unordered = len(self.ops) if table.all() else int(np.argmin(table))
        return self._first_unordered

    def _check(self, ids: np.ndarray, kind: str) -> Conflict | None:
        bad = ~self._ordered_table()[ids]
        if not bad.any():
            return None
        i = int(np.argmax(bad))
        return Conflict(kind, i, self.ops[int(ids[i])])


# --- the engines' hooks (each returns at once when the GPU's memory has no QueueRaces) -----------------
def released(queue, address: int, value: int, nbytes: int) -> None:
    races = queue.gpu.mem.queue_races
    if races is not None:
        races.release(queue.name, address, value, nbytes)


def waited(queue, address: int, satisfied: bool) -> bool:
    races = queue.gpu.mem.queue_races
    if races is not None and satisfied:
        races.acquire_last(queue.name, address)
    return satisfied


def host_observed(queue, payload) -> None:
    """A NOP's payload: a GPUTWIN_NOP_HOST_OBSERVED marker makes the queue acquire what the host saw."""
    races = queue.gpu.mem.queue_races
    if races is not None and len(payload) == 5 and payload[0] == GPUTWIN_NOP_HOST_OBSERVED:
        races.acquire_reached(queue.name, payload[1] | payload[2] << 32, payload[3] | payload[4] << 32)


def engine_op(queue, what: str, ranges) -> None:
    """A copy or fill of an engine: its (address, bytes, write) ranges, checked as one operation."""
    races = queue.gpu.mem.queue_races
    if races is None:
        return
    mem = queue.gpu.mem
    races.begin(queue.name, what)
    try:
        for va, size, write in ranges:
            end = va + size
            while va < end:
                r = mem.find(va)
                if r is None:
                    break                 # the copy itself faults
                stop = min(end, r.end)
                found = races.access(r, slice(va - r.base, stop - r.base), write)
                if found is not None:
                    raise race_error(races, found, va + found.index, write, queue.name)
                va = stop
    finally:
        races.end()


def lanes(races: QueueRaces, mem, addrs: np.ndarray, nbytes: int, write: bool) -> tuple[Conflict, int] | None:
    """A shader instruction's accesses (uint64 addresses of nbytes): the first conflict and its lane."""
    lo, hi = int(addrs.min()), int(addrs.max())
    r = mem.find(lo)
    if r is not None and hi + nbytes <= r.end:
        groups = [(r, None)]
    else:
        groups = []
        for r in mem.regions():
            sel = (addrs >= np.uint64(r.base)) & (addrs < np.uint64(r.end))
            if sel.any():
                groups.append((r, np.flatnonzero(sel)))
    for r, sel in groups:
        a = addrs if sel is None else addrs[sel]
        first = int(a[0]) - r.base
        kept = None
        if dense(a, nbytes) and first >= 0 and first + a.size * nbytes <= r.data.size:
            offs = slice(first, first + a.size * nbytes)          # consecutive lanes: one range
        else:
            repeat = a[1:] == a[:-1]       # neighbouring lanes at one address (a broadcast): its bytes once
            if repeat.any():
                kept = np.flatnonzero(np.r_[True, ~repeat])
                a = a[kept]
            offs = byte_offsets((a - np.uint64(r.base)).astype(np.int64), nbytes)
            if sel is not None:
                offs = np.minimum(offs, r.data.size - 1)          # a lane past the mapping faults anyway
        found = races.access(r, offs, write)
        if found is not None:
            lane = found.index // nbytes
            lane = lane if kept is None else int(kept[lane])
            return found, lane if sel is None else int(sel[lane])
    return None


def describe(found: Conflict) -> str:
    earlier = "read" if found.kind == "write-after-read" else "wrote"
    return (f"{found.other.what} on queue {found.other.queue} {earlier} it, and no signal/wait chain orders "
            f"the two")


def race_error(races: QueueRaces, found: Conflict, address: int, write: bool, queue: str):
    """An engine's race, reported at once (a copy has no dispatch Session)."""
    from gputwin.emu.sanitizer.report import TALLY, Finding
    from gputwin.errors import SanitizerError
    me = races.ops[races.current]
    f = Finding("racecheck", f"cross-queue {found.kind} race", address=address, write=write,
                detail=f"{me.what} on queue {queue} touches it; {describe(found)}")
    TALLY.dispatch()
    TALLY.record([f])
    return SanitizerError(f.line(), findings=[f.line()], address=address, write=write, queue=queue)
