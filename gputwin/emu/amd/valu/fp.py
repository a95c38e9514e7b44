"""Floating-point building blocks shared by every VALU float family, working on raw bits.

Values travel through the VALU as unsigned bit patterns (uint16 / uint32 / uint64); a `Fmt` says how to
read them. The helpers here hold the rules that make results bit-exact:
- `fma_ro`: a*b+c rounded once. For f32/f16/bf16 inputs the product is exact in float64, the sum is
  made exact with TwoSum and folded into a round-to-odd float64; rounding that to a format with at most
  51 significand bits is then correct (round-to-odd at p+2 bits never double-rounds).
- `round_f64`: float64 -> any narrower format with an integer rounding step, for every FP_ROUND mode.
- NaN results: a quieted copy of the first NaN source, else the canonical positive quiet NaN
  (x86 would give 0xffc00000 for inf-inf; the GPU gives 0x7fc00000).
- denormal flushing per MODE.FP_DENORM and the clamp/omod output modifiers.
"""
from __future__ import annotations

import numpy as np

from gputwin import deferred
from gputwin.emu.exact import round_to_odd, two_sum
from gputwin.errors import IllegalInstruction


class Fmt:
    """A float format; constants are numpy scalars of the bit dtype (identity-compared, built once).
    `fdt` is the numpy float type, or a function returning it on first use (bfloat16: importing
    ml_dtypes takes 0.5 s, which a process that never touches bf16 should not pay at startup)."""

    def __init__(self, name: str, bits: int, udt, fdt, ebits: int, mbits: int):
        self.name, self.bits, self.udt, self.ebits, self.mbits = name, bits, udt, ebits, mbits
        if isinstance(fdt, type):
            self.fdt = fdt
        else:
            self._load_fdt = fdt
        self.sign = udt(1 << (bits - 1))
        self.exp_mask = udt(((1 << ebits) - 1) << mbits)
        self.man_mask = udt((1 << mbits) - 1)
        self.quiet_bit = udt(1 << (mbits - 1))
        self.inf = self.exp_mask
        self.max_finite = udt(int(self.inf) - 1)
        self.qnan = udt(int(self.exp_mask) | int(self.quiet_bit))
        self.bias = (1 << (ebits - 1)) - 1

    def __getattr__(self, name: str):
        if name != "fdt" or "_load_fdt" not in self.__dict__:
            raise AttributeError(name)
        self.fdt = self._load_fdt()         # once: later reads find the attribute
        return self.fdt

    def __repr__(self) -> str:
        return self.name


F16 = Fmt("f16", 16, np.uint16, np.float16, 5, 10)
BF16 = Fmt("bf16", 16, np.uint16, lambda: deferred.ml_dtypes().bfloat16, 8, 7)
F32 = Fmt("f32", 32, np.uint32, np.float32, 8, 23)
F64 = Fmt("f64", 64, np.uint64, np.float64, 11, 52)
FMTS = {f.name: f for f in (F16, BF16, F32, F64)}

ROUND_NAMES = ("nearest-even", "+inf", "-inf", "toward-zero")


# --- classification on bits ----------------------------------------------------------------------
def is_nan(b, f: Fmt):
    return (b & ~f.sign) > f.inf


def is_inf(b, f: Fmt):
    return (b & ~f.sign) == f.inf


def is_snan(b, f: Fmt):
    return is_nan(b, f) & ((b & f.quiet_bit) == 0)


def is_denorm(b, f: Fmt):
    return ((b & f.exp_mask) == 0) & ((b & f.man_mask) != 0)


def is_zero(b, f: Fmt):
    return (b & ~f.sign) == 0


def quiet(b, f: Fmt):
    return np.where(is_nan(b, f), b | f.quiet_bit, b)


def flush(b, f: Fmt):
    """Denormals -> zero of the same sign."""
    return np.where(is_denorm(b, f), b & f.sign, b)


def as_float(b, f: Fmt):
    return b.view(f.fdt)


def as_bits(x, f: Fmt):
    return np.asarray(x, f.fdt).view(f.udt)


def fix_nan(res, srcs, f: Fmt):
    """NaN results become a quieted copy of the first NaN source, or the canonical quiet NaN."""
    nan = is_nan(res, f)
    if not nan.any():
        return res
    out = np.full(res.shape, f.qnan, f.udt)
    for s in reversed(srcs):
        s = np.broadcast_to(s, res.shape)
        out = np.where(is_nan(s, f), s | f.quiet_bit, out)
    return np.where(nan, out, res)


