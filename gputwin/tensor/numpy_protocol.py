"""numpy's dispatch protocols: `np.exp(t)`, `np.sum(t, axis=0)`, `ndarray + t`, ... run on the device.

`__array_ufunc__` and `__array_function__` send numpy calls that involve a Tensor to functions.py,
which returns Tensors. A numpy function or ufunc method gputwin does not implement raises TypeError
naming it, instead of silently copying the tensor to the host and computing there. `np.asarray(t)` /
`t.numpy()` remain the explicit way to get a host array.
"""
from __future__ import annotations

import numpy as np

from gputwin.tensor import creation
from gputwin.tensor import functions as F

UFUNCS = {
    np.add: F.add, np.subtract: F.subtract, np.multiply: F.multiply, np.true_divide: F.true_divide,
    np.floor_divide: F.floor_divide, np.remainder: F.remainder, np.power: F.power, np.divmod: F.divmod_,
    np.fmod: F.fmod, np.sign: F.sign,
    np.maximum: F.maximum, np.minimum: F.minimum,
    np.equal: F.equal, np.not_equal: F.not_equal, np.less: F.less, np.less_equal: F.less_equal,
    np.greater: F.greater, np.greater_equal: F.greater_equal,
    np.bitwise_and: F.bitwise_and, np.bitwise_or: F.bitwise_or, np.bitwise_xor: F.bitwise_xor,
    np.invert: F.invert, np.left_shift: F.left_shift, np.right_shift: F.right_shift,
    np.logical_and: F.logical_and, np.logical_or: F.logical_or, np.logical_xor: F.logical_xor,
    np.logical_not: F.logical_not,
    np.negative: F.negative, np.positive: F.positive, np.absolute: F.absolute, np.square: F.square,
    np.exp: F.exp, np.log: F.log, np.sqrt: F.sqrt, np.sin: F.sin, np.cos: F.cos, np.tanh: F.tanh,
    np.floor: F.floor, np.ceil: F.ceil, np.trunc: F.trunc, np.rint: F.rint,
    np.isnan: F.isnan, np.isinf: F.isinf, np.isfinite: F.isfinite, np.matmul: F.matmul,
}
# ufunc.reduce / ufunc.accumulate: the reduction each one is (numpy's reduce defaults to axis=0)
REDUCE = {np.add: F.sum, np.multiply: F.prod, np.maximum: F.max, np.minimum: F.min,
          np.logical_and: F.all, np.logical_or: F.any}
ACCUMULATE = {np.add: F.cumsum, np.multiply: F.cumprod}

FUNCTIONS = {
    np.sum: F.sum, np.prod: F.prod, np.mean: F.mean, np.var: F.var, np.std: F.std,
    np.max: F.max, np.min: F.min, np.amax: F.max, np.amin: F.min, np.argmax: F.argmax, np.argmin: F.argmin,
    np.any: F.any, np.all: F.all, np.cumsum: F.cumsum, np.cumprod: F.cumprod,
    np.count_nonzero: F.count_nonzero, np.isclose: F.isclose, np.allclose: F.allclose,
    np.array_equal: F.array_equal,
    np.clip: F.clip, np.where: F.where, np.dot: F.dot, np.round: F.round, np.around: F.round,
    np.sort: F.sort, np.argsort: F.argsort, np.nonzero: F.nonzero, np.copy: F.copy,
    np.concatenate: F.concatenate, np.stack: F.stack, np.reshape: F.reshape, np.transpose: F.transpose,
    np.swapaxes: F.swapaxes, np.squeeze: F.squeeze, np.expand_dims: F.expand_dims,
    np.broadcast_to: F.broadcast_to, np.flip: F.flip, np.pad: F.pad,
    np.shape: F.shape, np.ndim: F.ndim, np.size: F.size,
    np.zeros_like: creation.zeros_like, np.ones_like: creation.ones_like, np.full_like: creation.full_like,
}


def _unsupported(name: str) -> TypeError:
    return TypeError(f"numpy.{name} is not supported on gputwin Tensors (it would compute on the host); "
                     "use t.numpy() for a host array, or a gputwin.tensor function")


def array_ufunc(ufunc, method: str, inputs, kwargs):
    out = kwargs.pop("out", None)
    name = ufunc.__name__ + ("" if method == "__call__" else "." + method)
    if method == "__call__" and ufunc in UFUNCS:
        fn = UFUNCS[ufunc]
    elif method == "reduce" and ufunc in REDUCE:
        kwargs.setdefault("axis", 0)
        fn = REDUCE[ufunc]
    elif method == "accumulate" and ufunc in ACCUMULATE:
        kwargs.setdefault("axis", 0)
        fn = ACCUMULATE[ufunc]
    else:
        raise _unsupported(name)
    unknown = set(kwargs) - _KEYWORDS.get(method, set())
    if unknown:
        raise TypeError(f"numpy.{name}: argument(s) {', '.join(sorted(unknown))} not supported on gputwin Tensors")
    if out is not None:
        kwargs["out"] = out
    return fn(*inputs, **kwargs)


_KEYWORDS = {"__call__": {"dtype"}, "reduce": {"axis", "dtype", "keepdims"}, "accumulate": {"axis", "dtype"}}


def array_function(func, types, args, kwargs):
    from gputwin.tensor.tensor import Tensor
    impl = FUNCTIONS.get(func)
    if impl is None:
        raise _unsupported(f"{func.__module__.removeprefix('numpy')}.{func.__name__}".lstrip("."))
    if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented
    return impl(*args, **kwargs)
