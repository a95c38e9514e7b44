"""numpy calls on Tensors run on the device and return Tensors (__array_ufunc__/__array_function__);
unsupported ones raise TypeError naming the function; module-level functions, linspace, concatenate,
Python conversions (gputwin/tensor/numpy_protocol.py, functions.py, creation.py)."""
import re

import numpy as np
import pytest

import gputwin.tensor as gt
from gputwin.tensor import Tensor
from tests.tensor.bitcheck import assert_bits

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
A = np.array([[1.5, -2.0, 3.0], [0.0, 4.0, -0.0]], np.float32)
B = np.array([[2.0, 0.5, -1.0], [3.0, -4.0, 2.0]], np.float32)


def launches(tdev) -> int:
    return sum(s.launches for s in tdev.stats.kernels.values())


def on_device(tdev, fn):
    """fn's result, asserting it is a Tensor computed by at least one kernel on tdev."""
    before = launches(tdev)
    r = fn()
    assert isinstance(r, Tensor), f"numpy returned {type(r).__name__}, not a Tensor"
    out = r.numpy()
    assert launches(tdev) > before
    return out


UFUNCS = [np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide, np.remainder, np.maximum,
          np.minimum, np.less, np.equal, np.power]
UNARY = [np.negative, np.absolute, np.exp, np.sqrt, np.floor, np.ceil, np.rint, np.isnan, np.square, np.tanh]


@pytest.mark.parametrize("uf", UFUNCS, ids=lambda u: u.__name__)
def test_binary_ufuncs_run_on_the_device(tdev, uf):
    ta, tb = Tensor(A, device=tdev), Tensor(B, device=tdev)
    want = getattr(gt, uf.__name__)(ta, tb).numpy()
    assert_bits(on_device(tdev, lambda: uf(ta, tb)), want)
    assert_bits(on_device(tdev, lambda: uf(A, tb)), want)          # an ndarray operand is uploaded
    if uf not in (np.power, np.maximum, np.minimum):                 # exactly rounded: numpy's own bits
        assert_bits(want, uf(A, B))


@pytest.mark.parametrize("uf", UNARY, ids=lambda u: u.__name__)
def test_unary_ufuncs_run_on_the_device(tdev, uf):
    t = Tensor(A, device=tdev)
    got = on_device(tdev, lambda: uf(t))
    if uf in (np.exp, np.tanh):   # transcendentals: within their documented ULP bounds
        np.testing.assert_allclose(got, uf(A), rtol=3e-7)
    else:
        assert_bits(got, uf(A))


