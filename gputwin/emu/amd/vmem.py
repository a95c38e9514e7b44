"""FLAT / GLOBAL / SCRATCH loads, stores and atomics.

Addresses (per lane, only EXEC lanes access memory):
- GLOBAL with an SGPR base: saddr (64-bit) + vaddr (32-bit, zero-extended) + offset; without: the 64-bit
  VGPR pair vaddr + offset.
- FLAT: the 64-bit vaddr + offset, routed by aperture: the shared aperture reaches the workgroup's LDS,
  the private aperture the lane's scratch, anything else global memory.
- SCRATCH: saddr (32-bit, when present) + vaddr (when SVE) + offset, an offset into the lane's private
  scratch (scratch_bytes_per_lane bytes per lane; scratch.py places them: the driver's backing, swizzled
  as the hardware does, or emulator memory).
Faults carry the first bad lane's address and its wave.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.amd import access
from gputwin.emu.amd.hwreg import PRIVATE_APERTURE_HI, SHARED_APERTURE_HI
from gputwin.emu.amd.wave import compact
from gputwin.errors import IllegalInstruction, MemoryFault

U32, U64 = np.uint32, np.uint64
# load/store suffix -> (bytes, signed, d16 half): d16 half "lo"/"hi" keeps the other 16 bits of vdst
SIZES = {
    "b32": (4, False, None), "b64": (8, False, None), "b96": (12, False, None), "b128": (16, False, None),
    "u8": (1, False, None), "i8": (1, True, None), "u16": (2, False, None), "i16": (2, True, None),
    "b8": (1, False, None), "b16": (2, False, None),
    "d16_u8": (1, False, "lo"), "d16_i8": (1, True, "lo"), "d16_b16": (2, False, "lo"),
    "d16_hi_u8": (1, False, "hi"), "d16_hi_i8": (1, True, "hi"), "d16_hi_b16": (2, False, "hi"),
    "d16_hi_b8": (1, False, "hi"),
}
ATOMIC_NAMES = {  # mnemonic stem (after "<seg>_atomic_") -> (access.ATOMIC_OPS key, 64-bit)
    "swap_b32": ("swap", 0), "cmpswap_b32": ("cmpswap", 0), "add_u32": ("add", 0), "sub_u32": ("sub", 0),
    "csub_u32": ("csub", 0), "min_i32": ("min_i", 0), "min_u32": ("min_u", 0), "max_i32": ("max_i", 0),
    "max_u32": ("max_u", 0), "and_b32": ("and", 0), "or_b32": ("or", 0), "xor_b32": ("xor", 0),
    "inc_u32": ("inc", 0), "dec_u32": ("dec", 0), "add_f32": ("add_f32", 0),
    "min_f32": ("min_f", 0), "max_f32": ("max_f", 0), "cmpswap_f32": ("cmpswap_f", 0),
    "swap_b64": ("swap", 1), "cmpswap_b64": ("cmpswap", 1), "add_u64": ("add", 1), "sub_u64": ("sub", 1),
    "min_i64": ("min_i", 1), "min_u64": ("min_u", 1), "max_i64": ("max_i", 1), "max_u64": ("max_u", 1),
    "and_b64": ("and", 1), "or_b64": ("or", 1), "xor_b64": ("xor", 1), "inc_u64": ("inc", 1),
    "dec_u64": ("dec", 1),
}


# --- address -> (buffer, byte offsets) -------------------------------------------------------------
def global_targets(g, addrs: np.ndarray, nbytes: int, write: bool):
    """[(buffer, offsets, lane selection)] covering every address; MemoryFault on a bad one."""
    mem = g.ctx.mem
    if addrs.size == 0:
        return []
    lo, hi = int(addrs.min()), int(addrs.max())
    r = mem.find(lo)
    if r is not None and hi + nbytes <= r.end and (r.writable or not write):
        return [(r.data, (addrs - U64(r.base)).astype(np.int64), None)]
    out, left = [], np.ones(addrs.size, bool)
    for reg in mem.regions():
        end = U64(reg.end)   # addrs + nbytes could wrap past 2**64: compare the room left instead
        sel = left & (addrs >= U64(reg.base)) & (addrs < end) & (end - addrs >= U64(nbytes))
        if sel.any() and (reg.writable or not write):
            out.append((reg.data, (addrs[sel] - U64(reg.base)).astype(np.int64), sel))
            left &= ~sel
    if left.any():
        bad = int(addrs[np.argmax(left)])
        raise MemoryFault(f"{'write' if write else 'read'} of {nbytes} bytes at an unmapped address",
                          address=bad, write=write)
    return out


def _scratch_targets(g, offs: np.ndarray, lane_ids: np.ndarray, nbytes: int, write: bool):
    """Private scratch: offs are per-lane byte offsets; lane_ids the flat (wave, lane) index of each."""
    scratch = g.ctx.scratch
    return [(scratch.buf, scratch.locate(offs, lane_ids, nbytes, write), None)]


def _lds_targets(g, offs, wg, nbytes):
    """Shared-aperture FLAT accesses: out-of-range LDS addresses are a fault here (fail closed)."""
    ctx = g.ctx
    bad = (offs < 0) | (offs + nbytes > ctx.lds_bytes)
    if bad.any():
        raise MemoryFault("flat access outside the workgroup's LDS", address=int(offs[np.argmax(bad)]))
    return [(ctx.lds, wg * ctx.lds_bytes + offs, None)]


class _Addr:
    """Per-instruction address computation: returns (targets builder inputs) for the active lanes."""

    def __init__(self, inst):
        self.seg = inst.encoding
        ops = inst.operands
        self.vaddr = ops.get("vaddr")
        saddr = ops.get("saddr")
        self.saddr = saddr.index if saddr is not None and saddr.kind == "sgpr" and saddr.index != 124 else None
        self.offset = int(inst.offset)

    def fast(self, g, mask, nbytes, write):
        """(uint32 view, dword indices shaped like the active lanes, or a slice when all lanes are active and
        consecutive) when every active lane is 4-byte aligned in one mapping at a 64-bit base shared by the
        whole group (the common case), else None."""
        if self.seg == "SCRATCH":
            return None
        base = self.uniform_base(g)
        if base is None:
            return None
        lo = g.vgpr(self.vaddr.index)
        lsel = lo if mask is None else lo[mask]
        flat = lsel.reshape(-1)
        lo_first, lo_last = int(flat[0]), int(flat[-1])
        # consecutive lanes (checked first: it settles the range and alignment too) or a general spread
        consecutive = mask is None and lo_last - lo_first == nbytes * (flat.size - 1) and \
            bool(((flat[1:] - flat[:-1]) == nbytes).all())
        if consecutive:
            lmin, lmax, low_bits = lo_first, lo_last, lo_first
        else:
            lmin, lmax = int(lsel.min()), int(lsel.max())
            low_bits = None
        first, last = base + lmin, base + lmax
        if self.seg == "FLAT" and (first >> 32 in _APERTURES or last >> 32 in _APERTURES):
            return None
        r = g.ctx.mem.find(first)
        if r is None or last + nbytes > r.end or (write and not r.writable):
            return None
        start = base - r.base
        if low_bits is None:
            low_bits = int(np.bitwise_or.reduce(flat))
        if start & 3 or r.data.ctypes.data & 3 or low_bits & 3:
            return None
        view = np.frombuffer(r.data, U32, count=r.data.size // 4)
        if consecutive:
            first_dw = (start + lo_first) >> 2
            return view, slice(first_dw, first_dw + flat.size * (nbytes // 4))
        if start >= 0:
            return view[start >> 2:], lsel >> U32(2)
        return view, (lsel >> U32(2)).astype(np.int64) + (start >> 2)

    def uniform_scratch_offset(self, g) -> int | None:
        """The private offset of a SCRATCH access when it is one value for every lane of the group (no
        VGPR offset, a uniform SGPR), else None."""
        if self.seg != "SCRATCH" or self.vaddr is not None:
            return None
        off = self.offset
        if self.saddr is not None:
            s = g.sgpr(self.saddr)
            if not (s == s[0]).all():
                return None
            off += int(s[0])
        return off & 0xFFFFFFFF

    def uniform_base(self, g) -> int | None:
        """The 64-bit base every lane adds its 32-bit VADDR to (the SGPR pair, or the VADDR high dwords),
        plus the instruction offset, when it is one value for the whole group; else None."""
        if self.saddr is not None:
            lo_b, hi_b = g.s[self.saddr], g.s[self.saddr + 1]
            if not ((lo_b == lo_b[0]).all() and (hi_b == hi_b[0]).all()):
                return None
            return (int(lo_b[0]) | int(hi_b[0]) << 32) + self.offset
        hi = compact(g.vgpr(self.vaddr.index + 1))
        h0 = int(hi.flat[0])
        if hi.size > 1 and not (hi == h0).all():
            return None
        return (h0 << 32) + self.offset

    def targets(self, g, mask, nbytes, write):
        """[(buffer, byte offsets, selection)] for the active lanes; faults name the faulting wave."""
        grid = self._grid(g)
        try:
            return self._targets(g, grid, mask, nbytes, write)
        except MemoryFault as e:
            if e.wave is None:
                lo = grid.astype(np.int64) if grid.dtype != np.int64 else grid
                hit = (lo <= e.address) & (e.address < lo + nbytes) & g.exec
                e.wave = int(g.waves[np.argmax(hit.any(axis=1))])
            raise

    def _grid(self, g):
        """Per-lane addresses: uint64 virtual addresses, or int64 private offsets for SCRATCH."""
        if self.seg == "SCRATCH":
            off = np.full((g.n, g.lanes), self.offset, np.int64)
            if self.saddr is not None:
                off += g.sgpr(self.saddr).astype(np.int64)[:, None]
            if self.vaddr is not None:
                off += g.vgpr(self.vaddr.index).astype(np.int64)
            return off & 0xFFFFFFFF
        if self.seg == "GLOBAL" and self.saddr is not None:
            a = g.sgpr64(self.saddr)[:, None] + g.vgpr(self.vaddr.index).astype(U64)
        else:
            a = g.vgpr(self.vaddr.index).astype(U64) | (g.vgpr(self.vaddr.index + 1).astype(U64) << U64(32))
        if self.offset:
            a = a + U64(self.offset & 0xFFFFFFFFFFFFFFFF)
        return a

    def _targets(self, g, grid, mask, nbytes, write):
        if self.seg == "SCRATCH":
            lane_ids = g.waves[:, None] * g.lanes + np.arange(g.lanes)
            return _scratch_targets(g, _sel(grid, mask), _sel(lane_ids, mask), nbytes, write)
        a = _sel(grid, mask)
        if self.seg == "FLAT":
            hi = (a >> U64(32)).astype(np.int64)
            shared, private = hi == SHARED_APERTURE_HI, hi == PRIVATE_APERTURE_HI
            if shared.any() or private.any():
                return _flat_split(g, a, mask, shared, private, nbytes, write)
        return global_targets(g, a, nbytes, write)


_APERTURES = (SHARED_APERTURE_HI, PRIVATE_APERTURE_HI)


def _flat_split(g, a, mask, shared, private, nbytes, write):
    low = (a & U64(0xFFFFFFFF)).astype(np.int64)
    glob = ~(shared | private)
    out = []
    wg = _sel(np.broadcast_to(g.wg[:, None], (g.n, g.lanes)), mask)
    lane_ids = _sel(g.waves[:, None] * g.lanes + np.arange(g.lanes), mask)
    for part, sel in ((lambda s: _lds_targets(g, low[s], wg[s], nbytes), shared),
                      (lambda s: _scratch_targets(g, low[s], lane_ids[s], nbytes, write), private),
                      (lambda s: global_targets(g, a[s], nbytes, write), glob)):
        if sel.any():
            for buf, offs, sub in part(sel):
                full = sel.copy()
                if sub is not None:
                    full[sel] = sub
                out.append((buf, offs, full))
    return out


def _sel(arr, mask):
    """Active-lane values in (wave, lane) order; mask None means every lane."""
    return arr.reshape(-1) if mask is None else arr[mask]


# --- instructions ----------------------------------------------------------------------------------
def _lanes(g):
    """The EXEC mask as a selection (None when every lane is active: skips boolean indexing)."""
    return None if g.exec_full else g.exec


def _write_lanes(g, reg, mask, values):
    if mask is None:
        g.set_vgpr(reg, values.reshape(g.n, g.lanes) if values.ndim != 2 else values)
    else:
        full = np.zeros((g.n, g.lanes), U32)
        full[mask] = values
        g.set_vgpr(reg, full, mask)


def _read_lanes(g, reg, mask):
    return _sel(g.vgpr(reg), mask)


def build(inst):
    op = inst.op
    seg, _, rest = op.partition("_")
    if seg not in ("global", "flat", "scratch"):
        return None
    kind, _, size = rest.partition("_")
    if kind == "atomic":
        return _build_atomic(inst, size)
    spec = SIZES.get(size)
    if kind not in ("load", "store") or spec is None:
        return None
    addr = _Addr(inst)
    nbytes, signed, half = spec
    if kind == "load":
        return _build_load(inst, addr, nbytes, signed, half)
    return _build_store(inst, addr, nbytes, half)


def _build_load(inst, addr, nbytes, signed, half):
    dst = inst.operands["vdst"].index
    ndw = max(1, nbytes // 4)

    def h(g):
        if g.exec_count == 0:
            return
        if nbytes >= 4 and g.exec_full:
            off = addr.uniform_scratch_offset(g)
            rows = None if off is None else g.ctx.scratch.read_uniform(g.waves, off, ndw)
            if rows is not None:
                for k in range(ndw):
                    g.set_vgpr(dst + k, rows[k])
                return
        mask = _lanes(g)
        fast = addr.fast(g, mask, nbytes, False) if nbytes >= 4 else None
        if fast is not None:
            view, idx = fast
            if isinstance(idx, slice):         # consecutive: a copy, no gather
                data = view[idx].reshape(g.n, g.lanes, ndw)
                for k in range(ndw):
                    g.set_vgpr(dst + k, np.array(data[..., k]))
            elif ndw == 1:
                _write_lanes(g, dst, mask, np.take(view, idx, mode="clip"))
            else:
                data = np.take(view, idx[..., None] + np.arange(ndw, dtype=idx.dtype), mode="clip")
                for k in range(ndw):
                    _write_lanes(g, dst + k, mask, data[..., k])
            return
        targets = addr.targets(g, mask, nbytes, False)
        count = g.exec_count
        if nbytes >= 4:
            data = np.empty((count, ndw), U32)
            for buf, offs, sel in targets:
                data[slice(None) if sel is None else sel] = access.gather(buf, offs, ndw)
            for k in range(ndw):
                _write_lanes(g, dst + k, mask, data[:, k])
            return
        val = np.empty(count, U32)
        for buf, offs, sel in targets:
            val[slice(None) if sel is None else sel] = access.gather_bytes(buf, offs, nbytes)
        if signed:
            shift = U32(32 - 8 * nbytes)
            val = ((val << shift).view(np.int32) >> np.int32(32 - 8 * nbytes)).view(U32)
        if half is not None:
            old = _read_lanes(g, dst, mask)
            val &= U32(0xFFFF)
            val = (old & U32(0xFFFF0000)) | val if half == "lo" else (old & U32(0xFFFF)) | (val << U32(16))
        _write_lanes(g, dst, mask, val)
    return h


def _build_store(inst, addr, nbytes, half):
    src = inst.operands["vdata"].index
    ndw = max(1, nbytes // 4)

    def h(g):
        if g.exec_count == 0:
            return
        if nbytes >= 4 and g.exec_full:
            off = addr.uniform_scratch_offset(g)
            if off is not None and g.ctx.scratch.write_uniform(g.waves, off, [g.vgpr(src + k) for k in range(ndw)]):
                return
        mask = _lanes(g)
        fast = addr.fast(g, mask, nbytes, True) if nbytes >= 4 else None
        if fast is not None:
            view, idx = fast
            if isinstance(idx, slice):
                view[idx] = g.vgpr(src).reshape(-1) if ndw == 1 else \
                    np.stack([g.vgpr(src + k) for k in range(ndw)], axis=-1).reshape(-1)
            elif ndw == 1:
                view[idx] = _read_lanes(g, src, mask).reshape(idx.shape)
            else:
                view[idx[..., None] + np.arange(ndw, dtype=idx.dtype)] = np.stack(
                    [_sel(g.vgpr(src + k), mask).reshape(idx.shape) for k in range(ndw)], axis=-1)
            return
        targets = addr.targets(g, mask, nbytes, True)
        if nbytes >= 4:
            data = np.stack([_read_lanes(g, src + k, mask) for k in range(ndw)], axis=1)
            for buf, offs, sel in targets:
                access.scatter(buf, offs, data if sel is None else data[sel])
            return
        val = _read_lanes(g, src, mask)
        if half == "hi":
            val = val >> U32(16)
        for buf, offs, sel in targets:
            access.scatter_bytes(buf, offs, val if sel is None else val[sel], nbytes)
    return h


def _build_atomic(inst, stem):
    ent = ATOMIC_NAMES.get(stem)
    if ent is None:
        raise IllegalInstruction(f"{inst.op} is not modelled")
    name, wide = ent
    addr = _Addr(inst)
    data = inst.operands["vdata"].index
    vdst = inst.operands.get("vdst")
    nbytes = 8 if wide else 4
    w = 2 if wide else 1

    def read(g, reg, mask):
        lo = _read_lanes(g, reg, mask)
        if not wide:
            return lo
        return lo.astype(U64) | (_read_lanes(g, reg + 1, mask).astype(U64) << U64(32))

    def h(g):
        if g.exec_count == 0:
            return
        mask = _lanes(g)
        targets = addr.targets(g, mask, nbytes, True)
        src = read(g, data, mask)
        cmp = read(g, data + w, mask) if name.startswith("cmpswap") else None
        old = np.empty(src.size, src.dtype)
        for buf, offs, sel in targets:
            if offs.ndim == 2:
                raise IllegalInstruction(f"{inst.op}: a 64-bit atomic on swizzled scratch is not modelled")
            if (offs % nbytes).any():
                raise MemoryFault(f"{inst.op}: misaligned atomic", address=int(offs[np.argmax(offs % nbytes)]))
            s = slice(None) if sel is None else sel
            r = access.atomic(buf, offs, name, src[s], None if cmp is None else cmp[s], bool(wide), vdst is not None)
            if r is not None:
                old[s] = r
        if vdst is not None:
            if wide:
                _write_lanes(g, vdst.index, mask, (old & U64(0xFFFFFFFF)).astype(U32))
                _write_lanes(g, vdst.index + 1, mask, (old >> U64(32)).astype(U32))
            else:
                _write_lanes(g, vdst.index, mask, old)
    return h
