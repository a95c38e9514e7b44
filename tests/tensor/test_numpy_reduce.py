"""The numpy surface's reductions, scans and sorts on the device under test vs numpy: var/std, any/all,
cumsum/cumprod, dot, sort/argsort (gputwin/tensor/reduce.py, sorting.py)."""
import ml_dtypes
import numpy as np
import pytest

from gputwin.tensor import ShapeError, Tensor, sorting
from gputwin.tensor import dtypes as D
from tests.tensor.bitcheck import assert_bits
from tests.tensor.test_ops import FLOATS, data
from tests.tensor.test_reduce import X, seq_sum

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def seq_var(x: np.ndarray, axis, ddof=0) -> np.ndarray:
    """numpy's var operation order (sum, / n, subtract, square, sum, / (n - ddof)) with gputwin's
    sequential float32 sums; halves and integers in float32, rounded once at the end."""
    axes = tuple(range(x.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    axes = tuple(a % x.ndim for a in axes)
    n = int(np.prod([x.shape[a] for a in axes]))
    xf = x.astype(np.float32)
    m = np.expand_dims(seq_sum(xf, axes) / np.float32(n), axes)
    s = seq_sum((xf - m) * (xf - m), axes) / np.float32(max(n - ddof, 0))
    return s.astype(x.dtype if D.is_float(x.dtype) else np.float32)


@pytest.mark.parametrize("axis,ddof", [(None, 0), (1, 1), ((0, 2), 0), (-1, 5)])
def test_var_and_std_follow_numpys_order_bit_for_bit(tdev, axis, ddof):
    t = Tensor(X, device=tdev)
    want = seq_var(X, axis, ddof)
    assert_bits(t.var(axis=axis, ddof=ddof).numpy(), want)
    assert_bits(t.std(axis=axis, ddof=ddof).numpy(), np.sqrt(want))
    np.testing.assert_allclose(t.var(axis=axis, ddof=ddof).numpy(), np.var(X, axis=axis, ddof=ddof), rtol=2e-6)


@pytest.mark.parametrize("dtype", [D.float16, D.bfloat16, D.int32, D.uint8])
def test_var_of_halves_and_integers_computes_in_float32(tdev, dtype):
    x = (X * 4).astype(dtype)
    got = Tensor(x, device=tdev).var(axis=1, keepdims=True)
    assert_bits(got.numpy(), np.expand_dims(seq_var(x, 1), 1))
    assert got.dtype == (dtype if D.is_float(dtype) else D.float32)


@pytest.mark.parametrize("dtype", FLOATS + [D.int32, D.bool_])
def test_any_and_all_treat_nan_as_true(tdev, dtype):
    x = data(dtype, 24, seed=3).reshape(4, 6)
    if D.is_float(dtype):
        x[1] = 0
        x[2] = np.nan
    t = Tensor(x, device=tdev)
    for axis in (None, 0, 1):
        assert_bits(t.any(axis=axis).numpy(), np.any(x, axis=axis))
        assert_bits(t.all(axis=axis).numpy(), np.all(x, axis=axis))


def test_any_and_all_of_empty_axes(tdev):
    e = Tensor(np.zeros((3, 0), np.float32), device=tdev)
    assert_bits(e.any(axis=1).numpy(), np.zeros(3, bool))
    assert_bits(e.all(axis=1, keepdims=True).numpy(), np.ones((3, 1), bool))
    assert_bits(e.all().numpy(), np.array(True))


@pytest.mark.parametrize("dtype", FLOATS + [D.int32, D.int64, D.uint8, D.bool_])
def test_cumsum_matches_numpy_bit_for_bit(tdev, dtype):
    """numpy's accumulate rounds every partial to the result dtype: halves too, so this is exact."""
    x = data(dtype, 48, seed=4).reshape(4, 12)
    if D.is_float(dtype):
        x = np.where(np.isfinite(x.astype(np.float32)), x, 1).astype(dtype)
    t = Tensor(x, device=tdev)
    for axis in (None, 0, 1):
        want = np.cumsum(x, axis=axis)
        want = want.astype(np.int64) if want.dtype == np.uint64 else want   # gputwin has no uint64
        assert_bits(t.cumsum(axis=axis).numpy(), want)


def test_cumprod_and_scan_dtype(tdev):
    x = np.array([[1.5, -2, 0.5, 3], [-0.0, 1, 2, np.inf]], np.float32)
    t = Tensor(x, device=tdev)
    assert_bits(t.cumprod(axis=1).numpy(), np.cumprod(x, axis=1))
    i = np.array([100, 200, 50], np.int32)
    assert_bits(Tensor(i, device=tdev).cumsum(dtype=np.int32).numpy(), np.cumsum(i, dtype=np.int32))
    assert_bits(Tensor(i, device=tdev).cumprod().numpy(), np.cumprod(i))   # int64, no wrap at 2**31
    assert Tensor(np.zeros((2, 0), np.float32), device=tdev).cumsum(axis=1).shape == (2, 0)


def test_dot_follows_numpy_for_every_rank(tdev):
    rng = np.random.default_rng(5)
    v, w = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    a, b = rng.standard_normal((2, 3, 6)).astype(np.float32), rng.standard_normal((4, 6, 5)).astype(np.float32)
    m = rng.standard_normal((6, 5)).astype(np.float32)
    for x, y in [(v, w), (a, w), (a, b), (m.T, m), (a, 2.5)]:
        got = Tensor(x, device=tdev).dot(Tensor(y, device=tdev) if np.ndim(y) else y)
        want = np.dot(x, y).astype(np.float32)
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


SORT_EDGE = [3.0, np.nan, -0.0, 0.0, 1.0, -np.inf, np.nan, 2.0, np.inf, -0.0, 1.0, -7.5]


@pytest.mark.parametrize("rank_max", [2048, 4], ids=["rank", "bitonic"])
@pytest.mark.parametrize("dtype", FLOATS + [D.int32, D.int64, D.uint8, D.bool_])
def test_sort_and_argsort_are_numpys_stable_sort(tdev, dtype, rank_max, monkeypatch):
    """NaNs last in their original order, -0.0 and 0.0 equal (so they keep their order): bit-exact, by
    both methods (rows longer than RANK_MAX use the bitonic network; int64 keys as key/position pairs)."""
    monkeypatch.setattr(sorting, "RANK_MAX", rank_max)
    x = data(dtype, 36, seed=6).reshape(3, 12)
    if D.is_float(dtype):
        x[0] = np.array(SORT_EDGE, np.float32).astype(dtype)
    x[1, :6] = x[1, 6:]   # duplicates
    t = Tensor(x, device=tdev)
    for axis in (-1, 0, None):
        assert_bits(t.sort(axis=axis).numpy(), np.sort(x, axis=axis, kind="stable"))
        assert_bits(t.argsort(axis=axis).numpy(), np.argsort(x, axis=axis, kind="stable"))


def test_sort_of_a_lazy_strided_view_and_errors(tdev, monkeypatch):
    x = data(D.float32, 48, seed=7).reshape(6, 8)
    t = Tensor(x, device=tdev)
    assert_bits((t[::2, ::-1] * 2).sort(axis=0).numpy(), np.sort(x[::2, ::-1] * 2, axis=0, kind="stable"))
    monkeypatch.setattr(sorting, "RANK_MAX", 2)
    assert_bits(t.T[::-1].sort(axis=0).numpy(), np.sort(x.T[::-1], axis=0, kind="stable"))   # gathers a view
    with pytest.raises(ShapeError, match="0-d"):
        Tensor(np.float32(1), device=tdev).sort()
    assert Tensor(np.zeros((0, 3), np.float32), device=tdev).argsort(axis=0).shape == (0, 3)


def test_bfloat16_sort_and_cumsum_match_ml_dtypes(tdev):
    x = np.array(SORT_EDGE, ml_dtypes.bfloat16)
    assert_bits(Tensor(x, device=tdev).sort().numpy(), np.sort(x, kind="stable"))
    y = (np.arange(40) * 1.37).astype(ml_dtypes.bfloat16)
    assert_bits(Tensor(y, device=tdev).cumsum().numpy(), np.cumsum(y))


@pytest.mark.parametrize("n", [1024, 1500])   # >= 1024: chunked (1500: the last chunk is padded)
def test_long_integer_scans_run_in_chunks_and_stay_exact(tdev, n):
    rng = np.random.default_rng(n)
    i = rng.integers(-2**40, 2**40, (2, n))
    t = Tensor(i, device=tdev)
    assert_bits(t.cumsum(axis=1).numpy(), np.cumsum(i, axis=1))
    assert_bits(t.cumprod(axis=1).numpy(), np.cumprod(i, axis=1))   # wraps like numpy's int64
    b = rng.integers(0, 2, n).astype(bool)
    assert_bits(Tensor(b, device=tdev).cumsum().numpy(), np.cumsum(b))


def test_bitonic_sort_of_int64_extremes_equal_to_the_padding(tdev, monkeypatch):
    monkeypatch.setattr(sorting, "RANK_MAX", 2)
    big = np.iinfo(np.int64)
    x = np.array([big.max, big.min, 0, big.max, -1, big.min, big.max], np.int64)   # 7: padded to 8
    t = Tensor(x, device=tdev)
    assert_bits(t.argsort().numpy(), np.argsort(x, kind="stable"))
    assert_bits(t.sort().numpy(), np.sort(x))
