"""The numpy surface's elementwise ops on the device under test vs numpy, bit for bit: // % ^ << >>,
floor/ceil/trunc/rint/round, isnan/isinf/isfinite, clip (gputwin/tensor/kernel_math.py, ops.py)."""
import re

import ml_dtypes
import numpy as np
import pytest

import gputwin.tensor as gt
from gputwin.tensor import DTypeError, Tensor
from gputwin.tensor import dtypes as D
from tests.tensor.bitcheck import assert_bits
from tests.tensor.test_ops import FLOATS, data

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's own NaN/zero-division warnings
INTS = [D.int32, D.int64, D.uint8]


def launches(tdev) -> int:
    return sum(s.launches for s in tdev.stats.kernels.values())


def divmod_operands(dtype):
    """Dividends and divisors covering numpy's sign rules, zero divisors, inf/NaN and exponent gaps."""
    a, b = data(dtype, 48, seed=0), data(dtype, 48, seed=1)
    if D.is_float(dtype):
        edge_a = [7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 1.0, -1.0, np.inf, 5.0, np.nan, 6.0, -6.0, 1e-3, 3e4, 0.5]
        edge_b = [2.0, 2.0, -2.0, -2.0, 3.0, -3.0, 0.0, -0.0, 2.0, np.inf, 2.0, 3.0, 3.0, 7.0, 1e-3, -np.inf]
        a[:16], b[:16] = edge_a, edge_b
    elif dtype != D.uint8:
        info = np.iinfo(dtype)
        a[:6], b[:6] = [7, -7, 7, -7, info.min, 5], [2, 2, -2, -2, -1, 0]
    else:
        b[:2] = 0
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_floor_divide_and_remainder_match_numpy_bit_for_bit(tdev, dtype):
    a, b = divmod_operands(dtype)
    ta, tb = Tensor(a, device=tdev), Tensor(b, device=tdev)
    assert_bits((ta // tb).numpy(), a // b)
    assert_bits((ta % tb).numpy(), a % b)
    q, r = divmod(ta, tb)
    assert_bits(q.numpy(), a // b)
    assert_bits(r.numpy(), a % b)


def test_float32_floor_divide_and_remainder_on_random_bit_patterns(tdev):
    """Every float32 class at once: denormals, huge exponent gaps (fmod's int64 reduction), NaN, inf."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2**32, 1536, dtype=np.uint64).astype(np.uint32).view(np.float32)
    b = rng.integers(0, 2**32, 1536, dtype=np.uint64).astype(np.uint32).view(np.float32)
    b[:512] = rng.standard_normal(512).astype(np.float32)
    ta, tb = Tensor(a, device=tdev), Tensor(b, device=tdev)
    assert_bits((ta // tb).numpy(), a // b)
    assert_bits((ta % tb).numpy(), a % b)


@pytest.mark.parametrize("a_dt,b_dt", [(D.int32, D.float32), (D.uint8, D.int64), (D.float16, D.bfloat16),
                                       (D.int32, D.int64), (D.uint8, D.float16)])
def test_floor_divide_and_remainder_promote_like_numpy(tdev, a_dt, b_dt):
    a, b = divmod_operands(a_dt)[0], divmod_operands(b_dt)[1]
    dt = D.promote(a_dt, b_dt)
    got = (Tensor(a, device=tdev) // Tensor(b, device=tdev)).numpy()
    assert got.dtype == dt
    assert_bits(got, a.astype(dt) // b.astype(dt))
    assert_bits((Tensor(a, device=tdev) % Tensor(b, device=tdev)).numpy(), a.astype(dt) % b.astype(dt))


def test_weak_scalars_keep_the_dtype_for_the_new_operators(tdev):
    u, h = data(D.uint8, positive=True), data(D.float16)
    tu, th = Tensor(u, device=tdev), Tensor(h, device=tdev)
    assert_bits((tu // 7).numpy(), u // np.uint8(7))
    assert_bits((200 % tu).numpy(), np.uint8(200) % u)
    assert_bits((th % 2.5).numpy(), h % np.float16(2.5))
    assert_bits((tu ^ 0xF0).numpy(), u ^ np.uint8(0xF0))
    assert_bits((tu << 3).numpy(), u << np.uint8(3))
    assert (Tensor(np.array([1, 2], np.int32), device=tdev) // 1.5).dtype == D.float32   # as numpy: int // float


@pytest.mark.parametrize("dtype", [D.bool_] + INTS)
def test_xor_matches_numpy(tdev, dtype):
    a, b = data(dtype, seed=0), data(dtype, seed=1)
    assert_bits((Tensor(a, device=tdev) ^ Tensor(b, device=tdev)).numpy(), a ^ b)


@pytest.mark.parametrize("dtype", INTS)
def test_shifts_follow_numpy_for_every_count(tdev, dtype):
    """Counts past the width (or negative) give 0, or -1 for a right shift of a negative value: numpy's
    rule, not the hardware's count modulo the width."""
    bits = np.dtype(dtype).itemsize * 8
    a = data(dtype, 48, seed=2)
    counts = np.arange(-4, 44) % 256 if dtype == D.uint8 else np.arange(-4, bits + 4, (bits + 8) // 48 + 1)
    counts = np.resize(counts, a.shape).astype(dtype)
    ta, tc = Tensor(a, device=tdev), Tensor(counts, device=tdev)
    assert_bits((ta << tc).numpy(), a << counts)
    assert_bits((ta >> tc).numpy(), a >> counts)


def test_shift_of_mixed_integer_dtypes_promotes(tdev):
    a, c = np.array([1, -8, 3], np.int32), np.array([2, 1, 40], np.int64)
    got = (Tensor(a, device=tdev) >> Tensor(c, device=tdev)).numpy()
    assert_bits(got, a >> c)
    assert got.dtype == np.int64


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", ["floor", "ceil", "trunc", "rint"])
def test_rounding_functions_are_exact_with_signed_zeros(tdev, fn, dtype):
    x = data(dtype, 64, seed=3)
    x[-16:] = np.array([0.5, -0.5, 1.5, -1.5, 2.5, -2.5, -0.2, 0.2, 8388607.5, -8388609.0, 1e-45, -1e-45,
                        0.49999997, -0.49999997, 4097.5, -3.5], np.float32).astype(dtype)
    got = getattr(Tensor(x, device=tdev), fn)().numpy()
    assert_bits(got, getattr(np, fn)(x))


def test_round_with_decimals_matches_numpy(tdev):
    x = data(D.float32, 48, seed=4)
    t = Tensor(x, device=tdev)
    for d in (0, 1, 2, -1, -2):
        assert_bits(t.round(d).numpy(), np.round(x, d))
    h = data(D.float16, 48, seed=4)
    assert_bits(Tensor(h, device=tdev).round(2).numpy(), np.round(h, 2))
    i = np.array([155, -155, -150, 150, 149, -151, 5, -5, 0, 2**31 - 1 - 7], np.int64)
    assert_bits(Tensor(i, device=tdev).round(-1).numpy(), np.round(i, -1))
    assert_bits(Tensor(i.astype(np.int32), device=tdev).round(2).numpy(), np.round(i.astype(np.int32), 2))


@pytest.mark.parametrize("dtype", [D.bool_] + INTS)
def test_rounding_of_integers_keeps_or_promotes_the_dtype_as_numpy(tdev, dtype):
    x = data(dtype, 16, seed=5)
    t = Tensor(x, device=tdev)
    for fn in ("floor", "ceil", "trunc"):
        assert_bits(getattr(t, fn)().numpy(), getattr(np, fn)(x))
    want = np.rint(x)
    assert t.rint().dtype == (D.float32 if want.dtype == np.float64 else want.dtype)
    np.testing.assert_array_equal(t.rint().numpy(), want.astype(t.rint().dtype))


@pytest.mark.parametrize("dtype", FLOATS + [D.int32, D.bool_])
def test_isnan_isinf_isfinite(tdev, dtype):
    x = data(dtype, 48, seed=6)
    t = Tensor(x, device=tdev)
    for fn in ("isnan", "isinf", "isfinite"):
        assert_bits(getattr(t, fn)().numpy(), getattr(np, fn)(x))


@pytest.mark.parametrize("dtype", FLOATS)
def test_clip_with_scalar_bounds_matches_numpy(tdev, dtype):
    x = data(dtype, 48, seed=8)
    x[:4] = [-0.0, 0.0, np.nan, -np.inf]
    t = Tensor(x, device=tdev)
    wide = x.astype(np.float32)   # numpy clips bfloat16 in float32; clipping is exact either way

    def ref(lo, hi):
        return np.clip(wide, lo if lo is None else np.float32(lo), hi if hi is None else np.float32(hi)).astype(dtype)
    assert_bits(t.clip(0.0, 2.5).numpy(), ref(0.0, 2.5))          # -0.0 stays -0.0: x wins ties
    assert_bits(t.clip(None, 1.0).numpy(), ref(None, 1.0))
    assert_bits(t.clip(3.0, 1.0).numpy(), ref(3.0, 1.0))          # lo > hi: hi
    assert_bits(t.clip(np.nan, 1.0).numpy(), ref(np.nan, 1.0))


def test_clip_with_tensor_bounds_and_promotion(tdev):
    x, lo = data(D.float32, 48, seed=9), data(D.float32, 48, seed=10)
    lo[lo == 0] = 1.0  # numpy's array-bound loops differ among themselves on +-0 ties
    got = Tensor(x, device=tdev).clip(Tensor(lo, device=tdev), 100.0).numpy()
    assert_bits(got, np.clip(x, lo, np.float32(100.0)))
    i = np.array([-5, 0, 3, 9], np.int32)
    got = Tensor(i, device=tdev).clip(0.5, 4).numpy()
    assert got.dtype == np.float32   # numpy: float64; gputwin has no float64
    assert_bits(got, np.clip(i, 0.5, 4).astype(np.float32))
    u = np.array([0, 7, 200], np.uint8)
    assert_bits(Tensor(u, device=tdev).clip(2, 100).numpy(), np.clip(u, 2, 100))


@pytest.mark.parametrize("make, words", [
    (lambda b, f: b // b, "floordiv of bool tensors gives int8"),
    (lambda b, f: b << b, "shl of bool tensors gives int8"),
    (lambda b, f: f ^ f, "^ needs bool or integer tensors, got float32"),
    (lambda b, f: f >> 1, ">> needs integer tensors, got float32"),
], ids=["bool-floordiv", "bool-shift", "float-xor", "float-shift"])
def test_unsupported_dtypes_raise_before_any_kernel(tdev, make, words):
    b = Tensor(np.zeros(3, bool), device=tdev)
    f = Tensor(np.zeros(3, np.float32), device=tdev) + 1
    before = launches(tdev)
    with pytest.raises(DTypeError, match=re.escape(words)):
        make(b, f)
    assert launches(tdev) == before


def test_new_ops_fuse_into_one_kernel(tdev):
    x = data(D.float32, 48, seed=11)
    t = Tensor(x, device=tdev)
    before = launches(tdev)
    got = ((t // 0.75) % 3.0).floor().clip(-1.0, 1.0).numpy()
    assert launches(tdev) == before + 1
    assert_bits(got, np.clip(np.floor((x // np.float32(0.75)) % np.float32(3.0)), np.float32(-1), np.float32(1)))


def test_bfloat16_rounding_matches_ml_dtypes(tdev):
    x = (np.arange(-24, 24) * 0.37).astype(ml_dtypes.bfloat16)
    t = Tensor(x, device=tdev)
    assert_bits(gt.rint(t).numpy(), np.rint(x))
    assert_bits((t // 0.5).numpy(), x // ml_dtypes.bfloat16(0.5))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_fmod_and_sign_match_numpy(tdev, dtype):
    a, b = divmod_operands(dtype)
    ta, tb = Tensor(a, device=tdev), Tensor(b, device=tdev)
    assert_bits(gt.fmod(ta, tb).numpy(), np.fmod(a, b))
    want = np.sign(a.astype(np.float32)).astype(dtype) if dtype == D.bfloat16 else np.sign(a)
    assert_bits(np.sign(ta).numpy(), want)


def test_sign_of_zeros_and_bools(tdev):
    z = np.array([-0.0, 0.0, np.nan], np.float32)
    assert_bits(Tensor(z, device=tdev).sign().numpy(), np.sign(z))    # sign(-0.0) is +0.0, as numpy
    with pytest.raises(DTypeError, match="sign of a bool"):
        Tensor(np.ones(2, bool), device=tdev).sign()


@pytest.mark.parametrize("dtype", FLOATS)
def test_scalar_powers_take_numpys_exact_fast_paths(tdev, dtype):
    """x**2 is x*x, x**0.5 sqrt, x**-1 1/x, x**1 x, x**0 1, exactly (the general pow has a ULP bound)."""
    x = data(dtype, 48, seed=12)
    t = Tensor(x, device=tdev)
    wide = x.astype(np.float32)
    for e in (2, 0.5, -1, 1, 0):
        want = (wide ** np.float32(e)).astype(dtype) if dtype == D.bfloat16 else x ** e
        assert_bits((t ** e).numpy(), want)


@pytest.mark.parametrize("dtype", INTS)
def test_integer_power_wraps_like_numpy(tdev, dtype):
    rng = np.random.default_rng(13)
    i = rng.integers(0 if dtype == D.uint8 else -50, 50, 48).astype(dtype)
    e = rng.integers(0, 70, 48).astype(dtype)
    ti, te = Tensor(i, device=tdev), Tensor(e, device=tdev)
    assert_bits((ti ** te).numpy(), i ** e)
    assert_bits((ti ** 3).numpy(), i ** 3)
    assert_bits((3 ** te).numpy(), dtype.type(3) ** e)
    with pytest.raises(ValueError, match="negative integer powers"):
        ti ** Tensor(np.array([1, -2], dtype if dtype != D.uint8 else np.int32), device=tdev)
