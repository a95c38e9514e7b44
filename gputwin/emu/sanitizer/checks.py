"""The global-memory check every shader core runs on an access's lanes (memcheck, then initcheck), with the
report wording they share. Each core says where a lane is (`finding(checker, what, i, **facts)` makes the
Finding for the i-th address: its wave/warp, lane/thread, group and instruction)."""
from __future__ import annotations

import numpy as np

from gputwin.emu.memory import AddressSpace
from gputwin.emu.sanitizer import initcheck, memcheck, queues

LOAD, STORE, ATOMIC = "read", "write", "atomic"


def describe(kind: str, space: str, nbytes: int) -> str:
    return f"{'read' if kind == LOAD else 'write' if kind == STORE else 'atomic'} of {nbytes} bytes of {space} memory"


def global_access(san, mem: AddressSpace, addrs: np.ndarray, nbytes: int, kind: str, finding) -> None:
    """Check (and for initcheck, record) one instruction's global accesses at `addrs` (uint64)."""
    if san.on("memcheck"):
        bad = memcheck.outside_allocations(mem, addrs, nbytes)
        if bad is not None:
            i = int(np.argmax(bad))
            a = int(addrs[i])
            san.report(finding("memcheck", f"invalid {describe(kind, 'global', nbytes)}", i,
                               address=a, size=nbytes, write=kind != LOAD, lanes=int(bad.sum()),
                               detail=memcheck.nearest_allocation(mem, a, nbytes)))
    if san.on("initcheck"):
        if kind != STORE:
            bad = initcheck.uninitialised(mem, addrs, nbytes)
            if bad is not None:
                i = int(np.argmax(bad))
                a = int(addrs[i])
                r = mem.find(a)
                where = f"{a - r.base} bytes into a {r.alloc_end - r.base}-byte allocation at {r.base:#x}" \
                    if r is not None else ""
                san.report(finding("initcheck", f"uninitialised {describe(kind, 'global', nbytes)}", i,
                                   address=a, size=nbytes, write=kind != LOAD, lanes=int(bad.sum()),
                                   detail=f"nothing wrote it since it was allocated ({where})" if where else ""))
        if kind != LOAD:
            initcheck.mark(mem, addrs, nbytes)
    races = mem.queue_races
    if races is not None and races.current is not None:
        hit = queues.lanes(races, mem, addrs, nbytes, kind != LOAD)
        if hit is not None:
            found, i = hit
            report_race(san, found, i, int(addrs[i]), nbytes, kind, finding)


def report_race(san, found, i: int, address: int, nbytes: int, kind: str, finding) -> None:
    """Report a cross-queue race found at the i-th address (`address`) of an instruction's accesses."""
    san.report(finding("racecheck", f"cross-queue {found.kind} race on {nbytes} bytes of global memory", i,
                       address=address, size=nbytes, write=kind != LOAD, detail=queues.describe(found)))
