"""The tiled matmul kernel (gputwin/tensor/matmul_kernel.py) on the device under test: bits equal to the
sequential k-order rule of docs/tensor.md for every block shape, ragged tile edges, batch broadcasting,
every dtype `@` takes, special values, the two-stage split, empty operands, and shapes whose M*N*K
product space is past 2**31 (once a ShapeError)."""
import math

import ml_dtypes
import numpy as np
import pytest

from gputwin.compiler import compile_kernel
from gputwin.tensor import ShapeError, Tensor, full, get_context
from gputwin.tensor import matmul_kernel as M
from tests.tensor.bitcheck import assert_bits


def seq_matmul(a, b, acc=np.float32):
    """out = -0.0, then out = out + a[..., k] * b[k, ...] for k in order: two roundings per step."""
    a, b = a.astype(acc), b.astype(acc)
    shape = np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1]))
    out = np.full(shape, -0.0 if np.dtype(acc).kind == "f" else 0, acc)
    with np.errstate(all="ignore"):
        for k in range(a.shape[-1]):
            out = out + a[..., :, k:k + 1] * b[..., k:k + 1, :]
    return out


def _run(tdev, a, b):
    return (Tensor(a, device=tdev) @ Tensor(b, device=tdev)).numpy()


@pytest.mark.parametrize("ashape,bshape", [
    ((5, 7), (7, 3)),              # one 8 x 4 workgroup (1 x 1 outputs per work-item)
    ((1, 40), (40, 100)),          # a 1 x 16 workgroup of 1 x 4 outputs
    ((20, 33), (33, 30)),          # 2 x 2 per work-item, k not a multiple of the 16-wide tile
    ((300, 3, 2), (300, 2, 4)),    # many tiny matrices: 4 x 4 work-items each
    ((65, 47), (47, 130)),         # 4 x 4 per work-item, ragged last row and column tiles
    ((2, 1, 33, 17), (3, 17, 70)),  # batch broadcast both ways, never materialised
    ((4, 70, 9), (9, 5)),          # batched against a shared matrix
])
def test_tiled_matmul_equals_the_sequential_rule(tdev, ashape, bshape, rng):
    a, b = rng.standard_normal(ashape).astype(np.float32), rng.standard_normal(bshape).astype(np.float32)
    assert_bits(_run(tdev, a, b), seq_matmul(a, b))


def test_block_shapes_follow_the_result():
    assert M.block_shape(5, 3) == dict(ty=8, tx=4, tm=1, tn=1)
    assert M.block_shape(1, 1000) == dict(ty=1, tx=16, tm=1, tn=4)
    assert M.block_shape(20, 33) == dict(ty=16, tx=16, tm=2, tn=4)


def test_vector_operands_follow_numpy_shapes(tdev, rng):
    v, m = rng.standard_normal(40).astype(np.float32), rng.standard_normal((40, 3)).astype(np.float32)
    assert _run(tdev, v, m).shape == (3,)
    assert_bits(_run(tdev, v, m), seq_matmul(v[None], m)[0])
    assert_bits(_run(tdev, m.T.copy(), v), seq_matmul(m.T, v[:, None])[:, 0])
    assert_bits(_run(tdev, v, v), seq_matmul(v[None], v[:, None])[0, 0])


