"""What an instruction handler returns to the executor's loop (see executor.py).

None: fall through to the next instruction. An int >= 0: jump to that byte offset (every wave of the
group agrees). END / BARRIER: the group finished / waits at s_barrier. A Diverge: the waves disagree on
the next PC and the group must be split.
"""
from __future__ import annotations

import numpy as np

END = -1
BARRIER = -2


class Diverge:
    """Waves of one group continue at different PCs: parts is a list of (bool (n,) selection, pc)."""

    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = parts

    @staticmethod
    def branch(taken: np.ndarray, target: int):
        """A conditional branch: `target` where taken, else fall through (returned as None)."""
        k = np.count_nonzero(taken)           # one C call: cheaper than all() and any() on a few waves
        if k == taken.size:
            return target
        if k == 0:
            return None
        return Diverge([(taken, target), (~taken, None)])

    @staticmethod
    def by_value(targets: np.ndarray):
        """Jump to a per-wave byte offset (s_setpc_b64 and friends)."""
        first = int(targets[0])
        if (targets == first).all():
            return first
        return Diverge([(targets == t, int(t)) for t in np.unique(targets)])
