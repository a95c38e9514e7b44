"""Reductions, matmul and softmax on the device under test (gputwin/tensor/reduce.py)."""
import math

import ml_dtypes
import numpy as np
import pytest

from gputwin.tensor import DTypeError, ShapeError, Tensor
from tests.tensor.bitcheck import assert_bits, ulp_distance

X = np.random.default_rng(11).standard_normal((3, 4, 5)).astype(np.float32)   # fixed at import


def seq_sum(x: np.ndarray, axis, acc=np.float32) -> np.ndarray:
    """numpy reference for gputwin's sequential row-major reduction order."""
    axes = tuple(range(x.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    axes = tuple(a % x.ndim for a in axes)
    kept = [d for d in range(x.ndim) if d not in axes]
    y = x.astype(acc).transpose(kept + list(axes)).reshape([x.shape[d] for d in kept] + [-1])
    return np.cumsum(y, axis=-1, dtype=acc)[..., -1] if y.shape[-1] else np.zeros(y.shape[:-1], acc)


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), ()])
def test_float_sum_is_sequential_and_bit_exact(tdev, axis):
    assert_bits(Tensor(X, device=tdev).sum(axis=axis).numpy(), seq_sum(X, axis) if axis != () else X)


def test_sum_of_negative_zeros_is_negative_zero_and_empty_sum_positive_zero(tdev):
    assert_bits(Tensor(-np.zeros((2, 3), np.float32), device=tdev).sum(axis=1).numpy(), -np.zeros(2, np.float32))
    assert_bits(Tensor(np.zeros((2, 0), np.float32), device=tdev).sum(axis=1).numpy(), np.zeros(2, np.float32))
    assert_bits(Tensor(np.zeros((2, 0), np.float16), device=tdev).prod(axis=1).numpy(), np.ones(2, np.float16))


def chunked(x: np.ndarray, fn, fill) -> np.ndarray:
    """numpy reference for the two-stage order of long reductions: ceil(sqrt(n))-element chunks in
    order (the tail padded with the identity), then the partials in order; float32 throughout."""
    n = x.shape[-1]
    c = math.isqrt(n - 1) + 1
    p = -(-n // c)
    padded = np.concatenate([x.astype(np.float32), np.full(x.shape[:-1] + (p * c - n,), fill, np.float32)], -1)
    partials = fn(padded.reshape(x.shape[:-1] + (p, c)), axis=-1, dtype=np.float32)[..., -1]
    return fn(partials, axis=-1, dtype=np.float32)[..., -1]


@pytest.mark.parametrize("n", [1024, 1500])  # 1500: the last chunk is padded
def test_long_reductions_run_in_two_ordered_stages(tdev, n, rng):
    x = rng.standard_normal((3, n)).astype(np.float32)
    x[1, 17] = np.nan
    t = Tensor(x, device=tdev)
    assert_bits(t.sum(axis=1).numpy(), chunked(x, np.cumsum, -0.0))
    assert_bits(t.max(axis=-1).numpy(), x.max(axis=-1))
    h = x.astype(ml_dtypes.bfloat16)
    assert_bits(Tensor(h, device=tdev).sum(axis=1).numpy(), chunked(h, np.cumsum, -0.0).astype(ml_dtypes.bfloat16))


def test_half_sums_accumulate_in_float32(tdev):
    for dt in (np.float16, ml_dtypes.bfloat16):
        x = X.astype(dt)
        assert_bits(Tensor(x, device=tdev).sum(axis=1).numpy(), seq_sum(x, 1).astype(dt))


def test_integer_sum_prod_are_int64(tdev, rng):
    x = rng.integers(0, 256, (4, 6)).astype(np.uint8)
    t = Tensor(x, device=tdev)
    assert_bits(t.sum(axis=0).numpy(), x.sum(axis=0).astype(np.int64))
    assert_bits(t.prod(axis=1, keepdims=True).numpy(), x.astype(np.int64).prod(axis=1, keepdims=True))
    b = x > 100
    assert_bits(Tensor(b, device=tdev).sum().numpy(), np.int64(b.sum()))


def test_float_prod_is_sequential_and_bool_uint8_max_min(tdev, rng):
    x = (X[:, :, :3] * 0.5).astype(np.float32)
    assert_bits(Tensor(x, device=tdev).prod(axis=-1).numpy(), np.cumprod(x, axis=-1, dtype=np.float32)[..., -1])
    b = X > 0.5
    tb = Tensor(b, device=tdev)
    assert_bits(tb.max(axis=0).numpy(), b.max(axis=0))  # any
    assert_bits(tb.min(axis=(1, 2)).numpy(), b.min(axis=(1, 2)))  # all
    u = rng.integers(0, 256, (5, 9)).astype(np.uint8)
    assert_bits(Tensor(u, device=tdev).max(axis=1).numpy(), u.max(axis=1))
    assert_bits(Tensor(u, device=tdev).argmin(axis=0).numpy(), u.argmin(axis=0))


def test_max_min_argmax_with_nan_match_numpy(tdev, rng):
    x = X.copy()
    x[1, 2, 3] = np.nan
    x[2, 0, :] = x[2, 0, 0]  # ties: argmax returns the first
    t = Tensor(x, device=tdev)
    assert_bits(t.max(axis=2).numpy(), x.max(axis=2))
    assert_bits(t.min(axis=(0, 1), keepdims=True).numpy(), x.min(axis=(0, 1), keepdims=True))
    assert_bits(t.argmax(axis=2).numpy(), x.argmax(axis=2))
    assert_bits(t.argmin(axis=0).numpy(), x.argmin(axis=0))
    assert_bits(t.argmax().numpy(), np.int64(x.argmax()))
    i = rng.integers(-5, 5, (4, 7)).astype(np.int32)
    assert_bits(Tensor(i, device=tdev).argmax(axis=1, keepdims=True).numpy(), i.argmax(axis=1, keepdims=True))


def test_mean_divides_the_sequential_sum(tdev):
    assert_bits(Tensor(X, device=tdev).mean(axis=1).numpy(), seq_sum(X, 1) / np.float32(4))
    h = X.astype(np.float16)
    assert_bits(Tensor(h, device=tdev).mean(axis=-1).numpy(), (seq_sum(h, -1) / np.float32(5)).astype(np.float16))


def test_reduction_fuses_its_input(tdev):
    t = Tensor(X, device=tdev)
    before = sum(s.launches for s in tdev.stats.kernels.values())
    got = (t * 2 - 1).abs().sum(axis=0).numpy()
    assert sum(s.launches for s in tdev.stats.kernels.values()) - before == 1
    assert_bits(got, seq_sum(np.abs(X * 2 - 1), 0))


def seq_matmul(a, b, acc=np.float32):
    """Sequential k-loop matmul with separate multiply and add roundings (numpy broadcasting)."""
    a, b = a.astype(acc), b.astype(acc)
    out = np.zeros(np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1])), acc)
    for k in range(a.shape[-1]):
        out = out + a[..., :, k:k + 1] * b[..., k:k + 1, :]
    return out


