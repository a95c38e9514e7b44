"""racecheck (LDS): conflicting accesses to one LDS byte by different waves of a workgroup with no barrier
between them.

Barriers cut a workgroup's run into epochs (the count of barriers it has passed). The shadow is kept per
LDS dword: the last writer (wave, epoch, and a mask of the bytes it wrote) and the reader (a wave, MANY
for several, the epoch and the bytes read). An access conflicts when, in the same epoch, another wave
wrote bytes it touches (read-after-write, write-after-write) or, for a write, another wave read them
(write-after-read). That is a happens-before check, so it does not depend on the order the emulator
happens to run the waves in. Lanes of one wave are ordered by the instruction stream and never race,
unless the core schedules them independently (NVIDIA Volta and later: `track_lanes`): then two lanes of
one warp race when they touch the same bytes from different instructions with no warp sync (bar.warp.sync,
`warp_synced`) or barrier in between; the lanes of one instruction never race with each other (a store's
colliding lanes leave one of their values, as the hardware does). Atomics are not tracked (they may
overlap). What it can miss: only the last writer of a dword is kept, so of two waves writing different
bytes of one dword the first is forgotten; two waves writing parts of one dword in one instruction are
reported only when both write the whole dword.

Barriers that only part of a workgroup takes part in (NVIDIA named barriers: `track_warps`) are
happens-before edges between the warps that take part: each warp has a clock that ticks when it arrives
at a barrier (a release of what it did before), and each warp knows, per warp of its block, the latest
such release it acquired (at the completion of a phase it waited for: bar.sync acquires what every
arrival of the phase released; bar.arrive acquires nothing). An access is ordered after a single earlier
writer's or reader's when the accessing warp acquired a release of that warp made after it; several
readers (MANY) are compared by the block's epoch as above."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NONE, MANY = -1, -2
FULL = 0xF


@dataclass
class Race:
    kind: str           # "read-after-write", "write-after-write", "write-after-read"
    index: int          # which access lane (into the arrays given to access())
    other_wave: int     # the other access's wave (MANY: several waves read)
    lanes: int          # access lanes of this instruction that conflict
    other_lane: int = NONE   # with lanes tracked, a race inside one wave: the other lane (MANY: several)


class LdsRaces:
    def __init__(self, nbytes_total: int, workgroups: int):
        dwords = -(-nbytes_total // 4)
        self.writer = np.full(dwords, NONE, np.int32)
        self.write_epoch = np.full(dwords, -1, np.int32)
        self.write_mask = np.zeros(dwords, np.uint8)
        self.reader = np.full(dwords, NONE, np.int32)
        self.read_epoch = np.full(dwords, -1, np.int32)
        self.read_mask = np.zeros(dwords, np.uint8)
        self.epoch = np.zeros(workgroups, np.int32)
        self._stamp = np.empty(dwords, np.int32)   # per-dword wave stamps within one instruction
        self.wsync = None               # per wave: warp syncs passed (track_lanes), else lanes never race
        self.clock = None               # per wave: barrier arrivals (track_warps), else the epoch orders all

    def track_lanes(self, waves: int) -> None:
        """Lanes of one wave are scheduled independently: record each access's lane and the wave's warp-sync
        count with it, so accesses of two lanes of a wave with no warp sync between them conflict."""
        dwords = self.writer.size
        self.wsync = np.zeros(waves, np.int32)
        self.write_lane, self.read_lane = np.full(dwords, NONE, np.int8), np.full(dwords, NONE, np.int8)
        self.write_sync, self.read_sync = np.zeros(dwords, np.int32), np.zeros(dwords, np.int32)
        self._lane_stamp = np.empty(dwords, np.int8)

    def track_warps(self, waves: int, per_group: int, slots: int) -> None:
        """Happens-before between single warps through barriers (`arrived`, `completed`): waves of
        `per_group` per workgroup; `slots` barrier phases that can be open at once (workgroups x barriers)."""
        dwords = self.writer.size
        self.per_group = per_group
        self.clock = np.zeros(waves, np.int32)                  # per warp: its arrivals so far
        self.seen = np.zeros((waves, per_group), np.int32)      # per warp: the clocks of its block it acquired
        self.phase = np.zeros((slots, per_group), np.int32)     # per open phase: the clocks its arrivals released
        self.write_clock, self.read_clock = np.zeros(dwords, np.int32), np.zeros(dwords, np.int32)

    def arrived(self, waves: np.ndarray, slots: np.ndarray) -> None:
        """Warps `waves` (distinct) arrive at the barrier phases `slots`: each releases what it did before."""
        self.clock[waves] += 1
        self.phase[slots, waves % self.per_group] = self.clock[waves]

    def completed(self, waiters: np.ndarray, slots: np.ndarray, done: np.ndarray) -> None:
        """The phases `done` completed; the warps `waiters` (distinct, waiting at `slots`) arrived with their
        completion and acquire what every arrival of their phase released."""
        self.arrived(waiters, slots)
        self.seen[waiters] = np.maximum(self.seen[waiters], self.phase[slots])
        self.phase[done] = 0

    def warp_synced(self, waves: np.ndarray) -> None:
        """These waves (bool per wave) passed a warp sync: their lanes' earlier accesses are ordered."""
        self.wsync += waves

    def barrier(self, local_workgroups: np.ndarray) -> None:
        """These workgroups (batch-local indices) passed a barrier: a new epoch starts for each."""
        self.epoch[local_workgroups] += 1

    @staticmethod
    def _cells(index: np.ndarray, nbytes: int):
        """(lane of each touched dword, dword, byte mask in it) for accesses of nbytes at `index`."""
        if nbytes % 4 == 0 and not (np.bitwise_or.reduce(index) & 3):    # aligned dwords: whole cells
            per = nbytes // 4
            cells = ((index >> 2)[:, None] + np.arange(per)).reshape(-1) if per > 1 else index >> 2
            return np.repeat(np.arange(index.size), per) if per > 1 else None, cells, None
        per = (nbytes + 6) // 4                      # the most dwords nbytes at any alignment can touch
        cell = (index >> 2)[:, None] + np.arange(per)
        lo = np.clip(index[:, None] - 4 * cell, 0, 4)
        hi = np.clip(index[:, None] + nbytes - 4 * cell, 0, 4)
        keep = (hi > lo).reshape(-1)
        mask = (((1 << hi) - 1) & ~((1 << lo) - 1)).astype(np.uint8).reshape(-1)
        lane = np.repeat(np.arange(index.size), per)
        return lane[keep], cell.reshape(-1)[keep], mask[keep]

    def access(self, index: np.ndarray, waves: np.ndarray, local_wg: np.ndarray, nbytes: int,
               write: bool, lanes: np.ndarray | None = None) -> Race | None:
        """Check and record one instruction's LDS access: index = byte index into the batch's LDS of each
        access lane (in range), waves its wave id, local_wg its batch-local workgroup, lanes its lane in
        the wave (used when lanes are tracked)."""
        if index.size == 0:
            return None
        lane, cells, mask = self._cells(index.astype(np.int64), nbytes)
        wave = waves.astype(np.int32) if lane is None else waves.astype(np.int32)[lane]
        ep = self.epoch[local_wg] if lane is None else self.epoch[local_wg][lane]
        intra = self.wsync is not None
        if intra:
            ln = lanes.astype(np.int8) if lane is None else lanes.astype(np.int8)[lane]
            ws = self.wsync[wave]
        full = mask is None
        m = np.uint8(FULL) if full else mask
        # dwords several waves' lanes of this instruction touch: stamp each with a wave (the last lane's
        # wins) and see which lanes lost
        self._stamp[cells] = wave
        winner = self._stamp[cells]
        mixed = winner != wave
        w = self.writer[cells]
        same_epoch = self.write_epoch[cells] == ep
        clocked = self.clock is not None
        if clocked:      # the writer's release after the write not acquired by this warp
            conflict = (w != NONE) & (w != wave) & (
                self.seen[wave, np.maximum(w, 0) % self.per_group] <= self.write_clock[cells])
        else:
            conflict = same_epoch & (w != NONE) & (w != wave)
        if intra:      # another lane of this wave wrote it, and the wave has not synced since
            conflict |= same_epoch & (w == wave) & (self.write_lane[cells] != ln) & (self.write_sync[cells] == ws)
        if not full:
            conflict &= (self.write_mask[cells] & m) != 0
        kind, other = ("write-after-write" if write else "read-after-write"), w
        other_lane = self.write_lane[cells] if intra else None
        if write and not conflict.any():
            r = self.reader[cells]
            same_epoch = self.read_epoch[cells] == ep
            if clocked:
                conflict = (same_epoch & (r == MANY)) | ((r >= 0) & (r != wave) & (
                    self.seen[wave, np.maximum(r, 0) % self.per_group] <= self.read_clock[cells]))
            else:
                conflict = same_epoch & ((r == MANY) | ((r != NONE) & (r != wave)))
            if intra:
                rl = self.read_lane[cells]
                conflict |= same_epoch & (r == wave) & ((rl == MANY) | (rl != ln)) & (self.read_sync[cells] == ws)
                other_lane = rl
            if not full:
                conflict &= (self.read_mask[cells] & m) != 0
            kind, other = "write-after-read", r
            if not conflict.any() and full and mixed.any():
                conflict, kind, other = mixed, "write-after-write", winner
        found = None
        if conflict.any():
            at = int(np.argmax(conflict))
            hit = conflict if lane is None else np.bincount(lane[conflict], minlength=index.size) > 0
            inside = intra and int(other[at]) == int(wave[at])
            found = Race(kind, at if lane is None else int(lane[at]), int(other[at]), int(np.count_nonzero(hit)),
                         int(other_lane[at]) if inside else NONE)
        if write:
            if not full:
                same = (self.writer[cells] == wave) & (self.write_epoch[cells] == ep)
                m = np.where(same, self.write_mask[cells] | m, m)
            self.writer[cells], self.write_epoch[cells], self.write_mask[cells] = wave, ep, m
            if clocked:
                self.write_clock[cells] = self.clock[wave]
            if intra:
                self.write_lane[cells], self.write_sync[cells] = ln, ws
        else:
            prior, prior_ep = self.reader[cells], self.read_epoch[cells]
            now = prior_ep == ep
            several = mixed | (now & (prior != NONE) & (prior != wave))
            if intra:      # several lanes of the wave read it since its last warp sync
                self._lane_stamp[cells] = ln
                lanes_several = (self._lane_stamp[cells] != ln) | (
                    now & (prior == wave) & (self.read_sync[cells] == ws) & (self.read_lane[cells] != ln))
            if not full:
                m = np.where(now, self.read_mask[cells] | m, m)
            self.reader[cells], self.read_epoch[cells], self.read_mask[cells] = wave, ep, m
            if clocked:
                self.read_clock[cells] = self.clock[wave]
            if several.any():
                self.reader[cells[several]] = MANY
            if intra:
                self.read_lane[cells], self.read_sync[cells] = ln, ws
                if lanes_several.any():
                    self.read_lane[cells[lanes_several]] = MANY
        return found
