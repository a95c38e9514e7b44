"""Integer and bitwise VALU operations (8/16/24/32/64-bit), with carries and clamp saturation."""
from __future__ import annotations

import numpy as np

from .table import Op

U16, U32, U64 = np.uint16, np.uint32, np.uint64
I16, I32, I64 = np.int16, np.int32, np.int64
M32 = (1 << 32) - 1


def s(x, dt):
    """Reinterpret bits as a signed dtype (works on 0-d and n-d arrays)."""
    return np.asarray(x).view(dt)


def w64(x):
    return np.asarray(x).astype(np.int64)


# --- add / sub with clamp and carries ---------------------------------------------------------------
def _addsub_u(bits, dt, sign: int, rev=False):
    """Wrapping add/sub in the native unsigned dtype; clamp (saturation) goes through int64."""
    hi = (1 << bits) - 1

    def fn(c, a, b):
        if rev:
            a, b = b, a
        if not c.clamp:
            return np.add(a, b, dtype=dt) if sign > 0 else np.subtract(a, b, dtype=dt)
        return np.asarray(np.clip(w64(a) + sign * w64(b), 0, hi)).astype(dt)
    return fn


def _mad16(signed: bool, dbits: int):
    """v_mad_[ui]16 (dbits 16) / v_mad_[ui]32_[ui]16 (dbits 32): 16-bit products plus the addend, exact in
    int64; clamp saturates to the destination's range (hardware-recorded: 0xFFFF * 2 + 0 -> 0xFFFF), else
    the low dbits wrap."""
    lo, hi = (-(1 << (dbits - 1)), (1 << (dbits - 1)) - 1) if signed else (0, (1 << dbits) - 1)
    dt = U16 if dbits == 16 else U32

    def fn(c, a, b, d):
        if signed:
            v = w64(s(a, I16)) * w64(s(b, I16)) + w64(s(d, I16 if dbits == 16 else I32))
        else:
            v = w64(a) * w64(b) + w64(d)
        if c.clamp:
            v = np.clip(v, lo, hi)
        return (v & ((1 << dbits) - 1)).astype(dt)
    return fn


def _addsub_i(bits, udt, sdt, sign: int):
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def fn(c, a, b):
        if not c.clamp:                      # two's complement: same bits as the unsigned op
            return np.add(a, b, dtype=udt) if sign > 0 else np.subtract(a, b, dtype=udt)
        v = np.clip(w64(s(a, sdt)) + sign * w64(s(b, sdt)), lo, hi)
        return (np.asarray(v) & ((1 << bits) - 1)).astype(udt)
    return fn


def _carry(sign: int, rev=False, cin=False):
    """v_add/sub(rev)_co(_ci)_u32: 32-bit result plus the carry (add) or borrow (sub) lane mask.
    Native uint32 arithmetic; clamp (saturation) goes through int64."""
    def fn(c, a, b):
        if rev:
            a, b = b, a
        if c.clamp:
            ci = c.cin.astype(np.int64) if cin else 0
            v = w64(a) + sign * (w64(b) + ci)
            return np.clip(v, 0, M32).astype(U32), (v > M32) | (v < 0)
        a, b = np.asarray(a, U32), np.asarray(b, U32)
        if sign > 0:
            r = np.add(a, b, dtype=U32)
            carry = r < a
            if cin:
                carry = carry | (c.cin & (r == U32(M32)))
                r = np.add(r, c.cin, dtype=U32)
            return r, carry
        r = np.subtract(a, b, dtype=U32)
        borrow = a < b
        if cin:
            borrow = borrow | (c.cin & (a == b))
            r = np.subtract(r, c.cin, dtype=U32)
        return r, borrow
    return fn


# --- multiplies -------------------------------------------------------------------------------------
def _u24(x):
    return w64(x) & 0xFFFFFF


def _i24(x):
    v = w64(x) & 0xFFFFFF
    return v - ((v & 0x800000) << 1)


