"""erf and erfc for double (gtmath.h) through `gputwin cc` on the emulator: within OpenCL C 3.0's 16 ulp of
40-digit references (erf's Taylor series below 3, erfc's continued fraction above, in Python's decimal), over
every branch of the implementation (the Taylor series, the erfcx table's rows, the continued fraction, the
subnormal tail) and random bit patterns; the special values exactly."""
import math
from decimal import Decimal, localcontext

import numpy as np
import pytest

from tests.cc.test_math import _run, double_ulps, N

_SQRT_PI = Decimal("1.77245385090551602729816748334114518279754945612238712821380779")


def _erf_series(x: Decimal) -> Decimal:
    total, term, n = Decimal(0), x, 0
    while abs(term) > Decimal(10) ** -70 * abs(x) or n < 3:
        total += term / (2 * n + 1)
        n += 1
        term *= -x * x / n
    return 2 / _SQRT_PI * total


def _erfc_cf(x: Decimal) -> Decimal:
    """erfc(x), x >= 3: e^-x^2 / sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))) to 400 terms."""
    t = x
    for k in range(400, 0, -1):
        t = x + Decimal(k) / 2 / t
    return (-x * x).exp() / _SQRT_PI / t


def erf_refs(xs) -> tuple[np.ndarray, np.ndarray]:
    """erf and erfc of each float64 x, correctly rounded from 40+ digits (as long doubles)."""
    erf, erfc = [], []
    with localcontext() as ctx:
        ctx.prec = 90
        for x in np.asarray(xs, np.float64).tolist():
            if math.isnan(x) or math.isinf(x) or x == 0:
                erf.append(math.copysign(1.0, x) if math.isinf(x) else x)
                erfc.append((0.0 if x > 0 else 2.0) if math.isinf(x) else 1.0 if x == 0 else x)
                continue
            d, a = Decimal(x), Decimal(abs(x))
            c = _erfc_cf(a) if a >= 3 else 1 - _erf_series(a)       # erfc(|x|)
            erf.append(float(_erf_series(d)) if a < 1 else math.copysign(float(1 - c), x))
            erfc.append(float(c if x >= 0 else 2 - c) if a >= 1 or x >= 0 else float(1 - _erf_series(d)))
    return np.array(erf, np.longdouble), np.array(erfc, np.longdouble)


SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 28.0, 30.0, -30.0, 1e-300, -1e-300, 5e-324, 27.2, 26.5, 0.75, 3.25]


@pytest.mark.parametrize("arch", ["gfx1100"])
def test_double_erf_erfc_within_opencl_bounds(toolchain, devices, rng, arch):
    q = (N - len(SPECIAL)) // 4
    xs = np.concatenate([SPECIAL, rng.uniform(-6, 6, q), rng.uniform(0, 27.3, q), rng.uniform(-1, 1, q),
                         rng.integers(0, 1 << 63, N, dtype=np.uint64).view(np.float64) * 1e-300])[:N]
    xs = np.where(rng.random(N) < 0.5, xs, -xs)
    xs[:len(SPECIAL)] = SPECIAL
    got = _run(devices(arch), arch, ["erf", "erfc"], np.concatenate([xs, xs]))
    erf, erfc = erf_refs(xs)
    measured = {}
    for name, g, w in (("erf", got[0], erf), ("erfc", got[1], erfc)):
        with np.errstate(all="ignore"):
            u = double_ulps(g, w)
        measured[name] = u.max()
        assert u.max() <= 16, f"{name}({xs[np.argmax(u)]!r}): {u.max()} ulp (OpenCL: 16)"
        exact = slice(0, 11)                                  # the special values, bit for bit
        same = (g[exact].view(np.uint64) == w[exact].astype(np.float64).view(np.uint64)) | np.isnan(g[exact])
        assert same.all() and np.isnan(g[4]), (name, g[exact], w[exact])
    print("max ulp:", {k: round(float(v), 2) for k, v in measured.items()})
