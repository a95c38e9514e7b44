"""gputwin's transcendental functions (gtmath.h) for float, through `gputwin cc` on the emulator: within
OpenCL C 3.0's full-profile ulp bounds (section 7.4) of float64 references over dense sweeps, random bit
patterns (subnormals, huge arguments, infinities, NaNs), and exactly the special values of section 7.5.1 /
C99 Annex F."""
import math

import numpy as np
import pytest

from gputwin import cc
from tests.cc.conftest import float_ulps

LANES = 64
N = 1024                     # inputs per function (the emulator runs ~1 s per 4096 of them)

UNARY = {   # name: (float64 reference, OpenCL's bound in ulp, (lo, hi) of the dense sweep)
    "sin": (np.sin, 4, (-40, 40)), "cos": (np.cos, 4, (-40, 40)), "tan": (np.tan, 4, (-40, 40)),
    "asin": (np.arcsin, 4, (-1, 1)), "acos": (np.arccos, 4, (-1, 1)), "atan": (np.arctan, 5, (-30, 30)),
    "sinh": (np.sinh, 4, (-90, 90)), "cosh": (np.cosh, 4, (-90, 90)), "tanh": (np.tanh, 5, (-12, 12)),
    "asinh": (np.arcsinh, 4, (-50, 50)), "acosh": (np.arccosh, 4, (1, 50)), "atanh": (np.arctanh, 5, (-1, 1)),
    "expm1": (np.expm1, 3, (-20, 89)), "log1p": (np.log1p, 2, (-1, 50)), "exp10": (lambda x: 10.0 ** x, 3, (-45, 39)),
    "cbrt": (np.cbrt, 2, (-1000, 1000)), "erf": (np.vectorize(math.erf), 16, (-5, 5)),
    "erfc": (np.vectorize(math.erfc), 16, (-5, 11)),
}
BINARY = {  # name: (reference of float64 x, y, bound, x range, y range)
    "atan2": (np.arctan2, 6, (-10, 10), (-10, 10)), "hypot": (np.hypot, 4, (-1e5, 1e5), (-1e5, 1e5)),
    "pow": (np.power, 16, (0, 20), (-30, 30)), "powr": (np.power, 16, (0, 20), (-30, 30)),
}
INT_ARG = {  # name: (reference of float64 x and int n, bound, x range, n range)
    "pown": (lambda x, n: np.power(x, n.astype(np.float64)), 16, (-10, 10), (-40, 40)),
    "rootn": (lambda x, n: np.sign(x) * np.abs(x) ** (1.0 / n), 16, (-1e6, 1e6), (-9, 10)),
}
SPECIAL_ARGS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
                         1e-45, -1e-45, 1e-40, 3.4028235e38, -3.4028235e38, 1e30, -1e30, 1.5707964, 3.1415927,
                         4.7123890, 6.2831855, 1e-7, 123456.79, 1048576.0, 1048575.9, 16777216.0], np.float32)


def _sweep(rng, lo, hi, n=N) -> np.ndarray:
    """Edge values, a dense even sweep of [lo, hi], uniform random values in it, random float bit patterns."""
    q = n // 4
    parts = [SPECIAL_ARGS, np.linspace(lo, hi, q), rng.uniform(lo, hi, q),
             rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)]
    with np.errstate(invalid="ignore", over="ignore"):
        return np.concatenate(parts).astype(np.float32)[:n]


def _kernel(names, args, t: str = "float") -> str:
    """out[k*n + e] = name_k(x[k*n + e] (, y[k*n + e])), vectors of 4 for the even-numbered functions."""
    lines = []
    for k, name in enumerate(names):
        call = ", ".join(f"{a}{{i}}" for a in args)
        if k % 2:
            body = f"o[{k * N} + e] = {name}({call.format(i=f'[{k * N} + e]')});"
            lines.append(f"  for (size_t e = i; e < {N}; e += {LANES}) {{ {body} }}")
        else:
            v = ", ".join(f"vload4(e, {a} + {k * N})" for a in args)
            lines.append(f"  for (size_t e = i; e < {N // 4}; e += {LANES}) vstore4({name}({v}), e, o + {k * N});")
    params = ", ".join(f"__global const {'int' if a == 'n' else t} *{a}" for a in args)
    return (f"__kernel void f(__global {t} *o, {params}) {{\n  size_t i = get_global_id(0);\n"
            + "\n".join(lines) + "\n}\n")