# --- exact fused multiply-add ----------------------------------------------------------------------
def fma_ro(a, b, c):
    """a*b+c for float64 arrays holding f32/f16/bf16 values (so a*b is exact): round-to-odd float64."""
    with np.errstate(all="ignore"):
        p = a * b
        s, err = two_sum(p, c)
        err = np.where(np.isfinite(s), err, 0.0)
    return round_to_odd(s, err)


def fma_f32_rne(a, b, c):
    """f32 fma, nearest-even, on f32 bit arrays. float64 p + c (p exact) can only mislead the final
    rounding when it lands exactly on an f32 halfway point (low 29 mantissa bits 0x10000000) or in the
    f32 denormal range; only those rare lanes pay for the round-to-odd path. The f32 -> f64 widening
    happens inside the multiply and add (numpy casts in buffered chunks): no widened copies of the inputs."""
    if not (np.ndim(a) or np.ndim(b) or np.ndim(c)):   # three single values: as one lane (nonzero needs 1-d)
        return fma_f32_rne(np.reshape(a, 1), np.reshape(b, 1), np.reshape(c, 1))[0]
    fa, fb, fc = (np.asarray(v).view(np.float32) for v in (a, b, c))
    with np.errstate(all="ignore"):
        s = np.multiply(fa, fb, dtype=np.float64)
        if s.ndim and s.shape == np.broadcast_shapes(s.shape, fc.shape):
            np.add(s, fc, out=s)
        else:
            s = np.add(s, fc, dtype=np.float64)
        r = s.astype(np.float32)
    sb = s.view(np.uint64)
    suspect = ((sb & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000)) | (np.abs(r) < np.float32(2.0 ** -125))
    if suspect.any():
        idx = np.nonzero(suspect)
        with np.errstate(invalid="ignore", over="ignore"):   # sNaNs widen (quieted); overflow rounds to inf
            xs, ys, zs = (np.broadcast_to(v, s.shape)[idx].astype(np.float64) for v in (fa, fb, fc))
            r[idx] = fma_ro(xs, ys, zs).astype(np.float32)
    return r.view(np.uint32)


def add_ro(a, b):
    """a+b of float64 arrays holding values of at most 26 significand bits: round-to-odd float64."""
    with np.errstate(all="ignore"):
        s, err = two_sum(a, b)
        err = np.where(np.isfinite(s), err, 0.0)
    return round_to_odd(s, err)


