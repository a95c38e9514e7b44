"""Elementwise ops: dtype rules, broadcasting and fusion into lazy expressions (no kernel runs here).

Each op promotes its operands (dtypes.py), casts them explicitly, broadcasts them to the result shape
(a view change of every Load) and wraps them in one spec Op. Chains of such ops stay one expression
and become one kernel when the result is needed.
"""
from __future__ import annotations

import numpy as np

from gputwin.tensor import dtypes as D
from gputwin.tensor import lazy
from gputwin.tensor.shape import broadcast_shapes
from gputwin.tensor.spec import Const, Op, count_ops

FLOAT_UNARY = ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "gelu")
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
ROUNDING = ("floor", "ceil", "trunc", "rint")
CLASSIFY = ("isnan", "isinf", "isfinite")
BITWISE = ("and", "or", "xor")
INT_ONLY = ("shl", "shr")
_SYMBOL = {"and": "&", "or": "|", "xor": "^", "shl": "<<", "shr": ">>"}


def _tensor_cls():
    from gputwin.tensor.tensor import Tensor
    return Tensor


def _operand(x, like):
    """A Tensor, or a weak scalar (Python / numpy scalar), or array data placed on like's device."""
    Tensor = _tensor_cls()
    if isinstance(x, Tensor):
        if x.ctx is not like.ctx:
            raise ValueError(f"tensors are on different devices ({x.device} and {like.device}); use .to()")
        return x
    if isinstance(x, (bool, int, float, np.bool_, np.integer, np.floating)) and np.ndim(x) == 0:
        if isinstance(x, np.generic):  # numpy scalars are strong, as in numpy: a 0-d constant tensor
            dt = D.dtype_of_data(np.asarray(x))
            return Tensor._make(like.ctx, (), dt, Const(dt.type(x).item(), dt))
        return x
    return Tensor(x, device=like.ctx)


def _expr(t, dtype, shape):
    """t's expression, cast to dtype and broadcast to shape (scalars become constants)."""
    Tensor = _tensor_cls()
    if not isinstance(t, Tensor):
        return Const(dtype.type(t).item(), dtype), ()
    if count_ops(t._expr) > lazy.MAX_FUSED_OPS:
        t.realize()
    if t.shape != shape:
        t = t.expand(*shape)
    expr = t._expr if t.dtype == dtype else Op("cast", (t._expr,), dtype)
    return expr, t._bufs


def _build(op: str, operands: list, compute, out_dtype):
    Tensor = _tensor_cls()
    tensors = [x for x in operands if isinstance(x, Tensor)]
    ctx = tensors[0].ctx
    shape = broadcast_shapes(*(t.shape for t in tensors))
    parts = [_expr(x, compute if i or op != "where" else D.bool_, shape) for i, x in enumerate(operands)]
    if len({id(b) for _, bufs in parts for b in bufs}) > lazy.MAX_ARGS:
        parts = [_expr(x.realize() if isinstance(x, Tensor) else x, compute if i or op != "where" else D.bool_,
                       shape) for i, x in enumerate(operands)]
    exprs, bufs = lazy.merge(parts)
    return Tensor._make(ctx, shape, out_dtype, Op(op, tuple(exprs), out_dtype), bufs)


def _dtype_of(x):
    Tensor = _tensor_cls()
    return x.dtype if isinstance(x, Tensor) else None


def _result_dtype(a, b):
    da, db = _dtype_of(a), _dtype_of(b)
    if da is not None and db is not None:
        return D.promote(da, db)
    return D.promote_scalar(da, b) if da is not None else D.promote_scalar(db, a)


