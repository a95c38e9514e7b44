"""fmod, remainder and remquo of gputwin's device library (gtmath.h), float and double, through `gputwin cc`
on the emulator: exact (bit for bit) against Python's exact rationals, over ties, huge quotient ratios
(random bit patterns: exponent differences up to ~2000), subnormals and C99 Annex F's special values."""
import math
from fractions import Fraction

import numpy as np
import pytest

from gputwin import cc

N = 1024
LANES = 64
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -2.5, 1e-45, 5e-324, 1e300, -7.0]

KERNEL = """
__kernel void f(__global T *o, __global int *q, __global const T *x, __global const T *y) {
  for (size_t e = get_global_id(0); e < N; e += LANES) {
    int k;
    o[e] = fmod(x[e], y[e]);
    o[N + e] = remainder(x[e], y[e]);
    o[2 * N + e] = remquo(x[e], y[e], &k);
    q[e] = k;
  }
  for (size_t e = get_global_id(0); e < N / 4; e += LANES) {   /* the vector overloads */
    int4 k4;
    vstore4(remquo(vload4(e, x), vload4(e, y), &k4), e, o + 3 * N);
    vstore4(k4, e, q + N);
  }
}
"""


def _inputs(rng, dtype):
    """(x, y): every pair of special values, ties (x an odd multiple of y/2), random values, random bits."""
    info = np.finfo(dtype)
    with np.errstate(all="ignore"):
        sp = np.array(SPECIAL, dtype)
    sx, sy = np.repeat(sp, len(sp)), np.tile(sp, len(sp))
    m = (N - len(sx)) // 4
    y_tie = rng.uniform(-100, 100, m).astype(dtype)
    x_tie = ((2 * rng.integers(-1000, 1000, m) + 1) * y_tie.astype(np.float64) / 2).astype(dtype)
    ux, uy = rng.uniform(-1e4, 1e4, m).astype(dtype), rng.uniform(-10, 10, m).astype(dtype)
    ubits = np.uint64 if info.bits == 64 else np.uint32
    bits = rng.integers(0, np.iinfo(ubits).max, (2, N - len(sx) - 3 * m), dtype=ubits).view(dtype)
    x = np.concatenate([sx, x_tie, ux, rng.uniform(-1, 1, m).astype(dtype) * info.tiny, bits[0]])
    y = np.concatenate([sy, y_tie, uy, rng.uniform(-1, 1, m).astype(dtype) * info.tiny * 1e-3, bits[1]])
    return x.astype(dtype), y.astype(dtype)


def _reference(x, y, nearest: bool):
    """The exact result and remquo's quotient (its sign and low 7 bits) of one pair."""
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return math.nan, None
    if math.isinf(y) or x == 0:
        return x, 0
    fx, fy = Fraction(x), Fraction(y)
    q = round(fx / fy) if nearest else int(fx / fy)          # round(): ties to even, int(): toward zero
    r = fx - q * fy
    return (float(r) if r else math.copysign(0.0, x)), (abs(q) % 128) * (-1 if q < 0 else 1)


@pytest.mark.parametrize("dtype, arch", [(np.float32, "gfx1100"), (np.float64, "gfx1100")])
def test_fmod_remainder_remquo_exact(toolchain, devices, rng, dtype, arch):
    x, y = _inputs(rng, dtype)
    t = "float" if dtype == np.float32 else "double"
    src = f"#define T {t}\n#define N {N}\n#define LANES {LANES}\n" + KERNEL
    dev = devices(arch)
    bo, bq, bx, by = dev.alloc(4 * N * x.itemsize), dev.alloc(2 * N * 4), dev.alloc(x.nbytes), dev.alloc(y.nbytes)
    dev.copyin(bx, x)
    dev.copyin(by, y)
    dev.load(cc.compile_source(src, "opencl", arch), "f")(bo, bq, bx, by, grid=1, block=LANES)
    got, quo = np.empty((4, N), dtype), np.empty((2, N), np.int32)
    dev.copyout(got, bo)
    dev.copyout(quo, bq)
    dev.synchronize()
    bad = []
    for i, (a, b) in enumerate(zip(x.tolist(), y.tolist())):
        for row, nearest in ((0, False), (1, True), (2, True), (3, True)):
            want, q = _reference(a, b, nearest)
            w = np.array(want, dtype)
            g = got[row, i]
            same = (np.isnan(g) and np.isnan(w)) or g.tobytes() == w.tobytes()
            if not same or (row >= 2 and q is not None and quo[row - 2, i] != q):
                bad.append((row, a, b, g, w, quo[row - 2, i] if row >= 2 else None, q))
    assert not bad, f"{len(bad)} wrong, e.g. (row, x, y, got, want, quo, want quo): {bad[:5]}"
