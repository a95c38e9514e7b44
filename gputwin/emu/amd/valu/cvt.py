"""Conversions (v_cvt_*, v_pack_b32_f16, v_sat_pk_u8_i16) with their rounding and clamping.

- int -> float and float -> narrower float round once, in the destination's FP_ROUND mode (all four
  modes: the source is exact in float64, so `round_f64` sees the true value).
- float -> int truncates toward zero, clamps to the destination range, and gives 0 for NaN.
- v_cvt_nearest_i32_f32 is floor(x + 0.5) with the add rounded in f32 (so 0.49999997 -> 1), and
  v_cvt_pk_rtz_f16_f32 rounds toward zero whatever the mode.
- v_cvt_norm_i16_f16 / v_cvt_norm_u16_f16 (f16_to_snorm / f16_to_unorm) and the packed v_cvt_pk_norm_{i,u}16_{f16,f32}
  (D = {norm(S1), norm(S0)}; hardware-recorded: 1.0, -1.0 -> 32767, 0x8001): clamp to [-1, 1] / [0, 1] (NaN -> 0),
  scale by 32767 / 65535 (exact in float64) and round to nearest even ("0.5 ULP accuracy, supports
  rounding"; denormal inputs are kept). Ties (e.g. -0.5 * 32767) are a DECISION to confirm on hardware.
- NaN results are quiet, keeping the payload's top bits.
"""
from __future__ import annotations

import numpy as np

from .fp import F16, F32, F64, Fmt, as_bits, as_float, quiet, round_f64, to_f64
from .intops import s, w64
from .table import Op

U16, U32, U64 = np.uint16, np.uint32, np.uint64


def _to_float(src: Fmt | None, sdt, dst: Fmt):
    """Source float format (or integer dtype sdt) -> dst float, rounded in the context's mode."""
    def fn(c, a):
        x = to_f64(a, src) if src is not None else s(a, sdt).astype(np.float64)
        if dst is F64:
            r = as_bits(x, F64)
        else:
            r = round_f64(x, dst, c.rmode)
        return quiet(r, dst)
    return fn


def f_to_int(x, lo: int, hi: int, udt):
    """Truncate toward zero, clamp to [lo, hi], NaN -> 0; returns bits in udt."""
    with np.errstate(invalid="ignore"):
        t = np.trunc(np.clip(np.nan_to_num(x, nan=0.0, posinf=hi, neginf=lo), lo, hi))
    return t.astype(np.int64).astype(udt)


def _to_int(src: Fmt, lo, hi, udt, pre=None):
    def fn(c, a):
        x = to_f64(a, src)
        if pre is not None:
            x = pre(x, a)
        return f_to_int(x, lo, hi, udt)
    return fn


def _nearest(x, a):
    """floor(S0 + 0.5) with the addition rounded to f32 (nearest-even) first."""
    with np.errstate(all="ignore"):
        return np.floor((as_float(a, F32) + np.float32(0.5)).astype(np.float64))


def _ubyte(k):
    return lambda c, a: as_bits(((np.asarray(a, U32) >> U32(8 * k)) & U32(0xFF)).astype(np.float32), F32)


def _off_i4(c, a):
    v = w64(a) & 0xF
    v = v - ((v & 8) << 1)
    return as_bits((v * 0.0625).astype(np.float32), F32)


def _pk_rtz(c, a, b):
    lo = quiet(round_f64(to_f64(a, F32), F16, 3), F16)
    hi = quiet(round_f64(to_f64(b, F32), F16, 3), F16)
    lo, hi = c.mode.flush_out(lo, F16), c.mode.flush_out(hi, F16)
    return lo.astype(U32) | (hi.astype(U32) << U32(16))


def _norm(lo: float, scale: float, src: Fmt = F16):
    """f16/f32_to_snorm (lo = -1, scale 32767) / _to_unorm (lo = 0, scale 65535)."""
    def fn(c, a):
        x = to_f64(a, src)
        with np.errstate(invalid="ignore"):
            x = np.clip(np.nan_to_num(x, nan=0.0), lo, 1.0)
        return np.rint(x * scale).astype(np.int64).astype(U16)
    return fn


def _pk_norm(lo: float, scale: float, src: Fmt):
    """v_cvt_pk_norm_*: D = {norm(S1), norm(S0)}."""
    one = _norm(lo, scale, src)
    return lambda c, a, b: _pack(one(c, a), one(c, b))


def _pack(lo, hi):
    return (np.asarray(lo).astype(U32) & U32(0xFFFF)) | (np.asarray(hi).astype(U32) << U32(16))


def _sat_int(v, lo, hi):
    return np.clip(w64(v), lo, hi) & 0xFFFF


def _pk_u8(c, a, b, d):
    byte = f_to_int(to_f64(a, F32), 0, 255, U32)
    sh = (np.asarray(b, U32) & U32(3)) * U32(8)
    return (np.asarray(d, U32) & ~(U32(0xFF) << sh)) | (byte << sh)


def _sat_pk_u8(c, a):
    x = np.asarray(a, U32)
    lo = np.clip(w64(s((x & U32(0xFFFF)).astype(U16), np.int16)), 0, 255)
    hi = np.clip(w64(s((x >> U32(16)).astype(U16), np.int16)), 0, 255)
    return (lo | (hi << 8)).astype(U16)