def binary(op: str, a, b):
    Tensor = _tensor_cls()
    like = a if isinstance(a, Tensor) else b
    a, b = _operand(a, like), _operand(b, like)
    dt = _result_dtype(a, b)
    if op == "div":
        dt = dt if D.is_float(dt) else D.DEFAULT_FLOAT
    elif dt == D.bool_ and op in ("add", "mul", "max", "min"):
        op = {"add": "or", "mul": "and", "max": "or", "min": "and"}[op]  # numpy's bool semantics
    elif dt == D.bool_ and op in ("sub", "pow"):
        raise D.DTypeError(f"{op} of bool tensors is not supported (numpy raises too); use ^ or cast")
    elif dt == D.bool_ and op in ("floordiv", "mod", "fmod") + INT_ONLY:
        raise D.DTypeError(f"{op} of bool tensors gives int8 in numpy, which gputwin lacks; cast first")
    if op == "pow":
        fast = _scalar_power(a, b, dt)
        if fast is not None:
            return fast
        if not D.is_float(dt):
            _check_exponents(b)
    if op in BITWISE + INT_ONLY and D.is_float(dt):
        kinds = "integer" if op in INT_ONLY else "bool or integer"
        raise D.DTypeError(f"{_SYMBOL[op]} needs {kinds} tensors, got {dt}")
    return _build(op, [a, b], dt, D.bool_ if op in COMPARE else dt)


def _scalar_value(x):
    """The value of a Python scalar or of a numpy scalar's 0-d constant tensor, else None."""
    if isinstance(x, _tensor_cls()):
        return x._expr.value if isinstance(x._expr, Const) and not x.ndim else None
    return x


def _scalar_power(a, b, dt):
    """numpy's fast paths for a scalar exponent of a float tensor: 2 -> x*x, 0.5 -> sqrt, -1 -> 1/x,
    1 -> x, 0 -> 1 (exactly rounded, as numpy's results; the general pow is within its ULP bound)."""
    e = _scalar_value(b)
    if not D.is_float(dt) or not isinstance(a, _tensor_cls()) or e is None or e not in (2, 0.5, -1, 1, 0):
        return None
    x = cast(a, dt)
    if e == 2:
        return binary("mul", x, x)
    if e == 0.5:
        return unary("sqrt", x)
    if e == -1:
        return binary("div", 1.0, x)
    if e == 1:
        return value_copy(x)
    from gputwin.tensor.creation import full
    return full(x.shape, 1, dt, x.ctx)


def _check_exponents(b):
    """numpy refuses negative integer exponents of integers; a tensor's are checked by its min (one
    number comes back)."""
    low = b if not isinstance(b, _tensor_cls()) else (int(b.min().item()) if b.size else 0)
    if low < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")


def unary(op: str, x):
    dt = x.dtype
    if op in FLOAT_UNARY and not D.is_float(dt):
        dt = D.float16 if dt in (D.bool_, D.uint8) else D.DEFAULT_FLOAT  # numpy's ufunc loop choice
    elif op == "neg" and dt == D.bool_:
        raise D.DTypeError("negating a bool tensor is not supported (numpy raises too); use ~")
    elif op == "relu" and dt == D.bool_:
        raise D.DTypeError("relu of a bool tensor is not supported")
    elif op == "abs" and dt in (D.bool_, D.uint8):
        return value_copy(x)
    elif op == "not" and D.is_float(dt):
        raise D.DTypeError(f"~ needs a bool or integer tensor, got {dt}")
    elif op in ROUNDING and not D.is_float(dt):
        if op != "rint":
            return value_copy(x)  # numpy keeps integers as they are
        return cast(x, D.float16 if dt in (D.bool_, D.uint8) else D.DEFAULT_FLOAT)  # integral already
    elif op in CLASSIFY and not D.is_float(dt):
        from gputwin.tensor.creation import full
        return full(x.shape, op == "isfinite", D.bool_, x.ctx)
    return _build(op, [x], dt, D.bool_ if op in CLASSIFY else dt)


