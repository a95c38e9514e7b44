"""The *pi functions of gputwin's device library (gtmath.h): sinpi cospi tanpi asinpi acospi atanpi atan2pi,
float and double, through `gputwin cc` on the emulator: within OpenCL C 3.0's bounds of long-double
references (x reduced exactly to k/2 + r before sin(pi r), so huge arguments are exact), and the special values of
section 7.5.1 bit for bit."""
import numpy as np
import pytest

from tests.cc.conftest import float_ulps
from tests.cc.test_math import N, _double_sweep, _run, _sweep, double_ulps

PI = np.longdouble("3.14159265358979323846264338327950288")


def _sincospi(x):
    """sin(pi x), cos(pi x) in long double: x mod 4 = k/2 + r exactly (|r| <= 1/4), the quadrant k mod 4."""
    x = np.fmod(np.asarray(x, np.float64), 4)          # exact; the period is 2
    with np.errstate(invalid="ignore"):
        k = np.round(2 * x)
        r = (x - k / 2).astype(np.longdouble)
        q = np.fmod(k, 4) % 4
    s, c = np.sin(PI * r), np.cos(PI * r)
    q = np.nan_to_num(q).astype(int)
    return np.choose(q, [s, c, -s, -c]) + 0, np.choose(q, [c, -s, -c, s]) + 0


REFS = {   # name: (long-double reference, float bound, double bound, arity)
    "sinpi": (lambda x: _sincospi(x)[0], 4, 4, 1), "cospi": (lambda x: _sincospi(x)[1], 4, 4, 1),
    "tanpi": (lambda x: np.divide(*_sincospi(x)), 6, 6, 1), "asinpi": (lambda x: np.arcsin(x) / PI, 5, 5, 1),
    "acospi": (lambda x: np.arccos(x) / PI, 5, 5, 1), "atanpi": (lambda x: np.arctan(x) / PI, 5, 5, 1),
    "atan2pi": (lambda y, x: np.arctan2(y, x) / PI, 6, 6, 2),
}
RANGES = {"sinpi": 8, "cospi": 8, "tanpi": 8, "asinpi": 1, "acospi": 1, "atanpi": 30, "atan2pi": 10}


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs x87 long double references (64-bit significand)")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pi_functions_within_opencl_bounds(toolchain, devices, rng, dtype):
    dev = devices("gfx1100")
    sweep = _sweep if dtype == np.float32 else _double_sweep
    measured = {}
    for arity in (1, 2):
        names = [n for n, v in REFS.items() if v[3] == arity]
        xs = np.stack([sweep(rng, -RANGES[n], RANGES[n]) for n in names]).astype(dtype)
        ins = [xs.reshape(-1)] + ([np.stack([rng.permutation(x) for x in xs]).reshape(-1)] if arity == 2 else [])
        got = _run(dev, "gfx1100", names, *ins)
        for k, name in enumerate(names):
            args = [a.reshape(len(names), N)[k] for a in ins]
            with np.errstate(all="ignore"):
                want = REFS[name][0](*[a.astype(np.longdouble) for a in args])
                u = float_ulps(got[k], want.astype(np.float64)) if dtype == np.float32 else double_ulps(got[k], want)
            measured[name] = float(u.max())
            bound = REFS[name][1 if dtype == np.float32 else 2]
            assert u.max() <= bound, f"{name}{tuple(a[np.argmax(u)] for a in args)}: {u.max()} ulp"
    print("max ulp:", {k: round(v, 2) for k, v in measured.items()})


