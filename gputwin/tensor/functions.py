"""numpy's module-level functions for Tensors (`gputwin.tensor.exp(t)`, `maximum(a, b)`, `sum(t)`, ...).

Each takes numpy's arguments and runs on the device like the Tensor methods it calls. numpy.* calls
on Tensors land here too (numpy_protocol.py), so these accept the keywords numpy passes on: `dtype=`
(the input is cast to it first; a reduction then accumulates as usual) and `out=` (a Tensor written
in place). Arguments with no device meaning (`where=`, `initial=`, `order=`, ...) are refused.
"""
from __future__ import annotations

import numpy as np

from gputwin.tensor import dtypes as D
from gputwin.tensor import indexing, movement, ops, reduce, sorting
from gputwin.tensor.tensor import Tensor

__all__ = [  # numpy's names (gputwin.tensor re-exports them)
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "fmod", "power",
    "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_invert", "invert", "left_shift",
    "right_shift", "logical_and", "logical_or", "logical_xor", "logical_not", "negative", "positive", "absolute",
    "abs", "sign", "square", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "gelu", "floor",
    "ceil", "trunc", "rint", "round", "around", "isnan", "isinf", "isfinite", "clip", "where", "matmul", "dot",
    "sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin", "any", "all",
    "count_nonzero", "isclose", "allclose", "array_equal", "cumsum", "cumprod", "sort", "argsort", "nonzero",
    "copy", "concatenate", "stack", "reshape", "transpose", "swapaxes", "squeeze", "expand_dims",
    "broadcast_to", "flip", "pad", "shape", "ndim", "size"]


def _tensor(x, like=None) -> Tensor:
    """x as a Tensor: array data goes to like's device (else the default one)."""
    if isinstance(x, Tensor):
        return x
    return Tensor(x, device=like.ctx if like is not None else None)


def _first_tensor(*xs) -> Tensor | None:
    return next((x for x in xs if isinstance(x, Tensor)), None)


def _operands(*xs, out=None) -> tuple:
    """xs with Python/numpy scalars kept (weak / strong, as operators take them) and array data on the
    first Tensor's device; with no Tensor among them the first becomes one on out's device (numpy
    calls with only out= a Tensor), else the default device."""
    like = _first_tensor(*xs)
    if like is None:
        dest = _first_tensor(*(out if isinstance(out, tuple) else (out,)))
        like = Tensor(xs[0], device=dest.ctx if dest is not None else None)
        xs = (like,) + xs[1:]
    return tuple(ops._operand(x, like) for x in xs)


def write_out(result: Tensor, out) -> Tensor:
    """numpy's out=: the result written into a Tensor in place (same_kind casting, as ufuncs)."""
    if out is None:
        return result
    if isinstance(out, tuple):
        if len(out) != 1:
            raise TypeError(f"out= takes one tensor here, got {len(out)}")
        out = out[0]
    if not isinstance(out, Tensor):
        raise TypeError(f"out= must be a gputwin Tensor, got {type(out).__name__} (a host array would need a copy "
                        "back; use .numpy())")
    if out.shape != result.shape:
        raise ValueError(f"out= has shape {out.shape}, the result {result.shape}")
    if not np.can_cast(result.dtype, out.dtype, "same_kind"):
        raise TypeError(f"cannot cast the result from {result.dtype} to out's {out.dtype} (same_kind casting)")
    out[...] = result
    return out


def _cast(x, dtype):
    return x if dtype is None else ops.cast(_tensor(x), dtype)


# --- elementwise -----------------------------------------------------------------------------------
def _binary(op: str):
    def fn(a, b, out=None, dtype=None):
        a, b = _operands(a, b, out=out)
        if dtype is not None:   # numpy computes in dtype: cast the inputs to it
            a, b = (ops.cast(_tensor(x, a if isinstance(a, Tensor) else b), dtype) for x in (a, b))
        return write_out(ops.binary(op, a, b), out)
    return fn


def _unary(op: str):
    def fn(x, out=None, dtype=None):
        (x,) = _operands(x, out=out)
        return write_out(ops.unary(op, _cast(x, dtype)), out)
    return fn


add, subtract, multiply = _binary("add"), _binary("sub"), _binary("mul")
divide = true_divide = _binary("div")
floor_divide, remainder, power, fmod = _binary("floordiv"), _binary("mod"), _binary("pow"), _binary("fmod")
mod = remainder
maximum, minimum = _binary("max"), _binary("min")
equal, not_equal, less, less_equal, greater, greater_equal = (
    _binary(op) for op in ("eq", "ne", "lt", "le", "gt", "ge"))