def sign(x):
    """numpy.sign: -1, 0 or 1 in x's dtype (0.0 for -0.0), NaN for NaN."""
    if x.dtype == D.bool_:
        raise D.DTypeError("sign of a bool tensor is not supported (numpy raises too)")
    if not D.is_float(x.dtype):
        return cast(where(x > 0, 1, where(x < 0, -1, 0)), x.dtype)
    return where(x > 0, 1, where(x < 0, -1, where(x == 0, 0, x)))    # NaN stays NaN


def round_(x, decimals: int = 0):
    """numpy.round: half to even at 10**-decimals, computed as numpy does: rint(x * 10**d) / 10**d
    in the tensor's float dtype (x / 10**-d and * for negative d); integers round exactly."""
    decimals = int(decimals)
    if D.is_float(x.dtype) or x.dtype == D.bool_:
        if decimals == 0 or x.dtype == D.bool_:
            return unary("rint", x)
        f = 10.0 ** abs(decimals)
        return unary("rint", x * f) / f if decimals > 0 else unary("rint", x / f) * f
    if decimals >= 0:
        return value_copy(x)
    f = 10 ** -decimals
    q, r = binary("floordiv", x, f), binary("mod", x, f)
    up = (r > f - r) | ((r == f - r) & (binary("mod", q, 2) == 1))  # r in [0, f): half to even
    return cast((q + cast(up, q.dtype)) * f, x.dtype)


def clip(x, lo=None, hi=None):
    """numpy.clip(x, lo, hi) = min(max(x, lo), hi): NaN in any operand gives NaN, x is kept on ties
    (numpy's scalar-bound behaviour for -0.0/+0.0), and hi wins when lo > hi."""
    if lo is None and hi is None:
        raise ValueError("clip needs at least one of lo and hi")
    out = x
    for bound, beyond in ((lo, lambda v, b: v < b), (hi, lambda v, b: v > b)):
        if bound is None:
            continue
        b = _operand(bound, x)
        cond = beyond(out, b)
        if _is_nan_able(b):
            cond = cond | (unary("isnan", b) if isinstance(b, _tensor_cls()) else bool(np.isnan(b)))
        out = where(cond, b, out)
    return out


def _is_nan_able(b) -> bool:
    return D.is_float(b.dtype) if isinstance(b, _tensor_cls()) else isinstance(b, (float, np.floating))


def where(cond, a, b):
    Tensor = _tensor_cls()
    like = next(x for x in (cond, a, b) if isinstance(x, Tensor))
    cond, a, b = _operand(cond, like), _operand(a, like), _operand(b, like)
    if not isinstance(cond, Tensor):
        cond = Tensor(np.asarray(bool(cond)), device=like.ctx)
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        dt = _result_dtype(a, b)
    elif any(isinstance(v, (float, np.floating)) for v in (a, b)):
        dt = D.DEFAULT_FLOAT
    else:
        dt = D.bool_ if all(isinstance(v, (bool, np.bool_)) for v in (a, b)) else D.DEFAULT_INT
    return _build("where", [cond, a, b], dt, dt)


def cast(x, dtype):
    """x in dtype; x itself when it has that dtype already (for internal use: no copy)."""
    dt = D.to_dtype(dtype)
    if dt == x.dtype:
        return x
    return _tensor_cls()._make(x.ctx, x.shape, dt, Op("cast", (x._expr,), dt), x._bufs)


def value_copy(x):
    """x's values as a new pending tensor, where numpy returns a copy and there is nothing to compute
    (astype to the same dtype, abs of unsigned, floor of integers, +x): since tensors can be written in
    place, the result must not share x's storage. A cast to the same dtype lowers to nothing."""
    return _tensor_cls()._make(x.ctx, x.shape, x.dtype, Op("cast", (x._expr,), x.dtype), x._bufs)


def astype(x, dtype):
    """numpy's astype (copy=True): always a new tensor."""
    dt = D.to_dtype(dtype)
    return cast(x, dt) if dt != x.dtype else value_copy(x)
