"""Dtype promotion (gputwin/tensor/dtypes.py): numpy's table without float64, bfloat16 as documented."""
import itertools

import numpy as np
import pytest

from gputwin.tensor import dtypes as D

NUMPY_TYPES = [D.bool_, D.uint8, D.int32, D.int64, D.float16, D.float32]


@pytest.mark.parametrize("a,b", list(itertools.product(NUMPY_TYPES, NUMPY_TYPES)))
def test_promotion_is_numpys_with_float64_demoted(a, b):
    ref = np.result_type(a, b)
    assert D.promote(a, b) == (D.float32 if ref == np.float64 else ref)


@pytest.mark.parametrize("other,expected", [(D.bool_, D.bfloat16), (D.uint8, D.bfloat16), (D.int32, D.float32),
                                            (D.int64, D.float32), (D.float16, D.float32), (D.float32, D.float32)])
def test_bfloat16_promotion(other, expected):
    assert D.promote(D.bfloat16, other) == expected == D.promote(other, D.bfloat16)


def test_bfloat16_agrees_with_ml_dtypes_where_it_defines_a_result():
    for other in (D.bool_, D.uint8, D.float32):
        assert D.promote(D.bfloat16, other) == np.result_type(D.bfloat16, other)


def test_python_scalars_are_weak():
    assert D.promote_scalar(D.float16, 2.5) == D.float16
    assert D.promote_scalar(D.uint8, 7) == D.uint8
    assert D.promote_scalar(D.int32, 1.5) == D.float32
    assert D.promote_scalar(D.bool_, 3) == D.int64
    with pytest.raises(OverflowError, match="300"):
        D.promote_scalar(D.uint8, 300)


@pytest.mark.parametrize("bad", ["float64x", np.complex64, np.uint16, "int8"])
def test_unsupported_dtypes_are_named(bad):
    with pytest.raises(D.DTypeError, match="supported: bool, uint8"):
        D.to_dtype(bad)


def test_float64_data_becomes_float32():
    assert D.dtype_of_data(np.zeros(2)) == D.float32
    assert D.dtype_of_data(np.zeros(2, np.int64)) == D.int64