# --- float64 -> narrower format, any rounding mode ---------------------------------------------------
def round_f64(x, f: Fmt, rmode: int = 0):
    """Round float64 values to format f (f16 / bf16 / f32) with FP_ROUND mode rmode; returns bits.

    Correct for exact float64 inputs and for round-to-odd ones (sticky in the last place)."""
    xb = np.asarray(x, np.float64).view(np.uint64)
    sign = (xb >> np.uint64(63)).astype(np.uint64)
    e = ((xb >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    man = xb & np.uint64((1 << 52) - 1)
    sig = np.where(e > 0, man | np.uint64(1 << 52), man)           # f64 denormals: man * 2^-1074
    ue = np.where(e > 0, e - 1023, -1022)
    emin = 1 - f.bias
    shift = (52 - f.mbits) + np.maximum(emin - ue, 0)
    shift = np.minimum(shift, 63).astype(np.uint64)
    q = sig >> shift
    rem = sig - (q << shift)
    half = np.uint64(1) << (shift - np.uint64(1))
    inexact = rem != 0
    if rmode == 0:
        up = (rem > half) | ((rem == half) & ((q & np.uint64(1)) == 1))
    elif rmode == 3:
        up = np.zeros_like(inexact)
    else:
        toward_pos = rmode == 1
        up = inexact & ((sign == 0) if toward_pos else (sign == 1))
    q = q + up.astype(np.uint64)
    base = np.maximum(ue + f.bias - 1, 0).astype(np.uint64)   # exponent field - 1 (q carries the implicit bit)
    mag = np.where(ue >= emin, (base << np.uint64(f.mbits)) + q, q)
    inf = np.uint64(int(f.inf))
    maxf = inf - np.uint64(1)
    over = mag >= inf
    if rmode == 0:
        mag = np.where(over, inf, mag)
    else:
        to_inf = (rmode == 1) & (sign == 0) | (rmode == 2) & (sign == 1)
        mag = np.where(over, np.where(to_inf, inf, maxf), mag)
    special = e == 0x7FF
    nanbits = np.uint64(int(f.qnan)) | (man >> np.uint64(52 - f.mbits))
    mag = np.where(special, np.where(man != 0, nanbits, inf), mag)
    out = (sign << np.uint64(f.bits - 1)) | mag
    return out.astype(f.udt)


def to_f64(b, f: Fmt):
    """bits of f16 / bf16 / f32 / f64 -> float64 (exact)."""
    if f is F64:
        return np.asarray(b).view(np.float64)
    with np.errstate(invalid="ignore"):      # signalling NaNs convert (quieted) without a warning
        return np.asarray(b).view(f.fdt).astype(np.float64)


# --- MODE register ---------------------------------------------------------------------------------
class Mode:
    """Decoded MODE bits. Denorm fields: bit0 = keep input denormals, bit1 = keep output denormals.
    The f32 fields (round [1:0], denorm [5:4]) also govern bf16; f16 and f64 share the other fields."""

    def __init__(self, raw: int):
        self.raw = raw
        lo = {"f32": True, "bf16": True, "f16": False, "f64": False}
        self._round = {n: (raw >> (0 if v else 2)) & 3 for n, v in lo.items()}
        self._denorm = {n: (raw >> (4 if v else 6)) & 3 for n, v in lo.items()}
        self._keep_in = {n: bool(d & 1) for n, d in self._denorm.items()}
        self._keep_out = {n: bool(d & 2) for n, d in self._denorm.items()}

    def round(self, f: Fmt) -> int:
        return self._round[f.name]

    @property
    def dx10_clamp(self) -> bool:
        return bool(self.raw >> 8 & 1)

    @property
    def ieee(self) -> bool:
        return bool(self.raw >> 9 & 1)

    @property
    def fp16_ovfl(self) -> bool:
        """MODE bit 23: f16 VALU results that overflow saturate to +-MAX_FP16 (`saturate_f16`); on gfx12 also
        f32 -> 8-bit float conversions (fp8.py)."""
        return bool(self.raw >> 23 & 1)

    def keeps_denormals(self, f: Fmt) -> bool:
        """Denormal inputs and outputs of f both kept (no flushing either way)."""
        return self._denorm[f.name] == 3

    def keeps_input_denormals(self, f: Fmt) -> bool:
        return self._keep_in[f.name]

    def keeps_output_denormals(self, f: Fmt) -> bool:
        return self._keep_out[f.name]

    def flush_in(self, b, f: Fmt):
        return b if self._keep_in[f.name] else flush(b, f)

    def flush_out(self, b, f: Fmt):
        return b if self._keep_out[f.name] else flush(b, f)

    @staticmethod
    def of(raw: int) -> "Mode":
        m = _MODES.get(raw)
        if m is None:
            m = _MODES[raw] = Mode(raw)
        return m

    def need_rne(self, f: Fmt, op: str) -> None:
        """Fail closed where only round-to-nearest-even is modelled."""
        r = self.round(f)
        if r:
            raise IllegalInstruction(f"{op}: FP_ROUND {ROUND_NAMES[r]} for {f.name} is not modelled")


_MODES: dict[int, Mode] = {}


# --- MODE.FP16_OVFL ------------------------------------------------------------------------------
def has_inf(sources):
    """Lanes where any of `sources` ((bits, Fmt) pairs) is infinite."""
    out = False
    for b, f in sources:
        out = out | is_inf(b, f)
    return out


def saturate_f16(res, inf_input):
    """FP16_OVFL: an infinite f16 result on a lane without an infinite input (`inf_input`, bool) becomes
    +-MAX_FP16 (0x7bff / 0xfbff), whatever the round mode; NaNs and infinities from infinite inputs stay.
    Division by zero (v_rcp_f16(0) ...) has no infinite input: it saturates too (docs/mode.md)."""
    over = is_inf(res, F16) & ~np.asarray(inf_input)
    return np.where(over, (res & F16.sign) | F16.max_finite, res)


# --- output modifiers ------------------------------------------------------------------------------
def apply_omod(b, f: Fmt, omod: int, mode: Mode):
    """Output multiply (*2, *4, /2) applied to a rounded result, rounded again (exact but for /2 of tiny values)."""
    if not omod:
        return b
    x = to_f64(b, f) * (2.0, 4.0, 0.5)[omod - 1]
    r = as_bits(x, F64) if f is F64 else round_f64(x, f, 0)
    return np.where(is_nan(b, f), b, mode.flush_out(r, f))


def apply_clamp(b, f: Fmt, mode: Mode):
    """Clamp to [0, 1]: NaN -> +0 under DX10_CLAMP, else the (quiet) NaN stays; -0 -> +0."""
    neg = (b & f.sign) != 0
    one = as_bits(np.array(1.0, f.fdt), f)
    gt1 = ~neg & (b > one) & ~is_nan(b, f)
    r = np.where(neg, f.udt(0), np.where(gt1, one, b))
    nan = is_nan(b, f)
    return np.where(nan, f.udt(0) if mode.dx10_clamp else b, r)
