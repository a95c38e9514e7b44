"""Float helpers that are not plain arithmetic: rounding to integral, fract, frexp, ldexp, the division
macro's v_div_scale / v_div_fmas / v_div_fixup and v_trig_preop_f64 (pseudocode of AMD's ISA guides)."""
from __future__ import annotations

import functools

import numpy as np

from .fp import (F16, F32, F64, Fmt, as_bits, as_float, is_inf, is_nan, is_zero, is_denorm, quiet, round_f64,
                 to_f64, fma_ro)
from .fma64 import fma64
from .table import Op

ERR = dict(all="ignore")


def _np1(f: Fmt, g):
    """Exact float functions (trunc/floor/ceil/rint) straight on the format's numpy dtype."""
    def fn(c, a):
        with np.errstate(**ERR):
            return as_bits(g(as_float(a, f)), f)
    return fn


def _fract(f: Fmt):
    """x - floor(x), never 1.0 (largest value below 1 instead); +-inf -> NaN."""
    below_one = as_bits(np.nextafter(f.fdt(1.0), f.fdt(0.0)) if f is not F16 else np.float16(1 - 2 ** -11), f)

    def fn(c, a):
        with np.errstate(**ERR):
            x = to_f64(a, f)
            r = x - np.floor(x)
            r = np.where(np.isinf(x), np.nan, r)
            bits = as_bits(r, F64) if f is F64 else round_f64(r, f, 0)
        one = as_bits(np.array(1.0, f.fdt), f)
        return np.where(bits == one, below_one, bits)
    return fn


def _frexp_mant(f: Fmt):
    def fn(c, a):
        m, _ = np.frexp(as_float(a, f))
        return np.where(is_nan(a, f) | is_inf(a, f), a, as_bits(m.astype(f.fdt), f))
    return fn


def _frexp_exp(f: Fmt, dt):
    def fn(c, a):
        _, e = np.frexp(as_float(a, f))
        e = np.where(is_nan(a, f) | is_inf(a, f), 0, e)
        return e.astype(dt).view(np.uint16 if dt == np.int16 else np.uint32)
    return fn


def _ldexp(f: Fmt, et):
    # beyond +-2200 every finite f64 (and anything narrower) has overflowed or rounded to zero already,
    # so the clip only keeps np.ldexp's exponent small; +-400 would cut f64 results short
    def fn(c, a, e):
        e = np.clip(e.view(et).astype(np.int64), -2200, 2200)
        with np.errstate(**ERR):
            if f is F64:
                return as_bits(np.ldexp(as_float(a, F64), e), F64)
            return round_f64(np.ldexp(to_f64(a, f), e), f, 0)   # exact in f64, one rounding
    return fn


# --- division macro ---------------------------------------------------------------------------------
def _exponent(b, f: Fmt):
    return ((b & f.exp_mask) >> f.udt(f.mbits)).astype(np.int64)


def _div_scale(f: Fmt):
    big, tiny_n, scale = (96, 23, 64) if f is F32 else (768, 53, 128)

    def fn(c, s0, s1, s2):
        a0, a1, a2 = np.broadcast_arrays(s0, s1, s2)
        x0, x1, x2 = to_f64(a0, f), to_f64(a1, f), to_f64(a2, f)
        e1, e2 = _exponent(a1, f), _exponent(a2, f)
        with np.errstate(**ERR):   # scaling may overflow to inf: that is the result
            up = as_bits(np.ldexp(x0, scale), F64) if f is F64 else round_f64(np.ldexp(x0, scale), f, 0)
            down = as_bits(np.ldexp(x0, -scale), F64) if f is F64 else round_f64(np.ldexp(x0, -scale), f, 0)
            inv_tiny = is_denorm(as_bits(1.0 / x1, F64), F64) if f is F64 else np.zeros(x1.shape, bool)
            q = x2 / x1
            q_bits = as_bits(q, F64) if f is F64 else round_f64(q, f, 0)
            q_tiny = is_denorm(q_bits, f)
            q_flushed = q_tiny & (c.mode.flush_out(q_bits, f) != q_bits)
        res, vcc = a0.copy(), np.zeros(a0.shape, bool)
        undecided = np.ones(a0.shape, bool)

        def case(cond, value, flag):
            nonlocal res, vcc, undecided
            hit = undecided & cond
            res = np.where(hit, value, res)
            vcc = vcc | (hit & flag)
            undecided = undecided & ~cond

        case(is_zero(a2, f) | is_zero(a1, f), f.qnan, True)
        case(e2 - e1 >= big, np.where(x0 == x1, up, a0), True)
        case(is_denorm(a1, f), up, False)
        case(inv_tiny & q_tiny, np.where(x0 == x1, down, a0), True)   # guide text says +64; see docs/valu.md
        case(inv_tiny, down, False)
        # a denormal quotient the mode flushes: VCC = 1 but nothing is scaled (recorded on RDNA3 with
        # f32 denormals flushed, the assembler's default: 1.0 / 2^127 keeps S0); see docs/valu.md
        case(q_flushed, a0, True)
        case(q_tiny, np.where(x0 == x2, up, a0), True)
        # tiny numerator, quotient far below 1 (recorded on RDNA3: numerator x2^64, VCC = 1): only the
        # numerator is scaled, so v_div_fmas scales back down; see docs/valu.md
        case((e2 <= tiny_n) & (e2 - e1 < -scale), np.where(x0 == x2, up, a0), True)
        case(e2 <= tiny_n, up, False)   # quotient near 1: both scaled, nothing to undo
        return res, vcc
    return fn


