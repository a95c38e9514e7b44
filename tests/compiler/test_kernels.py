"""Whole kernels on the CPU device: reductions in a fixed order, matmul, shared memory, fused chains."""
import ml_dtypes
import numpy as np

from gputwin.compiler import ir
from tests.compiler import kernels
from tests.compiler.helpers import bits, run



def sequential_sum(x: np.ndarray) -> np.ndarray:
    acc = np.zeros(x.shape[0], np.float32)
    for j in range(x.shape[1]):
        acc = acc + x[:, j]
    return acc


def test_row_sum_adds_in_index_order(rng):
    x = rng.standard_normal((37, 129)).astype(np.float32)
    (_, out) = run(kernels.row_sum(), [x, np.zeros(37, np.float32), 37, 129], grid=(2, 1, 1))
    assert np.array_equal(bits(out), bits(sequential_sum(x)))


def test_column_max_over_a_strided_view(rng):
    x = rng.standard_normal((20, 48)).astype(np.float32)
    x[3, 5] = np.nan
    (_, out) = run(kernels.col_max(), [x, np.zeros(40, np.float32), 20, 40, 48], grid=(2, 1, 1))
    want = np.max(x[:, :40], axis=0)
    assert np.array_equal(np.isnan(out), np.isnan(want))
    assert np.array_equal(out[~np.isnan(want)], want[~np.isnan(want)])


def test_matmul_matches_a_sequential_k_loop(rng):
    a = rng.standard_normal((19, 33)).astype(np.float32)
    b = rng.standard_normal((33, 21)).astype(np.float32)
    (_, _, c) = run(kernels.matmul(), [a, b, np.zeros((19, 21), np.float32), 19, 21, 33], grid=(3, 3, 1))
    want = np.zeros((19, 21), np.float32)
    for p in range(33):
        want = want + a[:, p:p + 1] * b[p:p + 1, :]
    assert np.array_equal(bits(c), bits(want))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_batched_matmul_uses_the_third_grid_axis(rng):
    a = rng.standard_normal((3, 9, 5)).astype(np.float32)
    b = rng.standard_normal((3, 5, 7)).astype(np.float32)
    (_, _, c) = run(kernels.matmul(batched=True, use_fma=True), [a, b, np.zeros((3, 9, 7), np.float32), 9, 7, 5],
                    grid=(1, 2, 3))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)


def test_shared_memory_and_barrier_reverse_each_workgroup():
    x = np.arange(256, dtype=np.int32)
    (_, out) = run(kernels.shared_reverse(), [x, np.zeros(256, np.int32)], grid=(4, 1, 1))
    assert np.array_equal(out, (x * 3).reshape(4, 64)[:, ::-1].reshape(-1))


def test_uniform_range_refills_shared_memory_each_iteration(rng):
    x = rng.standard_normal(3 * 5 * 64).astype(np.float32)
    (_, out) = run(kernels.tiled_accumulate(5), [x, np.zeros(3 * 64, np.float32)], grid=(3, 1, 1))
    want = np.full((3, 64), -0.0, np.float32)
    for r in range(5):                     # the same order and roundings as the kernel
        want = want + x.reshape(3, 5, 64)[:, r, ::-1] * np.float32(r + 1)
    assert np.array_equal(bits(out), bits(want.reshape(-1)))


def test_fused_chain_over_broadcast_inputs_rounds_like_numpy(rng):
    a = rng.standard_normal((6, 50)).astype(np.float32)
    s = rng.standard_normal(50).astype(np.float32)
    b = rng.standard_normal(6).astype(ml_dtypes.bfloat16)
    (_, _, _, out) = run(kernels.fused_chain(), [a, s, b, np.zeros((6, 50), np.float16), 6, 50], grid=(5, 1, 1))
    v = a * s + b.astype(np.float32)[:, None]
    np.testing.assert_allclose(out.astype(np.float32), np.tanh(v), rtol=2e-3, atol=1e-3)


def test_int64_loop_bounds_and_index(rng):
    k = ir.KernelBuilder("i64sum", local_size=(1, 1, 1))
    x, out = k.buffer("x", ir.int64), k.buffer("out", ir.int64)
    n = k.scalar("n", ir.int64)
    acc = k.var(ir.int64, 0)
    with k.range(n - 1, -1, -2) as i:          # descending with a negative step
        acc.set(acc.get() * 3 + x[i])
    out[0] = acc.get()
    x_ = rng.integers(-1000, 1000, 11).astype(np.int64)
    (_, got) = run(k.build(), [x_, np.zeros(1, np.int64), 11], grid=(1, 1, 1))
    want = 0
    for i in range(10, -1, -2):
        want = want * 3 + int(x_[i])
    assert got[0] == want
