"""tests/tensor/bitcheck.py compares NaN as NaN: the checker itself must catch a NaN turned into a number
(the relu(NaN) -> +0 mutant, against tensor/spec.py's NaN propagation)."""
import ml_dtypes
import numpy as np
import pytest

from gputwin.compiler import ir
from gputwin.tensor import Tensor, lower
from tests.tensor.bitcheck import NAN_MISMATCH, assert_bits, bits, ulp_distance

FLOATS = [np.float16, np.float32, np.float64, ml_dtypes.bfloat16]


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: np.dtype(d).name)
def test_a_nan_never_equals_a_number(dt):
    ref = np.array([1.0, np.nan, -2.0], dt)
    for number in (0.0, -0.0, np.inf):
        got = ref.copy()
        got[1] = number
        with pytest.raises(AssertionError, match="1 of 3 elements differ; first at flat 1"):
            assert_bits(got, ref)
        assert ulp_distance(got, ref)[1] == NAN_MISMATCH and ulp_distance(got, ref)[0] == 0


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: np.dtype(d).name)
def test_nans_of_any_sign_and_payload_compare_equal(dt):
    width = np.dtype(dt).itemsize
    quiet = bits(np.array([np.nan], dt))[0]
    other = np.array([quiet | (1 << (8 * width - 1)) | 1], f"u{width}").view(dt)   # -NaN, payload 1
    assert np.isnan(other.astype(np.float64))[0]
    assert_bits(other, np.array([np.nan], dt))
    assert ulp_distance(other, np.array([np.nan], dt))[0] == 0


def test_the_relu_nan_to_zero_mutant_fails_the_relu_check(tdev, monkeypatch):
    """Plant relu(x) = x > 0 ? x : 0 (NaN -> +0) in the tensor lowering, on a fresh program cache: the
    relu check of test_ops (against numpy's NaN-propagating maximum) must now fail."""
    monkeypatch.setitem(lower._OPS, "relu", lambda x: ir.where(x > 0, x, ir.const(0, x.dtype)))
    monkeypatch.setattr(tdev, "programs", {})
    x = np.array([1.5, -2.0, np.nan, 0.0, -0.0, np.inf], np.float32)
    got = Tensor(x, device=tdev).relu().numpy()
    assert got[2] == 0.0                                     # the mutant is live
    with pytest.raises(AssertionError, match="first at flat 2"):
        assert_bits(got, np.maximum(x, np.float32(0)))
