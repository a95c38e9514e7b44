"""numpy functions the compiler has no primitive for, composed from exactly rounded IR operations.

Everything here but linspace's lerp is exact (each result is the exactly representable value numpy's C
code returns), so the Tensor ops built on it are bit-exact with numpy on every target. The float
functions take float32: lower.py lifts float16/bfloat16 to float32 and rounds the result once, as
numpy's half loops and ml_dtypes do.
"""
from __future__ import annotations

from gputwin.compiler import ir

F32 = ir.float32
I32 = ir.int32
_SIGN = -(1 << 31)          # float32 sign bit as an int32
_MAG = (1 << 31) - 1
_EXP_INF = 0x7F800000
_TWO23 = float(2 ** 23)     # from here on every float32 is an integer


def _bits(x: ir.Value) -> ir.Value:
    return x.bitcast(I32)


def copysign(mag: ir.Value, sign: ir.Value) -> ir.Value:
    return ((_bits(mag) & _MAG) | (_bits(sign) & _SIGN)).bitcast(F32)


def _integral(x: ir.Value, fix) -> ir.Value:
    """Round x to an integral float: t = trunc(x) (exact through int32 below 2**23), then fix(t, x);
    the sign of a zero result is x's, as C's floor/ceil/trunc; NaN, inf and |x| >= 2**23 pass."""
    t = x.cast(I32).cast(F32)
    small = abs(x) < _TWO23
    return ir.where(small, copysign(fix(t, x), x), x)


def trunc(x):
    return _integral(x, lambda t, x: t)


def floor(x):
    return _integral(x, lambda t, x: ir.where(t > x, t - 1.0, t))


def ceil(x):
    return _integral(x, lambda t, x: ir.where(t < x, t + 1.0, t))


def rint(x):
    """Round half to even (numpy.rint / numpy.round): adding 2**23 rounds the fraction away in the
    default rounding mode."""
    return _integral(x, lambda t, x: (abs(x) + _TWO23) - _TWO23)


def isnan(x):
    return x.ne(x)


def isinf(x):
    return abs(x).eq(float("inf"))


def isfinite(x):
    return abs(x) < float("inf")


def _pow2(k: ir.Value) -> ir.Value:
    """2**k as a float32 for int32 k in [-126, 127]."""
    return ((k + 127) << 23).bitcast(F32)


_SHIFT_STEP = 39            # (2**24 - 1) << 39 still fits an int64
_SHIFT_STEPS = 8            # 8 * 39 >= 277, the largest exponent difference of two float32s


def fmod(a, b):
    """C fmod (exact): a - n*b with n = trunc(a/b), the sign of a. On the integer significands:
    |a| = ma 2**ea, |b| = mb 2**eb, so |fmod| = ((ma 2**(ea-eb)) mod mb) 2**eb, reduced a few
    shifts at a time in int64."""
    ia, ib = _bits(a) & _MAG, _bits(b) & _MAG
    ea, eb = ir.maximum(ia >> 23, 1), ir.maximum(ib >> 23, 1)     # denormals share exponent 1
    ma, mb = (ir.where(i >= 0x800000, (i & 0x7FFFFF) | 0x800000, i).cast(ir.int64) for i in (ia, ib))
    mb = ir.where(mb.eq(0), ir.const(1, ir.int64), mb)                # b == 0 is answered below
    d, r = ea - eb, ma
    for step in range(_SHIFT_STEPS):
        s = ir.minimum(ir.maximum(d - _SHIFT_STEP * step, 0), _SHIFT_STEP)
        r = (r << s.cast(ir.int64)) % mb
    k = eb - 150                                                      # |b|'s unit in the last place
    k1 = k >> 1
    mag = r.cast(F32) * _pow2(k1) * _pow2(k - k1)                     # exact: the result is a float32
    nan = ib.eq(0) | (ia >= _EXP_INF) | (ib > _EXP_INF)
    return ir.where(nan, float("nan"), ir.where(ia < ib, a, copysign(mag, a)))


def int_fmod(a, b):
    """C's truncated remainder of integers (numpy.fmod): the sign of a; x fmod 0 == 0 (as numpy)."""
    r = a % b    # floor remainder: the sign of b
    if a.dtype.kind == "u":
        return r
    return ir.where(r.ne(0) & (r < 0).ne(a < 0), r - b, r)


