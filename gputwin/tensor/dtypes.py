"""The Tensor dtypes and their promotion rules (numpy's, without float64).

Dtypes are plain `numpy.dtype` objects so they interoperate with numpy directly. Promotion follows
numpy 2 (NEP 50) with two documented changes (docs/tensor.md):
- gputwin has no float64: wherever numpy would produce float64 the result is float32 (as JAX does
  with x64 disabled). So int32 + float32 -> float32, int32 / int32 -> float32, mean(int) -> float32.
- bfloat16 (from ml_dtypes) promotes as ml_dtypes defines it (with bool/uint8 -> bfloat16, with
  float32 -> float32); pairs ml_dtypes leaves undefined follow JAX and the float16 analogue:
  bfloat16 + float16 -> float32, bfloat16 + int32/int64 -> float32.
Python scalars are weak (NEP 50): they take the tensor's dtype when their kind fits.
`bfloat16` is resolved on first use (gputwin.deferred): importing ml_dtypes costs ~0.5 s of start-up.
"""
from __future__ import annotations

import numpy as np

from gputwin.deferred import bfloat16 as _bfloat16
from gputwin.deferred import is_bfloat16, np_dtype

bool_ = np.dtype(np.bool_)
uint8 = np.dtype(np.uint8)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)

_NUMPY_NATIVE = {"bool": bool_, "uint8": uint8, "int32": int32, "int64": int64, "float16": float16,
                 "float32": float32}
_NAMES = "bool, uint8, int32, int64, float16, bfloat16, float32"
INTS = (uint8, int32, int64)
DEFAULT_FLOAT = float32
DEFAULT_INT = int64  # numpy's default integer on Linux


def __getattr__(name: str):
    if name == "bfloat16":       # the module attribute, resolved (and ml_dtypes imported) when first read
        return _bfloat16()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class DTypeError(TypeError):
    """An unsupported dtype, or a dtype combination an op does not accept."""


def to_dtype(spec) -> np.dtype:
    """Turn a name, numpy dtype or scalar type into one of the supported dtypes, or raise."""
    if isinstance(spec, str) and spec in _NUMPY_NATIVE:
        return _NUMPY_NATIVE[spec]
    if isinstance(spec, str) and spec == "bfloat16":
        return _bfloat16()
    try:
        dt = np_dtype(spec)
    except TypeError:
        raise DTypeError(f"unknown dtype {spec!r}; supported: {_NAMES}") from None
    if dt not in _NUMPY_NATIVE.values() and not is_bfloat16(dt):
        raise DTypeError(f"unsupported dtype {dt}; supported: {_NAMES}")
    return dt


def is_float(dt: np.dtype) -> bool:
    return dt in (float16, float32) or is_bfloat16(dt)


def is_int(dt: np.dtype) -> bool:
    return dt in INTS


def dtype_of_data(arr: np.ndarray) -> np.dtype:
    """The dtype a Tensor takes from numpy data when none is given (float64 -> float32)."""
    return to_dtype(_demote(arr.dtype))


def _demote(dt: np.dtype) -> np.dtype:
    return float32 if dt == np.float64 else dt


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """The result dtype of a binary op between two tensors of dtypes a and b."""
    if a == b:
        return a
    if is_bfloat16(a) or is_bfloat16(b):
        other = b if is_bfloat16(a) else a
        return _bfloat16() if other in (bool_, uint8) else float32
    return _demote(np.result_type(a, b))


def promote_scalar(dt: np.dtype, value) -> np.dtype:
    """The result dtype of a tensor of dtype dt combined with a weak Python scalar."""
    if isinstance(value, (bool, np.bool_)):
        return dt
    if isinstance(value, (int, np.integer)):
        if dt == bool_:
            return DEFAULT_INT
        if is_int(dt):
            info = np.iinfo(dt)
            if not info.min <= int(value) <= info.max:
                raise OverflowError(f"Python integer {value} out of bounds for {dt}")
        return dt
    if isinstance(value, (float, np.floating)):
        return dt if is_float(dt) else DEFAULT_FLOAT
    raise DTypeError(f"cannot combine a tensor with {type(value).__name__} {value!r}")
