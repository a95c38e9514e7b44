"""nvcc fixtures: f16 / f16x2 / bf16 arithmetic and conversions, and the cvt fixture, against exact
rational references."""
import numpy as np
import pytest

from tests.emu.nv.ptx.rig import ARCHES, Rig, bf16_value, bits, fixture, fr, round_bf16, round_exact


def _halves(seed, n):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-12, 8, n))).astype(np.float16)
    y = (rng.standard_normal(n) * np.exp2(rng.integers(-12, 8, n))).astype(np.float16)
    x[:3] = [np.float16(6e-8), np.float16(65504), np.float16(-1.0)]    # subnormal, max, exact
    y[:3] = [np.float16(3.0), np.float16(2.0), np.float16(1.0)]
    return x, y


def _zero(v):
    return np.float64(v)


@pytest.mark.parametrize("arch", ARCHES)
def test_half_scalar_ops(arch):
    n = 100
    x, y = _halves(40, n)
    r = Rig()
    po, pa, pb = r.buf(nbytes=8 * n), r.buf(x), r.buf(y)
    r.run(fixture(arch, "half"), "half_ops", [po, pa, pb, n], grid=(1,), block=(128,))
    out = r.get(po, np.float16, 4 * n).reshape(n, 4)
    for i in range(n):
        a, b = fr(x[i]), fr(y[i])
        xa, yb = np.float64(x[i]), np.float64(y[i])
        ref = [round_exact(a + b, "f16", zero=xa + yb), round_exact(a * b, "f16", zero=xa * yb),
               round_exact(a * b + a, "f16", zero=xa * yb + xa), round_exact(a - b, "f16", zero=xa - yb)]
        assert [int(v) for v in bits(out[i])] == [int(bits(v)) for v in ref], i


@pytest.mark.parametrize("arch", ARCHES)
def test_half2_packed_ops(arch):
    n = 64
    x, y = _halves(41, 2 * n)
    r = Rig()
    po, pa, pb = r.buf(nbytes=16 * n), r.buf(x), r.buf(y)
    r.run(fixture(arch, "half"), "half2_ops", [po, pa, pb, n], grid=(1,), block=(64,))
    out = r.get(po, np.float16, 4 * n).reshape(n, 2, 2)
    for i in range(n):
        for h in range(2):
            a, b = fr(x[2 * i + h]), fr(y[2 * i + h])
            xa, yb = np.float64(x[2 * i + h]), np.float64(y[2 * i + h])
            assert bits(out[i, 0, h]) == bits(round_exact(a * b + a, "f16", zero=xa * yb + xa))
            assert bits(out[i, 1, h]) == bits(round_exact(a * b, "f16", zero=xa * yb))


@pytest.mark.parametrize("arch", ARCHES)
def test_bf16_ops(arch):
    rng = np.random.default_rng(42)
    n = 100
    xa = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))).astype(np.float32)
    ya = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))).astype(np.float32)
    x = (xa.view(np.uint32) >> 16).astype(np.uint16)
    y = (ya.view(np.uint32) >> 16).astype(np.uint16)
    r = Rig()
    po, pa, pb = r.buf(nbytes=6 * n), r.buf(x), r.buf(y)
    r.run(fixture(arch, "half"), "bf16_ops", [po, pa, pb, n], grid=(1,), block=(128,))
    out = r.get(po, np.uint16, 3 * n).reshape(n, 3)
    for i in range(n):
        a, b = bf16_value(x[i]), bf16_value(y[i])
        assert [int(v) for v in out[i]] == [round_bf16(a + b), round_bf16(a * b), round_bf16(a * b + a)], i


@pytest.mark.parametrize("arch", ARCHES)
def test_float_to_half_and_bf16_round_to_nearest_even(arch):
    rng = np.random.default_rng(43)
    n = 120
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 20, n))).astype(np.float32)
    x[:4] = [np.float32(65520.0), np.float32(1 + 2 ** -11), np.float32(2.0 ** -25), np.float32(-0.0)]
    r = Rig()
    ph, pbf, pback, px = r.buf(nbytes=2 * n), r.buf(nbytes=2 * n), r.buf(nbytes=4 * n), r.buf(x)
    r.run(fixture(arch, "half"), "half_convert", [ph, pbf, pback, px, n], grid=(1,), block=(128,))
    h, bf, back = r.get(ph, np.float16, n), r.get(pbf, np.uint16, n), r.get(pback, np.float32, n)
    for i in range(n):
        q = fr(x[i])
        ref_h = round_exact(q, "f16", zero=x[i]) if abs(q) < 65520 else np.float16(np.copysign(np.inf, x[i]))
        ref_b = round_bf16(q, zero=x[i])
        assert bits(h[i]) == bits(ref_h) and int(bf[i]) == ref_b, i
        if np.isfinite(ref_h):
            assert bits(back[i]) == bits(round_exact(fr(ref_h) + bf16_value(ref_b), "f32",
                                                    zero=np.float64(ref_h) + float(bf16_value(ref_b)) *
                                                    (-1.0 if ref_b & 0x8000 else 1.0))), i