bitwise_and, bitwise_or, bitwise_xor = _binary("and"), _binary("or"), _binary("xor")
left_shift, right_shift = _binary("shl"), _binary("shr")
negative, absolute, invert = _unary("neg"), _unary("abs"), _unary("not")
abs = absolute
bitwise_not = bitwise_invert = invert
exp, log, sqrt, sin, cos, tanh = (_unary(op) for op in ("exp", "log", "sqrt", "sin", "cos", "tanh"))
floor, ceil, trunc, rint = (_unary(op) for op in ("floor", "ceil", "trunc", "rint"))
isnan, isinf, isfinite = _unary("isnan"), _unary("isinf"), _unary("isfinite")
sigmoid, relu, gelu = _unary("sigmoid"), _unary("relu"), _unary("gelu")


def positive(x, out=None, dtype=None):
    x = _tensor(x)
    return write_out(ops.astype(x, dtype or x.dtype), out)


def sign(x, out=None, dtype=None):
    return write_out(ops.sign(_cast(_tensor(x), dtype)), out)


def square(x, out=None, dtype=None):
    x = _cast(_tensor(x), dtype)
    return write_out(x * x, out)


def divmod_(a, b, out=None):
    if out is not None:
        raise TypeError("divmod with out= is not supported")
    return floor_divide(a, b), remainder(a, b)


def _logical(op: str):
    def fn(a, b, out=None):
        a, b = (ops.cast(x, D.bool_) if isinstance(x, Tensor) else bool(x) for x in _operands(a, b))
        return write_out(ops.binary(op, a, b), out)
    return fn


logical_and, logical_or, logical_xor = _logical("and"), _logical("or"), _logical("xor")


def logical_not(x, out=None):
    return write_out(~ops.cast(_tensor(x), D.bool_), out)


def round(a, decimals=0, out=None):  # noqa: A001  (numpy's name)
    return write_out(ops.round_(_tensor(a), decimals), out)


around = round


def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None):  # noqa: A002
    lo, hi = (a_min if a_min is not None else min), (a_max if a_max is not None else max)
    return write_out(ops.clip(_tensor(a), lo, hi), out)


def where(condition, x=None, y=None):
    if x is None and y is None:
        return nonzero(condition)
    return ops.where(*_operands(condition, x, y))


def matmul(a, b, out=None, dtype=None):
    a, b = _operands(a, b)
    return write_out(reduce.matmul(_cast(a, dtype), _cast(b, dtype)), out)


def dot(a, b, out=None):
    return write_out(reduce.dot(*_operands(a, b)), out)


# --- reductions ------------------------------------------------------------------------------------
def _reduction(method: str):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False):
        return write_out(getattr(_cast(_tensor(a), dtype), method)(axis=axis, keepdims=keepdims), out)
    fn.__name__ = method
    return fn


sum, prod, mean = _reduction("sum"), _reduction("prod"), _reduction("mean")  # noqa: A001


def _extreme(method: str):
    def fn(a, axis=None, out=None, keepdims=False):
        return write_out(getattr(_tensor(a), method)(axis=axis, keepdims=keepdims), out)
    return fn


max, min, any, all = (_extreme(m) for m in ("max", "min", "any", "all"))  # noqa: A001
amax, amin = max, min