def _table():
    o = {}
    I32R, U32R, I16R, U16R = (-2 ** 31, 2 ** 31 - 1), (0, 2 ** 32 - 1), (-2 ** 15, 2 ** 15 - 1), (0, 2 ** 16 - 1)
    o["v_cvt_f32_i32"] = Op(_to_float(None, np.int32, F32), ("i32",), "f32", fmt=F32, directed=True, nan=False)
    o["v_cvt_f32_u32"] = Op(_to_float(None, np.uint32, F32), ("u32",), "f32", fmt=F32, directed=True, nan=False)
    o["v_cvt_f64_i32"] = Op(_to_float(None, np.int32, F64), ("i32",), "f64", nan=False)
    o["v_cvt_f64_u32"] = Op(_to_float(None, np.uint32, F64), ("u32",), "f64", nan=False)
    o["v_cvt_f16_i16"] = Op(_to_float(None, np.int16, F16), ("i16",), "f16", fmt=F16, directed=True, nan=False)
    o["v_cvt_f16_u16"] = Op(_to_float(None, np.uint16, F16), ("u16",), "f16", fmt=F16, directed=True, nan=False)
    o["v_cvt_f32_f64"] = Op(_to_float(F64, None, F32), ("f64",), "f32", fmt=F32, directed=True, nan=False)
    o["v_cvt_f64_f32"] = Op(_to_float(F32, None, F64), ("f32",), "f64", nan=False)
    o["v_cvt_f16_f32"] = Op(_to_float(F32, None, F16), ("f32",), "f16", fmt=F16, directed=True, nan=False)
    o["v_cvt_f32_f16"] = Op(_to_float(F16, None, F32), ("f16",), "f32", nan=False)
    o["v_cvt_i32_f32"] = Op(_to_int(F32, *I32R, U32), ("f32",), "i32")
    o["v_cvt_u32_f32"] = Op(_to_int(F32, *U32R, U32), ("f32",), "u32")
    o["v_cvt_i32_f64"] = Op(_to_int(F64, *I32R, U32), ("f64",), "i32")
    o["v_cvt_u32_f64"] = Op(_to_int(F64, *U32R, U32), ("f64",), "u32")
    o["v_cvt_i16_f16"] = Op(_to_int(F16, *I16R, U16), ("f16",), "i16")
    o["v_cvt_u16_f16"] = Op(_to_int(F16, *U16R, U16), ("f16",), "u16")
    o["v_cvt_norm_i16_f16"] = Op(_norm(-1.0, 32767.0), ("f16",), "i16", fmt=F16, flush=False)
    o["v_cvt_norm_u16_f16"] = Op(_norm(0.0, 65535.0), ("f16",), "u16", fmt=F16, flush=False)
    for f, t in ((F16, "f16"), (F32, "f32")):
        o[f"v_cvt_pk_norm_i16_{t}"] = Op(_pk_norm(-1.0, 32767.0, f), (t, t), "b32", fmt=f, flush=False)
        o[f"v_cvt_pk_norm_u16_{t}"] = Op(_pk_norm(0.0, 65535.0, f), (t, t), "b32", fmt=f, flush=False)
    o["v_cvt_floor_i32_f32"] = Op(_to_int(F32, *I32R, U32, pre=lambda x, a: np.floor(x)), ("f32",), "i32")
    o["v_cvt_nearest_i32_f32"] = Op(_to_int(F32, *I32R, U32, pre=_nearest), ("f32",), "i32")
    for k in range(4):
        o[f"v_cvt_f32_ubyte{k}"] = Op(_ubyte(k), ("u32",), "f32", nan=False)
    o["v_cvt_off_f32_i4"] = Op(_off_i4, ("u32",), "f32", nan=False)
    o["v_cvt_i32_i16"] = Op(lambda c, a: s(a, np.int16).astype(np.int32).view(U32), ("i16",), "i32")
    o["v_cvt_u32_u16"] = Op(lambda c, a: np.asarray(a).astype(U32), ("u16",), "u32")
    o["v_cvt_pk_rtz_f16_f32"] = Op(_pk_rtz, ("f32", "f32"), "b32", nan=False)
    o["v_cvt_pk_i16_i32"] = Op(lambda c, a, b: _pack(_sat_int(s(a, np.int32), *I16R), _sat_int(s(b, np.int32), *I16R)),
                               ("i32", "i32"), "b32")
    o["v_cvt_pk_u16_u32"] = Op(lambda c, a, b: _pack(_sat_int(a, *U16R), _sat_int(b, *U16R)), ("u32", "u32"), "b32")
    o["v_cvt_pk_i16_f32"] = Op(lambda c, a, b: _pack(f_to_int(to_f64(a, F32), *I16R, U16),
                                                     f_to_int(to_f64(b, F32), *I16R, U16)), ("f32", "f32"), "b32")
    o["v_cvt_pk_u16_f32"] = Op(lambda c, a, b: _pack(f_to_int(to_f64(a, F32), *U16R, U16),
                                                     f_to_int(to_f64(b, F32), *U16R, U16)), ("f32", "f32"), "b32")
    o["v_cvt_pk_u8_f32"] = Op(_pk_u8, ("f32", "u32", "u32"), "b32")
    o["v_pack_b32_f16"] = Op(lambda c, a, b: _pack(a, b), ("f16", "f16"), "b32", flush=False, nan=False)
    o["v_sat_pk_u8_i16"] = Op(_sat_pk_u8, ("b32",), "b16")
    return o


OPS = _table()