def _divmod(a, b):
    """numpy's npy_divmod for b != 0: (floor quotient, remainder with the divisor's sign)."""
    mod = fmod(a, b)
    div = (a - mod) / b
    fix = mod.ne(0.0) & ((b < 0.0).ne(mod < 0.0))
    div = ir.where(fix, div - 1.0, div)
    mod = ir.where(mod.ne(0.0), ir.where(fix, mod + b, mod), copysign(ir.const(0.0, F32), b))
    fl = floor(div)
    fl = ir.where(div - fl > 0.5, fl + 1.0, fl)
    return ir.where(div.ne(0.0), fl, copysign(ir.const(0.0, F32), a / b)), mod


def floor_divide(a, b):
    """numpy.floor_divide for floats: a / b when b == 0, else npy_divmod's quotient."""
    return ir.where(b.eq(0.0), a / b, _divmod(a, b)[0])


def remainder(a, b):
    """numpy.remainder for floats: fmod(a, 0) (NaN) when b == 0, else npy_divmod's remainder."""
    return ir.where(b.eq(0.0), float("nan"), _divmod(a, b)[1])


def int_power(x, e):
    """numpy's integer power for e >= 0 (checked by the caller): x**e modulo 2**bits, by square and
    multiply over e's bits (any exact method gives the same bits: multiplication wraps as a ring)."""
    r, base = ir.const(1, x.dtype), x
    for bit in range(x.dtype.bits - (x.dtype.kind == "i")):
        r = ir.where(((e >> bit) & 1).ne(0), r * base, r)
        base = base * base
    return r


def _shift_ok(count, bits: int):
    return (count >= 0) & (count < bits) if count.dtype.kind != "u" else count < bits


def left_shift(a, count):
    """numpy.left_shift: counts outside [0, bits) give 0 (not the count modulo the width)."""
    ok = _shift_ok(count, a.dtype.bits)
    return ir.where(ok, a << ir.where(ok, count, 0), 0)


def right_shift(a, count):
    """numpy.right_shift: counts outside [0, bits) give 0, or -1 for a negative signed a."""
    ok = _shift_ok(count, a.dtype.bits)
    zero = ir.const(0, a.dtype)
    out_of_range = ir.where(a < 0, ir.const(-1, a.dtype), zero) if a.dtype.kind == "i" else zero
    return ir.where(ok, a >> ir.where(ok, count, 0), out_of_range)


def sort_key(x):
    """An integer whose signed order is numpy's sort order of x: -0.0 == 0.0, every NaN equal and
    after +inf. Floats map to int32 (halves widened exactly), bools and uint8 widen to int32, int32
    and int64 stay themselves."""
    if not x.dtype.is_float:
        return x.cast(I32) if x.dtype.kind in "bu" else x
    x = x.cast(F32)
    i = _bits(ir.where(x.eq(0.0), 0.0, ir.where(isnan(x), float("nan"), x)))
    return ir.where(i < 0, i ^ _MAG, i)


def _lerp2(i, a_hi, a_lo, s_hi, s_lo):
    """(a_hi + a_lo) + i * (s_hi + s_lo) in double-float32 as (hi, lo), hi = the float32 rounding.
    i*s_hi is split exactly by fma, a_hi + that product exactly by TwoSum; the small terms join the
    error, which Fast2Sum folds into hi."""
    p = i * s_hi
    p_err = ir.fma(i, s_hi, -p)
    s = a_hi + p
    bb = s - a_hi
    err = ((a_hi - (s - bb)) + (p - bb)) + (p_err + ir.fma(i, s_lo, a_lo))
    hi = s + err
    return hi, err - (hi - s)


def lerp(i, a_hi, a_lo, s_hi, s_lo):
    """linspace's start + i * step, rounded once to float32."""
    return _lerp2(i, a_hi, a_lo, s_hi, s_lo)[0]


def lerp_floor(i, a_hi, a_lo, s_hi, s_lo):
    """floor(start + i * step) of the double-float value (linspace to an integer dtype): one below
    floor(hi) when hi is an integer the exact value lies under."""
    hi, lo = _lerp2(i, a_hi, a_lo, s_hi, s_lo)
    f = floor(hi)
    return ir.where(f.eq(hi) & (lo < 0.0), f - 1.0, f)
