"""nvcc fixtures (fixtures/nv): elementwise float, correctly rounded division and sqrt, directed rounding.
Each result is compared bit for bit with an exact rational reference (tests/emu/nv/ptx/rig.py)."""
import numpy as np
import pytest

from tests.emu.nv.ptx.rig import ARCHES, Rig, bits, fixture, fr, round_exact, sqrt_exact


def _inputs(seed, n):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))).astype(np.float32)
    y = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))).astype(np.float32)
    x[:4] = [0.0, -0.0, 1e-45, 3.4e38]
    y[:4] = [-0.0, -0.0, 1e-45, 3.4e38]
    return x, y


@pytest.mark.parametrize("arch", ARCHES)
def test_saxpy_fma_rounds_once(arch):
    n = 300
    x, y = _inputs(1, n)
    a = np.float32(1.0000001)
    r = Rig()
    py, px = r.buf(y), r.buf(x)
    c = r.run(fixture(arch, "elementwise"), "saxpy", [py, px, a, n], grid=(2,), block=(256,))
    # an exact zero sum keeps the IEEE sign rule, which float64 evaluates exactly for zero terms
    ref = np.array([round_exact(fr(a) * fr(xi) + fr(yi), zero=np.float64(a) * xi + yi)
                    for xi, yi in zip(x, y)], np.float32)
    assert (bits(r.get(py, np.float32, n)) == bits(ref)).all()
    assert c.warps == 16 and c.warp_insts > 16


@pytest.mark.parametrize("arch", ARCHES)
def test_ew_mix_matches_ieee_float32(arch):
    n = 200
    x, y = _inputs(2, n)
    x, y = x[4:], y[4:]       # no signed zeros / overflow: numpy's min/max and NaN differ from PTX there
    n -= 4
    r = Rig()
    po, pa, pb = r.buf(nbytes=4 * n), r.buf(x), r.buf(y)
    r.run(fixture(arch, "elementwise"), "ew_mix", [po, pa, pb, n], grid=(1,), block=(256,))
    with np.errstate(all="ignore"):
        s = (x + y) * np.float32(0.5) - x * y
        m = np.maximum(s, np.minimum(x, y))
        ref = np.where(m > 0, m, -m).astype(np.float32)
    assert (bits(r.get(po, np.float32, n)) == bits(ref)).all()


@pytest.mark.parametrize("arch", ARCHES)
def test_division_and_sqrt_are_correctly_rounded(arch):
    n = 160
    x, y = _inputs(3, n)
    x = np.abs(x)
    x[4:8] = [1e-40, 2.0, 3.0, 1e-38]           # subnormal and exact cases
    y[4:8] = [3.0, 3.0, 7.0, 1e30]
    r = Rig()
    pq, ps, pa, pb = r.buf(nbytes=4 * n), r.buf(nbytes=4 * n), r.buf(x), r.buf(y)
    r.run(fixture(arch, "elementwise"), "div_sqrt", [pq, ps, pa, pb, n], grid=(1,), block=(256,))
    q = r.get(pq, np.float32, n)
    s = r.get(ps, np.float32, n)
    for i in range(n):
        if y[i] != 0 and x[i] != 0:
            assert bits(q[i]) == bits(round_exact(fr(x[i]) / fr(y[i]))), i
        if x[i] > 0:
            assert bits(s[i]) == bits(sqrt_exact(x[i])), i


@pytest.mark.parametrize("arch", ARCHES)
def test_f64_division_and_sqrt_are_correctly_rounded(arch):
    n = 64
    rng = np.random.default_rng(4)
    a = np.abs(rng.standard_normal(n)) * np.exp2(rng.integers(-300, 300, n)).astype(np.float64)
    b = rng.standard_normal(n) * np.exp2(rng.integers(-300, 300, n))
    r = Rig()
    pq, ps, pa, pb = r.buf(nbytes=8 * n), r.buf(nbytes=8 * n), r.buf(a), r.buf(b)
    r.run(fixture(arch, "elementwise"), "div_sqrt_f64", [pq, ps, pa, pb, n], grid=(1,), block=(64,))
    q, s = r.get(pq, np.float64, n), r.get(ps, np.float64, n)
    for i in range(n):
        assert bits(q[i]) == bits(round_exact(fr(a[i]) / fr(b[i]), "f64")), i
        assert bits(s[i]) == bits(sqrt_exact(a[i], "f64")), i


@pytest.mark.parametrize("arch", ARCHES)
def test_directed_rounding_intrinsics(arch):
    n = 96
    x, y = _inputs(5, n)
    y[y == 0] = 1.5
    r = Rig()
    po, pa, pb = r.buf(nbytes=32 * n), r.buf(x), r.buf(y)
    r.run(fixture(arch, "elementwise"), "rounding_f32", [po, pa, pb, n], grid=(1,), block=(128,))
    out = r.get(po, np.float32, 8 * n).reshape(n, 8)
    big = fr(np.finfo(np.float32).max)
    for i in range(n):
        a, b = fr(x[i]), fr(y[i])
        exact = [a + b, a + b, a + b, a * b, a * b, a * b, a * b + a, a / b]
        modes = ["rz", "rm", "rp", "rz", "rm", "rp", "rz", "rm"]
        for j, (e, mo) in enumerate(zip(exact, modes)):
            if abs(e) >= big:
                continue
            if e == 0:
                continue                          # zero signs are tested in test_float.py
            assert bits(out[i, j]) == bits(round_exact(e, "f32", mo)), (i, j)


@pytest.mark.parametrize("arch", ARCHES)
def test_approx_intrinsics_follow_their_documented_implementation(arch):
    # fidelity "approximate": ex2/sin/cos/rsqrt/lg2 .approx are the float64 function rounded once to f32;
    # div.approx.f32 is a * (1/b) with each step rounded to f32 (docs/ptx-emulator.md)
    rng = np.random.default_rng(6)
    n = 64
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    r = Rig()
    po, px = r.buf(nbytes=24 * n), r.buf(x)
    r.run(fixture(arch, "approx"), "approx", [po, px, n], grid=(1,), block=(64,))
    out = r.get(po, np.float32, 6 * n).reshape(n, 6)
    x64 = x.astype(np.float64)
    e_in = (x * np.float32(1.4426950216293335)).astype(np.float64)     # mul.f32 by 0f3FB8AA3B first
    ref = np.stack([np.exp2(e_in), np.sin(x64), np.cos(x64), 1 / np.sqrt(np.abs(x64)),
                    np.float32(1.5) * (np.float32(1) / x), np.log2(np.abs(x64))], axis=1).astype(np.float32)
    assert (bits(out) == bits(ref)).all()
