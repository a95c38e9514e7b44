"""End to end: OpenCL C kernels compiled by clang-19 for gfx1100 (fixtures/amd/cl/, committed with their
rebuild script) run on the emulator in wave32 and wave64; results compared bit for bit with numpy."""
from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest

from tests.emu.amd.helpers import kernel

WAVES = pytest.mark.parametrize("wave64", [False, True], ids=["wave32", "wave64"])


def bits(a):
    a = np.asarray(a)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def hard_f32(rng, n):
    """Random normals plus the hard cases: signed zeros, infinities, denormals, huge/tiny magnitudes."""
    x = rng.standard_normal(n).astype(np.float32) * np.float32(2.0) ** rng.integers(-30, 30, n).astype(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 1e-45, -1e-45, 1e-40, 3.4e38, -3.4e38, 1.0, -1.0, 1.17549435e-38],
                       np.float32)
    x[:special.size] = special
    return x


def fma_ref(a, b, c):
    """f32 fma rounded once (exact rational arithmetic, then one rounding to nearest even)."""
    out = np.empty(a.size, np.float32)
    for i, (x, y, z) in enumerate(zip(a.tolist(), b.tolist(), c.tolist())):
        if not all(np.isfinite([x, y, z])) or x * y == 0 and z == 0:
            with np.errstate(all="ignore"):    # infinities, NaNs and signed zeros: f64 follows IEEE
                out[i] = np.float32(np.float64(x) * np.float64(y) + np.float64(z))
            continue
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        out[i] = _round_f32(exact)
    return out


def _round_f32(q: Fraction) -> np.float32:
    if q == 0:
        return np.float32(0.0)
    f64 = float(q)                      # correctly rounded to f64, may sit exactly on an f32 tie
    with np.errstate(over="ignore"):
        lo = np.float32(f64)
    if not np.isfinite(lo):             # past the overflow threshold: rounds to infinity
        return lo
    # fix a double-rounding: pick the f32 neighbour nearest to q, ties to even
    cands = [lo, np.nextafter(lo, np.float32(np.inf)), np.nextafter(lo, np.float32(-np.inf))]
    best = min(cands, key=lambda v: (abs(Fraction(float(v)) - q) if np.isfinite(v) else Fraction(10) ** 60,
                                     int(bits(np.float32(v))) & 1))
    return np.float32(best)


@WAVES
def test_saxpy_matches_numpy_fused_multiply_add(wave64):
    arena, k = kernel("basic", "saxpy", wave64)
    rng = np.random.default_rng(1)
    n = 1000                                   # not a multiple of the block: the tail is masked off
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    xv, yv = arena.alloc(4 * n, x), arena.alloc(4 * n, y)
    k(yv, xv, 2.5, n, grid=(4, 1, 1), block=(256, 1, 1))
    expect = fma_ref(np.full(n, 2.5, np.float32), x, y)
    assert (bits(arena.array(yv, np.float32, n)) == bits(expect)).all()


@WAVES
def test_fma_rounds_once_on_hard_inputs(wave64):
    arena, k = kernel("basic", "fma_f32", wave64)
    rng = np.random.default_rng(2)
    n = 256
    a, b, c = hard_f32(rng, n), hard_f32(rng, n)[::-1].copy(), hard_f32(rng, n)
    # cancellation: c = -(a*b rounded), so the result is the rounding error of the product
    c[20:40] = -(a[20:40] * b[20:40])
    o = arena.alloc(4 * n)
    k(o, arena.alloc(4 * n, a), arena.alloc(4 * n, b), arena.alloc(4 * n, c), grid=(1, 1, 1), block=(256, 1, 1))
    got, expect = arena.array(o, np.float32, n), fma_ref(a, b, c)
    nan = np.isnan(expect)
    assert (bits(got[~nan]) == bits(expect[~nan])).all()
    assert np.isnan(got[nan]).all()


