"""What an instruction handler returns to the executor's loop (see executor.py).

None: fall through to the next instruction. An int >= 0: jump to that byte offset (every wave of the
group agrees). END / BARRIER: the group finished / waits at s_barrier. A Diverge: the waves disagree on
the next PC and the group must be split.
"""
from __future__ import annotations

import numpy as np

from gputwin.errors import IllegalInstruction, MemoryFault

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


def before_code(g, offset: int):
    """The fault for a jump to a byte offset below 0: negative offsets are END / BARRIER to the executor,
    and the decoded program starts at the start of the code's mapping (or of a raw code blob). Unmapped ->
    a fetch fault."""
    address = (g.ctx.code_address + offset) & 0xFFFFFFFFFFFFFFFF
    if g.ctx.mem.find(address) is None:
        return MemoryFault("instruction fetch from unmapped address", address=address)
    return IllegalInstruction(f"jump to {address:#x}, before the start of the code at "
                              f"{g.ctx.code_address:#x}, is not modelled")