def count_nonzero(a, axis=None, *, keepdims=False):
    return (_tensor(a) != 0).sum(axis=axis, keepdims=keepdims)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy.isclose: |a - b| <= atol + rtol |b| where b is finite, or a == b (NaN == NaN with
    equal_nan); integer b is compared as float32 (numpy: float64), tolerances are weak scalars."""
    a, b = _operands(a, b)
    a, b = _tensor(a, b if isinstance(b, Tensor) else None), _tensor(b, a)
    b = b if D.is_float(b.dtype) else ops.cast(b, D.DEFAULT_FLOAT)
    close = (abs(a - b) <= atol + rtol * abs(b)) & b.isfinite() | (a == b)
    return close | (a.isnan() & b.isnan()) if equal_nan else close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """numpy.allclose: isclose reduced on the device; one bool comes back."""
    return bool(isclose(a, b, rtol, atol, equal_nan).all())


def array_equal(a1, a2, equal_nan=False) -> bool:
    """numpy.array_equal: equal shapes and elements, compared on the device; one bool comes back."""
    a, b = _operands(a1, a2)
    a, b = _tensor(a, b if isinstance(b, Tensor) else None), _tensor(b, a)
    if a.shape != b.shape:
        return False
    same = a == b
    if equal_nan and (D.is_float(a.dtype) or D.is_float(b.dtype)):
        same = same | (a.isnan() & b.isnan())
    return bool(same.all())


def argmax(a, axis=None, out=None, keepdims=False):
    return write_out(_tensor(a).argmax(axis=axis, keepdims=keepdims), out)


def argmin(a, axis=None, out=None, keepdims=False):
    return write_out(_tensor(a).argmin(axis=axis, keepdims=keepdims), out)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    ddof = ddof if correction is None else correction     # numpy 2's array-API spelling of ddof
    return write_out(_cast(_tensor(a), dtype).var(axis=axis, ddof=ddof, keepdims=keepdims), out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    ddof = ddof if correction is None else correction
    return write_out(_cast(_tensor(a), dtype).std(axis=axis, ddof=ddof, keepdims=keepdims), out)


def cumsum(a, axis=None, dtype=None, out=None):
    return write_out(reduce.scan("sum", _tensor(a), axis, dtype), out)


def cumprod(a, axis=None, dtype=None, out=None):
    return write_out(reduce.scan("prod", _tensor(a), axis, dtype), out)


# --- sorting, indexing, shapes ---------------------------------------------------------------------
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Always stable (any `kind` is honoured: a stable sort satisfies every kind's contract)."""
    if order is not None:
        raise TypeError("sort(order=) needs structured dtypes, which Tensors do not have")
    return sorting.sort(_tensor(a), axis)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        raise TypeError("argsort(order=) needs structured dtypes, which Tensors do not have")
    return sorting.argsort(_tensor(a), axis)


def nonzero(a):
    return indexing.nonzero(_tensor(a))


def copy(a, order="K", subok=False):
    return _tensor(a).copy()


def _joined_inputs(arrays, casting: str, what: str) -> list[Tensor]:
    """concatenate/stack's inputs as Tensors on the first Tensor's device."""
    if casting != "same_kind":
        raise TypeError(f"casting={casting!r} is not supported on gputwin Tensors (only numpy's default)")
    arrays = list(arrays)
    like = _first_tensor(*arrays)
    if like is None:
        raise TypeError(f"{what} needs at least one Tensor")
    return [_tensor(x, like) for x in arrays]


def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """numpy.concatenate; axis=None flattens every input first."""
    arrays = _joined_inputs(arrays, casting, "concatenate")
    if axis is None:
        arrays, axis = [movement.reshape(x, (-1,)) for x in arrays], 0
    return write_out(_cast(movement.cat(arrays, axis), dtype), out)


def stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    return write_out(_cast(movement.stack(_joined_inputs(arrays, casting, "stack"), axis), dtype), out)


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if order != "C":
        raise ValueError(f"reshape supports order='C' only, got {order!r}")
    shape = shape if shape is not None else newshape
    r = movement.reshape(_tensor(a), tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))
    return r.copy() if copy else r


def transpose(a, axes=None):
    return movement.transpose(_tensor(a), tuple(axes) if axes is not None else ())


def swapaxes(a, axis1, axis2):
    return movement.swapaxes(_tensor(a), axis1, axis2)


def squeeze(a, axis=None):
    return movement.squeeze(_tensor(a), axis)


def expand_dims(a, axis):
    t = _tensor(a)
    for ax in sorted(axis) if isinstance(axis, (tuple, list)) else (axis,):
        t = movement.unsqueeze(t, ax)
    return t


def broadcast_to(array, shape, subok=False):
    return movement.expand(_tensor(array), tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))


def flip(m, axis=None):
    return movement.flip(_tensor(m), axis)


def pad(array, pad_width, mode="constant", constant_values=0):
    if mode != "constant":
        raise ValueError(f"pad supports mode='constant' only, got {mode!r}")
    return movement.pad(_tensor(array), pad_width, constant_values)


def shape(a):
    return _tensor(a).shape


def ndim(a):
    return _tensor(a).ndim


def size(a, axis=None):
    t = _tensor(a)
    return t.size if axis is None else t.shape[axis]