def test_ndarray_operators_with_a_tensor_give_tensors(tdev):
    t = Tensor(B, device=tdev)
    assert_bits(on_device(tdev, lambda: A + t), A + B)
    assert_bits(on_device(tdev, lambda: A // t), A // B)
    np.testing.assert_allclose(on_device(tdev, lambda: A.T @ t), A.T @ B, rtol=1e-6)
    assert_bits(on_device(tdev, lambda: np.float32(2) * t), np.float32(2) * B)


def test_reductions_through_numpy(tdev):
    t = Tensor(A, device=tdev)
    assert_bits(on_device(tdev, lambda: np.sum(t, axis=0)), A.sum(axis=0))
    assert_bits(on_device(tdev, lambda: np.add.reduce(t)), np.add.reduce(A))
    assert_bits(on_device(tdev, lambda: np.maximum.reduce(t, axis=1)), np.maximum.reduce(A, axis=1))
    assert_bits(on_device(tdev, lambda: np.add.accumulate(t, axis=1)), np.add.accumulate(A, axis=1))
    assert_bits(on_device(tdev, lambda: np.cumsum(t)), np.cumsum(A))
    assert_bits(on_device(tdev, lambda: np.max(t, axis=1, keepdims=True)), np.max(A, axis=1, keepdims=True))
    assert_bits(on_device(tdev, lambda: np.mean(t, axis=1)), np.mean(A, axis=1))
    assert_bits(on_device(tdev, lambda: np.var(t, axis=0, correction=1)), t.var(axis=0, ddof=1).numpy())
    assert_bits(on_device(tdev, lambda: np.any(t < -1)), np.array(True))
    ints = t.astype(np.int32)
    assert_bits(on_device(tdev, lambda: np.sum(ints, dtype=np.float32)), np.float32(np.sum(A.astype(np.int32))))
    assert_bits(on_device(tdev, lambda: np.sort(t, axis=0)), np.sort(A, axis=0))
    assert_bits(on_device(tdev, lambda: np.round(t * 1.25, 1)), np.round(A * np.float32(1.25), 1))
    assert_bits(on_device(tdev, lambda: np.clip(t, -1, 2)), np.clip(A, np.float32(-1), np.float32(2)))
    assert_bits(on_device(tdev, lambda: np.where(t > 0, t, 7)), np.where(A > 0, A, np.float32(7)))
    assert_bits(on_device(tdev, lambda: np.concatenate([t, B], axis=None)), np.concatenate([A, B], axis=None))


def test_out_is_written_in_place(tdev):
    t, o = Tensor(A, device=tdev), gt.zeros(2, 3, device=tdev)
    r = np.multiply(t, 2, out=o)
    assert r is o
    assert_bits(o.numpy(), A * 2)
    s = gt.zeros(3, device=tdev)
    assert np.sum(t, axis=0, out=s) is s
    assert_bits(s.numpy(), A.sum(axis=0))
    host_only = gt.zeros(2, 3, device=tdev)
    assert np.add(A, B, out=host_only) is host_only     # host inputs, a Tensor out: computed on its device
    assert_bits(host_only.numpy(), A + B)
    with pytest.raises(TypeError, match="out= must be a gputwin Tensor"):
        np.add(t, t, out=np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match="same_kind"):
        np.add(t, t, out=gt.zeros(2, 3, dtype="int32", device=tdev))


@pytest.mark.parametrize("call, name", [
    (lambda t: np.fft.fft(t), "numpy.fft.fft"),
    (lambda t: np.arctan2(t, t), "numpy.arctan2"),
    (lambda t: np.sin.at(t, [0]), "numpy.sin.at"),
    (lambda t: np.add.outer(t, t), "numpy.add.outer"),
    (lambda t: np.median(t), "numpy.median"),
    (lambda t: np.exp(t, where=t > 0), "where"),
], ids=["fft", "arctan2", "ufunc-at", "outer", "median", "where-kwarg"])
def test_unsupported_numpy_calls_raise_type_error_naming_them(tdev, call, name):
    t = Tensor(A, device=tdev)
    before = launches(tdev)
    with pytest.raises(TypeError, match=re.escape(name)):
        call(t)
    assert launches(tdev) == before


def test_module_level_functions(tdev):
    ta, tb = Tensor(A, device=tdev), Tensor(B, device=tdev)
    assert_bits(gt.maximum(ta, tb).numpy(), np.maximum(A, B))
    assert_bits(gt.where(ta > 0, ta, tb).numpy(), np.where(A > 0, A, B))
    assert_bits(gt.matmul(ta, tb.T).numpy(), (ta @ tb.T).numpy())
    assert_bits(gt.dot(ta, tb.T).numpy(), (ta @ tb.T).numpy())
    assert_bits(gt.sum(ta, axis=1).numpy(), ta.sum(axis=1).numpy())
    assert_bits(gt.logical_xor(ta, tb > 1).numpy(), np.logical_xor(A, B > 1))
    assert_bits(gt.floor_divide(ta, 2).numpy(), A // np.float32(2))
    assert_bits(gt.concatenate([ta, tb], axis=1).numpy(), np.concatenate([A, B], axis=1))
    assert_bits(gt.stack([ta, tb], axis=-1).numpy(), np.stack([A, B], axis=-1))
    assert_bits(gt.expand_dims(ta, (0, 2)).numpy(), np.expand_dims(A, (0, 2)))
    assert [n.numpy().tolist() for n in gt.where(ta)] == [list(v) for v in np.nonzero(A)]
    assert gt.shape(ta) == (2, 3) and gt.ndim(ta) == 2 and gt.size(ta, 1) == 3
    assert_bits(np.zeros_like(ta).numpy(), np.zeros_like(A))
    assert_bits(gt.add(A, B).numpy(), A + B)                 # host data only: the default device computes
    assert_bits(gt.where(A > 0, 1.0, 2.0).numpy(), np.where(A > 0, 1.0, 2.0).astype(np.float32))
    assert_bits(gt.full_like(ta, 7, shape=(4,)).numpy(), np.full(4, 7, np.float32))


def test_isclose_allclose_array_equal_count_nonzero(tdev):
    x = np.float32([1, np.inf, np.nan, 1e-9, -np.inf, 1e5, 3, 0])
    y = np.float32([1.00001, np.inf, np.nan, 0, np.inf, 1.000011e5, 3, -0.0])
    tx = Tensor(x, device=tdev)
    assert_bits(on_device(tdev, lambda: np.isclose(tx, y)), np.isclose(x, y))
    assert_bits(on_device(tdev, lambda: np.isclose(tx, y, equal_nan=True, atol=0.1)),
                np.isclose(x, y, equal_nan=True, atol=0.1))
    assert_bits(gt.isclose(Tensor(np.int32([3, 4]), device=tdev), np.int32([3, 5])).numpy(),
                np.isclose(np.int32([3, 4]), np.int32([3, 5])))
    for a, b, nan in [(x[6:], y[6:], False), (x, y, False), (x, y, True)]:
        assert np.allclose(Tensor(a, device=tdev), b, equal_nan=nan) == np.allclose(a, b, equal_nan=nan)
        assert np.array_equal(Tensor(a, device=tdev), a, equal_nan=nan) == np.array_equal(a, a, equal_nan=nan)
    assert not np.array_equal(tx, x[:3])
    m = np.float32([[0, np.nan, 1], [-0.0, 2, 0]])
    assert_bits(on_device(tdev, lambda: np.count_nonzero(Tensor(m, device=tdev), axis=0)),
                np.count_nonzero(m, axis=0).astype(np.int64))


LINSPACE = [(0, 1, 11, True), (-3.3, 7.1, 1000, True), (1e-3, 5e4, 777, False), (2, -5, 30, True),
            (5, 5, 4, True), (0, 1, 1, True), (0, 10, 7, True), (1e7, 1e7 + 3, 64, True), (0, 1, 0, True)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64])
def test_linspace_equals_numpys_rounded_float64_values(tdev, dtype):
    for start, stop, num, endpoint in LINSPACE:
        got = gt.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, device=tdev)
        assert_bits(got.numpy(), np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))
    t, step = gt.linspace(0, 1, 5, retstep=True, device=tdev)
    assert step == np.linspace(0, 1, 5, retstep=True)[1] and t.dtype == np.float32


