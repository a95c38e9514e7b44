"""Transcendental functions built from IR primitives, so every target runs the same operations.

Each function is float32 range reduction + a polynomial from exact Taylor coefficients (Python
Fractions rounded once to float32: deterministic on every host). Only exactly rounded primitives are
used (add, mul, div, fma, compares, integer bit tricks), so CPU, AMD and NVIDIA give identical bits.
float16/bfloat16 inputs are computed in float32 and rounded once, as numpy does. The measured error
bounds against a float64 reference are in docs/compiler.md (tests/compiler/test_mathlib.py checks them).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from gputwin.compiler import ir

F32 = ir.float32


def _c(v) -> ir.Value:
    return ir.const(float(v), F32)


def _lift(fn):
    """Apply a float32 implementation to float16/bfloat16 by widening once and rounding once."""
    def wrapper(*xs):
        xs = [x if isinstance(x, ir.Value) else _c(x) for x in xs]
        dt = xs[0].dtype
        if not dt.is_float or any(x.dtype != dt for x in xs):
            raise ir.IRError(f"{fn.__name__} needs float operands of one dtype, got "
                             f"{', '.join(str(x.dtype) for x in xs)}; cast first")
        if dt == F32:
            return fn(*xs)
        return fn(*(x.cast(F32) for x in xs)).cast(dt)
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _horner(z: ir.Value, coeffs) -> ir.Value:
    acc = _c(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = ir.fma(acc, z, _c(c))
    return acc


def _round_int(t: ir.Value) -> ir.Value:
    """t rounded to the nearest integer (ties to even) as a float, for any float32 t."""
    a = abs(t)
    two23 = _c(2 ** 23)
    r = (a + two23) - two23
    return ir.where(a < two23, ir.where(t < 0.0, -r, r), t)


def _pow2(k: ir.Value) -> ir.Value:
    """2**k as a float32 for int32 k in [-126, 127]."""
    return ((k + 127) << 23).bitcast(F32)


def _is_nan(x: ir.Value) -> ir.Value:
    return x.ne(x)


# --- exp ----------------------------------------------------------------------------------------------
LN2_HI, LN2_LO = 0.693359375, math.log(2) - 0.693359375      # LN2_HI has 9 bits: k*LN2_HI is exact
_EXP = [Fraction(1, math.factorial(n)) for n in range(8)]


def _exp2(hi: ir.Value, lo: ir.Value) -> ir.Value:
    """exp(hi + lo) where lo is a small correction (0 for plain exp, the rounding tail in pow)."""
    x = ir.where(hi > 89.0, _c(89.0), ir.where(hi < -104.0, _c(-104.0), hi))
    kf = _round_int(x * _c(1 / math.log(2)))
    r = ir.fma(-kf, _c(LN2_HI), x)            # exact: kf*LN2_HI has at most 17 bits
    r = ir.fma(-kf, _c(LN2_LO), r) + lo
    p = _horner(r, _EXP)
    k = kf.cast(ir.int32)
    k1 = k >> 1                               # two steps keep each factor a normal float
    return p * _pow2(k1) * _pow2(k - k1)


@_lift
def exp(x: ir.Value) -> ir.Value:
    """e**x; inf/-inf/NaN give inf/0/NaN."""
    return _exp2(x, _c(0.0))


# --- log ----------------------------------------------------------------------------------------------
_LOG = [Fraction(2, 2 * n + 3) for n in range(6)]           # 2/3, 2/5, ... : 2*atanh(s) = 2s + s*z*R(z)


def _log_parts(x: ir.Value):
    """log(x) for finite x > 0 as an unevaluated sum hi + lo (|lo| << |hi| ulp-wise)."""
    sub = x < _c(2.0 ** -126)
    xs = ir.where(sub, x * _c(2.0 ** 23), x)
    bits = xs.bitcast(ir.int32)
    e = ((bits >> 23) & 255) - ir.where(sub, ir.const(150, ir.int32), ir.const(127, ir.int32))
    m = ((bits & 0x7FFFFF) | 0x3F800000).bitcast(F32)       # [1, 2)
    big = m > _c(math.sqrt(2))
    m = ir.where(big, m * 0.5, m)
    ef = ir.where(big, e + 1, e).cast(F32)
    f = m - 1.0                                               # exact (Sterbenz)
    s = f / (f + 2.0)
    z = s * s
    rz = z * _horner(z, _LOG)
    tail = s * (f - rz)                                       # log(1+f) = f - s*(f - R)
    t1 = ef * _c(LN2_HI)                                      # exact
    hi = t1 + f
    err = (t1 - (hi - (hi - t1))) + (f - (hi - t1))           # TwoSum: t1 + f == hi + err exactly
    lo = err + (ef * _c(LN2_LO) - tail)
    h = hi + lo                                               # Fast2Sum (|hi| >= |lo|): renormalise
    return h, lo - (h - hi)


@_lift
def log(x: ir.Value) -> ir.Value:
    """Natural log; log(0) = -inf, log(x<0) = NaN, log(inf) = inf, NaN stays NaN."""
    hi, lo = _log_parts(x)
    r = hi + lo
    r = ir.where(x.eq(0.0), _c(-math.inf), r)
    r = ir.where(x < 0.0, _c(math.nan), r)
    return ir.where(x.eq(math.inf) | _is_nan(x), x, r)


# --- sin / cos ----------------------------------------------------------------------------------------
def _pio2_parts():
    """pi/2 as three float32 terms (about 72 bits) for Cody-Waite reduction with fma."""
    # 60 decimal digits of pi are far more than three float32 terms can hold
    pi = Fraction("3.14159265358979323846264338327950288419716939937510582097494")
    rest, parts = pi / 2, []
    for _ in range(3):
        p = float(np.float32(float(rest)))
        parts.append(p)
        rest -= Fraction(p)
    return parts


PIO2_1, PIO2_2, PIO2_3 = _pio2_parts()
_SIN = [Fraction((-1) ** (n + 1), math.factorial(2 * n + 3)) for n in range(5)]   # -1/3!, 1/5!, ...
_COS = [Fraction((-1) ** n, math.factorial(2 * n + 4)) for n in range(5)]   # 1/4!, -1/6!, ...


def _sincos(x: ir.Value, shift: int) -> ir.Value:
    kf = _round_int(x * _c(2 / math.pi))
    r = ir.fma(-kf, _c(PIO2_1), x)
    r = ir.fma(-kf, _c(PIO2_2), r)
    r = ir.fma(-kf, _c(PIO2_3), r)
    q = (kf.cast(ir.int32) + shift) & 3
    z = r * r
    s = ir.fma(r * z, _horner(z, _SIN), r)
    c = ir.fma(z * z, _horner(z, _COS), 1.0 - z * 0.5)
    v = ir.where((q & 1).eq(0), s, c)
    return ir.where(q >= 2, -v, v)


@_lift
def sin(x: ir.Value) -> ir.Value:
    """sin(x); accurate for |x| < 2**20 (see docs), inf/NaN give NaN."""
    return ir.where(abs(x) < _c(2.0 ** -12), x, _sincos(x, 0))   # keeps -0 and tiny x exact


@_lift
def cos(x: ir.Value) -> ir.Value:
    return _sincos(x, 1)


# --- tanh ---------------------------------------------------------------------------------------------
def _bernoulli(n: int) -> list[Fraction]:
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b


def _tanh_coeffs(terms: int) -> list[Fraction]:
    b = _bernoulli(2 * terms + 2)
    return [Fraction(2 ** (2 * n) * (2 ** (2 * n) - 1)) * b[2 * n] / math.factorial(2 * n)
            for n in range(2, terms + 2)]                     # x^3, x^5, ... coefficients


_TANH = _tanh_coeffs(11)
TANH_SMALL = 0.55


@_lift
def tanh(x: ir.Value) -> ir.Value:
    """tanh(x): odd series for |x| < 0.55, else 1 - 2/(exp(2|x|) + 1) with the sign restored."""
    z = x * x
    small = ir.fma(x * z, _horner(z, _TANH), x)
    ax = abs(x)
    big = 1.0 - 2.0 / (exp(ax + ax) + 1.0)
    big = ir.where(x < 0.0, -big, big)
    return ir.where(ax < _c(2.0 ** -12), x, ir.where(ax < TANH_SMALL, small, big))


# --- pow ----------------------------------------------------------------------------------------------
@_lift
def pow(x: ir.Value, y: ir.Value) -> ir.Value:
    """x**y with C99 powf's special cases (as numpy.power for floats)."""
    ax = abs(x)
    hi, lo = _log_parts(ax)
    p_hi = y * hi
    p_lo = ir.fma(y, hi, -p_hi) + y * lo                      # y*(hi+lo) to about 48 bits
    finite = abs(p_hi) < 200.0
    r = _exp2(p_hi, ir.where(finite, p_lo, _c(0.0)))
    # log(0) = -inf and log(inf) = inf through the generic path
    r = ir.where(ax.eq(0.0), ir.where(y < 0.0, _c(math.inf), _c(0.0)), r)
    r = ir.where(ax.eq(math.inf), ir.where(y < 0.0, _c(0.0), _c(math.inf)), r)
    r = ir.where(_is_nan(x) | _is_nan(y), _c(math.nan), r)
    ry = _round_int(y)
    is_int = ry.eq(y)
    odd = is_int & (abs(y) < _c(2.0 ** 24)) & ((ry.cast(ir.int32) & 1).eq(1))
    neg = x.bitcast(ir.int32) < 0
    r = ir.where(neg & odd, -r, r)
    r = ir.where((x < 0.0) & ~is_int & ~_is_nan(y) & (abs(y) < math.inf), _c(math.nan), r)
    r = ir.where(ax.eq(1.0) & (abs(y).eq(math.inf)), _c(1.0), r)
    r = ir.where(x.eq(1.0) | y.eq(0.0), _c(1.0), r)
    return r
