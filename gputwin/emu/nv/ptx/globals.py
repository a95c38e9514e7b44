"""Module-scope `.global` and `.const` variables: mapped once per AddressSpace, initialised from the
PTX initialisers. They live in GLOBALS_WINDOW (above the 47-bit user range, like the shared and local
windows), one page-aligned block per module and AddressSpace."""
from __future__ import annotations

import weakref

import numpy as np

from gputwin.emu.nv.ptx import types as T
from gputwin.emu.nv.ptx.errors import PtxError
from gputwin.emu.nv.ptx.module import align_up, decl_align, decl_size
from gputwin.emu.nv.ptx.parser import Imm, Sym

GLOBALS_WINDOW = 3 << 48
_MAPPED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def map_globals(mem, mod) -> dict[str, int]:
    per_mem = _MAPPED.setdefault(mem, {})
    hit = per_mem.get(id(mod))
    if hit is not None and hit[0] is mod:
        return hit[1]
    decls = [d for d in mod.parsed.globals if d.space in ("global", "const") and not d.extern]
    addrs: dict[str, int] = {}
    if decls:
        off, offs = 0, {}
        for d in decls:
            off = align_up(off, decl_align(d))
            offs[d.name] = off
            off += max(1, decl_size(d))
        base = GLOBALS_WINDOW + len(per_mem) * (1 << 32)
        size = align_up(off, 4096)
        buf = mem.map(base, size, name=f"ptx globals {len(per_mem)}")
        addrs = {n: base + o for n, o in offs.items()}
        for d in decls:
            if d.init:
                _init(buf, offs[d.name], d, addrs)
    per_mem[id(mod)] = (mod, addrs)
    return addrs


def _init(buf, off, d, addrs):
    t = d.type
    n = T.size(t)
    vals = []
    for v in d.init:
        if isinstance(v, Sym):
            if v.name not in addrs:
                raise PtxError(f"initialiser refers to {v.name}, which has no global address", line=d.line,
                               token=v.name)
            vals.append(addrs[v.name] + v.offset)
        elif isinstance(v, Imm) and v.bits:
            vals.append(v.value)
        elif isinstance(v, Imm) and isinstance(v.value, float):
            vals.append(int(np.array(v.value, T.dtype(t)).view(T.UINT[n])))
        else:
            vals.append((v.value if isinstance(v, Imm) else int(v)) & ((1 << (8 * n)) - 1))
    arr = np.array(vals, dtype=np.uint64).astype(T.UINT[n])
    raw = arr.view(np.uint8)
    buf[off:off + raw.size] = raw
