"""Core float rules (gputwin/emu/amd/valu/fp.py, fma64.py) checked against exact rational arithmetic."""
from fractions import Fraction

import numpy as np
import pytest

from gputwin.emu.amd.valu.fma64 import fma64
from gputwin.emu.amd.valu.fp import F16, F32, BF16, fma_f32_rne, fma_ro, fix_nan, round_f64

from .helpers import round_frac

MODES = {0: "rne", 1: "up", 2: "down", 3: "rtz"}
FMT = {"f32": (F32, 24, -126, 127, np.float32), "f16": (F16, 11, -14, 15, np.float16)}


def _interesting_f64(rng, n):
    """Random doubles around the f32/f16 ranges, plus ties and halfway cases built on purpose."""
    mant = rng.integers(0, 1 << 52, n, dtype=np.uint64)
    exp = rng.integers(1023 - 160, 1023 + 140, n).astype(np.uint64)
    sign = rng.integers(0, 2, n).astype(np.uint64) << np.uint64(63)
    x = (sign | (exp << np.uint64(52)) | mant).view(np.float64)
    ties = np.float64(1.0) + np.float64(2.0 ** -24)          # exactly halfway between two f32 values
    extra = [ties, -ties, 2.0 ** -150, 2.0 ** -149 * 1.5, 65520.0, 3.4028235e38 * 1.0000001, 5e-324, -1e-310, 0.0]
    return np.concatenate([x, extra])


@pytest.mark.parametrize("name", ["f32", "f16"])
@pytest.mark.parametrize("rmode", [0, 1, 2, 3])
def test_round_f64_matches_rational_rounding_in_every_mode(name, rmode):
    fmt, p, emin, emax, dt = FMT[name]
    x = _interesting_f64(np.random.default_rng(rmode), 300)
    got = round_f64(x, fmt, rmode)
    want = np.array([round_frac(Fraction(float(v)), p, emin, emax, MODES[rmode]) for v in x], dt).view(fmt.udt)
    np.testing.assert_array_equal(got, want)


def test_round_f64_keeps_nan_payload_quiet_and_infinities():
    x = np.array([np.inf, -np.inf], np.float64)
    np.testing.assert_array_equal(round_f64(x, F32), np.array([0x7F800000, 0xFF800000], np.uint32))
    snan = np.array([0x7FF0000000000001 | (0x123 << 40)], np.uint64).view(np.float64)
    out = int(round_f64(snan, F32)[0])
    assert out & 0x7FC00000 == 0x7FC00000 and out & 0x3FFFFF == (0x123 << 40) >> 29


def test_round_f64_to_bf16_matches_ml_dtypes():
    import ml_dtypes
    x = np.random.default_rng(5).standard_normal(2000).astype(np.float32).astype(np.float64)
    want = x.astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)   # exact f32 -> bf16 RNE
    np.testing.assert_array_equal(round_f64(x, BF16), want)


def _rand_f32(rng, n, lo=-60, hi=60):
    m = rng.integers(0, 1 << 23, n, dtype=np.uint32)
    e = rng.integers(127 + lo, 127 + hi, n).astype(np.uint32)
    s = rng.integers(0, 2, n).astype(np.uint32) << np.uint32(31)
    return (s | (e << np.uint32(23)) | m).view(np.float32)


def test_f32_fma_rounds_once_against_fractions():
    rng = np.random.default_rng(1)
    a, b = _rand_f32(rng, 400), _rand_f32(rng, 400)
    c = -(a.astype(np.float64) * b).astype(np.float32)          # heavy cancellation cases
    c[::2] = _rand_f32(rng, 200)
    got = fma_ro(a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)).astype(np.float32)
    want = np.array([round_frac(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)), 24, -126, 127)
                     for x, y, z in zip(a, b, c)], np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_f32_fma_double_rounding_trap_is_avoided():
    # a*b + c lands just above a tie of f32 but float64 rounding alone would make it an exact tie
    a, b = np.float64(1 + 2.0 ** -12), np.float64(1 + 2.0 ** -12)   # a*b = 1 + 2^-11 + 2^-24
    c = np.float64(2.0 ** -60)
    got = np.float32(fma_ro(np.array([a]), np.array([b]), np.array([c]))[0])
    want = round_frac(Fraction(a) * Fraction(b) + Fraction(c), 24, -126, 127)
    assert got == np.float32(want) and got != np.float32(a * b + c)


def _f32_fma_want(a, b, c):
    return np.array([round_frac(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)), 24, -126, 127)
                     for x, y, z in np.broadcast(a, b, c)], np.float32).view(np.uint32)


