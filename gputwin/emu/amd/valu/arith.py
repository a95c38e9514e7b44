"""Float arithmetic (add/sub/mul/fma/mac and min/max families) for f16, f32 and f64.

Nearest-even uses numpy's IEEE operations directly (f16 goes through f32, where double rounding is
innocuous for + - * since 24 >= 2*11+2). Other FP_ROUND modes for f16/f32 go through an exact or
round-to-odd float64 value and `round_f64`. f64 add/sub/mul need nearest-even (fail closed otherwise).
"""
from __future__ import annotations

import numpy as np

from .fp import (F16, F32, F64, Fmt, add_ro, as_bits, as_float, fma_f32_rne, fma_ro, is_nan, is_snan, quiet,
                 round_f64, to_f64)
from .fma64 import fma64
from .table import Op

ERR = dict(all="ignore")


def _narrow(c, x64, f: Fmt):
    """Round a float64 value (exact or round-to-odd) to f under the context's rounding mode."""
    if f is F32 and c.rmode == 0:
        return as_bits(x64.astype(np.float32), F32)
    return round_f64(x64, f, c.rmode)


def _add(f):
    def fn(c, a, b):
        if f is F64 or c.rmode == 0:
            with np.errstate(**ERR):
                return as_bits(as_float(a, f) + as_float(b, f), f)
        return _narrow(c, add_ro(to_f64(a, f), to_f64(b, f)), f)
    return fn


def _mul(f):
    def fn(c, a, b):
        if f is F64 or c.rmode == 0:
            with np.errstate(**ERR):
                return as_bits(as_float(a, f) * as_float(b, f), f)
        with np.errstate(**ERR):
            return _narrow(c, to_f64(a, f) * to_f64(b, f), f)
    return fn


def fma_bits(c, a, b, d, f: Fmt):
    if f is F64:
        return fma64(a, b, d)
    if f is F32 and c.rmode == 0:
        return fma_f32_rne(a, b, d)
    return _narrow(c, fma_ro(to_f64(a, f), to_f64(b, f), to_f64(d, f)), f)


def _fma(f):
    return lambda c, a, b, d: fma_bits(c, a, b, d, f)


def _dx9(f, mul_only: bool):
    """Legacy 'DX9' multiply: 0 * anything (inf and NaN included) is +0 before the add."""
    def fn(c, a, b, d=None):
        zero = ((a & ~f.sign) == 0) | ((b & ~f.sign) == 0)
        a2 = np.where(zero, f.udt(0), a)
        b2 = np.where(zero, f.udt(0), b)
        if mul_only:
            return _mul(f)(c, a2, b2)
        return fma_bits(c, a2, b2, d, f)
    return fn


_NEG_MAX_F32 = np.uint32(0xFF7FFFFF)


def _mullit(c, a, b, g):
    """v_mullit_f32 (RDNA3 guide): -MAX_FLOAT when S1 is -MAX_FLOAT, -inf or NaN or S2 <= 0 or NaN (the
    hardware-recorded guard), else S0 * S1 with the guide's "0.0 * x = 0.0" (the DX9 multiply; DECISION:
    the pseudocode writes a plain multiply, the description the DX9 rule)."""
    fb, fg = as_float(b, F32), as_float(g, F32)
    with np.errstate(invalid="ignore"):
        guard = (b == _NEG_MAX_F32) | (b == np.uint32(0xFF800000)) | np.isnan(fb) | (fg <= 0) | np.isnan(fg)
    return np.where(guard, _NEG_MAX_F32, _dx9(F32, True)(c, a, b))


# --- min / max ---------------------------------------------------------------------------------------
def _lt(a, b, f: Fmt):
    """a < b with -0 < +0 (ordered inputs)."""
    fa, fb = as_float(a, f), as_float(b, f)
    return (fa < fb) | ((fa == fb) & ((a & f.sign) > (b & f.sign)))


