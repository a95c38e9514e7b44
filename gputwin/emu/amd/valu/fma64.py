"""Correctly rounded (nearest-even) f64 fused multiply-add on uint64 bit arrays.

Main path (vectorized error-free transforms): a*b = ph + pl exactly (Veltkamp/Dekker), c + ph = th + tl
exactly (TwoSum), v = round-to-odd(tl + pl), result = RN(th + v) -- the Boldo-Melquiond emulation of FMA,
valid when nothing overflows or underflows. Lanes outside that safe exponent range (rare: products or
addends beyond 2^+-900, operands beyond 2^500) are finished with exact rational arithmetic one lane at a
time, which is slow but never wrong. Inf/NaN/zero operands follow IEEE through plain float64 ops.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from gputwin.emu.exact import round_to_odd, two_sum

_SPLIT = 134217729.0  # 2^27 + 1


def _split(x):
    t = _SPLIT * x
    hi = t - (t - x)
    return hi, x - hi


def _exact_lane(a: float, b: float, c: float) -> float:
    v = Fraction(a) * Fraction(b) + Fraction(c)
    if v == 0:
        return 0.0      # exact cancellation of non-zero terms is +0 under nearest-even
    try:
        return float(v)  # CPython rounds rationals correctly (subnormals included)
    except OverflowError:
        return float("inf") if v > 0 else float("-inf")


def fma64(a_bits, b_bits, c_bits):
    a, b, c = np.broadcast_arrays(*(np.asarray(x, np.uint64).view(np.float64) for x in (a_bits, b_bits, c_bits)))
    with np.errstate(all="ignore"):
        plain = a * b + c                       # right for inf/NaN and for exact-zero products
        aa, ab, ac = np.abs(a), np.abs(b), np.abs(c)
        finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
        zero_prod = (a == 0) | (b == 0)
        p = aa * ab
        safe = (finite & (aa < 2.0 ** 500) & (ab < 2.0 ** 500) & (p > 2.0 ** -900) & (p < 2.0 ** 1000)
                & ((ac == 0) | ((ac > 2.0 ** -900) & (ac < 2.0 ** 1000))))
        ph = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl
        th, tl = two_sum(c, ph)
        s, err = two_sum(tl, pl)
        v = round_to_odd(s, np.where(np.isfinite(s), err, 0.0))
        r = th + v
    out = np.where(safe, r, plain)
    hard = finite & ~zero_prod & ~safe
    if hard.any():   # flat indices: the operands may all be constants (0-d arrays)
        out = np.array(out).reshape(-1)
        fa, fb, fc = a.reshape(-1), b.reshape(-1), c.reshape(-1)
        for i in np.flatnonzero(hard):
            out[i] = _exact_lane(float(fa[i]), float(fb[i]), float(fc[i]))
        out = out.reshape(hard.shape)
    return np.ascontiguousarray(out).view(np.uint64)
