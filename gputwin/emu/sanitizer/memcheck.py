"""memcheck: every global access against the exact allocations, every LDS access against the workgroup's
group segment, every private access against the per-lane size.

An allocation's extent (AddressSpace.map(extent=...)) is the byte count the driver asked for; the pages
behind it are larger, and hardware faults only past the page. memcheck flags any byte outside the
extent that still lies in its pages; an access past the pages faults as it would on hardware."""
from __future__ import annotations

import bisect

import numpy as np

from gputwin.emu.memory import AddressSpace

U64 = np.uint64


def outside_allocations(space: AddressSpace, addrs: np.ndarray, nbytes: int) -> np.ndarray | None:
    """Bool per address (uint64, flat): does [a, a+nbytes) stay in a mapping's pages but leave the
    allocation? None when no address does (the common case, settled without a per-lane search). An
    access that leaves the pages is not flagged: it faults, and the MemoryFault reports it."""
    if addrs.size == 0:
        return None
    lo, hi = int(addrs.min()), int(addrs.max())
    r = space.find(lo)
    if r is not None and hi + nbytes <= r.alloc_end:
        return None
    regions = space.regions()
    bases = np.array([x.base for x in regions], U64)
    idx = np.searchsorted(bases, addrs, side="right").astype(np.int64) - 1
    room = lambda ends: (idx >= 0) & (addrs < ends[idx]) & (ends[idx] - addrs >= U64(nbytes))   # noqa: E731
    mapped = room(np.array([x.end for x in regions] + [0], U64))
    bad = mapped & ~room(np.array([x.alloc_end for x in regions] + [0], U64))
    return bad if bad.any() else None


def nearest_allocation(space: AddressSpace, address: int, nbytes: int) -> str:
    """Where `address` lies relative to the allocation nearest to it, e.g. '12 bytes past the end of a
    4096-byte allocation at 0x7f0000001000'."""
    regions = space.regions()
    if not regions:
        return "no memory is mapped"
    i = bisect.bisect_right([r.base for r in regions], address) - 1
    cands = [regions[j] for j in (i, i + 1) if 0 <= j < len(regions)]

    def distance(r):
        return r.base - address if address < r.base else max(0, address + nbytes - r.alloc_end)
    r = min(cands, key=distance)
    size = r.alloc_end - r.base
    name = f"a {size}-byte allocation at {r.base:#x}" + (f" ({r.name})" if r.name else "")
    if address < r.base:
        return f"{r.base - address} bytes before the start of {name}"
    return past_the_end(address, nbytes, r.alloc_end, name)


def past_the_end(address: int, nbytes: int, end: int, name: str) -> str:
    """'N bytes past the end of <name>' for an access at or after `end`; for one straddling it, how many
    of its bytes are past."""
    if address >= end:
        return f"{address - end} bytes past the end of {name}"
    return f"the last {address + nbytes - end} of its {nbytes} bytes past the end of {name}"


def outside_range(offsets: np.ndarray, nbytes: int, size: int) -> np.ndarray | None:
    """LDS and private accesses: bool per offset (int64) for [o, o+nbytes) leaving [0, size); None if none."""
    if offsets.size == 0:
        return None
    if int(offsets.min()) >= 0 and int(offsets.max()) + nbytes <= size:
        return None
    return (offsets < 0) | (offsets + nbytes > size)