def mul_lo_u32(c, a, b):
    return np.multiply(a, b, dtype=U32)          # uint32 multiply wraps modulo 2^32


def mul_hi_u32(c, a, b):
    return ((np.asarray(a).astype(U64) * np.asarray(b).astype(U64)) >> U64(32)).astype(U32)


def mul_hi_i32(c, a, b):
    return ((w64(s(a, I32)) * w64(s(b, I32))) >> 32).astype(U32)


def mad_u64_u32(c, a, b, d):
    p = np.asarray(a).astype(U64) * np.asarray(b).astype(U64)
    r = p + np.asarray(d, U64)
    return r, r < p


def mad_i64_i32(c, a, b, d):
    """Signed 65-bit result: the carry-out is bit 64, i.e. the sign of the exact sum."""
    p = w64(s(a, I32)) * w64(s(b, I32))
    d = s(np.asarray(d, U64), I64)
    r = (p.astype(U64) + d.astype(U64)).view(I64)
    ovf = ((p < 0) == (d < 0)) & ((r < 0) != (p < 0))
    return r.view(U64), np.where(ovf, p < 0, r < 0)


# --- bit manipulation -------------------------------------------------------------------------------
def _popcount(x):
    x = np.asarray(x, U32)
    return np.unpackbits(np.ascontiguousarray(x)[..., None].view(np.uint8), axis=-1).sum(-1).astype(U32)


def bfe_u32(c, a, b, d):
    off, width = np.asarray(b, U32) & U32(31), np.asarray(d, U32) & U32(31)
    return ((np.asarray(a, U64) >> off.astype(U64)) & ((U64(1) << width.astype(U64)) - U64(1))).astype(U32)


def bfe_i32(c, a, b, d):
    off, width = w64(b) & 31, w64(d) & 31
    v = (w64(a) >> off) & ((1 << width) - 1)
    sign = (v >> np.maximum(width - 1, 0)) & 1
    v = np.where((width > 0) & (sign == 1), v - (1 << width), v)
    return np.where(width == 0, 0, v).astype(np.int64).astype(U32)


def alignbit(c, a, b, d):
    wide = (np.asarray(a, U64) << U64(32)) | np.asarray(b, U64)
    return (wide >> (np.asarray(d, U64) & U64(31))).astype(U32)


def alignbyte(c, a, b, d):
    wide = (np.asarray(a, U64) << U64(32)) | np.asarray(b, U64)
    return (wide >> ((np.asarray(d, U64) & U64(3)) * U64(8))).astype(U32)


def perm_b32(c, a, b, d):
    """Byte select from the 64-bit {S0, S1} (S0 high): 0..7 bytes, 8..11 sign fill, 12 zero, >=13 0xff."""
    wide = (np.asarray(a, U64) << U64(32)) | np.asarray(b, U64)
    wide, sel = np.broadcast_arrays(wide, np.asarray(d, U32))
    out = np.zeros(wide.shape, U32)
    for k in range(4):
        sk = ((sel >> U32(8 * k)) & U32(0xFF)).astype(U64)
        byte = (wide >> (np.minimum(sk, U64(7)) * U64(8))) & U64(0xFF)
        sign_src = np.choose(np.clip(sk.astype(np.int64) - 8, 0, 3), [U64(1), U64(3), U64(5), U64(7)])
        fill = ((wide >> (sign_src * U64(8) + U64(7))) & U64(1)) * U64(0xFF)
        v = np.where(sk < 8, byte, np.where(sk < 12, fill, np.where(sk == 12, U64(0), U64(0xFF))))
        out |= (v.astype(U32) << U32(8 * k))
    return out


def _clz(x):
    x = np.asarray(x, U32)
    nz = x != 0
    lz = 31 - np.floor(np.log2(np.where(nz, x, 1).astype(np.float64))).astype(np.int64)
    return np.where(nz, lz, -1)


def clz(c, a):
    return _clz(a).astype(np.int64).astype(U32)