INF, NAN = np.inf, np.nan
SPECIAL = [  # (function, x, y, exact result), OpenCL C 3.0 section 7.5.1
    ("sinpi", 0.0, 0, 0.0), ("sinpi", -0.0, 0, -0.0), ("sinpi", 3.0, 0, 0.0), ("sinpi", -3.0, 0, -0.0),
    ("sinpi", INF, 0, NAN), ("sinpi", 0.5, 0, 1.0), ("sinpi", -1.5, 0, 1.0), ("sinpi", 2.0 ** 60, 0, 0.0),
    ("cospi", 0.5, 0, 0.0), ("cospi", -2.5, 0, 0.0), ("cospi", 0.0, 0, 1.0), ("cospi", -0.0, 0, 1.0),
    ("cospi", 1.0, 0, -1.0), ("cospi", -INF, 0, NAN), ("cospi", 2.0 ** 60, 0, 1.0),
    ("tanpi", 0.0, 0, 0.0), ("tanpi", -0.0, 0, -0.0), ("tanpi", 2.0, 0, 0.0), ("tanpi", -2.0, 0, -0.0),
    ("tanpi", 3.0, 0, -0.0), ("tanpi", -3.0, 0, 0.0), ("tanpi", 0.5, 0, INF), ("tanpi", 1.5, 0, -INF),
    ("tanpi", -0.5, 0, -INF), ("tanpi", -1.5, 0, INF), ("tanpi", INF, 0, NAN),
    ("asinpi", -0.0, 0, -0.0), ("asinpi", 1.0, 0, 0.5), ("asinpi", -1.0, 0, -0.5), ("asinpi", 2.0, 0, NAN),
    ("acospi", 1.0, 0, 0.0), ("acospi", -1.0, 0, 1.0), ("acospi", 0.0, 0, 0.5), ("acospi", -2.0, 0, NAN),
    ("atanpi", -0.0, 0, -0.0), ("atanpi", INF, 0, 0.5), ("atanpi", -INF, 0, -0.5), ("atanpi", 1.0, 0, 0.25),
    ("atan2pi", 0.0, -0.0, 1.0), ("atan2pi", -0.0, -0.0, -1.0), ("atan2pi", 0.0, 0.0, 0.0),
    ("atan2pi", -0.0, 0.0, -0.0), ("atan2pi", -0.0, -3.0, -1.0), ("atan2pi", 0.0, 3.0, 0.0),
    ("atan2pi", -2.0, 0.0, -0.5), ("atan2pi", 2.0, -0.0, 0.5), ("atan2pi", 1.0, -INF, 1.0),
    ("atan2pi", -1.0, -INF, -1.0), ("atan2pi", 1.0, INF, 0.0), ("atan2pi", -1.0, INF, -0.0),
    ("atan2pi", INF, 5.0, 0.5), ("atan2pi", -INF, -INF, -0.75), ("atan2pi", INF, INF, 0.25),
    ("atan2pi", NAN, 1.0, NAN), ("atan2pi", 1.0, 1.0, 0.25),
]


@pytest.mark.parametrize("t", ["float", "double"])
def test_pi_special_values_exactly(toolchain, devices, t):
    from gputwin import cc
    dtype = np.float32 if t == "float" else np.float64
    lines = [f"  o[{k}] = {fn}(a[{k}]{', b[%d]' % k if fn == 'atan2pi' else ''});" for k, (fn, *_) in enumerate(SPECIAL)]
    src = (f"__kernel void f(__global {t} *o, __global const {t} *a, __global const {t} *b) {{\n"
           "  if (get_global_id(0) == 0) {\n" + "\n".join(lines) + "\n  }\n}\n")
    dev = devices("gfx1100")
    a, b = (np.array([s[i] for s in SPECIAL], dtype) for i in (1, 2))
    want = np.array([s[3] for s in SPECIAL], dtype)
    ba, bb, bo = dev.alloc(a.nbytes), dev.alloc(b.nbytes), dev.alloc(a.nbytes)
    dev.copyin(ba, a)
    dev.copyin(bb, b)
    dev.load(cc.compile_source(src, "opencl", "gfx1100"), "f")(bo, ba, bb, grid=1, block=1)
    got = np.empty_like(want)
    dev.copyout(got, bo)
    dev.synchronize()
    bad = [(SPECIAL[k][:3], got[k], want[k]) for k in range(len(want))
           if not (np.isnan(got[k]) and np.isnan(want[k])) and got[k:k + 1].tobytes() != want[k:k + 1].tobytes()]
    assert not bad, bad
