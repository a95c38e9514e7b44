"""gputwin.tensor: a small numpy-like Tensor library whose ops run as compiled kernels on any device.

Besides Tensor and the creation functions, numpy's module-level functions are here by their numpy
names (functions.py): `gputwin.tensor.exp(t)`, `maximum(a, b)`, `sum(t, axis=0)`, `sort(t)`, ...
"""
from gputwin.tensor import dtypes
from gputwin.tensor.creation import (arange, eye, full, full_like, linspace, manual_seed, ones, ones_like, rand,
                                     randn, zeros, zeros_like)
from gputwin.tensor.dtypes import DTypeError, bool_, float16, float32, int32, int64, uint8
from gputwin.tensor.functions import *  # noqa: F403  (numpy's names; functions.__all__)
from gputwin.tensor.functions import __all__ as _functions
from gputwin.tensor.movement import cat
from gputwin.tensor.runtime import get_context
from gputwin.tensor.shape import ShapeError
from gputwin.tensor.tensor import Tensor


def __getattr__(name: str):
    if name == "bfloat16":       # resolved on first read: importing ml_dtypes costs ~0.5 s of start-up
        return dtypes.bfloat16
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Tensor", "arange", "eye", "full", "full_like", "linspace", "manual_seed", "ones", "ones_like", "rand",
           "randn", "zeros", "zeros_like", "cat", "get_context", "DTypeError", "ShapeError",
           "bfloat16", "bool_", "float16", "float32", "int32", "int64", "uint8"] + _functions
