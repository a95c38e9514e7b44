"""Scalar ALU semantics: SOP2, SOP1 and SOPC (per wave, vectorised over the waves of a group).

Each `build_*` turns one decoded instruction into a handler `h(group) -> control` (see executor.py):
None to fall through, an int byte offset to jump to, or a control object. Semantics as data: the
tables below map mnemonics to small numpy functions of the sources (uint32 or uint64 (n,) arrays) that
return (result, scc) with scc None when the instruction leaves SCC alone.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.amd import hwreg
from gputwin.emu.amd.control import Diverge, before_code
from gputwin.emu.amd.scalar_ops import reader32, reader64
from gputwin.errors import IllegalInstruction

U32, U64 = np.uint32, np.uint64
M32 = U64(0xFFFFFFFF)


def _i32(a):
    return a.view(np.int32)


def _i64(a):
    return a.view(np.int64)


def _sh32(b):
    return b & U32(31)


def _sh64(b):
    return (b & U64(63))


def _bitlen32(x):
    """Index of the highest set bit plus one (0 for 0), exact for uint32 via float64."""
    return np.frexp(x.astype(np.float64))[1].astype(np.int64)


def _bitlen64(x):
    hi = (x >> U64(32)).astype(U32)
    lo = (x & M32).astype(U32)
    return np.where(hi != 0, _bitlen32(hi) + 32, _bitlen32(lo))


def _ctz(x, bits):
    low = x & (~x + x.dtype.type(1))                  # lowest set bit
    n = (_bitlen64(low.astype(U64)) if bits == 64 else _bitlen32(low)) - 1
    return np.where(x == 0, -1, n).astype(np.int32).view(U32)


def _clz(x, bits):
    n = bits - (_bitlen64(x) if bits == 64 else _bitlen32(x))
    return np.where(x == 0, -1, n).astype(np.int32).view(U32)


def _cls(x, bits):
    """Position (from the MSB) of the first bit that differs from the sign bit; -1 if none does."""
    neg = (x >> x.dtype.type(bits - 1)) != 0
    y = np.where(neg, ~x, x)
    n = bits - (_bitlen64(y) if bits == 64 else _bitlen32(y))
    return np.where(y == 0, -1, n).astype(np.int32).view(U32)


def _bfe(a, b, bits, signed):
    off = (b & U32(bits - 1)).astype(a.dtype)
    width = ((b >> U32(16)) & U32(0x7F)).astype(np.int64)
    t = (a >> off).astype(U64) if bits == 32 else a >> off
    w = np.minimum(width, 64).astype(U64)
    mask = np.where(w >= 64, ~U64(0), (U64(1) << np.minimum(w, U64(63))) - U64(1))
    t = t & mask
    if signed:
        sign = np.where(w == 0, U64(0), (t >> np.maximum(w, U64(1)) - U64(1)) & U64(1))
        t = np.where(sign != 0, t | ~mask, t)
    return t.astype(a.dtype) if bits == 32 else t


def _wqm(a, bits):
    t = a.dtype.type
    nib = np.zeros_like(a)
    for k in range(bits // 4):
        sel = (a >> t(4 * k)) & t(0xF)
        nib |= np.where(sel != 0, t(0xF) << t(4 * k), t(0))
    return nib


def _brev_bits(a, bits):
    bitsarr = np.unpackbits(a.astype(f"<u{bits // 8}").view(np.uint8).reshape(-1, bits // 8), axis=1,
                            bitorder="little")
    return np.packbits(bitsarr[:, ::-1], axis=1, bitorder="little").view(f"<u{bits // 8}")[:, 0].astype(a.dtype)


def _quadmask(a, bits):
    t = a.dtype.type
    out = np.zeros_like(a)
    for k in range(bits // 4):
        out |= np.where((a >> t(4 * k)) & t(0xF) != 0, t(1) << t(k), t(0))
    return out


def _bitreplicate(a):
    """Each bit i of the 32-bit source becomes bits 2i and 2i+1 of the 64-bit result."""
    x = a.astype(U64)
    out = np.zeros_like(x)
    for i in range(32):
        out |= ((x >> U64(i)) & U64(1)) * U64(3 << 2 * i)
    return out


def _sext(a, bits):
    v = (a & U32((1 << bits) - 1)).astype(np.int64)
    return ((v ^ (1 << bits - 1)) - (1 << bits - 1)).astype(np.int32).view(U32)


def add_i32(a, b):
    d = np.add(a, b)   # the ufunc wraps silently on numpy scalars too (scalar `+` warns on overflow)
    return d, ((~(a ^ b)) & (a ^ d)) >> U32(31) != 0


def _sub_i32(a, b):
    d = np.subtract(a, b)
    return d, ((a ^ b) & (a ^ d)) >> U32(31) != 0


def _mul_hi(a, b, signed):
    if signed:
        p = _i32(a).astype(np.int64) * _i32(b).astype(np.int64)
        return (p >> 32).astype(np.int32).view(U32)
    return ((a.astype(U64) * b.astype(U64)) >> U64(32)).astype(U32)


def _lshl_add(k):
    def f(a, b, scc):
        t = (a.astype(U64) << U64(k)) + b.astype(U64)
        return (t & M32).astype(U32), t > M32
    return f


# --- SOP2: name -> (wide_src0, wide_src1, wide_dst, fn(a, b, scc) -> (d, scc|None)) --------------------
_SOP2 = {
    # ufuncs, not operators: on two constants (numpy scalars) an operator warns where it wraps
    "s_add_u32": (0, 0, lambda a, b, c: (np.add(a, b), (a.astype(U64) + b) > M32)),
    "s_sub_u32": (0, 0, lambda a, b, c: (np.subtract(a, b), b > a)),
    "s_add_i32": (0, 0, lambda a, b, c: add_i32(a, b)),
    "s_sub_i32": (0, 0, lambda a, b, c: _sub_i32(a, b)),
    "s_addc_u32": (0, 0, lambda a, b, c: (np.add(np.add(a, b), c.astype(U32)),
                                          (a.astype(U64) + b + c.astype(U64)) > M32)),
    "s_subb_u32": (0, 0, lambda a, b, c: (np.subtract(np.subtract(a, b), c.astype(U32)),
                                          (b.astype(U64) + c.astype(U64)) > a)),
    "s_min_i32": (0, 0, lambda a, b, c: (np.where(_i32(a) < _i32(b), a, b), _i32(a) < _i32(b))),
    "s_min_u32": (0, 0, lambda a, b, c: (np.where(a < b, a, b), a < b)),
    # MAX sets SCC only when the first input is strictly greater (the value is the same either way)
    "s_max_i32": (0, 0, lambda a, b, c: (np.where(_i32(a) > _i32(b), a, b), _i32(a) > _i32(b))),
    "s_max_u32": (0, 0, lambda a, b, c: (np.where(a > b, a, b), a > b)),
    "s_cselect_b32": (0, 0, lambda a, b, c: (np.where(c, a, b), None)),
    "s_cselect_b64": (1, 1, lambda a, b, c: (np.where(c, a, b), None)),
    "s_lshl_b32": (0, 0, lambda a, b, c: (_nzr(a << _sh32(b)))),
    "s_lshl_b64": (1, 0, lambda a, b, c: (_nzr(a << _sh64(b.astype(U64))))),
    "s_lshr_b32": (0, 0, lambda a, b, c: (_nzr(a >> _sh32(b)))),
    "s_lshr_b64": (1, 0, lambda a, b, c: (_nzr(a >> _sh64(b.astype(U64))))),
    "s_ashr_i32": (0, 0, lambda a, b, c: (_nzr((_i32(a) >> _sh32(b).astype(np.int32)).view(U32)))),
    "s_ashr_i64": (1, 0, lambda a, b, c: (_nzr((_i64(a) >> _sh64(b.astype(U64)).astype(np.int64)).view(U64)))),
    "s_bfm_b32": (0, 0, lambda a, b, c: ((((U64(1) << (a & U32(31)).astype(U64)) - U64(1)) << (b & U32(31)).astype(U64)
                                          & M32).astype(U32), None)),
    "s_bfm_b64": (0, 0, lambda a, b, c: (((U64(1) << (a & U32(63)).astype(U64)) - U64(1)) << (b & U32(63)).astype(U64),
                                         None)),
    "s_mul_i32": (0, 0, lambda a, b, c: (np.multiply(a, b), None)),
    "s_mul_hi_u32": (0, 0, lambda a, b, c: (_mul_hi(a, b, False), None)),
    "s_mul_hi_i32": (0, 0, lambda a, b, c: (_mul_hi(a, b, True), None)),
    "s_bfe_u32": (0, 0, lambda a, b, c: _nzr(_bfe(a, b, 32, False))),
    "s_bfe_i32": (0, 0, lambda a, b, c: _nzr(_bfe(a, b, 32, True))),
    "s_bfe_u64": (1, 0, lambda a, b, c: _nzr(_bfe(a, b, 64, False))),
    "s_bfe_i64": (1, 0, lambda a, b, c: _nzr(_bfe(a, b, 64, True))),
    "s_absdiff_i32": (0, 0, lambda a, b, c: _nzr(np.where(_i32(a - b) < 0, -(a - b), a - b))),
    "s_lshl1_add_u32": (0, 0, _lshl_add(1)),
    "s_lshl2_add_u32": (0, 0, _lshl_add(2)),
    "s_lshl3_add_u32": (0, 0, _lshl_add(3)),
    "s_lshl4_add_u32": (0, 0, _lshl_add(4)),
    "s_pack_ll_b32_b16": (0, 0, lambda a, b, c: ((a & U32(0xFFFF)) | (b << U32(16)), None)),
    "s_pack_lh_b32_b16": (0, 0, lambda a, b, c: ((a & U32(0xFFFF)) | (b & U32(0xFFFF0000)), None)),
    "s_pack_hh_b32_b16": (0, 0, lambda a, b, c: ((a >> U32(16)) | (b & U32(0xFFFF0000)), None)),
    "s_pack_hl_b32_b16": (0, 0, lambda a, b, c: ((a >> U32(16)) | (b << U32(16)), None)),
}


def _nzr(d):
    return d, d != 0


for _w, _sfx in ((0, "b32"), (1, "b64")):
    for _name, _fn in (("and", lambda a, b: a & b), ("or", lambda a, b: a | b), ("xor", lambda a, b: a ^ b),
                       ("and_not1", lambda a, b: a & ~b), ("or_not1", lambda a, b: a | ~b),
                       ("nand", lambda a, b: ~(a & b)), ("nor", lambda a, b: ~(a | b)),
                       ("xnor", lambda a, b: ~(a ^ b))):
        _SOP2[f"s_{_name}_{_sfx}"] = (_w, _w, lambda a, b, c, f=_fn: _nzr(f(a, b)))

# --- SOPC: name -> (wide, fn(a, b) -> scc) ------------------------------------------------------------
_SOPC = {
    "s_cmp_eq_u64": (1, lambda a, b: a == b), "s_cmp_lg_u64": (1, lambda a, b: a != b),
    "s_bitcmp0_b32": (0, lambda a, b: (a >> _sh32(b)) & U32(1) == 0),
    "s_bitcmp1_b32": (0, lambda a, b: (a >> _sh32(b)) & U32(1) != 0),
    "s_bitcmp0_b64": (2, lambda a, b: (a >> _sh64(b.astype(U64))) & U64(1) == 0),
    "s_bitcmp1_b64": (2, lambda a, b: (a >> _sh64(b.astype(U64))) & U64(1) != 0),
}
CMP = {"eq": np.equal, "lg": np.not_equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
        "le": np.less_equal}
for _c, _f in CMP.items():
    _SOPC[f"s_cmp_{_c}_u32"] = (0, _f)
    _SOPC[f"s_cmp_{_c}_i32"] = (0, lambda a, b, f=_f: f(_i32(a), _i32(b)))

# --- SOP1: name -> (wide_src, wide_dst, fn(a, scc) -> (d, scc|None)) --------------------------------------
_SOP1 = {
    "s_mov_b32": (0, 0, lambda a, c: (a, None)),
    "s_mov_b64": (1, 1, lambda a, c: (a, None)),
    "s_not_b32": (0, 0, lambda a, c: _nzr(~a)),
    "s_not_b64": (1, 1, lambda a, c: _nzr(~a)),
    "s_wqm_b32": (0, 0, lambda a, c: _nzr(_wqm(a, 32))),
    "s_wqm_b64": (1, 1, lambda a, c: _nzr(_wqm(a, 64))),
    "s_brev_b32": (0, 0, lambda a, c: (_brev_bits(a, 32), None)),
    "s_brev_b64": (1, 1, lambda a, c: (_brev_bits(a, 64), None)),
    "s_bcnt0_i32_b32": (0, 0, lambda a, c: _nzr((32 - np.bitwise_count(a)).astype(U32))),
    "s_bcnt0_i32_b64": (1, 0, lambda a, c: _nzr((64 - np.bitwise_count(a)).astype(U32))),
    "s_bcnt1_i32_b32": (0, 0, lambda a, c: _nzr(np.bitwise_count(a).astype(U32))),
    "s_bcnt1_i32_b64": (1, 0, lambda a, c: _nzr(np.bitwise_count(a).astype(U32))),
    "s_ctz_i32_b32": (0, 0, lambda a, c: (_ctz(a, 32), None)),
    "s_ctz_i32_b64": (1, 0, lambda a, c: (_ctz(a, 64), None)),
    "s_clz_i32_u32": (0, 0, lambda a, c: (_clz(a, 32), None)),
    "s_clz_i32_u64": (1, 0, lambda a, c: (_clz(a, 64), None)),
    "s_cls_i32": (0, 0, lambda a, c: (_cls(a, 32), None)),
    "s_cls_i32_i64": (1, 0, lambda a, c: (_cls(a, 64), None)),
    "s_sext_i32_i8": (0, 0, lambda a, c: (_sext(a, 8), None)),
    "s_sext_i32_i16": (0, 0, lambda a, c: (_sext(a, 16), None)),
    "s_quadmask_b32": (0, 0, lambda a, c: _nzr(_quadmask(a, 32))),
    "s_quadmask_b64": (1, 1, lambda a, c: _nzr(_quadmask(a, 64))),
    "s_abs_i32": (0, 0, lambda a, c: _nzr(np.where(_i32(a) < 0, -a, a))),
    "s_bitreplicate_b64_b32": (0, 1, lambda a, c: (_bitreplicate(a), None)),
}

# saveexec family: name stem -> new EXEC from (s0, old exec)
_SAVEEXEC = {
    "and": lambda s, e: s & e, "or": lambda s, e: s | e, "xor": lambda s, e: s ^ e,
    "nand": lambda s, e: ~(s & e), "nor": lambda s, e: ~(s | e), "xnor": lambda s, e: ~(s ^ e),
    "and_not0": lambda s, e: ~s & e, "and_not1": lambda s, e: s & ~e,
    "or_not0": lambda s, e: ~s | e, "or_not1": lambda s, e: s | ~e,
}


def set_scc(g, value) -> None:
    if value.__class__ is np.ndarray and value.dtype == bool and value.shape == (g.n,):
        value.flags.writeable = False       # a comparison's fresh result: keep it (broadcast_to costs ~2 us)
        g.scc = value
    else:
        g.scc = np.broadcast_to(np.asarray(value, bool), (g.n,))


def _wave_array(read):
    """A reader whose constants are widened to one value per wave (for ops that reshape their input)."""
    return lambda g: np.broadcast_to(read(g), (g.n,)).copy()


def _writer(g_op, wide):
    """A function (group, value) writing a scalar destination operand."""
    if g_op is None:
        raise IllegalInstruction("scalar instruction without a destination")
    i = g_op.index
    if wide:
        return lambda g, v: g.set_sgpr64(i, v)
    return lambda g, v: g.set_sgpr(i, v)


def _src(inst, role, wide):
    op = inst.operands.get(role)
    if op is None:
        raise IllegalInstruction(f"{inst.op}: missing operand {role}")
    # the 64-bit source of an _i64 instruction is signed (literals sign-extend into it)
    return reader64(op, signed=role == "src0" and "_i64" in inst.op) if wide else reader32(op)


def build_sop2(inst):
    ent = _SOP2.get(inst.op)
    if ent is None:
        return None
    wa, wb, fn = ent
    ra, rb = _src(inst, "src0", wa), _src(inst, "src1", wb)
    wd = wa if inst.op not in ("s_bfm_b64",) else 1
    write = _writer(inst.operands.get("sdst"), wd)

    def h(g):
        d, scc = fn(ra(g), rb(g), g.scc)
        write(g, d)
        if scc is not None:
            set_scc(g, scc)
    return h


def build_sopc(inst):
    ent = _SOPC.get(inst.op)
    if ent is None:
        return None
    w, fn = ent
    ra, rb = _src(inst, "src0", w >= 1), _src(inst, "src1", w == 1)

    def h(g):
        set_scc(g, fn(ra(g), rb(g)))
    return h


def build_sop1(inst):
    op = inst.op
    if op in _SOP1:
        ws, wd, fn = _SOP1[op]
        ra, write = _wave_array(_src(inst, "src0", ws)), _writer(inst.operands.get("sdst"), wd)

        def h(g):
            d, scc = fn(ra(g), g.scc)
            write(g, d)
            if scc is not None:
                set_scc(g, scc)
        return h
    if op in ("s_cmov_b32", "s_cmov_b64"):
        wide = op.endswith("64")
        ra, rd = _src(inst, "src0", wide), _src(inst, "sdst", wide)
        write = _writer(inst.operands["sdst"], wide)
        return lambda g: write(g, np.where(g.scc, ra(g), rd(g)))
    for sfx, wide in (("_b32", False), ("_b64", True)):
        for stem, fn in _SAVEEXEC.items():
            if op == f"s_{stem}_saveexec{sfx}" or op == f"s_{stem}_wrexec{sfx}":
                return _saveexec(inst, fn, wide, op.startswith(f"s_{stem}_wrexec"))
    if op in ("s_bitset0_b32", "s_bitset1_b32", "s_bitset0_b64", "s_bitset1_b64"):
        wide = op.endswith("64")
        ra, rd = _src(inst, "src0", False), _src(inst, "sdst", wide)
        write = _writer(inst.operands["sdst"], wide)
        one = U64(1) if wide else U32(1)
        mask = U32(63 if wide else 31)
        if op.startswith("s_bitset1"):
            return lambda g: write(g, rd(g) | (one << (ra(g) & mask).astype(one.dtype)))
        return lambda g: write(g, rd(g) & ~(one << (ra(g) & mask).astype(one.dtype)))
    if op in ("s_getpc_b64", "s_setpc_b64", "s_swappc_b64"):
        return _pc_op(inst)
    if op in ("s_movrels_b32", "s_movrels_b64", "s_movreld_b32", "s_movreld_b64", "s_movrelsd_2_b32"):
        return _movrel(inst)
    if op in ("s_sendmsg_rtn_b32", "s_sendmsg_rtn_b64"):
        return hwreg.build_sendmsg_rtn(inst, _writer(inst.operands.get("sdst"), op.endswith("64")))
    return None


def _saveexec(inst, fn, wide, wrexec):
    ra = _src(inst, "src0", wide)
    write = _writer(inst.operands.get("sdst"), wide)

    def h(g):
        s = ra(g)
        old = g.sgpr64(126) if wide else g.sgpr(126).copy()
        new = fn(s, old)
        g.set_sgpr64(126, new) if wide else g.set_sgpr(126, new)
        write(g, new if wrexec else old)
        set_scc(g, new != 0)
    return h


def _pc_op(inst):
    op = inst.op
    nxt = inst.size
    if op == "s_getpc_b64":
        write = _writer(inst.operands.get("sdst"), True)
        return lambda g: write(g, np.full(g.n, g.ctx.code_address + g.pc + nxt, U64))
    ra = _src(inst, "src0", True)
    write = _writer(inst.operands.get("sdst"), True) if op == "s_swappc_b64" else None

    def h(g):
        # a constant source is one value for every wave: broadcast it so each wave gets its target
        target = np.broadcast_to(ra(g), (g.n,)).astype(np.int64) - g.ctx.code_address
        if target.min() < 0:
            raise before_code(g, int(target.min()))
        if write is not None:
            write(g, np.full(g.n, g.ctx.code_address + g.pc + nxt, U64))
        return Diverge.by_value(target)
    return h


def _movrel(inst):
    op = inst.op
    wide = op.endswith("_b64")
    cnt = 2 if wide else 1
    src, dst = inst.operands["src0"].index, inst.operands["sdst"].index

    def h(g):
        m0 = int(g.sgpr(125)[0])
        if not (g.sgpr(125) == m0).all():
            raise IllegalInstruction(f"{op}: M0 differs between the waves of a group (not modelled)")
        s = src + (m0 if op in ("s_movrels_b32", "s_movrels_b64", "s_movrelsd_2_b32") else 0)
        d = dst + (m0 if op in ("s_movreld_b32", "s_movreld_b64", "s_movrelsd_2_b32") else 0)
        if max(s, d) + cnt > 106:
            raise IllegalInstruction(f"{op}: relative SGPR index out of range (M0={m0})")
        for k in range(cnt):
            g.set_sgpr(d + k, g.sgpr(s + k).copy())
    return h