@WAVES
def test_correctly_rounded_div_and_sqrt(wave64):
    arena, k = kernel("divsqrt", "div_sqrt", wave64)
    rng = np.random.default_rng(3)
    n = 256
    a, b = np.abs(hard_f32(rng, n)), hard_f32(rng, n)[::-1].copy()       # overflow, denormal quotients
    q, r = arena.alloc(4 * n), arena.alloc(4 * n)
    k(q, r, arena.alloc(4 * n, a), arena.alloc(4 * n, b), grid=(1, 1, 1), block=(256, 1, 1))
    with np.errstate(all="ignore"):
        eq, er = a / b, np.sqrt(a)
    for got, exp in ((arena.array(q, np.float32, n), eq), (arena.array(r, np.float32, n), er)):
        nan = np.isnan(exp)
        assert (bits(got[~nan]) == bits(exp[~nan])).all()
        assert np.isnan(got[nan]).all()


@WAVES
def test_f64_division(wave64):
    arena, k = kernel("divsqrt", "div_f64", wave64)
    rng = np.random.default_rng(4)
    n = 128
    a, b = rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n), rng.standard_normal(n)
    q = arena.alloc(8 * n)
    k(q, arena.alloc(8 * n, a), arena.alloc(8 * n, b), grid=(1, 1, 1), block=(128, 1, 1))
    assert (bits(arena.array(q, np.float64, n)) == bits(a / b)).all()


def _trunc_div(x, y):
    q = np.abs(x) // np.where(y == 0, 1, np.abs(y))
    return np.where(y == 0, 0, np.where((x < 0) != (y < 0), -q, q))