def test_f32_fma_rne_fast_path_rounds_once_including_traps_and_denormal_results():
    rng = np.random.default_rng(7)
    a, b, c = _rand_f32(rng, 300), _rand_f32(rng, 300), _rand_f32(rng, 300)
    a[:100], b[:100], c[:100] = _rand_f32(rng, 100, -70, -60), _rand_f32(rng, 100, -70, -60), \
        _rand_f32(rng, 100, -127, -124)                          # results in the f32 denormal range
    t = np.float32(1 + 2.0 ** -12)                               # a*b = 1 + 2^-11 + 2^-24: a tie, before c
    a[100:110], b[100:110] = t, t
    c[100:110] = np.float32(2.0 ** -60) * np.array([1, -1, 3, -3, 0.5, -0.5, 2, -2, 1.5, -1.5], np.float32)
    # a*b = 2^-150 - 2^-196: float64 rounds c + a*b onto the denormal tie (m + 1/2) * 2^-149 (m odd)
    a[110:114], b[110:114] = np.float32((1 + 2 ** -23) * 2.0 ** -75), np.float32((1 - 2 ** -23) * 2.0 ** -75)
    c[110:114] = np.array([0x2AAAAB, 0x80000000 | 0x2AAAAB, 0x155, 0x7FFFFF], np.uint32).view(np.float32)
    a, b, c = (v.reshape(3, 100) for v in (a, b, c))
    got = fma_f32_rne(a.view(np.uint32), b.view(np.uint32), c.view(np.uint32))
    np.testing.assert_array_equal(got.ravel(), _f32_fma_want(a, b, c))
    plain = (a[1].astype(np.float64) * b[1] + c[1]).astype(np.float32).view(np.uint32)
    assert (got[1, :10] != plain[:10]).any() and (got[1, 10:14] != plain[10:14]).any()   # traps: not plain float64


def test_f32_fma_rne_on_broadcast_and_single_value_operands():
    rng = np.random.default_rng(8)
    col, row = _rand_f32(rng, 4).reshape(4, 1), _rand_f32(rng, 32)
    one = _rand_f32(rng, 1)[0]
    got = fma_f32_rne(col.view(np.uint32), one.view(np.uint32), row.view(np.uint32))
    np.testing.assert_array_equal(got.ravel(), _f32_fma_want(col, one, row))
    tiny = np.float32(2.0 ** -140)                               # a denormal result from three single values
    got1 = fma_f32_rne(tiny.view(np.uint32), np.float32(3.0).view(np.uint32), tiny.view(np.uint32))
    assert np.ndim(got1) == 0 and int(got1) == int(_f32_fma_want(tiny, np.float32(3.0), tiny)[0])


def _rand_f64(rng, n, lo=-400, hi=400):
    m = rng.integers(0, 1 << 52, n, dtype=np.uint64)
    e = rng.integers(1023 + lo, 1023 + hi, n).astype(np.uint64)
    s = rng.integers(0, 2, n).astype(np.uint64) << np.uint64(63)
    return (s | (e << np.uint64(52)) | m).view(np.float64)


def _ref_fma64(x, y, z):
    v = Fraction(x) * Fraction(y) + Fraction(z)
    return round_frac(v, 53, -1022, 1023) if v != 0 else 0.0


@pytest.mark.parametrize("ab,cr", [((-400, 400), (-400, 400)), ((-530, -450), (-1020, -900)),
                                   ((490, 515), (900, 1022))])
def test_f64_fma_correctly_rounded_against_fractions(ab, cr):
    rng = np.random.default_rng(ab[0] & 0xFFFF)
    a, b = _rand_f64(rng, 300, *ab), _rand_f64(rng, 300, *ab)
    with np.errstate(all="ignore"):
        c = -(a * b)
    c[::3] = _rand_f64(rng, 100, *cr)
    c[1::3] = c[1::3] * (1 + 2.0 ** -40)
    c[~np.isfinite(c)] = 1.0
    got = fma64(a.view(np.uint64), b.view(np.uint64), c.view(np.uint64)).view(np.float64)
    want = np.array([_ref_fma64(float(x), float(y), float(z)) for x, y, z in zip(a, b, c)])
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def test_f64_fma_special_values():
    inf = np.inf
    a = np.array([inf, 0.0, -0.0, 1.0, 2.0 ** 1000, 1.0])
    b = np.array([0.0, 5.0, 5.0, inf, 2.0 ** 100, 1.0])
    c = np.array([1.0, -0.0, 0.0, -inf, 0.0, -1.0])
    got = fma64(a.view(np.uint64), b.view(np.uint64), c.view(np.uint64)).view(np.float64)
    assert np.isnan(got[0]) and np.isnan(got[3])
    assert got[1] == 0 and not np.signbit(got[1]) and got[2] == 0 and not np.signbit(got[2])
    assert got[4] == inf
    assert got[5] == 0 and not np.signbit(got[5])


def test_fix_nan_quiets_first_nan_source_and_canonicalizes_new_nans():
    res = np.array([0xFFC00000, 0x7FC00000, 0x3F800000], np.uint32)
    a = np.array([0x3F800000, 0x7F800001, 0x3F800000], np.uint32)    # lane 1: signalling NaN in src0
    b = np.array([0x3F800000, 0x7FC00002, 0x3F800000], np.uint32)
    out = fix_nan(res, [a, b], F32)
    np.testing.assert_array_equal(out, np.array([0x7FC00000, 0x7FC00001, 0x3F800000], np.uint32))


def test_fast_f32_fma_path_matches_fractions_including_ties_and_denormals():
    rng = np.random.default_rng(9)
    a, b = _rand_f32(rng, 300, -70, 10), _rand_f32(rng, 300, -70, 10)
    c = _rand_f32(rng, 300, -126, -100)
    # double-rounding traps: a*b is an exact f32 tie, c a tiny nudge that float64 alone would drop
    a[:50] = b[:50] = np.float32(1 + 2.0 ** -12)
    c[:25], c[25:50] = np.float32(2.0 ** -60), np.float32(-2.0 ** -60)
    got = fma_f32_rne(a.view(np.uint32), b.view(np.uint32), c.view(np.uint32))
    want = np.array([round_frac(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)), 24, -126, 127)
                     for x, y, z in zip(a, b, c)], np.float32)
    np.testing.assert_array_equal(got, want.view(np.uint32))
