"""Exact floating-point rounding, vectorised: how gputwin gets PTX's .rn/.rz/.rm/.rp results bit-exact.

The exact result of an f32/f16/bf16 add, mul or fma is carried as an unevaluated float64 pair
(s, err) with s + err exact (products of f32 are exact in f64; sums come from TwoSum). `round_to_odd` (gputwin/emu/exact.py)
collapses the pair to one float64 rounded to odd, which keeps enough information that a second
rounding to any narrower format (p >= q + 2 bits) in any direction equals one direct rounding of the
exact value (Boldo and Melquiond's round-to-odd theorem). `to_f32/to_f16/to_bf16` then round in
the requested direction. f64 results needing more than float64 (fma.f64, directed f64 ops, directed
division and square root) take an exact rare path through Python fractions (`exact_map`).

NaN results of arithmetic are the canonical NaN of the format (f32 0x7fffffff, f16/bf16 0x7fff,
f64 0x7fffffffffffffff): a documented decision in fidelity.py.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from gputwin.emu.exact import round_to_odd, two_sum  # noqa: F401 (re-exported: the ops use F.two_sum)

CANON = {"f32": np.uint32(0x7FFFFFFF), "f16": np.uint16(0x7FFF), "bf16": np.uint16(0x7FFF),
         "f64": np.uint64(0x7FFFFFFFFFFFFFFF)}
MODES = ("rn", "rz", "rm", "rp")


def _directed(r, x, mode, nxt):
    """Correct a round-to-nearest result r (of format) of the float64 x toward mode."""
    if mode == "rn":
        return r
    rx = r.astype(np.float64)
    if mode == "rz":
        fix = np.abs(rx) > np.abs(x)
        return np.where(fix, nxt(r, np.zeros_like(r)), r)
    if mode == "rm":
        fix = rx > x
        return np.where(fix, nxt(r, np.full_like(r, -np.inf)), r)
    if mode == "rp":
        fix = rx < x
        return np.where(fix, nxt(r, np.full_like(r, np.inf)), r)
    raise ValueError(mode)


def to_f32(x, mode="rn"):
    x = np.asarray(x, np.float64)
    return _directed(x.astype(np.float32), x, mode, np.nextafter)


def to_f16(x, mode="rn"):
    x = np.asarray(x, np.float64)
    return _directed(x.astype(np.float16), x, mode, np.nextafter)


def f32_round_odd(x):
    """float64 -> float32 rounded to odd (keeps a sticky bit for a later bf16 rounding)."""
    x = np.asarray(x, np.float64)
    r = x.astype(np.float32)
    inexact = (r.astype(np.float64) != x) & np.isfinite(x) & np.isfinite(r)
    even = (r.view(np.uint32) & np.uint32(1)) == 0
    fix = inexact & even
    if fix.any():
        r = np.where(fix, np.nextafter(r, np.where(x > r, np.float32(np.inf), np.float32(-np.inf))), r)
    return r


def f32_to_bf16_bits(x, mode="rn"):
    """float32 -> bf16 bits, rounding in `mode`; NaN -> canonical."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint32)
    trunc = bits >> np.uint32(16)
    rem = bits & np.uint32(0xFFFF)
    neg = (bits >> np.uint32(31)) != 0
    if mode == "rn":
        up = (rem > 0x8000) | ((rem == 0x8000) & ((trunc & np.uint32(1)) != 0))
    elif mode == "rz":
        up = np.zeros(bits.shape, bool)
    elif mode == "rm":
        up = neg & (rem != 0)
    elif mode == "rp":
        up = ~neg & (rem != 0)
    elif mode == "rna":
        up = rem >= 0x8000
    else:
        raise ValueError(mode)
    out = (trunc + up.astype(np.uint32)).astype(np.uint16)
    inf = (bits & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
    out = np.where(inf & (rem == 0) & ((bits & np.uint32(0x7FFFFF)) == 0), trunc.astype(np.uint16), out)
    return np.where(np.isnan(np.asarray(x, np.float32)), CANON["bf16"], out).astype(np.uint16)


def to_bf16_bits(x64, mode="rn"):
    return f32_to_bf16_bits(f32_round_odd(x64), mode)


def bf16_to_f32(bits):
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def canon(r, fmt):
    """Replace every NaN of an arithmetic result by the format's canonical NaN."""
    nan = np.isnan(r)
    if np.ndim(r) == 0:
        return np.array(CANON[fmt]).view(r.dtype)[()] if nan else r
    if nan.any():
        r = np.where(nan, np.array(CANON[fmt]).view(r.dtype), r)
    return r


def ftz(x):
    """Flush subnormal values to sign-preserving zero (.ftz on f32 inputs and results)."""
    x = np.asarray(x)
    tiny = np.finfo(x.dtype).tiny
    sub = (np.abs(x) < tiny) & (x != 0)
    if np.ndim(x) == 0:
        return np.copysign(x.dtype.type(0), x) if sub else x[()]
    if sub.any():
        return np.where(sub, np.copysign(x.dtype.type(0), x), x)
    return x


def saturate(x):
    """.sat: clamp to [0, 1]; NaN -> +0."""
    return np.where(np.isnan(x), x.dtype.type(0), np.clip(x, 0, 1)).astype(x.dtype)


# --- the exact rare path ---------------------------------------------------------------------------------

def _frac(x):
    return Fraction(float(x))


def _round_fraction_f64(q: Fraction, mode: str) -> float:
    try:
        r = float(q)                              # Fraction -> float rounds to nearest even, exactly
    except OverflowError:
        r = float("inf") if q > 0 else float("-inf")
    if mode == "rn":
        return r
    if not np.isfinite(r):                        # overflow: directed modes may stop at the largest finite
        big = float(np.finfo(np.float64).max)
        if mode == "rz" or (mode == "rm" and r > 0) or (mode == "rp" and r < 0):
            return big if r > 0 else -big
        return r
    fr = Fraction(r)
    if fr == q:
        return r
    if mode == "rz" and abs(fr) > abs(q) or mode == "rm" and fr > q:
        return float(np.nextafter(r, 0.0 if mode == "rz" else -np.inf))
    if mode == "rp" and fr < q:
        return float(np.nextafter(r, np.inf))
    return r


def exact_map(fn, mode, *xs):
    """Apply an exact Fraction-valued fn lane by lane (C-level loop via frompyfunc) and round the
    exact value to float64 in `mode`. Non-finite inputs are the caller's (it masks them out)."""
    def one(*vals):
        return _round_fraction_f64(fn(*(_frac(v) for v in vals)), mode)
    arrs = np.broadcast_arrays(*(np.asarray(x, np.float64) for x in xs))
    if arrs[0].size == 0:
        return arrs[0].copy()
    return np.frompyfunc(one, len(xs), 1)(*arrs).astype(np.float64)
