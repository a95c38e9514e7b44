"""DS: LDS loads, stores and atomics, plus the cross-lane ds_swizzle / ds_permute / ds_bpermute.

The LDS of every workgroup of a batch is one uint8 array; a lane's byte address A in workgroup w is
index w * lds_bytes + A. Accesses outside the workgroup's allocation follow the hardware: reads return
0 and writes (and atomics) are dropped.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.amd import access
from gputwin.errors import IllegalInstruction, MemoryFault

U32, U64 = np.uint32, np.uint64
M0 = 125
_DWORDS = {"b32": 1, "b64": 2, "b96": 3, "b128": 4}
_SUB = {"u8": (1, False, None), "i8": (1, True, None), "u16": (2, False, None), "i16": (2, True, None),
        "u8_d16": (1, False, "lo"), "i8_d16": (1, True, "lo"), "u16_d16": (2, False, "lo"),
        "u8_d16_hi": (1, False, "hi"), "i8_d16_hi": (1, True, "hi"), "u16_d16_hi": (2, False, "hi")}
_ATOMICS = {  # stem -> (access op, 64-bit)
    "add_u32": ("add", 0), "sub_u32": ("sub", 0), "rsub_u32": ("rsub", 0), "inc_u32": ("inc", 0),
    "dec_u32": ("dec", 0), "min_i32": ("min_i", 0), "max_i32": ("max_i", 0), "min_u32": ("min_u", 0),
    "max_u32": ("max_u", 0), "and_b32": ("and", 0), "or_b32": ("or", 0), "xor_b32": ("xor", 0),
    "add_f32": ("add_f32", 0), "storexchg_rtn_b32": ("swap", 0), "cmpstore_b32": ("cmpswap", 0),
    "mskor_b32": ("mskor", 0), "min_f32": ("min_f", 0), "max_f32": ("max_f", 0), "cmpstore_f32": ("cmpswap_f", 0),
    "min_f64": ("min_f", 1), "max_f64": ("max_f", 1), "cmpstore_f64": ("cmpswap_f", 1),
    "add_u64": ("add", 1), "sub_u64": ("sub", 1), "rsub_u64": ("rsub", 1), "inc_u64": ("inc", 1),
    "dec_u64": ("dec", 1), "min_i64": ("min_i", 1), "max_i64": ("max_i", 1), "min_u64": ("min_u", 1),
    "max_u64": ("max_u", 1), "and_b64": ("and", 1), "or_b64": ("or", 1), "xor_b64": ("xor", 1),
    "storexchg_rtn_b64": ("swap", 1), "cmpstore_b64": ("cmpswap", 1), "mskor_b64": ("mskor", 1),
}


def _mask(g):
    return None if g.exec_full else g.exec


def _sel(arr, mask):
    return arr.reshape(-1) if mask is None else arr[mask]


def _write(g, reg, mask, values):
    if mask is None:
        g.set_vgpr(reg, values.reshape(g.n, g.lanes))
    else:
        full = np.zeros((g.n, g.lanes), U32)
        full[mask] = values
        g.set_vgpr(reg, full, mask)


class _Lds:
    """Active-lane LDS byte addresses of one access: .index (into ctx.lds; 0 for lanes outside the
    allocation), .all (every lane inside) and .inside (bool per lane, None when .all)."""

    def __init__(self, g, reg, mask, offset, nbytes):
        size = g.ctx.lds_bytes
        a = g.vgpr(reg)
        if mask is not None:
            a = a[mask]
        if offset:    # a 32-bit sum: clang folds offsets into negative bases (LLVM isDSOffsetLegal, CI+)
            a = np.add(a, np.uint32(offset), dtype=np.uint32)
        # addresses are unsigned 32-bit: one max decides whether every lane is inside
        self.all = bool(a.size == 0 or int(a.max()) + nbytes <= size)
        self.inside = None if self.all else a.astype(np.int64) + nbytes <= size   # None: every lane is inside
        # index = wg * size + address, in uint32 while the whole LDS of the batch fits (one pass)
        wide = np.int64 if g.ctx.lds.size >= 1 << 31 else np.uint32
        base = (g.wg * size).astype(wide)
        if mask is None:
            self.index = np.add(a, base[:, None], dtype=wide).reshape(-1)
        else:
            if not self.all:
                a = np.where(self.inside, a, np.uint32(0))
            self.index = np.add(a, np.broadcast_to(base[:, None], mask.shape)[mask], dtype=wide)
        if mask is None and not self.all:
            self.index = np.where(self.inside.reshape(-1), self.index, wide(0))
            self.inside = self.inside.reshape(-1)

    def keep(self, data):
        """(indices, data) of the lanes inside the allocation: the ones a store may write."""
        return (self.index, data) if self.all else (self.index[self.inside], data[self.inside])

    def gather(self, lds, ndw):
        """uint32 (lanes, ndw): the dwords each lane reads; 0 outside the allocation (also with no LDS)."""
        if self.all:
            return access.gather(lds, self.index, ndw)
        data = np.zeros((self.index.size, ndw), U32)
        if self.inside.any():
            data[self.inside] = access.gather(lds, self.index[self.inside], ndw)
        return data

    def gather_bytes(self, lds, nbytes):
        if self.all:
            return access.gather_bytes(lds, self.index, nbytes)
        val = np.zeros(self.index.size, U32)
        if self.inside.any():
            val[self.inside] = access.gather_bytes(lds, self.index[self.inside], nbytes)
        return val


def build(inst):
    op = inst.op
    if not op.startswith("ds_"):
        return None
    if inst.gds:
        raise IllegalInstruction(f"{op} with gds: the global data share (GDS) is not modelled")
    stem = op[3:]
    if stem == "nop":
        return lambda g: None
    if stem in ("append", "consume"):
        return _append(inst, stem == "consume")
    if stem in ("swizzle_b32", "permute_b32", "bpermute_b32"):
        return _cross_lane(inst, stem)
    kind, _, rest = stem.partition("_")
    if kind in ("load", "store") and rest.startswith("2addr"):
        return _two_addr(inst, kind, rest)
    if stem.startswith("storexchg_2addr"):
        return _xchg_two_addr(inst, stem)
    if stem.startswith("cmpst_"):   # GFX9 (gfx942): DATA0 is the compare value, DATA1 the new one
        rtn = "_rtn_" in stem
        name, wide = _ATOMICS["cmpstore_" + stem.rsplit("_", 1)[1]]
        return _atomic(inst, name, wide, rtn, swap_data=True)
    if kind == "load" and (rest in _DWORDS or rest in _SUB):
        return _load(inst, rest)
    if kind == "store" and (rest in _DWORDS or rest in ("b8", "b16", "b8_d16_hi", "b16_d16_hi")):
        return _store(inst, rest)
    rtn = "_rtn_" in stem and not stem.startswith("storexchg")
    key = stem.replace("_rtn_", "_") if rtn else stem
    if key in _ATOMICS:
        return _atomic(inst, *_ATOMICS[key], rtn or stem.startswith("storexchg"))
    raise IllegalInstruction(f"{op} is not modelled")


def _load(inst, rest):
    dst, addr, offset = inst.operands["vdst"].index, inst.operands["addr"].index, int(inst.offset)
    if rest in _DWORDS:
        ndw = _DWORDS[rest]

        def h(g):
            if g.exec_count == 0:
                return
            m = _mask(g)
            data = _Lds(g, addr, m, offset, 4 * ndw).gather(g.ctx.lds, ndw)
            for k in range(ndw):
                _write(g, dst + k, m, data[:, k])
        return h
    nbytes, signed, half = _SUB[rest]

    def hs(g):
        if g.exec_count == 0:
            return
        m = _mask(g)
        val = _Lds(g, addr, m, offset, nbytes).gather_bytes(g.ctx.lds, nbytes)
        if signed:
            sh = 32 - 8 * nbytes
            val = ((val << U32(sh)).view(np.int32) >> np.int32(sh)).view(U32)
        if half is not None:
            old = _sel(g.vgpr(dst), m)
            val &= U32(0xFFFF)
            val = (old & U32(0xFFFF0000)) | val if half == "lo" else (old & U32(0xFFFF)) | (val << U32(16))
        _write(g, dst, m, val)
    return hs


def _store(inst, rest):
    src, addr, offset = inst.operands["data0"].index, inst.operands["addr"].index, int(inst.offset)
    if rest in _DWORDS:
        ndw = _DWORDS[rest]

        def h(g):
            if g.exec_count == 0:
                return
            m = _mask(g)
            a = _Lds(g, addr, m, offset, 4 * ndw)
            data = np.stack([_sel(g.vgpr(src + k), m) for k in range(ndw)], axis=1)
            access.scatter(g.ctx.lds, *a.keep(data))
        return h
    nbytes = 1 if rest.startswith("b8") else 2
    hi = rest.endswith("d16_hi")

    def hs(g):
        if g.exec_count == 0:
            return
        m = _mask(g)
        a = _Lds(g, addr, m, offset, nbytes)
        val = _sel(g.vgpr(src), m)
        if hi:
            val = val >> U32(16)
        access.scatter_bytes(g.ctx.lds, *a.keep(val), nbytes)
    return hs


def _two_addr(inst, kind, rest):
    # ds_{load,store}_2addr[_stride64]_b32/b64: two accesses at offset0 / offset1 scaled by the size
    width = 2 if rest.endswith("b64") else 1
    scale = 4 * width * (64 if "stride64" in rest else 1)
    offs = (inst.offset0 * scale, inst.offset1 * scale)
    addr = inst.operands["addr"].index
    if kind == "load":
        dst = inst.operands["vdst"].index

        def h(g):
            if g.exec_count == 0:
                return
            m = _mask(g)
            # both addresses before any write: the destination may overlap the address VGPR
            data = [_Lds(g, addr, m, off, 4 * width).gather(g.ctx.lds, width) for off in offs]
            for half in range(2):
                for k in range(width):
                    _write(g, dst + half * width + k, m, data[half][:, k])
        return h
    srcs = (inst.operands["data0"].index, inst.operands["data1"].index)

    def hst(g):
        if g.exec_count == 0:
            return
        m = _mask(g)
        for src, off in zip(srcs, offs):
            a = _Lds(g, addr, m, off, 4 * width)
            data = np.stack([_sel(g.vgpr(src + k), m) for k in range(width)], axis=1)
            access.scatter(g.ctx.lds, *a.keep(data))
    return hst


def _atomic(inst, name, wide, rtn, swap_data=False):
    """gfx11 ds_cmpstore: DATA0 is the value stored, DATA1 the compare value (swap_data: GFX9 ds_cmpst's
    order, compare first)."""
    addr, offset = inst.operands["addr"].index, int(inst.offset)
    d0 = inst.operands["data0"].index
    d1 = inst.operands.get("data1")
    if swap_data:
        d0, d1 = d1.index, inst.operands["data0"]
    dst = inst.operands["vdst"].index if rtn else None
    nbytes = 8 if wide else 4

    def read(g, reg, m):
        lo = _sel(g.vgpr(reg), m)
        if not wide:
            return lo
        return lo.astype(U64) | (_sel(g.vgpr(reg + 1), m).astype(U64) << U64(32))

    def h(g):
        if g.exec_count == 0:
            return
        m = _mask(g)
        a = _Lds(g, addr, m, offset, nbytes)
        src = read(g, d0, m)
        cmp = read(g, d1.index, m) if name in ("cmpswap", "cmpswap_f", "mskor") else None
        old = np.zeros(src.size, src.dtype)
        ins = slice(None) if a.all else a.inside
        raw = _sel(g.vgpr(addr), m).astype(np.int64) + offset
        if (raw % nbytes).any():                   # misaligned atomics fault (never a silent partial update)
            raise MemoryFault(f"{inst.op}: misaligned LDS atomic", address=int(raw[np.argmax(raw % nbytes)]))
        if a.all or ins.any():
            r = access.atomic(g.ctx.lds, a.index[ins], name, src[ins], None if cmp is None else cmp[ins],
                              bool(wide), rtn)
            if rtn:
                old[ins] = r
        if rtn:
            if wide:
                _write(g, dst, m, (old & U64(0xFFFFFFFF)).astype(U32))
                _write(g, dst + 1, m, (old >> U64(32)).astype(U32))
            else:
                _write(g, dst, m, old)
    return h


def _xchg_two_addr(inst, stem):
    """ds_storexchg_2addr[_stride64]_rtn_b32/b64: at ADDR + OFFSET0 * size (* 64 for stride64) store DATA0,
    at ADDR + OFFSET1 * size store DATA1; VDST gets the two old values (old0 then old1). Both addresses are
    read before anything is written (VDST may overlap ADDR)."""
    wide = stem.endswith("b64")
    nbytes = 8 if wide else 4
    scale = nbytes * (64 if "stride64" in stem else 1)
    offs = (inst.offset0 * scale, inst.offset1 * scale)
    addr, dst = inst.operands["addr"].index, inst.operands["vdst"].index
    datas = (inst.operands["data0"].index, inst.operands["data1"].index)

    def read(g, reg, m):
        lo = _sel(g.vgpr(reg), m)
        return lo.astype(U64) | (_sel(g.vgpr(reg + 1), m).astype(U64) << U64(32)) if wide else lo

    def h(g):
        if g.exec_count == 0:
            return
        m = _mask(g)
        raw = _sel(g.vgpr(addr), m).astype(np.int64)
        places = [_Lds(g, addr, m, off, nbytes) for off in offs]
        srcs = [read(g, r, m) for r in datas]
        for off in offs:
            if ((raw + off) % nbytes).any():
                raise MemoryFault(f"{inst.op}: misaligned LDS exchange", address=int(raw[np.argmax((raw + off) % nbytes)] + off))
        olds = []
        for a, src in zip(places, srcs):
            old = np.zeros(src.size, src.dtype)
            ins = slice(None) if a.all else a.inside
            if a.all or ins.any():
                old[ins] = access.atomic(g.ctx.lds, a.index[ins], "swap", src[ins], None, wide, True)
            olds.append(old)
        for i, old in enumerate(olds):
            if wide:
                _write(g, dst + 2 * i, m, (old & U64(0xFFFFFFFF)).astype(U32))
                _write(g, dst + 2 * i + 1, m, (old >> U64(32)).astype(U32))
            else:
                _write(g, dst + i, m, old)
    return h


def _append(inst, consume: bool):
    """ds_append / ds_consume: per wave, the dword at M0[15:0] + offset in the workgroup's LDS is returned
    to every active lane, then raised (lowered) by the number of active lanes. Waves apply in order; a
    wave with EXEC = 0 leaves the counter as is. Outside the allocation: reads 0, the update is dropped."""
    dst, offset = inst.operands["vdst"].index, int(inst.offset)

    def h(g):
        if g.exec_count == 0:
            return
        size = g.ctx.lds_bytes
        counts = np.count_nonzero(g.exec, axis=1).astype(U32)
        addr = (g.s[M0] & U32(0xFFFF)).astype(np.int64) + offset
        if (addr & 3).any():
            raise MemoryFault(f"{inst.op}: misaligned LDS address", address=int(addr[np.argmax(addr & 3)]))
        inside = (addr + 4 <= size) & (counts > 0)
        old = np.zeros(g.n, U32)
        if inside.any():
            old[inside] = access.atomic(g.ctx.lds, (g.wg * size + addr)[inside], "sub" if consume else "add",
                                        counts[inside], None, False, True)
        g.set_vgpr(dst, old[:, None])
    return h


def _cross_lane(inst, stem):
    dst, addr = inst.operands["vdst"].index, inst.operands["addr"].index
    offset = int(inst.offset)
    if stem == "swizzle_b32":
        return _swizzle(dst, addr, offset)
    src = inst.operands["data0"].index

    def h(g):
        L = g.lanes
        ex = g.exec
        data = np.where(ex, g.vgpr(src), U32(0))        # inactive lanes contribute 0
        lane = ((g.vgpr(addr).astype(np.int64) + offset) >> 2) & (L - 1)
        if stem == "bpermute_b32":
            out = np.take_along_axis(data, lane, axis=1)
        else:                                            # permute: lane i sends its data to lane[i]
            out = np.zeros_like(data)                   # several senders to one lane: the highest wins
            rows = np.broadcast_to(np.arange(g.n)[:, None], lane.shape)
            out[rows[ex], lane[ex]] = data[ex]
        g.set_vgpr(dst, out)
    return h


def _swizzle(dst, src, offset):
    lanes = np.arange(64)
    if 0x8000 <= offset < 0xC000:        # quad permute: 2-bit selects per lane within each quad
        sel = (lanes & ~3) | ((offset >> (2 * (lanes & 3))) & 3)
    elif offset < 0x8000:                # bitmask mode within each 32-lane half
        and_m, or_m, xor_m = offset & 0x1F, (offset >> 5) & 0x1F, (offset >> 10) & 0x1F
        sel = (lanes & 0x20) | ((((lanes & 0x1F) & and_m) | or_m) ^ xor_m)
    else:
        raise IllegalInstruction(f"ds_swizzle_b32 offset {offset:#x} (FFT/rotate mode) is not modelled")

    def h(g):
        data = np.where(g.exec, g.vgpr(src), U32(0))
        g.set_vgpr(dst, data[:, sel[:g.lanes]])
    return h
