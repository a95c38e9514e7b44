"""gputwin.tensor: a small numpy-like Tensor library whose ops run as compiled kernels on any device."""
from gputwin.tensor.creation import (arange, eye, full, full_like, manual_seed, ones, ones_like, rand, randn,
                                     zeros, zeros_like)
from gputwin.tensor.dtypes import DTypeError, bfloat16, bool_, float16, float32, int32, int64, uint8
from gputwin.tensor.movement import cat, stack
from gputwin.tensor.ops import where
from gputwin.tensor.runtime import get_context
from gputwin.tensor.shape import ShapeError
from gputwin.tensor.tensor import Tensor

__all__ = ["Tensor", "arange", "eye", "full", "full_like", "manual_seed", "ones", "ones_like", "rand", "randn",
           "zeros", "zeros_like", "cat", "stack", "where", "get_context", "DTypeError", "ShapeError",
           "bfloat16", "bool_", "float16", "float32", "int32", "int64", "uint8"]
