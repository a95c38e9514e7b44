"""lgamma, lgamma_r and tgamma of gputwin's device library (gtmath.h), float and double, through `gputwin cc`
on the emulator: against 50-digit references (Stirling's series in Python's decimal, shifted up to x >= 50,
the reflection formula below 0), and exactly the special values of OpenCL C 3.0 section 7.5.1 / C99 F.9.5."""
import math
from decimal import Decimal, localcontext

import numpy as np
import pytest

from gputwin import cc
from tests.cc.conftest import float_ulps
from tests.cc.test_math import double_ulps
from tests.cc.test_math_pi import _sincospi
from tests.cc.test_math_rem import _reference as _remainder_ref

N = 512
LANES = 64
# Bernoulli numbers' Stirling terms B_2k / (2k (2k-1)), k = 1..12
_STIRLING = [(1, 12), (-1, 360), (1, 1260), (-1, 1680), (1, 1188), (-691, 360360), (1, 156), (-3617, 122400),
             (43867, 244188), (-174611, 125400), (77683, 5796), (-236364091, 1506960)]
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")


def _sin_pi(x: Decimal) -> Decimal:
    n = x.to_integral_value()
    r, term, total = _PI * (x - n), None, Decimal(0)
    term = r
    for k in range(1, 60, 2):
        total += term
        term *= -r * r / ((k + 1) * (k + 2))
    return -total if n % 2 else total


def _lgamma(d: Decimal) -> tuple[Decimal, int]:
    """log|Gamma(d)| and Gamma's sign; d not a pole, the context's precision set by the caller."""
    if d < 0:
        s = _sin_pi(d)
        lg, _ = _lgamma(-d)
        return _PI.ln() - abs(d * s).ln() - lg, (1 if s > 0 else -1)
    y, prod = d, Decimal(1)
    while y < 50:
        prod *= y
        y += 1
    t = (y - Decimal("0.5")) * y.ln() - y + (2 * _PI).ln() / 2
    t += sum(Decimal(a) / b / y ** (2 * k + 1) for k, (a, b) in enumerate(_STIRLING))
    return t - prod.ln(), 1


def gamma_refs(xs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """lgamma, Gamma's sign and tgamma of each x to 50 digits, rounded to float64 (poles, infinities, NaN:
    the special-value table's results)."""
    lg, sign, tg = [], [], []
    with localcontext() as ctx:
        ctx.prec = 50
        for x in np.asarray(xs, np.float64).tolist():
            if math.isnan(x) or math.isinf(x) or (x <= 0 and x == int(x)):
                pole = not math.isnan(x)
                lg.append(math.inf if pole else math.nan)
                sign.append((-1 if math.copysign(1, x) < 0 else 1) if x == 0 else int(x == math.inf))
                tg.append(math.copysign(math.inf, x) if x == 0 or x == math.inf else math.nan)
                continue
            v, s = _lgamma(Decimal(x)) if x not in (1.0, 2.0) else (Decimal(0), 1)   # exactly 0 there
            lg.append(float(v))
            sign.append(s)
            tg.append(s * (math.inf if v > 1000 else 0.0 if v < -1000 else float(v.exp())))
    return np.array(lg), np.array(sign, np.int32), np.array(tg)


KERNEL = """
__kernel void f(__global T *o, __global int *sign, __global const T *x) {
  for (size_t e = get_global_id(0); e < N; e += LANES) {
    int s;
    o[e] = lgamma(x[e]);
    o[N + e] = tgamma(x[e]);
    o[2 * N + e] = lgamma_r(x[e], &s);
    sign[e] = s;
  }
  for (size_t e = get_global_id(0); e < N / 4; e += LANES) {   /* the vector overloads */
    int4 s4;
    vstore4(lgamma_r(vload4(e, x), &s4), e, o + 3 * N);
    vstore4(s4, e, sign + N);
    vstore4(tgamma(vload4(e, x)), e, o + 4 * N);
  }
}
"""
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 2.0, -1.0, -2.0, -3.0, -1e30, 3.0, 0.5, -0.5, 1e-30, -1e-30]