def _run(dev, arch, names, *inputs) -> np.ndarray:
    args = "xyz"[:len(inputs)] if not isinstance(inputs[-1][0], np.integer) else "x" + "n"
    t = {np.float32: "float", np.float64: "double"}[inputs[0].dtype.type]
    prg = dev.load(cc.compile_source(_kernel(names, args, t), "opencl", arch, wave64=True), "f")
    bufs = []
    for a in inputs:
        b = dev.alloc(a.nbytes)
        dev.copyin(b, a)
        bufs.append(b)
    out = np.empty(N * len(names), inputs[0].dtype)
    bo = dev.alloc(out.nbytes)
    prg(bo, *bufs, grid=1, block=LANES)
    dev.copyout(out, bo)
    dev.synchronize()
    return out.reshape(len(names), N)


def _check(name, got, want, bound, measured):
    u = float_ulps(got, want)
    worst = int(np.argmax(u))
    measured[name] = u.max()
    assert u.max() <= bound, f"{name}: {u.max():.2f} ulp at input #{worst} (got {got[worst]!r}, want {want[worst]!r})"


@pytest.mark.parametrize("arch", ["gfx1100"])
def test_unary_within_opencl_bounds(toolchain, devices, rng, arch):
    names = list(UNARY)
    xs = np.stack([_sweep(rng, *UNARY[n][2]) for n in names])
    got = _run(devices(arch), arch, names, xs.reshape(-1))
    measured = {}
    with np.errstate(all="ignore"):
        for k, name in enumerate(names):
            ref, bound, _ = UNARY[name]
            _check(name, got[k], ref(xs[k].astype(np.float64)), bound, measured)
    print("max ulp:", {k: round(float(v), 2) for k, v in measured.items()})


@pytest.mark.parametrize("arch", ["gfx1201"])
def test_binary_within_opencl_bounds(toolchain, devices, rng, arch):
    names = list(BINARY)
    xs = np.stack([_sweep(rng, *BINARY[n][2]) for n in names])
    ys = np.stack([rng.permutation(_sweep(rng, *BINARY[n][3])) for n in names])
    got = _run(devices(arch), arch, names, xs.reshape(-1), ys.reshape(-1))
    measured = {}
    with np.errstate(all="ignore"):
        for k, name in enumerate(names):
            x, y = xs[k].astype(np.float64), ys[k].astype(np.float64)
            want = BINARY[name][0](x, y)
            if name == "powr":          # powr is pow for x >= 0; its own special values are tested below
                keep = (x > 0) & np.isfinite(x) & np.isfinite(y) & (x != 1)
                got[k][~keep], want[~keep] = 0, 0
            _check(name, got[k], want, BINARY[name][1], measured)
    print("max ulp:", {k: round(float(v), 2) for k, v in measured.items()})


@pytest.mark.parametrize("arch", ["gfx942"])
def test_integer_argument_functions_within_opencl_bounds(toolchain, devices, rng, arch):
    names = list(INT_ARG)
    xs = np.stack([_sweep(rng, *INT_ARG[n][2]) for n in names])
    ns = np.stack([rng.integers(*INT_ARG[n][3], N).astype(np.int32) for n in names])
    got = _run(devices(arch), arch, names, xs.reshape(-1), ns.reshape(-1))
    measured = {}
    with np.errstate(all="ignore"):
        for k, name in enumerate(names):
            x, n = xs[k].astype(np.float64), ns[k]
            want = INT_ARG[name][0](x, n)
            if name == "rootn":     # the reference's x ** (1/n) is not rootn's special-value table: tested below
                keep = (n != 0) & np.isfinite(x) & (x != 0) & ((x > 0) | (n % 2 == 1))
                got[k][~keep], want[~keep] = 0, 0
            _check(name, got[k], want, INT_ARG[name][1], measured)
    print("max ulp:", {k: round(float(v), 2) for k, v in measured.items()})


