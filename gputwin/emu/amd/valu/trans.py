"""Transcendental and reciprocal units: v_exp, v_log, v_rcp, v_rsq, v_sqrt, v_sin, v_cos (f16/f32/f64).

APPROXIMATE VS HARDWARE: the hardware units are approximations (about 1 ulp); gputwin returns the
value computed in float64 and rounded once to the destination format (correctly rounded but for the
rare float64 libm last-bit cases). rcp and sqrt of f16/f32 are exactly correctly rounded (float64
division/sqrt then one more rounding is innocuous for 53 >= 2p+2). Replace with hardware-fixture
behaviour once fixtures exist (docs/valu.md).
"""
from __future__ import annotations

import numpy as np

from .fp import F16, F32, F64, Fmt, as_bits, round_f64, to_f64
from .table import Op


def _unit(f: Fmt, fn64):
    def fn(c, a):
        with np.errstate(all="ignore"):
            y = fn64(to_f64(a, f))
            if f is F64:
                return as_bits(y, F64)
            if f is F32:
                return as_bits(y.astype(np.float32), F32)
        return round_f64(y, f, 0)
    return fn


def _turns(phase_quarters: int):
    """sin of x turns (x * 2*pi radians), cos as sin a quarter turn later. The reduction is exact: x to
    a quadrant q and a fraction f of it, then sin(2*pi*x) = (sin, cos, -sin, -cos)[q] of f * pi/2, so
    whole quarter turns give exactly 0 and +-1 (2*pi*x itself is inexact: cos(0.25 turn) would be 6e-17).
    An exact zero result is +0."""
    def fn(x):
        r = x - np.floor(x)                     # [0, 1) turns, exact
        t = 4.0 * r                             # exact
        q = (np.floor(t).astype(np.int64) + phase_quarters) & 3
        a = (t - np.floor(t)) * (np.pi / 2)
        y = np.select([q == 0, q == 1, q == 2], [np.sin(a), np.cos(a), -np.sin(a)], -np.cos(a))
        return np.where(np.isfinite(x), y + 0.0, np.nan)
    return fn


def _rsq64(x):
    return 1.0 / np.sqrt(x)


UNITS = {
    "exp": np.exp2, "log": np.log2, "rcp": lambda x: 1.0 / x, "rsq": _rsq64, "sqrt": np.sqrt,
    "sin": _turns(0), "cos": _turns(1),
}


def _table():
    ops = {}
    for f in (F16, F32):
        for name, g in UNITS.items():
            ops[f"v_{name}_{f.name}"] = Op(_unit(f, g), (f.name,), f.name, fmt=f)
    ops["v_rcp_iflag_f32"] = Op(_unit(F32, UNITS["rcp"]), ("f32",), "f32", fmt=F32)
    for name in ("rcp", "rsq", "sqrt"):
        ops[f"v_{name}_f64"] = Op(_unit(F64, UNITS[name]), ("f64",), "f64", fmt=F64)
    return ops


OPS = _table()