@pytest.mark.parametrize("dt", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
def test_half_inputs_accumulate_in_float32_and_round_once(tdev, dt, rng):
    a, b = rng.standard_normal((37, 21)).astype(dt), rng.standard_normal((21, 35)).astype(dt)
    got = _run(tdev, a, b)
    assert got.dtype == dt
    assert_bits(got, seq_matmul(a, b).astype(dt))


@pytest.mark.parametrize("dt", [np.int32, np.int64, np.uint8])
def test_integer_matmul_wraps_like_numpy(tdev, dt, rng):
    hi = 200 if dt == np.uint8 else 1 << 20
    a = rng.integers(0, hi, (19, 23)).astype(dt)
    b = rng.integers(0, hi, (23, 34)).astype(dt)
    got = _run(tdev, a, b)
    assert got.dtype == dt
    assert_bits(got, a @ b)


def test_mixed_dtypes_promote_before_the_products(tdev, rng):
    a, b = rng.integers(-9, 9, (6, 18)).astype(np.int32), rng.standard_normal((18, 5)).astype(np.float32)
    got = _run(tdev, a, b)
    assert got.dtype == np.float32
    assert_bits(got, seq_matmul(a.astype(np.float32), b))


def test_special_values_and_negative_zero(tdev):
    a = np.array([[-0.0, -0.0], [np.inf, 1.0], [np.nan, 2.0], [1e38, 1e38]], np.float32)
    b = np.array([[1.0, 0.0, 3.0], [2.0, -1.0, np.inf]], np.float32)
    got = _run(tdev, a, b)
    want = seq_matmul(a, b)
    assert np.signbit(got[0, 0]) and got[0, 0] == 0          # -0.0 + (-0.0 * 1) + (-0.0 * 2) stays -0.0
    assert_bits(got, want)                                   # inf * 0 = NaN, 1e38 * 2 products overflow to inf


def _two_stage(a, b):
    """docs/tensor.md's long-reduction order: chunks of ceil(sqrt(K)) summed in order, then the partials."""
    k = a.shape[-1]
    chunk = math.isqrt(k - 1) + 1
    parts = [seq_matmul(a[..., s:s + chunk], b[..., s:s + chunk, :]) for s in range(0, k, chunk)]
    out = np.full(parts[0].shape, -0.0, np.float32)
    for p in parts:
        out = out + p
    return out


def test_long_k_with_few_outputs_runs_in_two_ordered_stages(tdev, rng):
    a, b = rng.standard_normal((3, 1500)).astype(np.float32), rng.standard_normal((1500, 4)).astype(np.float32)
    assert_bits(_run(tdev, a, b), _two_stage(a, b))


def test_constant_and_strided_operands_are_read_in_place(tdev, rng):
    x = rng.standard_normal((9, 30)).astype(np.float32)
    got = (full((5, 30), 0.5, device=tdev) @ Tensor(x, device=tdev).T).numpy()     # a constant, a transposed view
    assert_bits(got, seq_matmul(np.full((5, 30), 0.5, np.float32), x.T))
    y = Tensor(x, device=tdev)[::2, 1::3]                                              # a sliced view: (5, 10)
    assert_bits((y @ y.T).numpy(), seq_matmul(x[::2, 1::3], x[::2, 1::3].T))


def test_empty_operands(tdev):
    assert _run(tdev, np.ones((0, 5), np.float32), np.ones((5, 3), np.float32)).shape == (0, 3)
    got = _run(tdev, np.ones((4, 0), np.float32), np.ones((0, 3), np.float32))
    assert got.shape == (4, 3) and not np.signbit(got).any() and not got.any()   # an empty sum is +0.0


def test_a_result_past_2_31_elements_is_refused_before_any_allocation(tdev):
    a = Tensor(np.zeros((50000, 1), np.float32), device=tdev)
    with pytest.raises(ShapeError, match="more than 2147483647 elements"):
        a @ a.T                                                  # 2.5e9 outputs


def test_product_space_past_2_31_is_no_longer_a_shape_error():
    """(1291, 1291) @ (1291, 1291): 2.15e9 products, once a ShapeError. Run on the CPU device (native
    code, ~1 s); small integers keep every sum exact, so numpy's result is the reference."""
    rng = np.random.default_rng(5)
    a, b = (rng.integers(-3, 4, (1291, 1291)).astype(np.float32) for _ in range(2))
    assert np.array_equal(_run(get_context("CPU"), a, b), a @ b)


def test_8192x512_by_512x1024_builds_one_kernel_of_the_right_grid(tdev, monkeypatch):
    """The issue's second shape: built and compiled (not run: 4.3e9 products take minutes emulated)."""
    seen = []
    monkeypatch.setattr(type(tdev), "run", lambda self, spec, inputs, out: seen.append(spec))
    r = Tensor(np.zeros((8192, 512), np.float32), device=tdev) @ Tensor(np.zeros((512, 1024), np.float32),
                                                                           device=tdev)
    assert r.shape == (8192, 1024)
    (spec,) = seen
    assert (spec.ty, spec.tx, spec.tm, spec.tn, spec.parts) == (16, 16, 4, 4, 1)
    assert M.launch_dims(spec) == (((8192 // 64) * (1024 // 64), 1, 1), (256, 1, 1))
    assert compile_kernel(M.build(spec), "gfx1100")[:4] == b"\x7fELF"
