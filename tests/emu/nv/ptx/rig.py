"""Shared test rig: run fixture kernels, and independent exact references (Fractions, Python ints)."""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np

from gputwin.emu.memory import AddressSpace
from gputwin.emu.nv.ptx import load_module
from gputwin.emu.nv.ptx.standalone import Arena, launch

ROOT = Path(__file__).resolve().parents[4]
FIXTURES = ROOT / "fixtures" / "nv"
ARCHES = ("sm_80", "sm_90")


def fixture(arch: str, name: str):
    return load_module((FIXTURES / arch / f"{name}.ptx").read_text())


class Rig:
    def __init__(self):
        self.arena = Arena(AddressSpace())
        self.mem = self.arena.mem

    def buf(self, data=None, nbytes=None):
        if data is not None:
            data = np.ascontiguousarray(data)
            return self.arena.alloc(max(data.nbytes, 1), data)
        return self.arena.alloc(nbytes)

    def get(self, va, dtype, count):
        return self.arena.array(va, dtype, count)

    def run(self, mod, name, args, grid=(1,), block=(1,), **kw):
        return launch(self.mem, mod, name, args, grid=grid, block=block, **kw)


# --- exact rounding references, written independently of the emulator ----------------------------------

_FMT = {"f32": (np.float32, np.uint32), "f64": (np.float64, np.uint64), "f16": (np.float16, np.uint16)}


def _neighbours(x, ftype):
    with np.errstate(over="ignore"):
        x = ftype(x)
        return [np.nextafter(x, ftype(-np.inf)), x, np.nextafter(x, ftype(np.inf))]


def round_exact(q: Fraction, fmt: str = "f32", mode: str = "rn", zero=None):
    r = _round_exact(q, fmt, mode, zero)
    if r == 0 and q != 0:                       # underflow to zero keeps the sign of the exact value
        return np.copysign(r, r.dtype.type(-1 if q < 0 else 1))
    return r


def _round_exact(q: Fraction, fmt: str = "f32", mode: str = "rn", zero=None):
    """The value of format fmt that rounding the exact rational q in mode gives. An exact zero is
    `zero` (the caller knows the IEEE sign rule for its operation), +0 by default."""
    ftype, utype = _FMT[fmt]
    if q == 0:
        return ftype(0.0) if zero is None else ftype(zero)
    big = np.finfo(ftype).max
    if abs(q) > fr(big):                                  # beyond the largest finite value
        half_ulp = (fr(big) - fr(np.nextafter(big, ftype(0)))) / 2
        away = {"rn": abs(q) >= fr(big) + half_ulp, "rz": False,
                "rm": q < 0, "rp": q > 0}[mode]
        v = ftype(np.inf) if away else big
        return v if q > 0 else -v
    approx = float(q) if abs(q) < Fraction(2) ** 1000 else (np.inf if q > 0 else -np.inf)
    cands = set()
    for c in _neighbours(approx, ftype):
        for d in _neighbours(c, ftype):
            if np.isfinite(d):
                cands.add(d)
    cands = sorted(cands, key=lambda v: Fraction(float(v)))
    below = [c for c in cands if Fraction(float(c)) <= q]
    above = [c for c in cands if Fraction(float(c)) >= q]
    lo, hi = below[-1], above[0]
    if lo == hi and Fraction(float(lo)) == q:
        return lo
    if mode == "rz":
        return lo if q > 0 else hi
    if mode == "rm":
        return lo
    if mode == "rp":
        return hi
    dl, dh = q - Fraction(float(lo)), Fraction(float(hi)) - q
    if dl != dh:
        return lo if dl < dh else hi
    return lo if int(np.array(lo).view(utype)) % 2 == 0 else hi


def fr(x) -> Fraction:
    return Fraction(float(x))


def sqrt_exact(a, fmt="f32"):
    """Correctly rounded square root of a positive finite a, by comparing squares exactly."""
    ftype, _ = _FMT[fmt]
    qa = fr(a)
    c = ftype(np.sqrt(float(a)))
    for _ in range(4):
        lo_mid = (fr(np.nextafter(c, ftype(0))) + fr(c)) / 2
        hi_mid = (fr(c) + fr(np.nextafter(c, ftype(np.inf)))) / 2
        if lo_mid * lo_mid > qa:
            c = np.nextafter(c, ftype(0))
        elif hi_mid * hi_mid < qa:
            c = np.nextafter(c, ftype(np.inf))
        else:
            return c
    raise AssertionError("no convergence")


def bits(x):
    x = np.asarray(x)
    return x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


def round_bf16(q: Fraction, zero=0.0) -> int:
    """bf16 bits of the exact rational q rounded to nearest even (8-bit significand, f32 exponent range)."""
    if q == 0:
        return int(np.array(zero, np.float32).view(np.uint32)) >> 16
    sign = 0x8000 if q < 0 else 0
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, -126)
    quantum = Fraction(2) ** (e - 7)
    n, rem = divmod(a, quantum)
    n = int(n)
    if rem * 2 > quantum or (rem * 2 == quantum and n % 2 == 1):
        n += 1
    v = n * quantum
    if v >= Fraction(2) ** 128:
        return sign | 0x7F80
    return sign | (int(np.array(float(v), np.float32).view(np.uint32)) >> 16)


def bf16_value(b) -> Fraction:
    return fr(np.array(int(b) << 16, np.uint32).view(np.float32))
