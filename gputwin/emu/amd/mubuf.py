"""MUBUF: untyped buffer loads, stores and atomics through a buffer resource descriptor (V#).

The V# is four SGPRs (gfx10+/gfx11 layout): base address [47:0], STRIDE [61:48], SWIZZLE_ENABLE
[63:62], NUM_RECORDS [95:64], and in the last dword ADD_TID_ENABLE [23], OOB_SELECT [29:28], TYPE
[31:30]. Per lane (RDNA3 ISA guide, buffer addressing; LLVM's buffer intrinsics for which offsets are
range checked):
    index  = VADDR[0] if idxen else 0
    offset = inst_offset + (VADDR[idxen] if offen else 0)
    address = base + soffset + index * stride + offset
Range checks follow one of three rule sets (`rules`; docs/buffers.md). Each dword of an access (the
whole access when narrower) is checked on its own; format instructions (mtbuf.py) check the element as
a whole. GFX11 and GFX12, by OOB_SELECT (RDNA4 guide, "Buffer Out Of Bounds Selection"; Mesa's
ac_build_buffer_descriptor lists the same for gfx11+):
    0: index < NUM_RECORDS and, when STRIDE != 0, offset + end of the dword <= STRIDE
    1: index < NUM_RECORDS            2: NUM_RECORDS != 0
    3: index * stride + offset + end of the dword <= NUM_RECORDS  (raw buffers); on GFX12 NUM_RECORDS is
       first reduced by soffset (the RDNA4 guide's note on mode 3); elsewhere soffset is not range checked.
GFX9 (gfx942) has no OOB_SELECT; the CDNA3 ISA guide ("Range Checking") picks the rule by IDXEN:
    raw (idxen = 0): the component's first byte offset + 4 k < NUM_RECORDS (bytes; a dword starting at the
        last in-range byte is read whole), each dword k of a multi-dword access on its own;
    structured (idxen = 1, STRIDE != 0): index < NUM_RECORDS (records), the offset is not checked.
    idxen with STRIDE 0 is in neither case and raises. V# bit 62 is a cache-swizzle hint there.
Out-of-range dwords read 0 and are not written; an out-of-range atomic does nothing and returns 0.
In-range addresses go through the address space like GLOBAL accesses (MemoryFault when unmapped).
tbuffer_* (MTBUF) and buffer_*_format_* (typed by the V#) go to mtbuf.py. Swizzled buffers, ADD_TID_ENABLE,
non-buffer TYPEs, LDS-direct forms and tfe raise IllegalInstruction naming what is missing.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.amd import access, vmem
from gputwin.emu.amd.scalar_ops import reader32
from gputwin.errors import IllegalInstruction, MemoryFault

U32, U64 = np.uint32, np.uint64
GFX11, GFX12, GFX9 = "gfx11", "gfx12", "gfx9"     # the range-check rule sets (module docstring)


def build(inst, rules: str = GFX11):
    op = inst.op
    # cache invalidates / write-backs (gfx11 GL0/GL1; gfx942 buffer_inv, buffer_wbl2 with SC/NT scope bits):
    # emulated memory has no caches, every access already sees every earlier one
    if op in ("buffer_gl0_inv", "buffer_gl1_inv", "buffer_inv", "buffer_wbl2"):
        return lambda g: None
    if op.startswith("tbuffer_"):         # MTBUF (gfx12: VBUFFER tbuffer_*): typed by the FORMAT field
        from gputwin.emu.amd import mtbuf
        return mtbuf.build(inst, rules)
    _, kind, rest = op.split("_", 2) if op.count("_") >= 2 else (None, None, None)
    if kind in ("load", "store") and "format" in rest:   # typed by the V#'s format (mtbuf.py), d16 forms too
        from gputwin.emu.amd import mtbuf
        return mtbuf.build_buffer_format(inst, rules)
    if kind not in ("load", "store", "atomic") or rest.startswith("lds"):
        return None                       # reported by the program as not modelled
    if inst.extra.get("tfe"):
        raise IllegalInstruction(f"{op} with tfe (texture fail enable) is not modelled")
    addr = _Addr(inst, rules)
    if kind == "atomic":
        ent = vmem.ATOMIC_NAMES.get(rest)
        return None if ent is None else _atomic(inst, addr, *ent)
    spec = vmem.SIZES.get(rest)
    if spec is None:
        return None
    return _load(inst, addr, *spec) if kind == "load" else _store(inst, addr, spec[0], spec[2])


class _Addr:
    """Per-lane addresses and per-dword range checks of one buffer instruction."""

    def __init__(self, inst, rules: str = GFX11):
        ops = inst.operands
        self.rules = rules
        self.op = inst.op
        self.rsrc = ops["srsrc"].index
        self.soffset = reader32(ops["soffset"])
        self.vaddr = ops["vaddr"].index if "vaddr" in ops else None
        self.idxen, self.offen = bool(inst.extra.get("idxen")), bool(inst.extra.get("offen"))
        if (self.idxen or self.offen) and self.vaddr is None:
            raise IllegalInstruction(f"{inst.op}: idxen/offen without a VADDR operand")
        self.inst_offset = int(inst.offset)

    def lanes(self, g):
        """(address uint64, check(dword byte offset, size) -> in-range bool), both over every lane (flat)."""
        w = g.s[self.rsrc:self.rsrc + 4].astype(np.int64)
        gfx9 = self.rules == GFX9
        if ((w[1] >> (31 if gfx9 else 30)) & (1 if gfx9 else 3)).any():
            raise IllegalInstruction(f"{self.op}: swizzled buffer (V# SWIZZLE_ENABLE) is not modelled")
        if ((w[3] >> 23) & 1).any():
            raise IllegalInstruction(f"{self.op}: V# ADD_TID_ENABLE is not modelled")
        if ((w[3] >> 30) & 3).any():
            raise IllegalInstruction(f"{self.op}: V# TYPE is not a buffer")
        L = g.lanes
        col = lambda v: np.repeat(v, L)                              # noqa: E731 - per wave -> per lane
        base, stride = col(w[0] | (w[1] & 0xFFFF) << 32), col((w[1] >> 16) & 0x3FFF)
        records, oob = col(w[2]), col((w[3] >> 28) & 3)
        index = np.zeros(g.n * L, np.int64)
        offset = np.full(g.n * L, self.inst_offset, np.int64)
        if self.idxen:
            index = g.vgpr(self.vaddr).reshape(-1).astype(np.int64)
        if self.offen:
            offset = offset + g.vgpr(self.vaddr + self.idxen).reshape(-1).astype(np.int64)
        within = index * stride + offset                             # the range-checked buffer offset
        soff = np.broadcast_to(np.asarray(self.soffset(g), np.int64), (g.n,))
        address = (base + col(soff) + within).astype(U64)

        if gfx9:
            return address, self._gfx9_check(g, index, offset, stride, records)
        if self.rules == GFX12:          # mode 3 only: NUM_RECORDS less soffset (below 0: nothing in range)
            within = within + col(soff)

        def check(at: int, size: int) -> np.ndarray:
            end = offset + (at + size)
            by_index = index < records
            by_stride = by_index & ((stride == 0) | (end <= stride))
            raw = within + (at + size) <= records
            return np.choose(oob, [by_stride, by_index, records != 0, raw])
        return address, check

    def _gfx9_check(self, g, index, offset, stride, records):
        if not self.idxen:
            return lambda at, size: offset + at < records
        if (stride[np.repeat(g.exec.any(axis=1), g.lanes)] == 0).any():
            raise IllegalInstruction(f"{self.op}: idxen with V# STRIDE 0 (no GFX9 range check is documented for it)")
        by_index = index < records
        return lambda at, size: by_index


def _access(g, address, sel, nbytes, write):
    """[(buffer, offsets, selection)] for the lanes in `sel`; faults name the address and its wave."""
    try:
        return vmem.global_targets(g, address[sel], nbytes, write)
    except MemoryFault as e:
        if e.wave is None:
            lane = np.flatnonzero(sel)[np.argmax(address[sel] == U64(e.address))]
            e.wave = int(g.waves[lane // g.lanes])
        raise


def _load(inst, addr, nbytes, signed, half):
    dst = inst.operands["vdst"].index
    ndw = max(1, nbytes // 4)

    def h(g):
        if g.exec_count == 0:
            return
        act = g.exec.reshape(-1)
        address, check = addr.lanes(g)
        data = np.zeros((ndw, act.size), U32)
        for k in range(ndw):
            sel = act & check(4 * k, min(nbytes, 4))
            if not sel.any():
                continue
            for buf, offs, sub in _access(g, address + U64(4 * k), sel, min(nbytes, 4), False):
                part = access.gather(buf, offs, 1)[:, 0] if nbytes >= 4 else \
                    access.gather_bytes(buf, offs, nbytes)
                idx = np.flatnonzero(sel)
                data[k, idx if sub is None else idx[sub]] = part
        val = data[0]
        if nbytes < 4:
            if signed:
                sh = 32 - 8 * nbytes
                val = ((val << U32(sh)).view(np.int32) >> np.int32(sh)).view(U32)
            if half is not None:
                old = g.vgpr(dst).reshape(-1)
                val = val & U32(0xFFFF)
                val = (old & U32(0xFFFF0000)) | val if half == "lo" else (old & U32(0xFFFF)) | (val << U32(16))
            data = val[None]
        for k in range(ndw):
            g.set_vgpr(dst + k, data[k].reshape(g.n, g.lanes))
    return h


def _store(inst, addr, nbytes, half):
    src = inst.operands["vdata"].index
    ndw = max(1, nbytes // 4)

    def h(g):
        if g.exec_count == 0:
            return
        act = g.exec.reshape(-1)
        address, check = addr.lanes(g)
        for k in range(ndw):
            sel = act & check(4 * k, min(nbytes, 4))
            if not sel.any():
                continue
            val = g.vgpr(src + k).reshape(-1)[sel]
            if half == "hi":
                val = val >> U32(16)
            for buf, offs, sub in _access(g, address + U64(4 * k), sel, min(nbytes, 4), True):
                part = val if sub is None else val[sub]
                if nbytes >= 4:
                    access.scatter(buf, offs, part[:, None])
                else:
                    access.scatter_bytes(buf, offs, part, nbytes)
    return h


def _atomic(inst, addr, name, wide):
    data = inst.operands["vdata"].index
    nbytes, w = (8, 2) if wide else (4, 1)
    rtn = bool(inst.glc)                  # glc on a buffer atomic returns the pre-op value into VDATA

    def read(g, reg, sel):
        lo = g.vgpr(reg).reshape(-1)[sel]
        return lo if not wide else lo.astype(U64) | (g.vgpr(reg + 1).reshape(-1)[sel].astype(U64) << U64(32))

    def h(g):
        if g.exec_count == 0:
            return
        act = g.exec.reshape(-1)
        address, check = addr.lanes(g)
        sel = act & check(0, nbytes)
        old = np.zeros(act.size, U64 if wide else U32)
        if sel.any():
            src = read(g, data, sel)
            cmp = read(g, data + w, sel) if name.startswith("cmpswap") else None
            got = np.zeros(src.size, src.dtype)
            for buf, offs, sub in _access(g, address, sel, nbytes, True):
                if (offs % nbytes).any():
                    raise MemoryFault(f"{inst.op}: misaligned atomic", address=int(offs[np.argmax(offs % nbytes)]))
                s = slice(None) if sub is None else sub
                r = access.atomic(buf, offs, name, src[s], None if cmp is None else cmp[s], wide, rtn)
                if rtn:
                    got[s] = r
            old[sel] = got
        if rtn:
            shape = (g.n, g.lanes)
            if wide:
                g.set_vgpr(data, (old & U64(0xFFFFFFFF)).astype(U32).reshape(shape))
                g.set_vgpr(data + 1, (old >> U64(32)).astype(U32).reshape(shape))
            else:
                g.set_vgpr(data, old.reshape(shape))
    return h