@WAVES
def test_int32_and_int64_arithmetic_wraps(wave64):
    arena, k = kernel("basic", "int_ops", wave64)
    rng = np.random.default_rng(5)
    n = 256
    x = rng.integers(-2**31, 2**31, n).astype(np.int32)
    y = rng.integers(-2**31, 2**31, n).astype(np.int32)
    y[::7], y[3::7] = 0, rng.integers(-9, 9, len(y[3::7]))
    x[5], y[5] = -2**31, 1
    p = rng.integers(-2**63, 2**63, n, dtype=np.int64)
    q = rng.integers(-2**40, 2**40, n, dtype=np.int64)
    q[::5], q[2::9] = 0, rng.integers(-5, 5, len(q[2::9]))
    o32, o64 = arena.alloc(32 * n), arena.alloc(48 * n)
    k(o32, o64, arena.alloc(4 * n, x), arena.alloc(4 * n, y), arena.alloc(8 * n, p), arena.alloc(8 * n, q),
      grid=(1, 1, 1), block=(256, 1, 1))
    X, Y = x.astype(np.int64), y.astype(np.int64)
    qd = _trunc_div(X, Y)
    e32 = np.stack([X * Y, qd, np.where(Y != 0, X - qd * Y, 0), x.view(np.uint32) >> (y & 31).astype(np.uint32),
                    x >> (y & 31), X + Y, (X * Y) >> 32, np.where(X < Y, X - Y, Y - X)], axis=1)
    got32 = arena.array(o32, np.uint32, 8 * n).reshape(n, 8)
    assert (got32 == (e32 & 0xFFFFFFFF).astype(np.uint32)).all()
    P, Q = [int(v) for v in p], [int(v) for v in q]
    M = (1 << 64) - 1

    def tdiv(a, b):
        return 0 if b == 0 else (abs(a) // abs(b)) * (1 if (a < 0) == (b < 0) else -1)
    e64 = [[a * b & M, tdiv(a, b) & M, (a - tdiv(a, b) * b if b else 0) & M, (a & M) >> (b & 63), (a + b) & M,
            (a ^ b if a < b else a - b) & M] for a, b in zip(P, Q)]
    assert arena.array(o64, np.uint64, 6 * n).reshape(n, 6).tolist() == e64


@WAVES
def test_data_dependent_loops_diverge_and_reconverge(wave64):
    arena, k = kernel("basic", "collatz", wave64)
    rng = np.random.default_rng(6)
    n = 512
    start = rng.integers(1, 3000, n).astype(np.uint32)
    o = arena.alloc(4 * n)
    k(o, arena.alloc(4 * n, start), grid=(2, 1, 1), block=(256, 1, 1))

    def steps(v):
        c = 0
        while v > 1 and c < 1000:
            v, c = (3 * v + 1 if v & 1 else v // 2), c + 1
        return c
    assert arena.array(o, np.uint32, n).tolist() == [steps(int(v)) for v in start]


def collatz_steps(v: int) -> int:
    c = 0
    while v != 1:
        v, c = ((3 * v + 1) & 0xFFFFFFFF if v & 1 else v // 2), c + 1
    return c


@WAVES
def test_uncapped_divergent_loop_every_lane_its_own_trip_count(wave64):
    arena, k = kernel("diverge", "collatz_steps", wave64)
    n, first = 1024, 3000                    # 3000..4023: 17 to 237 steps, waves leave the loop at many points
    o = arena.alloc(4 * n)
    c = k(o, first, grid=(n // 256, 1, 1), block=(256, 1, 1))
    want = [collatz_steps(first + i) for i in range(n)]
    assert arena.array(o, np.uint32, n).tolist() == want
    assert c.lane_ops > sum(want) * 10        # the loop body ran per lane as often as that lane needed


@WAVES
def test_nested_divergent_loops_with_if_else_and_break(wave64):
    arena, k = kernel("diverge", "nested_loops", wave64)
    n = 512
    x = np.random.default_rng(21).integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    x[:4] = [0, 0xF, 0x7F, 0xFFFFFFFF]       # no outer loop; outer loop without inner; both maximal

    def ref(v):
        acc = v
        for a in range(v & 15):
            for b in range((v >> 4) & 7, 0, -1):
                acc = (acc * 3 + b) & 0xFFFFFFFF if (acc ^ b) & 1 else (acc + a) & 0xFFFFFFFF
            if acc > 100000:
                break
        return acc
    o = arena.alloc(4 * n)
    k(o, arena.alloc(4 * n, x), grid=(n // 128, 1, 1), block=(128, 1, 1))
    assert arena.array(o, np.uint32, n).tolist() == [ref(int(v)) for v in x]


@WAVES
def test_private_arrays_live_in_per_lane_scratch(wave64):
    arena, k = kernel("basic", "scratch_perm", wave64)
    n = 256
    src = np.random.default_rng(7).integers(-100, 100, n).astype(np.int32)
    o = arena.alloc(4 * n)
    k(o, arena.alloc(4 * n, src), 5, grid=(1, 1, 1), block=(256, 1, 1))
    i = np.arange(n)
    assert (arena.array(o, np.int32, n) == src * ((i + 5) & 63) + i).all()


@WAVES
def test_lds_tree_reduction_with_barriers(wave64):
    arena, k = kernel("lds", "reduce_sum", wave64)
    n = 1024
    x = np.random.default_rng(8).integers(0, 2**20, n).astype(np.uint32)
    o = arena.alloc(16)
    k(o, arena.alloc(4 * n, x), grid=(4, 1, 1), block=(256, 1, 1))
    assert (arena.array(o, np.uint32, 4) == x.reshape(4, 256).sum(axis=1)).all()


@WAVES
def test_tiled_matmul_through_lds(wave64):
    arena, k = kernel("lds", "matmul_tiled", wave64)
    rng = np.random.default_rng(9)
    n = 32
    a, b = rng.integers(-8, 8, (n, n)).astype(np.float32), rng.integers(-8, 8, (n, n)).astype(np.float32)
    o = arena.alloc(4 * n * n)
    k(o, arena.alloc(4 * n * n, a), arena.alloc(4 * n * n, b), n, grid=(2, 2, 1), block=(16, 16, 1))
    assert (arena.array(o, np.float32, n * n).reshape(n, n) == a @ b).all()   # small integers: exact


def test_naive_matmul_two_dimensional_grid():
    arena, k = kernel("lds", "matmul_naive", False)
    rng = np.random.default_rng(10)
    n = 32
    a, b = rng.integers(-8, 8, (n, n)).astype(np.float32), rng.integers(-8, 8, (n, n)).astype(np.float32)
    o = arena.alloc(4 * n * n)
    k(o, arena.alloc(4 * n * n, a), arena.alloc(4 * n * n, b), n, grid=(2, 2, 1), block=(16, 16, 1))
    assert (arena.array(o, np.float32, n * n).reshape(n, n) == a @ b).all()


@WAVES
def test_global_atomics_histogram(wave64):
    arena, k = kernel("atomics", "histogram", wave64)
    n = 1024
    x = np.random.default_rng(11).integers(0, 1000, n).astype(np.uint32)
    o = arena.alloc(64)
    k(o, arena.alloc(4 * n, x), grid=(4, 1, 1), block=(256, 1, 1))
    assert (arena.array(o, np.uint32, 16) == np.bincount(x & 15, minlength=16)).all()


@WAVES
def test_atomic_tickets_are_a_permutation_and_min_max_fold(wave64):
    arena, k = kernel("atomics", "tickets", wave64)
    n = 512
    x = np.random.default_rng(12).integers(-10**6, 10**6, n).astype(np.int32)
    counter, tickets = arena.alloc(4), arena.alloc(4 * n)
    mm = arena.alloc(8, np.array([-2**31, 2**31 - 1], np.int32))
    k(counter, tickets, mm, arena.alloc(4 * n, x), grid=(2, 1, 1), block=(256, 1, 1))
    assert sorted(arena.array(tickets, np.uint32, n).tolist()) == list(range(n))
    assert arena.array(counter, np.uint32, 1)[0] == n
    assert arena.array(mm, np.int32, 2).tolist() == [x.max(), x.min()]


@WAVES
def test_lds_atomics_histogram(wave64):
    arena, k = kernel("atomics", "lds_histogram", wave64)
    n = 1024
    x = np.random.default_rng(13).integers(0, 1000, n).astype(np.uint32)
    o = arena.alloc(64)
    k(o, arena.alloc(4 * n, x), grid=(4, 1, 1), block=(256, 1, 1))
    assert (arena.array(o, np.uint32, 16) == np.bincount(x & 15, minlength=16)).all()


@WAVES
def test_f16_arithmetic(wave64):
    arena, k = kernel("half", "half_ops", wave64)
    rng = np.random.default_rng(14)
    n = 256
    x, y = rng.standard_normal(n).astype(np.float16), rng.standard_normal(n).astype(np.float16)
    o = arena.alloc(8 * n)
    k(o, arena.alloc(2 * n, x), arena.alloc(2 * n, y), grid=(1, 1, 1), block=(256, 1, 1))
    got = arena.array(o, np.float16, 4 * n).reshape(n, 4)
    # f16 add/mul/fma: exact in f64, then a single rounding to f16 (f64 -> f16 cannot double-round here:
    # the exact results need at most 33 significant bits)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    expect = np.stack([x64 + y64, x64 * y64, x64 * y64 + x64, (x.astype(np.float32) - y).astype(np.float64)],
                      axis=1).astype(np.float16)
    assert (bits(got) == bits(expect)).all()


@WAVES
def test_byte_and_short_memory_with_sign_extension(wave64):
    arena, k = kernel("memory", "bytes_shorts", wave64)
    rng = np.random.default_rng(15)
    n = 256
    ib, is_ = rng.integers(-128, 128, n).astype(np.int8), rng.integers(-2**15, 2**15, n).astype(np.int16)
    ob, os_ = arena.alloc(n), arena.alloc(2 * n)
    k(ob, os_, arena.alloc(n, ib), arena.alloc(2 * n, is_), grid=(1, 1, 1), block=(256, 1, 1))
    assert (arena.array(ob, np.uint8, n) == ((ib.astype(np.int32) * 3 + 1) & 0xFF)).all()
    assert (arena.array(os_, np.int16, n) == ((is_ >> 1).astype(np.int32) + ib).astype(np.int16)).all()


@WAVES
def test_vector_and_struct_loads_and_stores(wave64):
    arena, k = kernel("memory", "vectors", wave64)
    n = 64
    i4 = np.arange(4 * n, dtype=np.float32).reshape(n, 4)
    i3 = -np.arange(3 * n, dtype=np.float32).reshape(n, 3)
    o4, o3 = arena.alloc(16 * n), arena.alloc(12 * n)
    k(o4, o3, arena.alloc(16 * n, i4), arena.alloc(12 * n, i3), grid=(1, 1, 1), block=(64, 1, 1))
    assert (arena.array(o4, np.float32, 4 * n).reshape(n, 4) == i4[:, ::-1]).all()
    assert (arena.array(o3, np.float32, 3 * n).reshape(n, 3) == i3[:, [2, 0, 1]]).all()


@WAVES
def test_compare_and_swap_loops_for_float_and_64bit_atomics(wave64):
    arena, k = kernel("memory", "atomics64", wave64)
    rng = np.random.default_rng(16)
    n = 256
    fin = rng.integers(-100, 100, n).astype(np.float32)      # integers: every summation order is exact
    lin = rng.integers(0, 2**62, n, dtype=np.uint64)
    fsum, lsum, lmax = arena.alloc(4), arena.alloc(8), arena.alloc(8)
    k(fsum, lsum, lmax, arena.alloc(4 * n, fin), arena.alloc(8 * n, lin), grid=(2, 1, 1), block=(128, 1, 1))
    assert arena.array(fsum, np.float32, 1)[0] == fin.sum()
    assert int(arena.array(lsum, np.uint64, 1)[0]) == sum(int(v) for v in lin) % 2**64
    assert arena.array(lmax, np.uint64, 1)[0] == lin.max()


@WAVES
def test_cross_lane_bpermute_and_readfirstlane(wave64):
    arena, k = kernel("memory", "crosslane", wave64)
    n = 128
    x = np.arange(n, dtype=np.int32) * 7 + 1
    rot, first = arena.alloc(4 * n), arena.alloc(4 * n)
    k(rot, first, arena.alloc(4 * n, x), grid=(1, 1, 1), block=(128, 1, 1))
    lanes = 64 if wave64 else 32
    lane = np.arange(n) % lanes
    base = np.arange(n) - lane
    mb = np.minimum(lane, 32)                                  # mbcnt_lo counts only the low 32 lanes
    assert (arena.array(rot, np.int32, n) == x[base + ((mb + 1) & 31)]).all()
    assert (arena.array(first, np.int32, n) == x[base]).all()


@WAVES
def test_barriers_inside_a_loop_with_a_2d_workgroup(wave64):
    arena, k = kernel("memory", "transpose_rounds", wave64)
    x = np.random.default_rng(17).integers(0, 1000, 256).astype(np.uint32)
    out = arena.alloc(4 * 256)
    k(out, arena.alloc(4 * 256, x), 3, grid=(1, 1, 1), block=(16, 16, 1))
    assert (arena.array(out, np.uint32, 256).reshape(16, 16) == x.reshape(16, 16).T + 3).all()


def test_kernel_lookup_and_argument_errors_are_clear():
    arena, k = kernel("basic", "saxpy", False)
    with pytest.raises(KeyError, match="no kernel"):
        kernel("basic", "no_such_kernel", False)
    with pytest.raises(TypeError, match="GPU address"):
        k("not a pointer", 0, 1.0, 4)
    with pytest.raises(TypeError, match=re.escape("saxpy takes 4 arguments, got 3")):
        k(0, 0, 1.0)                                        # one argument short


def _mix(a, b):
    s = [(a * j - b + 2**31) % 2**32 - 2**31 for j in range(8)]
    return (s[(a ^ b) & 7] + s[b & 7] + 2**31) % 2**32 - 2**31


@WAVES
def test_out_of_line_call_with_a_stack_in_scratch(wave64):
    arena, k = kernel("control", "calls", wave64)
    rng = np.random.default_rng(18)
    n = 128
    a, b = rng.integers(-1000, 1000, n).astype(np.int32), rng.integers(-1000, 1000, n).astype(np.int32)
    out = arena.alloc(4 * n)
    k(out, arena.alloc(4 * n, a), arena.alloc(4 * n, b), grid=(1, 1, 1), block=(128, 1, 1))
    assert arena.array(out, np.int32, n).tolist() == [_mix(int(x), int(y)) for x, y in zip(a, b)]


@WAVES
def test_switch_statement_every_case(wave64):
    arena, k = kernel("control", "switchy", wave64)
    v = np.arange(-64, 64, dtype=np.int32) * 37
    out = arena.alloc(4 * v.size)
    k(out, arena.alloc(4 * v.size, v), grid=(1, 1, 1), block=(v.size, 1, 1))
    cases = [lambda x: x + 11, lambda x: x * 3, lambda x: x - 7, lambda x: x ^ 0x55, lambda x: x << 2,
             lambda x: -x, lambda x: int(x / 3), lambda x: 42]
    assert arena.array(out, np.int32, v.size).tolist() == [cases[int(x) & 7](int(x)) for x in v]


@WAVES
def test_loop_with_break_continue_and_early_return(wave64):
    arena, k = kernel("control", "search", wave64)
    rng = np.random.default_rng(19)
    hay = rng.integers(-20, 40, 64).astype(np.int32)
    needle = rng.integers(0, 50, 96).astype(np.int32)
    out = arena.alloc(4 * 96, np.full(96, 12345, np.int32))
    k(out, arena.alloc(4 * 64, hay), 64, arena.alloc(4 * 96, needle), grid=(1, 1, 1), block=(96, 1, 1))
    hits = {int(v): j for j, v in reversed(list(enumerate(hay))) if v >= 0}
    assert arena.array(out, np.int32, 96).tolist() == [hits.get(int(w), 12345) for w in needle]


@WAVES
def test_three_dimensional_grid_and_workgroup_ids(wave64):
    arena, k = kernel("control", "ids3d", wave64)
    grid, block = (2, 3, 2), (4, 2, 3)
    w, h, d = (g * b for g, b in zip(grid, block))
    out = arena.alloc(16 * w * h * d)
    k(out, w, h, grid=grid, block=block)
    got = arena.array(out, np.uint32, 4 * w * h * d).reshape(d, h, w, 4)
    z, y, x = np.meshgrid(np.arange(d), np.arange(h), np.arange(w), indexing="ij")
    assert (got[..., 0] == x).all() and (got[..., 1] == y).all() and (got[..., 2] == z).all()
    local = (x % 4) | (y % 2) << 8 | (z % 3) << 16 | (z // 3) << 24
    assert (got[..., 3] == local).all()


# --- float_atomics.cl: hardware float atomics (-munsafe-fp-atomics) and ds_append --------------------
def _num_fold(vals, want_max):
    """maxNum / minNum over vals: NaNs skipped, +0 above -0."""
    v = [x for x in vals.tolist() if x == x]
    key = (lambda x: (x, not np.signbit(x))) if want_max else (lambda x: (x, not np.signbit(x)))
    return (max if want_max else min)(v, key=key)


def _hard_floats(rng, n):
    x = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 20, n)).astype(np.float32)
    x[:8] = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-40, 3.0e38, -2.5e-39, 1.0], np.float32)
    return x


@WAVES
def test_global_float_atomic_add_folds_in_wave_and_lane_order(wave64):
    arena, k = kernel("float_atomics", "fadd", wave64)
    n = 512
    x = _hard_floats(np.random.default_rng(21), n)
    x = x[np.random.default_rng(22).permutation(n)]
    sums, first, old = arena.alloc(16), arena.alloc(4, np.float32([0.75])), arena.alloc(4 * n)
    k(sums, first, old, arena.alloc(4 * n, x), grid=(2, 1, 1), block=(256, 1, 1))
    # the emulator applies atomics on one address lane by lane, waves in order: a sequential f32 fold
    want = [np.add.accumulate(x[j::4], dtype=np.float32)[-1] for j in range(4)]
    assert bits(arena.array(sums, np.float32, 4)).tolist() == bits(np.array(want, np.float32)).tolist()
    prefix = np.add.accumulate(np.r_[np.float32(0.75), x], dtype=np.float32)
    assert (bits(arena.array(old, np.float32, n)) == bits(prefix[:-1])).all()
    assert bits(arena.array(first, np.float32, 1))[0] == bits(prefix[-1])


@WAVES
def test_global_float_atomic_min_max_skip_nan_and_order_signed_zeros(wave64):
    arena, k = kernel("float_atomics", "fminmax", wave64)
    n = 256
    rng = np.random.default_rng(23)
    # the compiler folds each wave first (v_max/v_min) and one lane per wave applies the atomic: wave 0's
    # extreme is the losing zero, a later wave's the winning one; a whole wave of NaNs sends NaN
    for sign in (-1.0, 1.0):                          # max over non-positive values, min over non-negative
        y = (sign * rng.uniform(1.0, 5.0, n)).astype(np.float32)
        y[0], y[200] = (-0.0, 0.0) if sign < 0 else (0.0, -0.0)
        y[64:128] = np.nan
        m = arena.alloc(8, np.array([-np.inf, np.inf], np.float32))
        k(m, arena.alloc(4 * n, y), grid=(1, 1, 1), block=(256, 1, 1))
        got = bits(arena.array(m, np.float32, 2))
        want = np.array([_num_fold(y, True), _num_fold(y, False)], np.float32)
        assert got.tolist() == bits(want).tolist()
        assert want[0 if sign < 0 else 1] == 0                 # the zero case is the one checked


@WAVES
def test_lds_float_and_double_atomics_reduce_per_workgroup(wave64):
    arena, k = kernel("float_atomics", "lds_reduce", wave64)
    rng = np.random.default_rng(24)
    n, groups = 512, 4
    x = rng.integers(-1000, 1000, n).astype(np.float32)            # exact sums in any order
    d = rng.standard_normal(n) * 2.0 ** rng.integers(-1060, 1000, n)
    d[:4] = [-0.0, 0.0, 5e-324, -5e-324]
    of, od = arena.alloc(4 * 3 * groups), arena.alloc(8 * 2 * groups)
    k(of, od, arena.alloc(4 * n, x), arena.alloc(8 * n, d), grid=(groups, 1, 1), block=(128, 1, 1))
    xs, ds = x.reshape(groups, -1), d.reshape(groups, -1)
    want_f = np.stack([xs.sum(axis=1), xs.min(axis=1), xs.max(axis=1)], axis=1).astype(np.float32)
    want_d = np.array([[_num_fold(r, False), _num_fold(r, True)] for r in ds])
    assert (bits(arena.array(of, np.float32, 3 * groups)) == bits(want_f.ravel())).all()
    assert (bits(arena.array(od, np.float64, 2 * groups)) == bits(want_d.ravel())).all()


@WAVES
def test_ds_append_compacts_each_workgroup_in_wave_order(wave64):
    arena, k = kernel("float_atomics", "compact", wave64)
    n, block = 768, 256
    x = np.random.default_rng(25).integers(0, 1 << 20, n).astype(np.uint32)
    out, count = arena.alloc(4 * n), arena.alloc(4 * 3)
    k(out, count, arena.alloc(4 * n, x), grid=(3, 1, 1), block=(block, 1, 1))
    got = arena.array(out, np.uint32, n).reshape(3, block)
    for g in range(3):
        odd = x[g * block:(g + 1) * block]
        odd = odd[odd & 1 == 1]
        assert arena.array(count, np.uint32, 3)[g] == odd.size
        assert (got[g, :odd.size] == odd).all() and (got[g, odd.size:] == 0).all()