def fmin(c, a, b, f: Fmt, want_max: bool = False):
    """RDNA3 V_MIN/V_MAX: IEEE mode quiets a signalling NaN input and returns it; otherwise a NaN input
    yields the other operand; -0 orders below +0."""
    a, b = np.broadcast_arrays(a, b)
    pick_a = _lt(b, a, f) if want_max else _lt(a, b, f)
    r = np.where(pick_a, a, b)
    r = np.where(is_nan(b, f), a, r)
    r = np.where(is_nan(a, f), b, r)
    if c.mode.ieee:
        r = np.where(is_snan(b, f), quiet(b, f), r)
        r = np.where(is_snan(a, f), quiet(a, f), r)
    return r


def fmax(c, a, b, f: Fmt):
    return fmin(c, a, b, f, True)


def _min(f):
    return lambda c, a, b: fmin(c, a, b, f)


def _max(f):
    return lambda c, a, b: fmax(c, a, b, f)


def _min3(f):
    return lambda c, a, b, d: fmin(c, fmin(c, a, b, f), d, f)


def _max3(f):
    return lambda c, a, b, d: fmax(c, fmax(c, a, b, f), d, f)


def _minmax(f):
    return lambda c, a, b, d: fmax(c, fmin(c, a, b, f), d, f)


def _maxmin(f):
    return lambda c, a, b, d: fmin(c, fmax(c, a, b, f), d, f)


def _med3(f):
    def fn(c, a, b, d):
        any_nan = is_nan(a, f) | is_nan(b, f) | is_nan(d, f)
        med = fmax(c, fmin(c, a, b, f), fmin(c, fmax(c, a, b, f), d, f), f)
        return np.where(any_nan, fmin(c, fmin(c, a, b, f), d, f), med)
    return fn


def _table():
    ops = {}
    for f in (F16, F32, F64):
        n = f.name
        two, three = (n, n), (n, n, n)
        ops[f"v_add_{n}"] = Op(_add(f), two, n, fmt=f, directed=f is not F64)
        ops[f"v_mul_{n}"] = Op(_mul(f), two, n, fmt=f, directed=f is not F64)
        ops[f"v_fma_{n}"] = Op(_fma(f), three, n, fmt=f, directed=f is not F64)
        ops[f"v_max_{n}"] = Op(_max(f), two, n, fmt=None, nan=False)
        ops[f"v_min_{n}"] = Op(_min(f), two, n, fmt=None, nan=False)
        if f is F64:
            continue
        ops[f"v_sub_{n}"] = Op(lambda c, a, b, f=f: _add(f)(c, a, b ^ f.sign), two, n, fmt=f, directed=True)
        ops[f"v_subrev_{n}"] = Op(lambda c, a, b, f=f: _add(f)(c, b, a ^ f.sign), two, n, fmt=f, directed=True)
        ops[f"v_fmac_{n}"] = Op(_fma(f), three, n, fmt=f, directed=True, acc=True)
        ops[f"v_fmamk_{n}"] = Op(lambda c, a, b, k, f=f: fma_bits(c, a, k, b, f), (n, n, n), n, fmt=f,
                                 directed=True, k=True)
        ops[f"v_fmaak_{n}"] = Op(_fma(f), three, n, fmt=f, directed=True, k=True)
        for kind, fn in (("min3", _min3), ("max3", _max3), ("med3", _med3), ("minmax", _minmax),
                         ("maxmin", _maxmin)):
            ops[f"v_{kind}_{n}"] = Op(fn(f), three, n, fmt=None, nan=False)
    ops["v_mul_dx9_zero_f32"] = Op(_dx9(F32, True), ("f32", "f32"), "f32", fmt=F32, directed=True)
    ops["v_mullit_f32"] = Op(_mullit, ("f32",) * 3, "f32", fmt=F32, directed=True)
    ops["v_fma_dx9_zero_f32"] = Op(_dx9(F32, False), ("f32",) * 3, "f32", fmt=F32, directed=True)
    ops["v_fmac_dx9_zero_f32"] = Op(_dx9(F32, False), ("f32",) * 3, "f32", fmt=F32, directed=True, acc=True)
    return ops


OPS = _table()