def ctz(c, a):
    x = np.asarray(a, U32)
    low = x & (~x + U32(1))
    return np.where(x == 0, -1, 31 - _clz(low)).astype(np.int64).astype(U32)


def cls(c, a):
    """Position (from the top) of the first bit that differs from the sign bit; -1 for 0 and -1."""
    x = np.asarray(a, U32)
    return _clz(np.where((x >> U32(31)) == 1, ~x, x)).astype(np.int64).astype(U32)


def bfrev(c, a):
    x = np.ascontiguousarray(np.asarray(a, U32))
    bits = np.unpackbits(x[..., None].view(np.uint8), axis=-1, bitorder="little")[..., ::-1]
    return np.packbits(np.ascontiguousarray(bits), axis=-1, bitorder="little").view(U32)[..., 0]


def sad(c, a, b, d, masked=False, hi=False):
    a, b = np.asarray(a, U32), np.asarray(b, U32)
    tot = np.zeros(np.broadcast(a, b).shape, np.int64)
    for k in range(4):
        x, y = w64(a >> U32(8 * k)) & 0xFF, w64(b >> U32(8 * k)) & 0xFF
        diff = np.abs(x - y)
        tot = tot + (np.where(y == 0, 0, diff) if masked else diff)
    if hi:
        tot = tot << 16
    return ((tot + w64(d)) & M32).astype(U32)


def sad_u16(c, a, b, d):
    a, b = w64(a), w64(b)
    tot = np.abs((a & 0xFFFF) - (b & 0xFFFF)) + np.abs((a >> 16) - (b >> 16))
    return ((tot + w64(d)) & M32).astype(U32)


def lerp_u8(c, a, b, d):
    a, b, d = w64(a), w64(b), w64(d)
    out = 0
    for k in range(4):
        x, y, r = (a >> 8 * k) & 0xFF, (b >> 8 * k) & 0xFF, (d >> 8 * k) & 1
        out = out | ((((x + y + r) >> 1) & 0xFF) << 8 * k)
    return np.asarray(out).astype(U32)


def mbcnt(hi: bool):
    """Count of set bits of S0 among lanes below this one (lo: lanes 0..31, hi: lanes 32..63) plus S1."""
    def fn(c, a, b):
        lanes = np.arange(c.group.lanes, dtype=np.int64)
        nbits = np.clip(lanes - (32 if hi else 0), 0, 32)
        below = np.where(nbits >= 32, M32, (1 << nbits) - 1).astype(U32)
        return (_popcount(np.asarray(a, U32) & below) + np.asarray(b, U32)).astype(U32)
    return fn


def _minmax_int(dt, pick):
    return lambda c, a, b: np.asarray(pick(s(a, dt), s(b, dt))).view(np.asarray(a).dtype)


def _med3(dt):
    def fn(c, a, b, d):
        x, y, z = s(a, dt), s(b, dt), s(d, dt)
        return np.asarray(np.maximum(np.minimum(x, y), np.minimum(np.maximum(x, y), z))).view(np.asarray(a).dtype)
    return fn


def _shift(bits, kind):
    """v_*rev_*: shift S1 by S0's low log2(bits) bits."""
    m = bits - 1
    udt = {16: U16, 32: U32, 64: U64}[bits]
    sdt = {16: I16, 32: I32, 64: I64}[bits]

    def fn(c, a, b):
        n = np.asarray(a).astype(udt) & udt(m)
        b = np.asarray(b, udt)
        if kind == "shl":
            return b << n
        if kind == "shr":
            return b >> n
        return (s(b, sdt) >> n.astype(sdt)).view(udt)
    return fn


def _bin(g):
    return lambda c, a, b: g(a, b)