INF, NAN, HALF_PI, PI = np.inf, np.nan, np.float32(np.pi / 2), np.float32(np.pi)
SPECIAL = [  # (function, x, y or n, exact result) from OpenCL C 3.0 section 7.5.1 / C99 Annex F.9
    ("sin", -0.0, 0, -0.0), ("sin", 0.0, 0, 0.0), ("sin", INF, 0, NAN), ("cos", -0.0, 0, 1.0), ("cos", -INF, 0, NAN),
    ("tan", -0.0, 0, -0.0), ("tan", INF, 0, NAN), ("asin", -0.0, 0, -0.0), ("asin", 1.5, 0, NAN),
    ("acos", 1.0, 0, 0.0), ("acos", -1.0, 0, PI), ("acos", -1.5, 0, NAN), ("atan", -0.0, 0, -0.0),
    ("atan", -INF, 0, -HALF_PI), ("sinh", -0.0, 0, -0.0), ("sinh", -INF, 0, -INF), ("sinh", 3e38, 0, INF),
    ("cosh", -0.0, 0, 1.0), ("cosh", -INF, 0, INF), ("tanh", -0.0, 0, -0.0), ("tanh", -INF, 0, -1.0),
    ("asinh", -0.0, 0, -0.0), ("asinh", -INF, 0, -INF), ("acosh", 1.0, 0, 0.0), ("acosh", 0.5, 0, NAN),
    ("acosh", INF, 0, INF), ("atanh", -0.0, 0, -0.0), ("atanh", -1.0, 0, -INF), ("atanh", 1.0, 0, INF),
    ("atanh", 1.5, 0, NAN), ("expm1", -0.0, 0, -0.0), ("expm1", -INF, 0, -1.0), ("expm1", INF, 0, INF),
    ("log1p", -0.0, 0, -0.0), ("log1p", -1.0, 0, -INF), ("log1p", -2.0, 0, NAN), ("log1p", INF, 0, INF),
    ("exp10", -INF, 0, 0.0), ("exp10", INF, 0, INF), ("exp10", -0.0, 0, 1.0), ("exp10", 3.0, 0, 1000.0),
    ("cbrt", -0.0, 0, -0.0), ("cbrt", -INF, 0, -INF), ("cbrt", -27.0, 0, -3.0), ("erf", -0.0, 0, -0.0),
    ("erf", -INF, 0, -1.0), ("erf", NAN, 0, NAN), ("erfc", -INF, 0, 2.0), ("erfc", INF, 0, 0.0),
    ("atan2", 0.0, -0.0, PI), ("atan2", -0.0, -0.0, -PI), ("atan2", 0.0, 0.0, 0.0), ("atan2", -0.0, 0.0, -0.0),
    ("atan2", -0.0, -1.0, -PI), ("atan2", 0.0, 1.0, 0.0), ("atan2", -1.0, 0.0, -HALF_PI),
    ("atan2", 1.0, -0.0, HALF_PI), ("atan2", -1.0, -INF, -PI), ("atan2", 1.0, INF, 0.0),
    ("atan2", -INF, 5.0, -HALF_PI), ("atan2", INF, -INF, np.float32(3 * np.pi / 4)),
    ("atan2", -INF, INF, np.float32(-np.pi / 4)), ("atan2", NAN, 1.0, NAN),
    ("hypot", INF, NAN, INF), ("hypot", NAN, -INF, INF), ("hypot", -3.0, 0.0, 3.0), ("hypot", 3.0, 4.0, 5.0),
    ("pow", NAN, 0.0, 1.0), ("pow", NAN, -0.0, 1.0), ("pow", 1.0, NAN, 1.0), ("pow", -0.0, -3.0, -INF),
    ("pow", 0.0, -3.0, INF), ("pow", -0.0, -2.0, INF), ("pow", -0.0, -0.5, INF), ("pow", -0.0, 3.0, -0.0),
    ("pow", -0.0, 2.0, 0.0), ("pow", -0.0, 0.5, 0.0), ("pow", -1.0, INF, 1.0), ("pow", -1.0, -INF, 1.0),
    ("pow", 0.5, -INF, INF), ("pow", 2.0, -INF, 0.0), ("pow", -0.5, INF, 0.0), ("pow", -2.0, INF, INF),
    ("pow", -INF, -3.0, -0.0), ("pow", -INF, -2.0, 0.0), ("pow", -INF, 3.0, -INF), ("pow", -INF, 2.0, INF),
    ("pow", INF, -1.0, 0.0), ("pow", INF, 0.5, INF), ("pow", -2.0, 0.5, NAN), ("pow", NAN, 1.0, NAN),
    ("pow", -2.0, 3.0, -8.0), ("pow", -2.0, 1e10, INF), ("pow", 10.0, -50.0, 0.0),
    ("pown", NAN, 0, 1.0), ("pown", -0.0, -3, -INF), ("pown", 0.0, -2, INF), ("pown", -0.0, 3, -0.0),
    ("pown", -0.0, 2, 0.0), ("pown", -2.0, 3, -8.0), ("pown", -INF, 3, -INF), ("pown", NAN, 1, NAN),
    ("powr", 2.0, 0.0, 1.0), ("powr", 0.0, 0.0, NAN), ("powr", -0.0, -0.0, NAN), ("powr", 0.0, -1.0, INF),
    ("powr", -0.0, -INF, INF), ("powr", 0.0, 1.0, 0.0), ("powr", 1.0, 5.0, 1.0), ("powr", 1.0, INF, NAN),
    ("powr", -1.0, 2.0, NAN), ("powr", NAN, 0.0, NAN), ("powr", INF, 0.0, NAN), ("powr", INF, -1.0, 0.0),
    ("powr", INF, 1.0, INF), ("powr", 0.5, INF, 0.0), ("powr", 0.5, -INF, INF), ("powr", 2.0, INF, INF),
    ("powr", 2.0, -INF, 0.0), ("rootn", 0.0, -3, INF), ("rootn", -0.0, -3, -INF), ("rootn", -0.0, -2, INF),
    ("rootn", -0.0, 3, -0.0), ("rootn", -0.0, 2, 0.0), ("rootn", -8.0, 2, NAN), ("rootn", 8.0, 0, NAN),
    ("rootn", -8.0, 3, -2.0), ("rootn", -INF, 3, -INF), ("rootn", INF, -2, 0.0),
]


