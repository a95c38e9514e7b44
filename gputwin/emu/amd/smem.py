"""SMEM: scalar loads (s_load_*, s_buffer_load_*) and the scalar cache controls."""
from __future__ import annotations

import numpy as np

from gputwin.errors import MemoryFault

_DWORDS = {"b32": 1, "b64": 2, "b128": 4, "b256": 8, "b512": 16}
U64 = np.uint64


def _uniform(row: np.ndarray) -> bool:
    return bool((row == row[0]).all())


def _load(g, addrs: np.ndarray, ndw: int) -> np.ndarray:
    try:
        return g.ctx.mem.load_u32(addrs, ndw).reshape(g.n, ndw)
    except MemoryFault as e:
        bad = np.nonzero((addrs <= U64(e.address)) & (U64(e.address) < addrs + U64(4 * ndw)))[0]
        e.wave = int(g.waves[bad[0] if bad.size else 0])
        raise


def build(inst):
    op = inst.op
    if op in ("s_dcache_inv", "s_gl1_inv"):
        return lambda g: None
    kind, _, size = op.rpartition("_")
    ndw = _DWORDS.get(size)
    if kind not in ("s_load", "s_buffer_load") or ndw is None:
        return None
    sdst = (inst.operands.get("sdata") or inst.operands["sdst"]).index
    sbase = inst.operands["sbase"].index
    soff = inst.operands.get("soffset")
    soff_i = soff.index if soff is not None and soff.kind == "sgpr" and soff.index != 124 else None
    imm = int(inst.offset)

    def offsets(g):
        off = np.full(g.n, imm, np.int64)
        if soff_i is not None:
            off = off + g.sgpr(soff_i).astype(np.int64)
        return off

    if kind == "s_load":
        def h(g):
            if _uniform(g.s[sbase]) and _uniform(g.s[sbase + 1]) and (soff_i is None or _uniform(g.s[soff_i])):
                # the usual case: every wave reads the same kernel arguments; one read, broadcast
                addr = (int(g.s[sbase, 0]) | int(g.s[sbase + 1, 0]) << 32) + imm
                addr = (addr + (int(g.s[soff_i, 0]) if soff_i is not None else 0)) & ~3 & ((1 << 64) - 1)
                try:
                    row = np.frombuffer(g.ctx.mem.read(addr, 4 * ndw), np.uint32)
                except MemoryFault as e:
                    e.wave = int(g.waves[0])
                    raise
                for k in range(ndw):
                    g.set_sgpr(sdst + k, row[k])
                return
            addrs = (g.sgpr64(sbase).astype(np.int64) + offsets(g)).astype(U64) & ~U64(3)
            data = _load(g, addrs, ndw)
            for k in range(ndw):
                g.set_sgpr(sdst + k, data[:, k])
        return h

    def hb(g):
        # V# in sbase..sbase+3: base [47:0], num_records dword 2 (bytes); dwords past it read 0
        base = g.sgpr64(sbase) & U64((1 << 48) - 1)
        records = g.sgpr(sbase + 2).astype(np.int64)
        off = (offsets(g) & ~3)[:, None] + 4 * np.arange(ndw)[None, :]
        inside = (off >= 0) & (off + 4 <= records[:, None])
        addrs = (base.astype(np.int64)[:, None] + np.where(inside, off, 0)).astype(U64)
        data = np.zeros((g.n, ndw), np.uint32)
        if inside.any():
            data[inside] = g.ctx.mem.load_u32(addrs[inside], 1)[:, 0]
        for k in range(ndw):
            g.set_sgpr(sdst + k, data[:, k])
    return hb