def _sat_int(v, lo, hi):
    return lo if v <= lo else hi if v >= hi else v


@pytest.mark.parametrize("arch", ARCHES)
def test_conversions_round_and_saturate(arch):
    rng = np.random.default_rng(44)
    n = 64
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-3, 40, n))).astype(np.float32)
    x[:8] = [2.5, -2.5, 3.5, -0.5, np.inf, -np.inf, np.nan, 3e9]
    xd = rng.standard_normal(n) * np.exp2(rng.integers(-140, 140, n))
    xl = rng.integers(-2 ** 63, 2 ** 63 - 1, n, dtype=np.int64)
    r = Rig()
    oi, ou, ol = r.buf(nbytes=16 * n), r.buf(nbytes=4 * n), r.buf(nbytes=16 * n)
    of, od = r.buf(nbytes=16 * n), r.buf(nbytes=8 * n)
    px, pxd, pxl = r.buf(x), r.buf(xd), r.buf(xl)
    r.run(fixture(arch, "convert"), "convert", [oi, ou, ol, of, od, px, pxd, pxl, n], grid=(1,), block=(64,))
    I = r.get(oi, np.int32, 4 * n).reshape(n, 4)
    U = r.get(ou, np.uint32, n)
    L = r.get(ol, np.int64, 2 * n).reshape(n, 2)
    Fo = r.get(of, np.float32, 4 * n).reshape(n, 4)
    D = r.get(od, np.float64, n)
    import math
    from fractions import Fraction
    for i in range(n):
        v = float(x[i])
        if math.isnan(v):
            assert I[i].tolist() == [0, 0, 0, 0] and U[i] == 0 and L[i, 0] == 0
        else:
            q = Fraction(v) if math.isfinite(v) else None
            def rnd(mode):
                if q is None:
                    return v
                if mode == "rn":
                    fl = math.floor(q)
                    d = q - fl
                    return fl + (1 if d > Fraction(1, 2) or (d == Fraction(1, 2) and fl % 2) else 0)
                return {"rz": math.trunc(q), "rd": math.floor(q), "ru": math.ceil(q)}[mode]
            lim32 = (-2 ** 31, 2 ** 31 - 1)
            assert I[i].tolist() == [_sat_int(rnd(m), *lim32) for m in ("rn", "rz", "rd", "ru")], i
            assert int(U[i]) == _sat_int(rnd("rn"), 0, 2 ** 32 - 1), i
            assert int(L[i, 0]) == _sat_int(rnd("rz"), -2 ** 63, 2 ** 63 - 1), i
        qd = fr(xd[i])
        fd = math.floor(qd)
        dd = qd - fd
        assert int(L[i, 1]) == _sat_int(fd + (1 if dd > Fraction(1, 2) or (dd == Fraction(1, 2) and fd % 2) else 0),
                                      -2 ** 63, 2 ** 63 - 1)
        assert bits(Fo[i, 0]) == bits(round_exact(qd, "f32", "rn")), i
        assert bits(Fo[i, 1]) == bits(round_exact(qd, "f32", "rz")), i
        assert bits(Fo[i, 2]) == bits(round_exact(Fraction(int(xl[i])), "f32", "rn")), i
        lo32 = int(np.array(xl[i]).astype(np.int32))
        assert bits(Fo[i, 3]) == bits(round_exact(Fraction(lo32), "f32", "rz")), i
        if math.isfinite(v):
            as_f64 = round_exact(Fraction(int(xl[i])), "f64")        # (double)xl, then + (double)v
            assert bits(D[i]) == bits(round_exact(fr(as_f64) + Fraction(v), "f64")), i