@pytest.mark.parametrize("arch", ["gfx1100"])
def test_special_values_exactly(toolchain, devices, arch):
    ints = {"pown", "rootn"}
    unary = {name for name in UNARY}
    lines = []
    for k, (fn, _, _, _) in enumerate(SPECIAL):
        args = "a[%d]" % k if fn in unary else f"a[{k}], (int)b[{k}]" if fn in ints else f"a[{k}], b[{k}]"
        lines.append(f"  o[{k}] = {fn}({args});")
    src = ("__kernel void f(__global float *o, __global const float *a, __global const float *b) {\n"
           "  if (get_global_id(0) == 0) {\n" + "\n".join(lines) + "\n  }\n  float c, s = sincos(-0.0f, &c);\n"
           f"  o[{len(SPECIAL)}] = s; o[{len(SPECIAL) + 1}] = c;\n}}\n")
    dev = devices(arch)
    a = np.array([s[1] for s in SPECIAL], np.float32)
    b = np.array([s[2] for s in SPECIAL], np.float32)
    ba, bb, bo = dev.alloc(a.nbytes), dev.alloc(b.nbytes), dev.alloc(a.nbytes + 8)
    dev.copyin(ba, a)
    dev.copyin(bb, b)
    dev.load(cc.compile_source(src, "opencl", arch), "f")(bo, ba, bb, grid=1, block=1)
    got = np.empty(len(SPECIAL) + 2, np.float32)
    dev.copyout(got, bo)
    dev.synchronize()
    want = np.array([s[3] for s in SPECIAL] + [-0.0, 1.0], np.float32)
    bad = [(SPECIAL[k][:3] if k < len(SPECIAL) else "sincos(-0)", got[k], want[k]) for k in range(len(want))
           if not (np.isnan(got[k]) and np.isnan(want[k])) and got[k:k + 1].view(np.uint32) != want[k:k + 1].view(np.uint32)]
    assert not bad, bad