def test_python_conversions_and_sizes(tdev):
    s = Tensor(np.float32(2.5), device=tdev)
    assert float(s) == 2.5 and int(s) == 2
    assert f"{s:.3f}" == "2.500" and f"{Tensor(np.int64(42), device=tdev):>4d}" == "  42"
    assert [10, 11, 12][Tensor(np.int32(2), device=tdev)] == 12
    with pytest.raises(TypeError, match="only integer tensors"):
        [1, 2][s]
    with pytest.raises(TypeError, match="format"):
        f"{Tensor(A, device=tdev):.2f}"
    t = Tensor(A, device=tdev)
    host = np.asarray(t)                     # the explicit host copy stays available
    assert type(host) is np.ndarray
    assert_bits(host, A)
    assert t.nbytes == A.nbytes and t.itemsize == 4 and t.astype("bfloat16").nbytes == 12
    assert float(t.sum()) == float(A.sum())


def test_concatenate_and_dot_promote_like_numpy(tdev):
    i = np.array([[1, -2], [3, 4]], np.int32)
    h = np.array([[0.5, 1.5]], np.float16)
    u = np.array([[7, 200]], np.uint8)
    got = gt.concatenate([Tensor(i, device=tdev), Tensor(h, device=tdev)])
    assert got.dtype == np.float32          # numpy: float64; gputwin has no float64
    assert_bits(got.numpy(), np.concatenate([i, h]).astype(np.float32))
    got = np.concatenate([Tensor(u, device=tdev), i])
    assert_bits(got.numpy(), np.concatenate([u, i]))
    assert_bits(gt.dot(Tensor(i, device=tdev), Tensor(i.T, device=tdev)).numpy(), np.dot(i, i.T))
    assert_bits(gt.dot(Tensor(u, device=tdev), Tensor(i, device=tdev)).numpy(), np.dot(u, i))
