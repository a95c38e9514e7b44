"""racecheck (LDS): conflicting accesses to one LDS byte by different waves of a workgroup with no barrier
between them.

Barriers cut a workgroup's run into epochs (the count of barriers it has passed). Per LDS byte the
shadow keeps the last writer (wave and epoch) and the reader (a wave, MANY for several, and the epoch).
An access conflicts when, in the same epoch, another wave wrote the byte (read-after-write,
write-after-write) or, for a write, another wave read it (write-after-read). That is a happens-before
check, so it does not depend on the order the emulator happens to run the waves in. Lanes of one wave
are ordered by the instruction stream and never race; atomics are not tracked (they may overlap)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NONE, MANY = -1, -2


@dataclass
class Race:
    kind: str           # "read-after-write", "write-after-write", "write-after-read"
    index: int          # which access lane (into the arrays given to access())
    other_wave: int     # the other access's wave (MANY: several waves read)
    lanes: int          # access lanes of this instruction that conflict


class LdsRaces:
    def __init__(self, nbytes_total: int, workgroups: int):
        self.writer = np.full(nbytes_total, NONE, np.int64)
        self.write_epoch = np.full(nbytes_total, -1, np.int64)
        self.reader = np.full(nbytes_total, NONE, np.int64)
        self.read_epoch = np.full(nbytes_total, -1, np.int64)
        self.epoch = np.zeros(workgroups, np.int64)

    def barrier(self, local_workgroups: np.ndarray) -> None:
        """These workgroups (batch-local indices) passed a barrier: a new epoch starts for each."""
        self.epoch[local_workgroups] += 1

    def access(self, index: np.ndarray, waves: np.ndarray, local_wg: np.ndarray, nbytes: int,
               write: bool) -> Race | None:
        """Check and record one instruction's LDS access: index = byte index into the batch's LDS of each
        access lane (in range), waves its wave id, local_wg its batch-local workgroup."""
        if index.size == 0:
            return None
        span = np.arange(nbytes, dtype=np.int64)
        idx = (index[:, None] + span).reshape(-1)
        wave = np.repeat(waves, nbytes)
        ep = np.repeat(self.epoch[local_wg], nbytes)
        lane_of = np.repeat(np.arange(index.size), nbytes)
        same = self.write_epoch[idx] == ep
        w = self.writer[idx]
        raw = same & (w != NONE) & (w != wave)
        kind, other = ("write-after-write" if write else "read-after-write"), w
        conflict = raw
        if write:
            r = self.reader[idx]
            war = (self.read_epoch[idx] == ep) & ((r == MANY) | ((r != NONE) & (r != wave)))
            if war.any() and not raw.any():
                kind, other, conflict = "write-after-read", r, war
        # within this instruction: one byte touched by lanes of several waves
        order = np.argsort(idx, kind="stable")
        si, sw = idx[order], wave[order]
        starts = np.r_[0, np.flatnonzero(si[1:] != si[:-1]) + 1]
        lo, hi = np.minimum.reduceat(sw, starts), np.maximum.reduceat(sw, starts)
        mixed = lo != hi
        found = None
        if conflict.any():
            at = int(np.argmax(conflict))
            lanes = np.unique(lane_of[conflict]).size
            found = Race(kind, int(lane_of[at]), int(other[at]), lanes)
        elif write and mixed.any():
            u = int(np.argmax(mixed))
            at = order[starts[u]]
            found = Race("write-after-write", int(lane_of[at]), int(hi[u]) if wave[at] == lo[u] else int(lo[u]),
                         int(mixed.sum()))
        uidx, uep = si[starts], ep[order][starts]
        if write:
            self.writer[idx], self.write_epoch[idx] = wave, ep
        else:
            prior, prior_ep = self.reader[uidx], self.read_epoch[uidx]
            fresh = (prior_ep != uep) | (prior == NONE) | (prior == lo)
            self.reader[uidx] = np.where(mixed | ~fresh, MANY, lo)
            self.read_epoch[uidx] = uep
        return found