@pytest.mark.parametrize("ashape,bshape", [((5, 7), (7, 3)), ((2, 4, 6), (6, 5)), ((3, 1, 2, 4), (2, 4, 3))])
def test_matmul_is_a_sequential_k_sum(tdev, ashape, bshape, rng):
    a, b = rng.standard_normal(ashape).astype(np.float32), rng.standard_normal(bshape).astype(np.float32)
    assert_bits((Tensor(a, device=tdev) @ Tensor(b, device=tdev)).numpy(), seq_matmul(a, b))


def test_matmul_vectors_halves_and_ints(tdev, rng):
    a, b = rng.standard_normal(6).astype(np.float32), rng.standard_normal((6, 2)).astype(np.float32)
    assert_bits((Tensor(a, device=tdev) @ Tensor(b, device=tdev)).numpy(), seq_matmul(a[None], b)[0])
    h, g = a.astype(np.float16).reshape(2, 3), b.astype(np.float16)[:3]
    assert_bits((Tensor(h, device=tdev) @ Tensor(g, device=tdev)).numpy(), seq_matmul(h, g).astype(np.float16))
    i, j = rng.integers(-9, 9, (3, 4)).astype(np.int32), rng.integers(-9, 9, (4, 2)).astype(np.int32)
    assert_bits((Tensor(i, device=tdev) @ Tensor(j, device=tdev)).numpy(), i @ j)


def test_softmax_and_log_softmax_close_to_numpy(tdev):
    t = Tensor(X, device=tdev)
    x64 = X.astype(np.float64)
    e = np.exp(x64 - x64.max(1, keepdims=True))
    sm = (e / e.sum(1, keepdims=True)).astype(np.float32)
    assert ulp_distance(t.softmax(1).numpy(), sm).max() <= 8
    lsm = ((x64 - x64.max(-1, keepdims=True)) - np.log(np.exp(x64 - x64.max(-1, keepdims=True)).sum(-1, keepdims=True)))
    assert np.abs(t.log_softmax().numpy() - lsm).max() < 1e-6 * (1 + np.abs(lsm).max())


@pytest.mark.parametrize("make,exc,msg", [
    (lambda t: t @ Tensor(np.zeros((4, 2), np.float32), device=t.ctx), ShapeError, "do not align"),
    (lambda t: t.reshape(5, 4, 3) @ Tensor(np.zeros((2, 3, 1), np.float32), device=t.ctx), ShapeError, "broadcast"),
    (lambda t: (t > 0) @ (t > 0).T, DTypeError, "bool"),
    (lambda t: t[:, :0].max(axis=1), ValueError, "no identity"),
    (lambda t: t.sum(axis=(0, 0)), ShapeError, "repeated"),
], ids=["k-mismatch", "batch-mismatch", "bool", "empty-max", "repeated-axis"])
def test_bad_reductions_raise_before_any_kernel(tdev, make, exc, msg):
    t = Tensor(X.reshape(3, 20), device=tdev) * 1
    before = sum(s.launches for s in tdev.stats.kernels.values())
    with pytest.raises(exc, match=msg):
        make(t)
    assert sum(s.launches for s in tdev.stats.kernels.values()) == before
