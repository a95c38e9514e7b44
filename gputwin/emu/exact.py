"""Exact float64 arithmetic both shader emulators build their single-rounding results on.

`two_sum` gives s + err == a + b exactly (Knuth's TwoSum); `round_to_odd` collapses such a pair to one float64
rounded to odd, which keeps enough information that a second rounding to any format at least two bits
narrower, in any direction, equals one rounding of the exact value (Boldo and Melquiond)."""
from __future__ import annotations

import numpy as np


def two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def round_to_odd(s, err):
    """float64 s + err (an exact pair) rounded to odd at float64 precision."""
    err = np.asarray(err)
    if not err.any():
        return s
    bits = np.asarray(s, np.float64).view(np.uint64)
    fix = (err != 0) & ((bits & np.uint64(1)) == 0) & np.isfinite(s)
    if not fix.any():
        return s
    toward_mag = (err > 0) == (s > 0)
    step = np.where(fix, np.where(toward_mag, np.uint64(1), np.uint64(0xFFFFFFFFFFFFFFFF)), np.uint64(0))
    return (bits + step).view(np.float64)
