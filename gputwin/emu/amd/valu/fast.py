"""Fast paths for the integer VALU instructions that dominate compiled kernels' address arithmetic.

Every global access LLVM emits is preceded by 64-bit pointer math: v_mad_u64_u32 (index * size + base),
v_lshlrev_b64 (index << 2) and v_add_co_u32 / v_add_co_ci_u32 pairs. The table path (intops.py) widens
64-bit operands to uint64 arrays and works on every lane. Here the same bits are computed
- on the two 32-bit halves the registers already hold (no stacking to uint64, no splitting back);
- per wave where an operand is the same on all lanes of a wave (SGPRs; registers stored as broadcasts,
  see wave.compact), so a pointer's high dword stays one value per wave through the whole sequence;
- with carries proved absent from operand maxima (one read pass) before paying for a lane-wise compare.
The plain 32-bit moves, bitwise ops, shifts and wrapping adds that loops are made of also skip the
table path's per-instruction set-up (mode, context, result post-processing): one numpy op on compact
operands. `build(inst)` returns such a handler, or None when the instruction needs the table path (DPP,
clamp, per-lane 64-bit shift counts, ...); both produce the same bits (tests/emu/amd/valu/test_fast.py).
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.amd.wave import compact

from .operands import mask_dst, read, read_mask

U32, U64 = np.uint32, np.uint64
M32 = 0xFFFFFFFF
NULL, EXEC = 124, 126


def build(inst):
    """handler(group) for `inst`, or None when the table path must run it."""
    if inst.dpp is not None or inst.clamp or inst.omod or inst.extra or \
            inst.encoding not in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD"):
        return None
    cmp = _COMPARE.get(inst.op)
    if cmp is not None:
        return _compare(inst, *cmp)
    vdst = inst.operands.get("vdst")
    if vdst is None or vdst.kind != "vgpr":
        return None
    maker = _MAKERS.get(inst.op)
    return maker(inst, vdst.index) if maker is not None else None


# --- operands, as compact as they are stored --------------------------------------------------------
def _sgpr_col(g, index: int):
    """An SGPR as one value for the group (when uniform) or an (n, 1) column."""
    col = g.s[index]
    if col.size and col.min() == col.max():
        return col[0]
    return col[:, None]


def _src(g, inst, role: str):
    op = inst.operands[role]
    if op.kind == "vgpr":
        return compact(g.vgpr(op.index))
    if op.kind == "sgpr" and op.index != NULL:
        return _sgpr_col(g, op.index)
    return read(g, inst, role, "u32")


def _pair(g, inst, role: str):
    """A 64-bit source as (low, high) uint32 halves, each compact."""
    op = inst.operands[role]
    if op.kind == "vgpr":
        return compact(g.vgpr(op.index)), compact(g.vgpr(op.index + 1))
    if op.kind == "sgpr" and op.index != NULL:
        return _sgpr_col(g, op.index), _sgpr_col(g, op.index + 1)
    v = np.asarray(read(g, inst, role, "u64"), U64)
    return (v & U64(M32)).astype(U32), (v >> U64(32)).astype(U32)


def _max(x) -> int:
    return int(np.max(x))


def _min(x) -> int:
    return int(np.min(x))


# --- results ----------------------------------------------------------------------------------------
def _write_mask(g, index: int, m) -> None:
    """A lane-mask result (inactive lanes read 0). A per-wave or uniform mask is written as SGPR words
    (EXEC's words where set), without building a per-lane array."""
    if index == NULL:
        return
    m = np.asarray(m)
    if index != EXEC and (m.ndim == 0 or m.shape[-1] == 1):
        per_wave = np.broadcast_to(m.reshape(-1), (g.n,))
        for k in range(2 if g.wave64 else 1):
            g.set_sgpr(index + k, np.where(per_wave, g.s[EXEC + k], U32(0)))
        return
    if not g.exec_full or m.shape != (g.n, g.lanes):
        m = np.logical_and(m, g.exec)
    g.set_lane_mask(index, m)


def _add_flag(x, flag):
    """x + flag (uint32 + bool), in place when x is a fresh array of the result's shape."""
    if isinstance(x, np.ndarray) and x.flags.writeable and x.shape == np.broadcast_shapes(x.shape, flag.shape):
        np.add(x, flag, out=x, casting="unsafe")
        return x
    return np.add(x, flag, dtype=U32, casting="unsafe")


def _or(x, y):
    if isinstance(x, np.ndarray) and x.flags.writeable and x.shape == np.broadcast_shapes(x.shape, np.shape(y)):
        np.bitwise_or(x, y, out=x)
        return x
    return np.bitwise_or(x, y, dtype=U32)


# --- v_mad_u64_u32 ----------------------------------------------------------------------------------
def _mad_u64_u32(inst, d):
    """D.u64 = S0.u32 * S1.u32 + S2.u64; SDST = carry out of the 64-bit sum."""
    sd = mask_dst(inst)

    def h(g):
        a, b = _src(g, inst, "src0"), _src(g, inst, "src1")
        clo, chi = _pair(g, inst, "src2")
        p = np.multiply(a, b, dtype=U64)                     # exact: at most 64 bits
        lanes = np.ndim(p) == 2 and p.shape[1] > 1
        if lanes and np.ndim(chi) == 0 and chi == 0:         # per-lane product, 32-bit addend (3n + 1): no
            s = np.add(p, clo, dtype=U64)                    # carry out, as (2^32-1)^2 + 2^32-1 < 2^64
            g.set_vgpr(d, s.astype(U32))
            g.set_vgpr(d + 1, (s >> U64(32)).astype(U32))
            _write_mask(g, sd, False)
            return
        if lanes:                                             # per lane: little-endian halves as views
            halves = p[..., None].view(U32)
            plo, phi = halves[..., 0], halves[..., 1]
        else:
            plo, phi = (p & U64(M32)).astype(U32), (p >> U64(32)).astype(U32)
        lo = np.add(plo, clo, dtype=U32)
        c1 = None if _max(plo) + _max(clo) <= M32 else lo < plo
        hi = np.add(phi, chi, dtype=U32)
        carry = None
        if sd != NULL and _max(phi) + _max(chi) + (c1 is not None) > M32:
            carry = hi < phi
        if c1 is not None:
            if carry is not None:                             # the +1 wraps only where hi is all ones
                carry = carry | (c1 & (hi == U32(M32)))
            hi = _add_flag(hi, c1)
        g.set_vgpr(d, lo)
        g.set_vgpr(d + 1, hi)
        _write_mask(g, sd, False if carry is None else carry)
    return h


# --- 64-bit shifts by a constant count ----------------------------------------------------------------
def _shift64(kind: str):
    """v_lshlrev_b64 / v_lshrrev_b64 / v_ashrrev_i64 by a constant count, on the 32-bit halves."""
    def make(inst, d):
        op = inst.operands.get("src0")
        if op is None or op.kind not in ("const", "literal"):
            return None                                       # per-lane counts: the table path
        n = int(read(None, inst, "src0", "u32")) & 63

        def h(g):
            lo, hi = _pair(g, inst, "src1")
            if kind == "shl":
                if n >= 32:
                    nlo, nhi = U32(0), np.left_shift(lo, U32(n - 32), dtype=U32)
                else:
                    nlo, nhi = np.left_shift(lo, U32(n), dtype=U32), np.left_shift(hi, U32(n), dtype=U32)
                    if n and _max(lo) >> (32 - n):              # bits crossing into the high dword
                        nhi = _or(nhi, np.right_shift(lo, U32(32 - n), dtype=U32))
            else:
                top = np.asarray(hi).view(np.int32) if kind == "sar" else np.asarray(hi)
                if n >= 32:
                    nlo = (top >> top.dtype.type(n - 32)).view(U32)
                    nhi = (top >> top.dtype.type(31)).view(U32) if kind == "sar" else U32(0)
                else:
                    nhi = (top >> top.dtype.type(n)).view(U32)
                    nlo = np.right_shift(lo, U32(n), dtype=U32)
                    if n:
                        spill = np.left_shift(hi, U32(32 - n), dtype=U32)
                        if spill.any():
                            nlo = _or(nlo, spill)
            g.set_vgpr(d, nlo)
            g.set_vgpr(d + 1, nhi)
        return h
    return make


# --- v_lshl_add_u64 (CDNA3 address arithmetic) ---------------------------------------------------------
def _lshl_add_u64(inst, d):
    """D.u64 = (S0.u64 << S1[2:0]) + S2.u64 with a constant shift count: gfx942's form of index * size +
    base. The shifted index and the base stay as compact as stored, so a pointer's high dword (a zero
    index high dword plus an SGPR base) stays one value per wave."""
    op = inst.operands.get("src1")
    if op is None or op.kind not in ("const", "literal"):
        return None                                           # per-lane counts: the table path
    n = int(read(None, inst, "src1", "u32")) & 7

    def h(g):
        lo, hi = _pair(g, inst, "src0")
        blo, bhi = _pair(g, inst, "src2")
        top = _max(lo)
        if n:
            slo, shi = np.left_shift(lo, U32(n), dtype=U32), np.left_shift(hi, U32(n), dtype=U32)
            if top >> (32 - n):                               # bits crossing into the high dword
                shi = _or(shi, np.right_shift(lo, U32(32 - n), dtype=U32))
                top = _max(slo)
            else:
                top <<= n                                     # nothing crossed: the shift kept the order
        else:
            slo, shi = lo, hi
        rlo = np.add(slo, blo, dtype=U32)
        rhi = np.add(shi, bhi, dtype=U32)
        if top + _max(blo) > M32:                             # a carry out of the low dword is possible
            rhi = _add_flag(rhi, rlo < slo)
        g.set_vgpr(d, rlo)
        g.set_vgpr(d + 1, rhi)
    return h


# --- 32-bit adds and subtracts with carry out (and in) ------------------------------------------------
def _mask_is_zero(g, inst, role: str) -> bool:
    """Is the carry-in lane mask all zero? Checked on the SGPR words (per wave), not per lane."""
    op = inst.operands.get(role)
    index = 106 if op is None or inst.encoding == "VOP2" else (op.index if op.kind == "sgpr" else None)
    if index is None:
        return False
    if index == NULL:
        return True
    return not g.s[index:index + (2 if g.wave64 else 1)].any()


def _carry(sub: bool, rev: bool, cin: bool):
    """v_add/sub(rev)_co(_ci)_u32: D = S0 +- S1 (+- carry in); the carry/borrow out goes to VCC / SDST."""
    def make(inst, d):
        sd = mask_dst(inst)

        def h(g):
            a, b = _src(g, inst, "src0"), _src(g, inst, "src1")
            if rev:
                a, b = b, a
            if sub:
                r = np.subtract(a, b, dtype=U32)
                out = None if _min(a) >= _max(b) else a < b
            else:
                r = np.add(a, b, dtype=U32)
                out = None if _max(a) + _max(b) <= M32 else r < a
            if cin and not _mask_is_zero(g, inst, "src2"):
                c = read_mask(g, inst, "src2")
                # a second wrap happens only where the first step left 0 (sub) or all ones (add)
                edge = c & (r == (U32(0) if sub else U32(M32)))
                r = np.subtract(r, c, dtype=U32, casting="unsafe") if sub else _add_flag(r, c)
                out = edge if out is None else out | edge
            g.set_vgpr(d, r)
            _write_mask(g, sd, False if out is None else out)
        return h
    return make


# --- plain 32-bit operations ------------------------------------------------------------------------
def _plain(fn, roles):
    """D = fn(sources) on compact operands (integer ops: abs/neg/op_sel bits do not apply)."""
    def make(inst, d):
        def h(g):
            g.set_vgpr(d, fn(*[_src(g, inst, r) for r in roles]))
        return h
    return make


# --- 32-bit integer compares to a lane mask (v_cmp_*, not v_cmpx: GFX9 and RDNA3 write different places)
def _compare(inst, fn, signed: bool):
    sd = mask_dst(inst)

    def h(g):
        a, b = _src(g, inst, "src0"), _src(g, inst, "src1")
        if signed:
            a, b = np.asarray(a).view(np.int32), np.asarray(b).view(np.int32)
        _write_mask(g, sd, fn(a, b))
    return h


_COMPARE = {f"v_cmp_{rel}_{t}": (fn, t == "i32") for t in ("u32", "i32") for rel, fn in (
    ("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("gt", np.greater), ("le", np.less_equal),
    ("ge", np.greater_equal))}
_S31 = U32(31)
_PLAIN = {
    "v_mov_b32": (lambda a: a, ("src0",)),
    "v_and_b32": (np.bitwise_and, ("src0", "src1")),
    "v_or_b32": (np.bitwise_or, ("src0", "src1")),
    "v_xor_b32": (np.bitwise_xor, ("src0", "src1")),
    "v_lshlrev_b32": (lambda a, b: np.left_shift(b, np.bitwise_and(a, _S31)), ("src0", "src1")),
    "v_lshrrev_b32": (lambda a, b: np.right_shift(b, np.bitwise_and(a, _S31)), ("src0", "src1")),
    "v_add_nc_u32": (lambda a, b: np.add(a, b, dtype=U32), ("src0", "src1")),
    "v_sub_nc_u32": (lambda a, b: np.subtract(a, b, dtype=U32), ("src0", "src1")),
    "v_subrev_nc_u32": (lambda a, b: np.subtract(b, a, dtype=U32), ("src0", "src1")),
}

_MAKERS = {
    **{name: _plain(fn, roles) for name, (fn, roles) in _PLAIN.items()},
    "v_mad_u64_u32": _mad_u64_u32,
    "v_lshlrev_b64": _shift64("shl"),
    "v_lshrrev_b64": _shift64("shr"),
    "v_ashrrev_i64": _shift64("sar"),
    "v_lshl_add_u64": _lshl_add_u64,
    "v_add_co_u32": _carry(False, False, False),
    "v_sub_co_u32": _carry(True, False, False),
    "v_subrev_co_u32": _carry(True, True, False),
    "v_add_co_ci_u32": _carry(False, False, True),
    "v_sub_co_ci_u32": _carry(True, False, True),
    "v_subrev_co_ci_u32": _carry(True, True, True),
}