def _run(dev, arch, x):
    t = "float" if x.dtype == np.float32 else "double"
    src = f"#define T {t}\n#define N {N}\n#define LANES {LANES}\n" + KERNEL
    bo, bs, bx = dev.alloc(5 * x.nbytes), dev.alloc(2 * N * 4), dev.alloc(x.nbytes)
    dev.copyin(bx, x)
    dev.load(cc.compile_source(src, "opencl", arch), "f")(bo, bs, bx, grid=1, block=LANES)
    got, sign = np.empty((5, N), x.dtype), np.empty((2, N), np.int32)
    dev.copyout(got, bo)
    dev.copyout(sign, bs)
    dev.synchronize()
    return got, sign


def _inputs(rng, dtype, hi):
    """Special values, (0, 3] and (-hi, hi) densely, random bit patterns."""
    q = (N - len(SPECIAL)) // 4
    ubits = np.uint32 if dtype == np.float32 else np.uint64
    bits = rng.integers(0, np.iinfo(ubits).max, N, dtype=ubits).view(dtype)
    with np.errstate(over="ignore"):
        parts = [np.array(SPECIAL, dtype), rng.uniform(0, 3, q), np.linspace(-hi, hi, q), rng.uniform(-hi, hi, q),
                 bits]
        return np.concatenate(parts).astype(dtype)[:N]


EXACT = 11       # SPECIAL[:EXACT]: C99 F.9.5's table (lgamma(1) = lgamma(2) = +0, tgamma(-0) = -inf, poles ...)


