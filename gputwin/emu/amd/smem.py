"""SMEM: scalar loads (s_load_*, s_buffer_load_*) and the scalar cache controls."""
from __future__ import annotations

import numpy as np

from gputwin.errors import MemoryFault

_DWORDS = {"b32": 1, "b64": 2, "b128": 4, "b256": 8, "b512": 16}
U64 = np.uint64


def _load(g, addrs: np.ndarray, ndw: int) -> np.ndarray:
    try:
        if (addrs == addrs[0]).all():     # the usual case: every wave reads the same kernel arguments
            row = np.frombuffer(g.ctx.mem.read(int(addrs[0]), 4 * ndw), np.uint32)
            return np.broadcast_to(row, (g.n, ndw))
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