def _table():
    o = {}
    u32, i32, u16, i16 = ("u32", "u32"), ("i32", "i32"), ("u16", "u16"), ("i16", "i16")
    o["v_add_nc_u32"] = Op(_addsub_u(32, U32, 1), u32, "u32", int_clamp=True)
    o["v_sub_nc_u32"] = Op(_addsub_u(32, U32, -1), u32, "u32", int_clamp=True)
    o["v_subrev_nc_u32"] = Op(_addsub_u(32, U32, -1, rev=True), u32, "u32", int_clamp=True)
    o["v_add_nc_i32"] = Op(_addsub_i(32, U32, I32, 1), i32, "i32", int_clamp=True)
    o["v_sub_nc_i32"] = Op(_addsub_i(32, U32, I32, -1), i32, "i32", int_clamp=True)
    o["v_add_nc_u16"] = Op(_addsub_u(16, U16, 1), u16, "u16", int_clamp=True)
    o["v_sub_nc_u16"] = Op(_addsub_u(16, U16, -1), u16, "u16", int_clamp=True)
    o["v_add_nc_i16"] = Op(_addsub_i(16, U16, I16, 1), i16, "i16", int_clamp=True)
    o["v_sub_nc_i16"] = Op(_addsub_i(16, U16, I16, -1), i16, "i16", int_clamp=True)
    o["v_add_co_u32"] = Op(_carry(1), u32, "u32", out="v+mask", int_clamp=True)
    o["v_sub_co_u32"] = Op(_carry(-1), u32, "u32", out="v+mask", int_clamp=True)
    o["v_subrev_co_u32"] = Op(_carry(-1, rev=True), u32, "u32", out="v+mask", int_clamp=True)
    o["v_add_co_ci_u32"] = Op(_carry(1, cin=True), u32, "u32", out="v+mask", int_clamp=True, cin="src2")
    o["v_sub_co_ci_u32"] = Op(_carry(-1, cin=True), u32, "u32", out="v+mask", int_clamp=True, cin="src2")
    o["v_subrev_co_ci_u32"] = Op(_carry(-1, rev=True, cin=True), u32, "u32", out="v+mask", int_clamp=True,
                                 cin="src2")
    o["v_mul_lo_u32"] = Op(mul_lo_u32, u32, "u32")
    o["v_mul_hi_u32"] = Op(mul_hi_u32, u32, "u32")
    o["v_mul_hi_i32"] = Op(mul_hi_i32, i32, "i32")
    o["v_mul_u32_u24"] = Op(lambda c, a, b: ((_u24(a) * _u24(b)) & M32).astype(U32), u32, "u32")
    o["v_mul_hi_u32_u24"] = Op(lambda c, a, b: ((_u24(a) * _u24(b)) >> 32).astype(U32), u32, "u32")
    o["v_mul_i32_i24"] = Op(lambda c, a, b: ((_i24(a) * _i24(b)) & M32).astype(U32), i32, "i32")
    o["v_mul_hi_i32_i24"] = Op(lambda c, a, b: (((_i24(a) * _i24(b)) >> 32) & M32).astype(U32), i32, "i32")
    o["v_mad_u32_u24"] = Op(lambda c, a, b, d: ((_u24(a) * _u24(b) + w64(d)) & M32).astype(U32),
                            ("u32",) * 3, "u32")
    o["v_mad_i32_i24"] = Op(lambda c, a, b, d: ((_i24(a) * _i24(b) + w64(s(d, I32))) & M32).astype(U32),
                            ("i32",) * 3, "i32")
    o["v_mad_u64_u32"] = Op(mad_u64_u32, ("u32", "u32", "u64"), "u64", out="v+mask")
    o["v_mad_i64_i32"] = Op(mad_i64_i32, ("i32", "i32", "i64"), "i64", out="v+mask")
    o["v_mul_lo_u16"] = Op(lambda c, a, b: (w64(a) * w64(b) & 0xFFFF).astype(U16), u16, "u16")
    o["v_mad_u16"] = Op(_mad16(False, 16), ("u16",) * 3, "u16", int_clamp=True)
    o["v_mad_i16"] = Op(_mad16(True, 16), ("i16",) * 3, "i16", int_clamp=True)
    o["v_mad_u32_u16"] = Op(_mad16(False, 32), ("u16", "u16", "u32"), "u32", int_clamp=True)
    o["v_mad_i32_i16"] = Op(_mad16(True, 32), ("i16", "i16", "i32"), "i32", int_clamp=True)
    b32, b16 = ("b32", "b32"), ("b16", "b16")
    for name, g in (("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)):
        o[f"v_{name}_b32"] = Op(_bin(g), b32, "b32")
        o[f"v_{name}_b16"] = Op(_bin(g), b16, "b16")
    o["v_xnor_b32"] = Op(lambda c, a, b: ~(a ^ b), b32, "b32")
    o["v_not_b32"] = Op(lambda c, a: ~np.asarray(a), ("b32",), "b32")
    o["v_not_b16"] = Op(lambda c, a: ~np.asarray(a), ("b16",), "b16")
    o["v_mov_b32"] = Op(lambda c, a: a, ("b32",), "b32")
    o["v_mov_b16"] = Op(lambda c, a: a, ("b16",), "b16")
    # v_cndmask: abs/neg apply (float-typed sources) but nothing is flushed or quieted
    o["v_cndmask_b32"] = Op(lambda c, a, b: np.where(c.cin, b, a), ("f32", "f32"), "b32", flush=False, nan=False,
                            cin="src2")
    o["v_cndmask_b16"] = Op(lambda c, a, b: np.where(c.cin, b, a), ("f16", "f16"), "b16", flush=False, nan=False,
                            cin="src2")
    o["v_bfrev_b32"] = Op(bfrev, ("b32",), "b32")
    o["v_clz_i32_u32"] = Op(clz, ("u32",), "i32")
    o["v_ctz_i32_b32"] = Op(ctz, ("b32",), "i32")
    o["v_cls_i32"] = Op(cls, ("i32",), "i32")
    o["v_and_or_b32"] = Op(lambda c, a, b, d: (a & b) | d, ("b32",) * 3, "b32")
    o["v_or3_b32"] = Op(lambda c, a, b, d: a | b | d, ("b32",) * 3, "b32")
    o["v_xor3_b32"] = Op(lambda c, a, b, d: a ^ b ^ d, ("b32",) * 3, "b32")
    o["v_xad_u32"] = Op(lambda c, a, b, d: ((w64(a ^ b) + w64(d)) & M32).astype(U32), ("u32",) * 3, "u32")
    o["v_add3_u32"] = Op(lambda c, a, b, d: ((w64(a) + w64(b) + w64(d)) & M32).astype(U32), ("u32",) * 3, "u32")
    o["v_add_lshl_u32"] = Op(lambda c, a, b, d: (((w64(a) + w64(b)) << (w64(d) & 31)) & M32).astype(U32),
                             ("u32",) * 3, "u32")
    o["v_lshl_add_u32"] = Op(lambda c, a, b, d: (((w64(a) << (w64(b) & 31)) + w64(d)) & M32).astype(U32),
                             ("u32",) * 3, "u32")
    o["v_lshl_or_b32"] = Op(lambda c, a, b, d: (((w64(a) << (w64(b) & 31)) & M32) | w64(d)).astype(U32),
                            ("b32",) * 3, "b32")
    o["v_bfe_u32"] = Op(bfe_u32, ("u32",) * 3, "u32")
    o["v_bfe_i32"] = Op(bfe_i32, ("i32",) * 3, "i32")
    o["v_bfi_b32"] = Op(lambda c, a, b, d: (a & b) | (~a & d), ("b32",) * 3, "b32")
    o["v_bfm_b32"] = Op(lambda c, a, b: ((((1 << (w64(a) & 31)) - 1) << (w64(b) & 31)) & M32).astype(U32),
                        b32, "b32")
    o["v_alignbit_b32"] = Op(alignbit, ("b32",) * 3, "b32")
    o["v_alignbyte_b32"] = Op(alignbyte, ("b32",) * 3, "b32")
    o["v_perm_b32"] = Op(perm_b32, ("b32",) * 3, "b32")
    o["v_bcnt_u32_b32"] = Op(lambda c, a, b: (_popcount(a) + np.asarray(b, U32)).astype(U32), b32, "u32")
    o["v_mbcnt_lo_u32_b32"] = Op(mbcnt(False), b32, "u32")
    o["v_mbcnt_hi_u32_b32"] = Op(mbcnt(True), b32, "u32")
    o["v_sad_u8"] = Op(sad, ("u32",) * 3, "u32")
    o["v_sad_hi_u8"] = Op(lambda c, a, b, d: sad(c, a, b, d, hi=True), ("u32",) * 3, "u32")
    o["v_msad_u8"] = Op(lambda c, a, b, d: sad(c, a, b, d, masked=True), ("u32",) * 3, "u32")
    o["v_sad_u16"] = Op(sad_u16, ("u32",) * 3, "u32")
    o["v_sad_u32"] = Op(lambda c, a, b, d: ((np.abs(w64(a) - w64(b)) + w64(d)) & M32).astype(U32),
                        ("u32",) * 3, "u32")
    o["v_lerp_u8"] = Op(lerp_u8, ("u32",) * 3, "u32")
    for bits, t, u, sd in ((32, "32", U32, I32), (16, "16", U16, I16)):
        ut, it = (f"u{t}",) * 2, (f"i{t}",) * 2
        o[f"v_max_u{t}"] = Op(_minmax_int(u, np.maximum), ut, f"u{t}")
        o[f"v_min_u{t}"] = Op(_minmax_int(u, np.minimum), ut, f"u{t}")
        o[f"v_max_i{t}"] = Op(_minmax_int(sd, np.maximum), it, f"i{t}")
        o[f"v_min_i{t}"] = Op(_minmax_int(sd, np.minimum), it, f"i{t}")
        for kind, dt in (("u", u), ("i", sd)):
            mx, mn = _minmax_int(dt, np.maximum), _minmax_int(dt, np.minimum)
            three = (f"{kind}{t}",) * 3
            o[f"v_max3_{kind}{t}"] = Op(lambda c, a, b, d, mx=mx: mx(c, mx(c, a, b), d), three, f"{kind}{t}")
            o[f"v_min3_{kind}{t}"] = Op(lambda c, a, b, d, mn=mn: mn(c, mn(c, a, b), d), three, f"{kind}{t}")
            o[f"v_med3_{kind}{t}"] = Op(_med3(dt), three, f"{kind}{t}")
            if bits == 32:
                o[f"v_minmax_{kind}{t}"] = Op(lambda c, a, b, d, mx=mx, mn=mn: mx(c, mn(c, a, b), d), three,
                                              f"{kind}{t}")
                o[f"v_maxmin_{kind}{t}"] = Op(lambda c, a, b, d, mx=mx, mn=mn: mn(c, mx(c, a, b), d), three,
                                              f"{kind}{t}")
    o["v_lshlrev_b32"] = Op(_shift(32, "shl"), ("u32", "b32"), "b32")
    o["v_lshrrev_b32"] = Op(_shift(32, "shr"), ("u32", "b32"), "b32")
    o["v_ashrrev_i32"] = Op(_shift(32, "sar"), ("u32", "i32"), "i32")
    o["v_lshlrev_b64"] = Op(_shift(64, "shl"), ("u32", "b64"), "b64")
    o["v_lshrrev_b64"] = Op(_shift(64, "shr"), ("u32", "b64"), "b64")
    o["v_ashrrev_i64"] = Op(_shift(64, "sar"), ("u32", "i64"), "i64")
    o["v_lshlrev_b16"] = Op(_shift(16, "shl"), ("u16", "b16"), "b16")
    o["v_lshrrev_b16"] = Op(_shift(16, "shr"), ("u16", "b16"), "b16")
    o["v_ashrrev_i16"] = Op(_shift(16, "sar"), ("u16", "i16"), "i16")
    return o


OPS = _table()