def _check_signs_and_specials(x, got, sign, want_sign, lg, tg):
    """Signs, the special values bit for bit, lgamma_r and the vector forms the same as the scalar ones."""
    for row, want in ((0, lg), (1, tg)):
        g, w = got[row][:EXACT], want[:EXACT].astype(x.dtype)
        same = (g.view(np.uint8).reshape(EXACT, -1) == w.view(np.uint8).reshape(EXACT, -1)).all(1)
        bad = ~(same | (np.isnan(g) & np.isnan(w)))
        assert not bad.any(), list(zip(x[:EXACT][bad], g[bad], w[bad]))
    pole = np.isinf(got[0]) | np.isnan(got[0])
    assert np.array_equal(sign[0], want_sign) and np.array_equal(sign[1][:N // 4], want_sign[:N // 4])
    assert np.array_equal(got[0].view(np.uint8), got[2].view(np.uint8))            # lgamma_r is lgamma
    assert np.array_equal(got[3][:N // 4].view(np.uint8), got[0][:N // 4].view(np.uint8))    # vectors elementwise
    assert np.array_equal(got[4][:N // 4].view(np.uint8), got[1][:N // 4].view(np.uint8))
    assert pole.sum() > 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gamma_functions(toolchain, devices, rng, dtype):
    """float: correctly rounded on every input here; double: tgamma within OpenCL's 16 ulp (3 measured),
    lgamma (no OpenCL bound) within 8 ulp for x >= 0 and, below 0 where log pi - log|x sin(pi x)|
    - lgamma(-x) cancels near lgamma's zeros, within 2^-50 of max(1, |lgamma|)."""
    single = dtype == np.float32
    x = _inputs(rng, dtype, 45 if single else 180)
    got, sign = _run(devices("gfx1100"), "gfx1100", x)
    lg, want_sign, tg = gamma_refs(x)
    _check_signs_and_specials(x, got, sign, want_sign, lg, tg)
    ulps = float_ulps if single else lambda g, w: double_ulps(g, w.astype(np.longdouble))
    with np.errstate(all="ignore"):
        u_lg, u_tg = ulps(got[0], lg), ulps(got[1], tg)
        w = lg.astype(dtype)
        err = np.where(np.isfinite(w), np.abs(got[0] - w) / np.maximum(1.0, np.abs(w)), 0.0)
    pos = ~(x < 0)
    print(f"max ulp: tgamma {u_tg.max():.2f}, lgamma {u_lg[pos].max():.2f} (x >= 0), {u_lg.max():.2f} (all); "
          f"lgamma's largest error relative to max(1, |lgamma|): {err.max():.3g}")
    assert u_tg.max() <= (1 if single else 16), f"tgamma at {x[np.argmax(u_tg)]!r}: {u_tg.max()} ulp"
    assert u_lg[pos].max() <= (1 if single else 8), f"lgamma at {x[pos][np.argmax(u_lg[pos])]!r}"
    assert u_lg.max() <= 1 if single else err.max() <= 2.0 ** -50, f"lgamma at {x[np.argmax(err)]!r}"


HIP_KERNEL = r"""
#include <hip/hip_runtime.h>
__global__ void f(float *o, double *d, int *q, const float *x, const float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i];
  double da = a, db = b;
  o[i] = fmodf(a, b); o[n + i] = remainderf(a, b); o[2 * n + i] = remquof(a, b, &q[i]);
  o[3 * n + i] = lgammaf(a); o[4 * n + i] = tgammaf(a); o[5 * n + i] = sinpif(a); o[6 * n + i] = cospif(a);
  d[5 * n + i] = sinpi(da); d[6 * n + i] = cospi(da);
  d[i] = fmod(da, db); d[n + i] = remainder(da, db); d[2 * n + i] = remquo(da, db, &q[n + i]);
  d[3 * n + i] = lgamma(da); d[4 * n + i] = tgamma(da);
}
"""


def test_hip_names_reach_the_same_functions(toolchain, devices, rng):
    """HIP's fmodf remainderf remquof lgammaf tgammaf sinpif cospif and their double forms."""
    n = 128
    x = np.concatenate([[1.0, 2.0, -0.0, 5.5, -3.0], rng.uniform(-30, 30, n - 5)]).astype(np.float32)
    y = np.concatenate([[0.0, 3.0, 1.0, 2.0, np.inf], rng.uniform(-5, 5, n - 5)]).astype(np.float32)
    dev = devices("gfx1100")
    bo, bd, bq, bx, by = dev.alloc(28 * n), dev.alloc(56 * n), dev.alloc(8 * n), dev.alloc(4 * n), dev.alloc(4 * n)
    dev.copyin(bx, x)
    dev.copyin(by, y)
    dev.load(cc.compile_source(HIP_KERNEL, "hip", "gfx1100"), "f")(bo, bd, bq, bx, by, n, grid=n // 64, block=64)
    got, gotd, quo = np.empty((7, n), np.float32), np.empty((7, n)), np.empty((2, n), np.int32)
    for buf, arr in ((bo, got), (bd, gotd), (bq, quo)):
        dev.copyout(arr, buf)
    dev.synchronize()
    lg, _, tg = gamma_refs(x)
    refs = [[_remainder_ref(a, b, nearest) for a, b in zip(x.tolist(), y.tolist())] for nearest in (False, True)]
    want = np.array([[r for r, _ in refs[0]], [r for r, _ in refs[1]], [r for r, _ in refs[1]]])
    want_q = np.array([q if q is not None else 0 for _, q in refs[1]])
    for res, dtype in ((got, np.float32), (gotd, np.float64)):   # the float arguments are exact in double
        w = want.astype(dtype)
        assert np.array_equal(res[:3].view(np.uint8), w.view(np.uint8)) or \
            np.all((res[:3] == w) & (np.signbit(res[:3]) == np.signbit(w)) | (np.isnan(res[:3]) & np.isnan(w)))
        assert np.array_equal(quo[0][1:], want_q[1:]) and np.array_equal(quo[1][1:], want_q[1:])
    with np.errstate(all="ignore"):
        assert float_ulps(got[3], lg).max() <= 0.5 and float_ulps(got[4], tg).max() <= 0.5
        u = double_ulps(gotd[3], lg.astype(np.longdouble)); u[x < 0] = 0
        assert u.max() <= 4, (x[np.argmax(u)], u.max())   # x < 0: tested above
        assert double_ulps(gotd[4], tg.astype(np.longdouble)).max() <= 4
        sin_pi, cos_pi = _sincospi(x)
        assert float_ulps(got[5], sin_pi.astype(np.float64)).max() <= 0.5
        assert float_ulps(got[6], cos_pi.astype(np.float64)).max() <= 0.5
        assert double_ulps(gotd[5], sin_pi).max() <= 4 and double_ulps(gotd[6], cos_pi).max() <= 4
