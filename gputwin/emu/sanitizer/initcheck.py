"""initcheck: reads of device memory that nothing has written since it was allocated.

A mapping whose contents are undefined (AddressSpace.map(undefined=True): device memory the CPU does
not map) carries a shadow of one bool per byte while initcheck is on. Engine writes (copies, fills,
the command processor's writes) set it through AddressSpace.view/store; shader stores and atomics set it
through `mark`; shader loads and atomics consult `uninitialised` first. Memory the CPU maps (the host
may have written it directly) and memory mapped with initcheck off are never tracked."""
from __future__ import annotations

import numpy as np

from gputwin.emu.memory import AddressSpace

U64 = np.uint64


def _per_region(space: AddressSpace, addrs: np.ndarray, nbytes: int):
    """(region, lane selection or None for all, byte offsets) of tracked regions the addresses fall in."""
    if addrs.size == 0:
        return
    lo, hi = int(addrs.min()), int(addrs.max())
    r = space.find(lo)
    if r is not None and hi + nbytes <= r.end:
        if r.shadow is not None:
            yield r, None, (addrs - U64(r.base)).astype(np.int64)
        return
    for r in space.regions():
        if r.shadow is None:
            continue
        end = U64(r.end)
        sel = (addrs >= U64(r.base)) & (addrs < end) & (end - addrs >= U64(nbytes))
        if sel.any():
            yield r, sel, (addrs[sel] - U64(r.base)).astype(np.int64)


def dense(offs: np.ndarray, nbytes: int) -> bool:
    """Do the offsets tile one range, each access right after the one before (consecutive lanes)?"""
    return offs.size < 2 or int(offs[-1]) - int(offs[0]) == nbytes * (offs.size - 1) and \
        bool((np.diff(offs) == nbytes).all())


def byte_offsets(offs: np.ndarray, nbytes: int) -> np.ndarray:
    """Every byte of the accesses at `offs` (int64), lane by lane: nbytes strided adds, which numpy does far
    faster than a broadcast add with an inner axis of a few elements."""
    out = np.empty((offs.size, nbytes), np.int64)
    for j in range(nbytes):
        np.add(offs, j, out=out[:, j])
    return out.reshape(-1)


def uninitialised(space: AddressSpace, addrs: np.ndarray, nbytes: int) -> np.ndarray | None:
    """Bool per address: does [a, a+nbytes) hold a byte never written? None when none does."""
    bad = None
    for r, sel, offs in _per_region(space, addrs, nbytes):
        lo, hi = int(offs.min()), int(offs.max())
        if r.shadow[lo:hi + nbytes].all():       # everything between the lowest and highest access written
            continue
        lanes = ~r.shadow[byte_offsets(offs, nbytes)].reshape(-1, nbytes).all(axis=1)
        if lanes.any():
            if bad is None:
                bad = np.zeros(addrs.size, bool)
            if sel is None:
                bad |= lanes
            else:
                bad[sel] |= lanes
    return bad


def mark(space: AddressSpace, addrs: np.ndarray, nbytes: int) -> None:
    """Record that [a, a+nbytes) was written at each address."""
    for r, _, offs in _per_region(space, addrs, nbytes):
        if dense(offs, nbytes):
            r.shadow[int(offs[0]):int(offs[-1]) + nbytes] = True
        else:
            r.shadow[byte_offsets(offs, nbytes)] = True