HIP_MATH = r"""
#include <hip/hip_runtime.h>
__global__ void f(float *o, const float *x, const float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i], s, c;
  sincosf(a, &s, &c);
  o[i] = sinf(a); o[n + i] = c; o[2 * n + i] = powf(fabsf(a), b); o[3 * n + i] = atan2f(a, b);
  o[4 * n + i] = erfcf(b); o[5 * n + i] = tanhf(a); o[6 * n + i] = s; o[7 * n + i] = powif(a, 3);
  o[8 * n + i] = (float)atan2((double)a, (double)b);     /* double forms, rounded to float here */
  o[9 * n + i] = (float)pow(fabs((double)a), (double)b);
}
"""


def test_hip_names_reach_the_same_functions(toolchain, devices, rng):
    n = 256
    x = _sweep(rng, -30, 30, n)
    y = rng.uniform(-4, 4, n).astype(np.float32)
    dev = devices("gfx1100")
    bx, by, bo = dev.alloc(4 * n), dev.alloc(4 * n), dev.alloc(4 * 10 * n)
    dev.copyin(bx, x)
    dev.copyin(by, y)
    dev.load(cc.compile_source(HIP_MATH, "hip", "gfx1100"), "f")(bo, bx, by, n, grid=n // 64, block=64)
    got = np.empty((10, n), np.float32)
    dev.copyout(got, bo)
    dev.synchronize()
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        want = [np.sin(x64), np.cos(x64), np.abs(x64) ** y64, np.arctan2(x64, y64), UNARY["erfc"][0](y64),
                np.tanh(x64), np.sin(x64), x64 ** 3, np.arctan2(x64, y64), np.abs(x64) ** y64]
    names = ["sinf", "sincosf cos", "powf", "atan2f", "erfcf", "tanhf", "sincosf sin", "powif", "atan2", "pow"]
    for name, g, w in zip(names, got, want):
        assert float_ulps(g, w).max() <= 0.5, name       # the same correctly rounded results as OpenCL's


DOUBLE = {  # name: (np.longdouble reference, OpenCL's bound for double in ulp, sweep range, arity)
    "asin": (np.arcsin, 4, (-1, 1), 1), "acos": (np.arccos, 4, (-1, 1), 1), "atan": (np.arctan, 5, (-30, 30), 1),
    "sinh": (np.sinh, 4, (-720, 720), 1), "cosh": (np.cosh, 4, (-720, 720), 1), "tanh": (np.tanh, 5, (-25, 25), 1),
    "asinh": (np.arcsinh, 4, (-1e3, 1e3), 1), "acosh": (np.arccosh, 4, (1, 1e3), 1),
    "atanh": (np.arctanh, 5, (-1, 1), 1), "expm1": (np.expm1, 3, (-50, 710), 1), "log1p": (np.log1p, 2, (-1, 1e3), 1),
    "sin": (np.sin, 4, (-40, 40), 1), "cos": (np.cos, 4, (-40, 40), 1), "tan": (np.tan, 4, (-40, 40), 1),
    "exp10": (lambda x: np.longdouble(10) ** x, 3, (-330, 310), 1), "cbrt": (np.cbrt, 2, (-1e6, 1e6), 1),
    "atan2": (np.arctan2, 6, (-10, 10), 2), "hypot": (np.hypot, 4, (-1e300, 1e300), 2),
    "pow": (np.power, 16, (0, 30), 2), "powr": (np.power, 16, (0, 30), 2),
}


def double_ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """float64 results against long-double references, in float64 ulp (NaN-ness must agree)."""
    with np.errstate(invalid="ignore", over="ignore"):
        w64 = want.astype(np.float64)
        spacing = np.spacing(np.minimum(np.abs(w64), np.finfo(np.float64).max)).astype(np.longdouble)
        g = got.astype(np.longdouble)
        d = np.where((g == want) | (np.isinf(w64) & (got == w64)), 0.0, np.abs(g - want) / spacing)
    return np.where(np.isnan(got) | np.isnan(w64), np.where(np.isnan(got) & np.isnan(w64), 0.0, np.inf), d)


def _double_sweep(rng, lo, hi, n=N) -> np.ndarray:
    q = n // 4
    bits = rng.integers(0, 1 << 63, n).astype(np.uint64).view(np.float64)
    hard = [1e22, 6381956970095103 * 2.0 ** 797, -2.0 ** 1023, 1e300]   # sin(1e22); within 2^-61 of a k pi/2
    parts = [SPECIAL_ARGS.astype(np.float64), [5e-324, -5e-324, 1e-310, 1.7976931348623157e308, 0.999999999999, 1e-17],
             hard,
             np.linspace(lo, hi, q), rng.uniform(lo, hi, q), np.where(rng.random(n) < 0.5, bits, -bits)]
    return np.concatenate(parts)[:n]


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs x87 long double references (64-bit significand)")
@pytest.mark.parametrize("arch", ["gfx1100"])
def test_double_forms_within_opencl_bounds(toolchain, devices, rng, arch):
    dev = devices(arch)
    measured = {}
    for arity in (1, 2):
        names = [n for n, v in DOUBLE.items() if v[3] == arity]
        xs = np.stack([_double_sweep(rng, *DOUBLE[n][2]) for n in names])
        ins = [xs.reshape(-1)] + ([np.stack([rng.permutation(x) for x in xs]).reshape(-1)] if arity == 2 else [])
        got = _run(dev, arch, names, *ins)
        with np.errstate(all="ignore"):
            for k, name in enumerate(names):
                args = [a.reshape(len(names), N)[k].astype(np.longdouble) for a in ins]
                want = DOUBLE[name][0](*args)
                if name == "powr":      # pow for x > 0; its special values are pow's own, tested for float
                    keep = (args[0] > 0) & np.isfinite(args[0]) & np.isfinite(args[1]) & (args[0] != 1)
                    got[k][~keep], want[~keep] = 0, 0
                u = double_ulps(got[k], want)
                measured[name] = u.max()
                worst = int(np.argmax(u))
                assert u.max() <= DOUBLE[name][1], f"{name}: {u.max():.2f} ulp at {[a[worst] for a in args]}"
    print("max ulp:", {k: round(float(v), 2) for k, v in measured.items()})


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs x87 long double references (64-bit significand)")
@pytest.mark.parametrize("arch", ["gfx942"])
def test_double_pown_rootn_within_opencl_bounds(toolchain, devices, rng, arch):
    x = np.stack([_double_sweep(rng, -30, 30), _double_sweep(rng, -1e6, 1e6)])
    n = np.stack([rng.integers(-200, 200, N), rng.integers(-9, 10, N)]).astype(np.int32)
    got = _run(devices(arch), arch, ["pown", "rootn"], x.reshape(-1), n.reshape(-1))
    with np.errstate(all="ignore"):
        xl, nl = x.astype(np.longdouble), n.astype(np.longdouble)
        want = [np.power(xl[0], nl[0]), np.sign(xl[1]) * np.abs(xl[1]) ** (1 / nl[1])]
        keep = (n[1] != 0) & np.isfinite(x[1]) & (x[1] != 0) & ((x[1] > 0) | (n[1] % 2 == 1))
        got[1][~keep], want[1][~keep] = 0, 0       # rootn's special values: the table, tested for float
        measured = {name: double_ulps(g, w).max() for name, g, w in zip(["pown", "rootn"], got, want)}
    print("max ulp:", {k: round(float(v), 2) for k, v in measured.items()})
    assert max(measured.values()) <= 16, measured
