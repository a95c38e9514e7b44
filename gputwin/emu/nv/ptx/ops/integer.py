"""Integer and bit instructions, every width, with PTX's wrap, saturation and edge-case rules.

Division by zero (PTX: "unspecified, machine-specific") is a documented decision (fidelity.py):
quotient all ones (unsigned) / -1 (signed), remainder = the dividend. INT_MIN / -1 wraps to INT_MIN
with remainder 0. Shift amounts are unsigned and clamp at the width (shl/shr.u give 0, shr.s the sign).
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.nv.ptx import types as T
from gputwin.emu.nv.ptx.errors import PtxError
from gputwin.emu.nv.ptx.ops import binary, op, ternary, the_type, unary, unmodelled

INT: dict[str, object] = {}          # integer factories of the arithmetic opcodes (arith.py dispatches)


def intop(name):
    def deco(f):
        INT[name] = f
        return f
    return deco


def _u(t):
    return T.UINT[T.size(t)]


def _s(t):
    return T.SINT[T.size(t)]


def _bits(t):
    return 8 * T.size(t)


def _sat32(x64):
    return np.clip(x64, -(1 << 31), (1 << 31) - 1).astype(np.int32)


@intop("add")
def add_int(ins, b):
    t = the_type(ins)
    if "cc" in ins.mods:
        return _add_cc(ins, b, t, carry_in=False, sub=False)
    if "sat" in ins.mods:
        return binary(ins, b, lambda x, y: _sat32(x.astype(np.int64) + y), t)
    return binary(ins, b, np.add, t)


@intop("sub")
def sub_int(ins, b):
    t = the_type(ins)
    if "cc" in ins.mods:
        return _add_cc(ins, b, t, carry_in=False, sub=True)
    if "sat" in ins.mods:
        return binary(ins, b, lambda x, y: _sat32(x.astype(np.int64) - y), t)
    return binary(ins, b, np.subtract, t)


def _add_cc(ins, b, t, carry_in, sub, write_cc=True):
    """add.cc / addc / sub.cc / subc on 32/64-bit values; the carry (borrow for sub) lives in b.cc."""
    U = _u(t)
    d = b.dst(ins, ins.args[0], t)
    x, y = b.src(ins, ins.args[1], t), b.src(ins, ins.args[2], t)

    def run(m):
        a = np.asarray(x()).view(U) if np.ndim(x()) else np.asarray(x()).astype(U)
        c = np.asarray(y()).view(U) if np.ndim(y()) else np.asarray(y()).astype(U)
        ci = b.cc.astype(U) if carry_in else U(0)
        if sub:
            r = a - c - ci
            co = (a < c) | ((a == c) & (ci != 0)) if carry_in else (a < c)
        else:
            s1 = a + c
            r = s1 + ci
            co = (s1 < a) | (r < s1)
        d(np.asarray(r).view(T.dtype(t)), m)
        if write_cc:
            _write_cc(b, co, m)
    return run



def _write_cc(b, carry, m) -> None:
    """The carry flag (.cc) of every thread where mask m (None: all) from a per-thread or uniform carry."""
    carry = np.broadcast_to(carry, (b.T,))
    if m is None:
        b.cc[...] = carry
    else:
        np.copyto(b.cc, carry, where=m, casting="unsafe")

@op("addc")
def addc(ins, b):
    return _add_cc(ins, b, the_type(ins), True, False, "cc" in ins.mods)


@op("subc")
def subc(ins, b):
    return _add_cc(ins, b, the_type(ins), True, True, "cc" in ins.mods)


def _mulhi(x, y, t):
    n = _bits(t)
    if n <= 32:
        wide = np.int64 if T.kind(t) == "s" else np.uint64
        return ((x.astype(wide) * y.astype(wide)) >> n).astype(T.dtype(t))
    # 64 x 64 -> high 64 from 32-bit limbs (unsigned), then the signed correction
    a, c = np.asarray(x).view(np.uint64), np.asarray(y).view(np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a0, a1, c0, c1 = a & m32, a >> s32, c & m32, c >> s32
    p00, p01, p10, p11 = a0 * c0, a0 * c1, a1 * c0, a1 * c1
    mid = (p00 >> s32) + (p01 & m32) + (p10 & m32)
    hi = p11 + (p01 >> s32) + (p10 >> s32) + (mid >> s32)
    if T.kind(t) == "s":
        hi = hi - np.where(np.asarray(x) < 0, c, np.uint64(0)) - np.where(np.asarray(y) < 0, a, np.uint64(0))
    return hi.view(T.dtype(t))


_WIDE = {("s", 2): "s32", ("s", 4): "s64", ("u", 2): "u32", ("u", 4): "u64", ("b", 2): "u32", ("b", 4): "u64"}


def _wide(ins, t):
    """.wide doubles a 16- or 32-bit integer type; the PTX ISA defines it for no other."""
    wide = _WIDE.get((T.kind(t), T.size(t)))
    if wide is None:
        raise PtxError(f"{ins.text}: .wide needs a 16- or 32-bit integer type, not .{t}", line=ins.line, token=ins.text)
    return wide


def _mul_fn(ins, t):
    if "wide" in ins.mods:
        tw = _wide(ins, t)
        dt = T.dtype(tw)
        return (lambda x, y: np.asarray(x).astype(dt) * np.asarray(y).astype(dt)), tw
    if "hi" in ins.mods:
        return (lambda x, y: _mulhi(np.asarray(x), np.asarray(y), t)), t
    return np.multiply, t


@intop("mul")
def mul_int(ins, b):
    t = the_type(ins)
    f, td = _mul_fn(ins, t)
    d = b.dst(ins, ins.args[0], td)
    x, y = b.src(ins, ins.args[1], t), b.src(ins, ins.args[2], t)
    return lambda m: d(f(x(), y()), m)


def _mad_cc(ins, b, carry_in):
    """mad{c}.lo/hi{.cc}.u32/s32/u64/s64: the low or high half of a*b, plus c, plus the carry (madc)."""
    t = the_type(ins)
    if "wide" in ins.mods or "sat" in ins.mods:
        raise unmodelled(ins)
    U = _u(t)
    half = (lambda x, y: _mulhi(np.asarray(x), np.asarray(y), t)) if "hi" in ins.mods else np.multiply
    d = b.dst(ins, ins.args[0], t)
    x, y, z = (b.src(ins, a, t) for a in ins.args[1:4])
    write_cc = "cc" in ins.mods

    def run(m):
        p = np.asarray(half(x(), y())).astype(T.dtype(t)).view(U)
        c = np.asarray(z()).astype(T.dtype(t)).view(U) if np.ndim(z()) else np.asarray(z()).astype(U)
        ci = b.cc.astype(U) if carry_in else U(0)
        s1 = p + c
        r = s1 + ci
        d(np.asarray(r).view(T.dtype(t)), m)
        if write_cc:
            _write_cc(b, (s1 < p) | (r < s1), m)
    return run


@op("madc")
def madc(ins, b):
    return _mad_cc(ins, b, True)


@intop("mad")
def mad_int(ins, b):
    t = the_type(ins)
    f, td = _mul_fn(ins, t)
    if "cc" in ins.mods:
        return _mad_cc(ins, b, False)
    d = b.dst(ins, ins.args[0], td)
    x, y, z = b.src(ins, ins.args[1], t), b.src(ins, ins.args[2], t), b.src(ins, ins.args[3], td)
    if "sat" in ins.mods:   # mad.hi.sat.s32
        return lambda m: d(_sat32(f(x(), y()).astype(np.int64) + z()), m)
    return lambda m: d(f(x(), y()) + z(), m)


def _mul24(x, y, t, hi):
    s = T.kind(t) == "s"
    wide = np.int64 if s else np.uint64
    a = (np.asarray(x).astype(wide) << 40) >> 40 if s else np.asarray(x).astype(wide) & 0xFFFFFF
    c = (np.asarray(y).astype(wide) << 40) >> 40 if s else np.asarray(y).astype(wide) & 0xFFFFFF
    p = a * c                                   # 48-bit product, exact
    r = (p >> 16) if hi else p
    return r.astype(np.uint64).astype(np.uint32).view(T.dtype(t))


@op("mul24")
def mul24(ins, b):
    t = the_type(ins)
    return binary(ins, b, lambda x, y: _mul24(x, y, t, "hi" in ins.mods), t)


@op("mad24")
def mad24(ins, b):
    t = the_type(ins)
    if "sat" in ins.mods:
        raise unmodelled(ins, "mad24.sat")
    return ternary(ins, b, lambda x, y, z: _mul24(x, y, t, "hi" in ins.mods) + z, t)


def _div(x, y, t, rem):
    x, y = np.asarray(x), np.asarray(y)
    x, y = np.broadcast_arrays(x, y)
    zero = y == 0
    ys = np.where(zero, 1, y).astype(y.dtype)
    if T.kind(t) == "s":
        mn = np.iinfo(x.dtype).min
        ovf = (x == mn) & (ys == -1)
        ys = np.where(ovf, 1, ys).astype(y.dtype)
        if not rem:                                   # C-style truncation toward zero
            q = x // ys
            q = q + ((q < 0) & (q * ys != x)).astype(q.dtype)
            q = np.where(ovf, x, q)
            return np.where(zero, np.array(-1, x.dtype), q).astype(x.dtype)
        q = np.where(ovf, 0, np.fmod(x, ys))
        return np.where(zero, x, q).astype(x.dtype)
    if rem:
        return np.where(zero, x, x % ys).astype(x.dtype)
    return np.where(zero, np.iinfo(x.dtype).max, x // ys).astype(x.dtype)


@intop("div")
def div_int(ins, b):
    t = the_type(ins)
    return binary(ins, b, lambda x, y: _div(x, y, t, False), t)


@op("rem")
def rem_int(ins, b):
    t = the_type(ins)
    return binary(ins, b, lambda x, y: _div(x, y, t, True), t)


@intop("min")
def min_int(ins, b):
    t = the_type(ins)
    if "relu" in ins.mods:
        return binary(ins, b, lambda x, y: np.maximum(np.minimum(x, y), 0), t)
    return binary(ins, b, np.minimum, t)


@intop("max")
def max_int(ins, b):
    t = the_type(ins)
    if "relu" in ins.mods:
        return binary(ins, b, lambda x, y: np.maximum(np.maximum(x, y), 0), t)
    return binary(ins, b, np.maximum, t)


@intop("abs")
def abs_int(ins, b):
    return unary(ins, b, np.abs)          # abs(INT_MIN) wraps to INT_MIN, as in PTX


@intop("neg")
def neg_int(ins, b):
    return unary(ins, b, np.negative)


# --- logic and bits -----------------------------------------------------------------------------------------

def _logic(f):
    def factory(ins, b):
        t = the_type(ins)
        if t == "pred":
            return binary(ins, b, f, "pred")
        return binary(ins, b, f, {1: "b8", 2: "b16", 4: "b32", 8: "b64"}[T.size(t)])
    return factory


op("and")(_logic(np.bitwise_and))
op("or")(_logic(np.bitwise_or))
op("xor")(_logic(np.bitwise_xor))


@op("not")
def not_(ins, b):
    t = the_type(ins)
    if t == "pred":
        return unary(ins, b, np.logical_not, "pred")
    return unary(ins, b, np.invert, {1: "b8", 2: "b16", 4: "b32", 8: "b64"}[T.size(t)])


@op("cnot")
def cnot(ins, b):
    t = the_type(ins)
    return unary(ins, b, lambda x: (x == 0).astype(T.dtype(t)), t)


def _shift_amount(y, n):
    return np.minimum(np.asarray(y).astype(np.uint32), np.uint32(n))


@op("shl")
def shl(ins, b):
    t = the_type(ins)
    n = _bits(t)
    U = _u(t)
    d = b.dst(ins, ins.args[0], t)
    x, y = b.src(ins, ins.args[1], t), b.src(ins, ins.args[2], "u32")

    def run(m):
        s = _shift_amount(y(), n)
        v = np.asarray(x()).view(U) if np.ndim(x()) else np.asarray(x()).astype(U)
        r = np.where(s >= n, U(0), v << np.minimum(s, n - 1).astype(U)).astype(U)
        d(r.view(T.dtype(t)), m)
    return run


@op("shr")
def shr(ins, b):
    t = the_type(ins)
    n = _bits(t)
    signed = T.kind(t) == "s"
    dt = _s(t) if signed else _u(t)
    d = b.dst(ins, ins.args[0], t)
    x, y = b.src(ins, ins.args[1], t), b.src(ins, ins.args[2], "u32")

    def run(m):
        s = np.minimum(_shift_amount(y(), n), n - 1 if signed else n)
        v = np.asarray(x()).astype(dt, copy=False)
        if signed:
            r = v >> s.astype(dt)
        else:
            r = np.where(s >= n, dt(0), v >> np.minimum(s, n - 1).astype(dt)).astype(dt)
        d(r, m)
    return run


def _popc_u64(v):
    v = v.astype(np.uint64)
    v = v - ((v >> np.uint64(1)) & np.uint64(0x5555555555555555))
    v = (v & np.uint64(0x3333333333333333)) + ((v >> np.uint64(2)) & np.uint64(0x3333333333333333))
    v = (v + (v >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return ((v * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.uint32)


def popc_bits(x, t):
    return _popc_u64(np.asarray(x).view(_u(t)) if np.ndim(x) else np.asarray(x).astype(_u(t)))


@op("popc")
def popc(ins, b):
    t = the_type(ins)
    return unary(ins, b, lambda x: popc_bits(x, t), t, "u32")


def _clz(v, n):
    v = np.asarray(v).astype(np.uint64)
    hb = _highbit(v).astype(np.uint32)
    return np.where(v == 0, np.uint32(n), np.uint32(n - 1) - hb).astype(np.uint32)


def _highbit(v):
    """Index of the highest set bit of uint64 values (0 for v == 0)."""
    v = np.asarray(v).astype(np.uint64)
    pos = np.zeros(v.shape, np.int64)
    cur = v.copy()
    for s in (32, 16, 8, 4, 2, 1):
        hi = cur >> np.uint64(s)
        has = hi != 0
        pos += np.where(has, s, 0)
        cur = np.where(has, hi, cur)
    return pos


@op("clz")
def clz(ins, b):
    t = the_type(ins)
    n = _bits(t)
    return unary(ins, b, lambda x: _clz(np.asarray(x).view(_u(t)) if np.ndim(x) else np.asarray(x).astype(_u(t)), n),
                 t, "u32")


@op("bfind")
def bfind(ins, b):
    t = the_type(ins)
    n = _bits(t)
    shiftamt = "shiftamt" in ins.mods
    signed = T.kind(t) == "s"

    def f(x):
        x = np.asarray(x)
        u = x.view(_u(t)) if x.ndim else x.astype(_u(t))
        if signed:
            u = np.where(x < 0, ~u, u).astype(_u(t))
        hb = _highbit(u).astype(np.uint32)
        r = np.where(u == 0, np.uint32(0xFFFFFFFF), np.uint32(n - 1) - hb if shiftamt else hb)
        return r.astype(np.uint32)
    return unary(ins, b, f, t, "u32")


@op("brev")
def brev(ins, b):
    t = the_type(ins)
    n = _bits(t)
    U = _u(t)

    def f(x):
        v = np.asarray(x).astype(U)
        r = np.zeros_like(v)
        for i in range(n):            # over bit positions (fixed, 32 or 64), vectorised over lanes
            r |= ((v >> U(i)) & U(1)) << U(n - 1 - i)
        return r
    return unary(ins, b, f, t)


@op("bfe")
def bfe(ins, b):
    t = the_type(ins)
    n = _bits(t)
    U = _u(t)
    signed = T.kind(t) == "s"
    d = b.dst(ins, ins.args[0], t)
    x = b.src(ins, ins.args[1], t)
    pos_, len_ = b.src(ins, ins.args[2], "u32"), b.src(ins, ins.args[3], "u32")

    def run(m):
        a = np.asarray(x()).astype(_s(t) if signed else U).view(U)
        pos = np.asarray(pos_()).astype(np.uint32) & np.uint32(0xFF)
        ln = np.asarray(len_()).astype(np.uint32) & np.uint32(0xFF)
        shifted = np.where(pos >= n, U(0), a >> np.minimum(pos, n - 1).astype(U))
        if signed:   # sign bit: msb of the field, or of a when the field runs off the top; 0 if len == 0
            sbit_pos = np.minimum(pos.astype(np.int64) + ln - 1, n - 1)
            sbit = ((a >> sbit_pos.astype(U)) & U(1)).astype(bool) & (ln != 0)
        else:
            sbit = np.zeros(np.shape(ln), bool)
        keep = np.minimum(ln, np.maximum(np.int64(n) - pos.astype(np.int64), 0).astype(np.uint32))
        lowmask = np.where(keep >= n, U(~U(0)), (U(1) << np.minimum(keep, n - 1).astype(U)) - U(1)).astype(U)
        r = (shifted & lowmask) | np.where(sbit, ~lowmask, U(0)).astype(U)
        r = np.where(ln == 0, U(0), r).astype(U)
        d(r.view(T.dtype(t)), m)
    return run


@op("bfi")
def bfi(ins, b):
    t = the_type(ins)
    n = _bits(t)
    U = _u(t)
    d = b.dst(ins, ins.args[0], t)
    x, y = b.src(ins, ins.args[1], t), b.src(ins, ins.args[2], t)
    pos_, len_ = b.src(ins, ins.args[3], "u32"), b.src(ins, ins.args[4], "u32")

    def run(m):
        a, c = np.asarray(x()).astype(U), np.asarray(y()).astype(U)
        pos = np.asarray(pos_()).astype(np.uint32) & np.uint32(0xFF)
        ln = np.asarray(len_()).astype(np.uint32) & np.uint32(0xFF)
        keep = np.minimum(ln, n)
        fmask = np.where(keep >= n, U(~U(0)), (U(1) << np.minimum(keep, n - 1).astype(U)) - U(1)).astype(U)
        ok = pos < n
        sh = np.minimum(pos, n - 1).astype(U)
        fm = np.where(ok, fmask << sh, U(0)).astype(U)
        r = (c & ~fm) | (np.where(ok, a << sh, U(0)).astype(U) & fm)
        r = np.where((ln == 0) | ~ok, c, r).astype(U)
        d(r.view(T.dtype(t)), m)
    return run


@op("prmt")
def prmt(ins, b):
    mode = [m for m in ins.mods if m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")]
    d = b.dst(ins, ins.args[0], "b32")
    x, y, s = (b.src(ins, a, "b32") for a in ins.args[1:4])

    def run(m):
        a, c, sel = np.broadcast_arrays(np.asarray(x()).astype(np.uint64), np.asarray(y()).astype(np.uint64),
                                        np.asarray(s()).astype(np.uint64))
        src = a | (c << np.uint64(32))                        # bytes 0..7
        if mode:
            sel_n = _prmt_mode_selectors(mode[0], sel)
        else:
            sel_n = [(sel >> np.uint64(4 * i)) & np.uint64(0xF) for i in range(4)]
        r = np.zeros(a.shape, np.uint64)
        for i, nib in enumerate(sel_n):
            idx = nib & np.uint64(7)
            byte = (src >> (idx * np.uint64(8))) & np.uint64(0xFF)
            if not mode:                                       # msb of the selector: replicate the sign
                sign = ((byte >> np.uint64(7)) & np.uint64(1)) * np.uint64(0xFF)
                byte = np.where((nib & np.uint64(8)) != 0, sign, byte)
            r |= byte << np.uint64(8 * i)
        d(r.astype(np.uint32), m)
    return run


def _prmt_mode_selectors(mode, sel):
    s = sel & np.uint64(3)
    u = np.uint64
    if mode == "f4e":
        return [(s + u(i)) & u(7) for i in range(4)]
    if mode == "b4e":
        return [(u(8) + s - u(i)) & u(7) for i in range(4)]
    if mode == "rc8":
        return [s] * 4
    if mode == "ecl":                                  # edge clamp left: byte i takes max(i, c)
        return [np.maximum(s, u(i)) for i in range(4)]
    if mode == "ecr":                                  # edge clamp right: byte i takes min(i, c)
        return [np.minimum(s, u(i)) for i in range(4)]
    if mode == "rc16":
        lo = (s & u(1)) * u(2)
        return [lo, lo + u(1), lo, lo + u(1)]
    raise ValueError(mode)


@op("lop3")
def lop3(ins, b):
    d = b.dst(ins, ins.args[0], "b32")
    x, y, z = (b.src(ins, a, "b32") for a in ins.args[1:4])
    lut = ins.args[4]
    if not hasattr(lut, "value"):
        raise unmodelled(ins, "lop3 with a register LUT")
    L = int(lut.value) & 0xFF

    def run(m):
        a, c, e = (np.asarray(v).astype(np.uint32) for v in (x(), y(), z()))
        r = np.zeros(np.broadcast(a, c, e).shape, np.uint32)
        for i in range(8):                                   # sum of minterms of the 8-entry table
            if L >> i & 1:
                ta = a if i & 4 else ~a
                tb = c if i & 2 else ~c
                tc = e if i & 1 else ~e
                r |= ta & tb & tc
        d(r, m)
    return run


@op("shf")
def shf(ins, b):
    left = "l" in ins.mods
    clamp = "clamp" in ins.mods
    d = b.dst(ins, ins.args[0], "b32")
    lo_, hi_, s_ = b.src(ins, ins.args[1], "b32"), b.src(ins, ins.args[2], "b32"), b.src(ins, ins.args[3], "u32")

    def run(m):
        lo, hi = np.asarray(lo_()).astype(np.uint64), np.asarray(hi_()).astype(np.uint64)
        s = np.asarray(s_()).astype(np.uint64)
        n = np.minimum(s, np.uint64(32)) if clamp else (s & np.uint64(31))
        both = (hi << np.uint64(32)) | lo
        if left:
            r = ((both << n) >> np.uint64(32)) & np.uint64(0xFFFFFFFF)
        else:
            r = (both >> n) & np.uint64(0xFFFFFFFF)
        d(r.astype(np.uint32), m)
    return run


@op("sad")
def sad(ins, b):
    t = the_type(ins)
    return ternary(ins, b, lambda x, y, z: np.where(x > y, x - y, y - x).astype(T.dtype(t)) + z, t)