def _div_fmas(f: Fmt):
    """fma, then (VCC lanes) undo v_div_scale's scaling, direction from the addend (the scaled quotient):
    x2^64 (f64: 2^128) when exponent(S2) >= bias + 1 (|S2| >= 2), else x2^-64 (f64: 2^-128)."""
    k = 64 if f is F32 else 128
    two = f.udt((f.bias + 1) << f.mbits)

    def fn(c, a, b, d):
        up = (np.asarray(d) & ~f.sign) >= two
        scale = np.where(c.cin, np.where(up, 2.0 ** k, 2.0 ** -k), 1.0)
        if f is F64:
            r = fma64(a, b, d).view(np.float64)
            with np.errstate(**ERR):
                return as_bits(r * scale, F64)
        return round_f64(fma_ro(to_f64(a, f), to_f64(b, f), to_f64(d, f)) * scale, f, 0)
    return fn


def _div_fixup(f: Fmt):
    nan_default = f.udt(int(f.qnan) | int(f.sign))   # 0/0 and inf/inf give the negative default NaN
    under = -150 if f is F32 else (-1075 if f is F64 else -25)

    def fn(c, s0, s1, s2):
        s0, s1, s2 = np.broadcast_arrays(s0, s1, s2)
        sign = (s1 ^ s2) & f.sign
        mag = s0 & ~f.sign
        # a NaN quotient from valid operands means the Newton-Raphson steps overflowed: the result is inf
        r = np.where(is_nan(s0, f), sign | f.inf, sign | mag)
        r = np.where(_exponent(s2, f) - _exponent(s1, f) < under, sign, r)
        r = np.where(is_inf(s1, f) | is_zero(s2, f), sign, r)
        r = np.where(is_zero(s1, f) | is_inf(s2, f), sign | f.inf, r)
        r = np.where(is_inf(s1, f) & is_inf(s2, f), nan_default, r)
        r = np.where(is_zero(s1, f) & is_zero(s2, f), nan_default, r)
        r = np.where(is_nan(s1, f), quiet(s1, f), r)
        return np.where(is_nan(s2, f), quiet(s2, f), r)
    return fn


# --- v_trig_preop_f64: 53-bit windows of the binary fraction of 2/pi --------------------------------
def _atan_inv(x: int, p: int) -> int:
    """arctan(1/x) * 2^p by its alternating series, in integers."""
    total, k, term = 0, 0, (1 << p) // x
    while term:
        total += term // (2 * k + 1) if k % 2 == 0 else -(term // (2 * k + 1))
        term //= x * x
        k += 1
    return total


@functools.cache
def _two_over_pi_windows() -> np.ndarray:
    """window[s] = bits 1200-s .. 1148-s of the 1201-bit fraction of 2/pi (zeros past its end)."""
    p = 1300                                         # guard bits: the 1201-bit floor is exact
    pi = 16 * _atan_inv(5, p) - 4 * _atan_inv(239, p)  # Machin's formula
    frac = (1 << (1202 + p)) // pi                   # floor(2/pi * 2^1201)
    wide, mask = frac << 2000, (1 << 53) - 1
    return np.array([(wide >> (3148 - s)) & mask for s in range(3149)], np.uint64)


def _trig_preop(c, a, b):
    """Segment S1[4:0] of 2/pi, 53 bits, scaled for large S0 (Payne-Hanek reduction helper)."""
    e = ((np.asarray(a, np.uint64) >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    shift = (np.asarray(b).astype(np.int64) & 31) * 53 + np.maximum(e - 1077, 0)
    scale = -53 - shift + np.where(e >= 1968, 128, 0)
    with np.errstate(**ERR):
        return as_bits(np.ldexp(_two_over_pi_windows()[shift].astype(np.float64), scale), F64)


def _table():
    ops = {}
    for f in (F16, F32, F64):
        n = f.name
        ops[f"v_trunc_{n}"] = Op(_np1(f, np.trunc), (n,), n, fmt=None)
        ops[f"v_floor_{n}"] = Op(_np1(f, np.floor), (n,), n, fmt=None)
        ops[f"v_ceil_{n}"] = Op(_np1(f, np.ceil), (n,), n, fmt=None)
        ops[f"v_rndne_{n}"] = Op(_np1(f, np.rint), (n,), n, fmt=None)
        ops[f"v_fract_{n}"] = Op(_fract(f), (n,), n, fmt=f)
        ops[f"v_frexp_mant_{n}"] = Op(_frexp_mant(f), (n,), n, fmt=None)
        ops[f"v_div_fixup_{n}"] = Op(_div_fixup(f), (n, n, n), n, fmt=None, nan=False)
    ops["v_frexp_exp_i32_f32"] = Op(_frexp_exp(F32, np.int32), ("f32",), "i32")
    ops["v_frexp_exp_i32_f64"] = Op(_frexp_exp(F64, np.int32), ("f64",), "i32")
    ops["v_frexp_exp_i16_f16"] = Op(_frexp_exp(F16, np.int16), ("f16",), "i16")
    ops["v_ldexp_f32"] = Op(_ldexp(F32, np.int32), ("f32", "i32"), "f32", fmt=F32)
    ops["v_ldexp_f64"] = Op(_ldexp(F64, np.int32), ("f64", "i32"), "f64", fmt=F64)
    ops["v_ldexp_f16"] = Op(_ldexp(F16, np.int16), ("f16", "i16"), "f16", fmt=F16)
    ops["v_trig_preop_f64"] = Op(_trig_preop, ("f64", "u32"), "f64", flush=False, nan=False)
    for f in (F32, F64):
        n = f.name
        ops[f"v_div_scale_{n}"] = Op(_div_scale(f), (n, n, n), n, out="v+mask", fmt=None, nan=False)
        ops[f"v_div_fmas_{n}"] = Op(_div_fmas(f), (n, n, n), n, fmt=f, flush=False, cin="vcc")
    return ops


OPS = _table()
