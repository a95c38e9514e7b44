"""Reductions, matmul and softmax: a reduction is one kernel (two for long ones) that inlines its input.

Order and precision (docs/tensor.md): every output element is reduced by one work-item, sequentially
in row-major order of the reduced axes; long reductions with few outputs run in two ordered stages.
float16/bfloat16 accumulate in float32 and round once at the end; integer and bool sums/products
accumulate in int64 (numpy's dtype; uint8 gives int64, not uint64).
matmul is a sum over k of exact float32 products for half inputs, of dtype products otherwise, run by
the tiled kernel of matmul_kernel.py (same order per output element).
"""
from __future__ import annotations

import math

import numpy as np

from gputwin.tensor import dtypes as D
from gputwin.tensor import lazy, movement, ops
from gputwin.tensor.matmul_kernel import MatmulSpec, block_shape
from gputwin.tensor.shape import ShapeError, View, broadcast_shapes, normalize_axes, normalize_axis, normalize_shape
from gputwin.tensor.spec import Const, Load
from gputwin.tensor.tensor import Tensor, make_spec

_NO_IDENTITY = {"max": "maximum", "min": "minimum", "argmax": "argmax", "argmin": "argmin"}


SPLIT_MIN_LENGTH = 1024   # reductions at least this long ...
SPLIT_MAX_OUTPUTS = 1024  # ... with at most this many outputs run in two stages


def _identity(op: str, dt):
    if op == "sum":
        return -0.0 if D.is_float(dt) else 0
    if op == "prod":
        return 1
    if D.is_float(dt):
        return -np.inf if op == "max" else np.inf
    info = np.iinfo(np.uint8 if dt == D.bool_ else dt)
    return (info.min if op == "max" else info.max) if dt != D.bool_ else op == "min"


def _run(op: str, t: Tensor, axes: tuple[int, ...], out_dtype, acc_dtype) -> Tensor:
    """Reduce t over axes (sorted) into a realized tensor of the kept dims."""
    kept = [d for d in range(t.ndim) if d not in axes]
    shape = tuple(t.shape[d] for d in kept)
    rshape = tuple(t.shape[d] for d in axes)
    if op in _NO_IDENTITY and 0 in rshape:
        raise ValueError(f"zero-size array to reduction operation {_NO_IDENTITY[op]} which has no identity")
    tp = movement.permute(t, tuple(kept) + tuple(axes))
    length, n = int(np.prod(rshape)), int(np.prod(shape))
    if op in ("sum", "prod", "max", "min") and length >= SPLIT_MIN_LENGTH and n <= SPLIT_MAX_OUTPUTS:
        # Two stages, so no work-item walks the whole length: C-element chunks (row-major) reduce
        # to P partials in the accumulator dtype, which then reduce in order (docs/tensor.md).
        chunk = math.isqrt(length - 1) + 1
        parts = -(-length // chunk)
        flat = movement.reshape(tp, shape + (length,))
        if parts * chunk != length:
            flat = movement.pad(flat, [(0, 0)] * len(shape) + [(0, parts * chunk - length)], _identity(op, t.dtype))
        partial = _launch(op, movement.reshape(flat, shape + (parts, chunk)), shape + (parts,), (chunk,),
                          acc_dtype, acc_dtype)
        return _launch(op, partial, shape, (parts,), out_dtype, acc_dtype)
    return _launch(op, tp, shape, rshape, out_dtype, acc_dtype)


def _launch(op: str, tp: Tensor, shape, rshape, out_dtype, acc_dtype) -> Tensor:
    """One reduction kernel: tp's trailing dims (rshape) reduce into a new tensor of `shape`."""
    n = int(np.prod(shape))
    out = tp.ctx.alloc(n * out_dtype.itemsize)
    if n:
        spec = make_spec("R", shape, tp._expr, out_dtype, tp._bufs, reduce=op, rshape=rshape, acc_dtype=acc_dtype)
        tp.ctx.run(spec, tp._bufs, out)
    return Tensor._make(tp.ctx, shape, out_dtype, Load(0, out_dtype, View.contiguous(shape)), (out,))


def _keep(r: Tensor, t: Tensor, axes, keepdims: bool) -> Tensor:
    if not keepdims:
        return r
    return movement.reshape(r, tuple(1 if d in axes else s for d, s in enumerate(t.shape)))


def _acc(dt):
    return D.float32 if D.is_float(dt) else dt      # float16/bfloat16 accumulate in float32


def reduce(op: str, t: Tensor, axis=None, keepdims=False) -> Tensor:
    axes = normalize_axes(axis, t.ndim)
    if op in ("sum", "prod"):
        out = t.dtype if D.is_float(t.dtype) else D.int64
        acc = _acc(out)
    else:
        out = t.dtype
        acc = D.uint8 if out == D.bool_ else _acc(out)
    if not axes:  # nothing to reduce: numpy returns the values (in the reduction's dtype)
        return ops.astype(t, out)
    return _keep(_run(op, t, axes, out, acc), t, axes, keepdims)


def mean(t: Tensor, axis=None, keepdims=False) -> Tensor:
    axes = normalize_axes(axis, t.ndim)
    dt = t.dtype if D.is_float(t.dtype) else D.DEFAULT_FLOAT
    n = int(np.prod([t.shape[a] for a in axes]))
    # as numpy: halves are summed and divided in float32, then rounded once to their dtype
    s = _run("sum", ops.cast(t, _acc(dt)), axes, _acc(dt), _acc(dt)) if axes else ops.cast(t, _acc(dt))
    return _keep(ops.cast(s / float(n), dt), t, axes, keepdims)


def var(t: Tensor, axis=None, ddof=0, keepdims=False) -> Tensor:
    """numpy.var: mean(|x - mean(x)|**2) * n / (n - ddof), with numpy's operation order (sum, divide
    by n, subtract, square, sum, divide by max(n - ddof, 0)); halves and integers compute in float32
    (the sums as sum's), rounded once to the result dtype (float32 for integers)."""
    axes = normalize_axes(axis, t.ndim)
    dt = t.dtype if D.is_float(t.dtype) else D.DEFAULT_FLOAT
    x = ops.cast(t, _acc(dt))
    n = int(np.prod([t.shape[a] for a in axes]))
    d = x - mean(x, axes, keepdims=True)
    s = _run("sum", d * d, axes, _acc(dt), _acc(dt)) if axes else d * d
    return _keep(ops.cast(s / float(max(n - ddof, 0)), dt), t, axes, keepdims)


def any_all(op: str, t: Tensor, axis=None, keepdims=False) -> Tensor:
    """numpy.any / numpy.all: max / min of the values as bools (NaN is true); empty gives False / True."""
    axes = normalize_axes(axis, t.ndim)
    b = ops.cast(t, D.bool_)
    if 0 in [t.shape[a] for a in axes]:
        shape = tuple(1 if d in axes else n for d, n in enumerate(t.shape)) if keepdims else \
            tuple(n for d, n in enumerate(t.shape) if d not in axes)
        return Tensor._make(t.ctx, shape, D.bool_, Const(op == "all", D.bool_))
    return reduce("max" if op == "any" else "min", b, axis, keepdims)


def scan(op: str, t: Tensor, axis=None, dtype=None) -> Tensor:
    """numpy.cumsum / cumprod: one work-item per row walks the axis in order and stores every prefix,
    rounding each partial to the result dtype as numpy's accumulate does (so halves are bit-exact).
    The dtype is sum's: integers and bools give int64. Long integer scans run in chunks (exact: integer
    arithmetic wraps associatively), so no work-item walks the whole row."""
    if axis is None:
        t, axis = movement.reshape(t, (-1,)), 0
    ax = normalize_axis(axis, t.ndim)
    dt = D.to_dtype(dtype) if dtype is not None else (t.dtype if D.is_float(t.dtype) else D.int64)
    kept = tuple(d for d in range(t.ndim) if d != ax)
    tp = movement.permute(t, kept + (ax,))
    chunked = not D.is_float(dt) and tp.shape[-1] >= SPLIT_MIN_LENGTH
    r = _chunked_scan(op, tp, dt) if chunked else _scan_rows(op, tp, dt)
    return movement.permute(r, tuple(int(np.argsort(kept + (ax,))[d]) for d in range(t.ndim)))


def _scan_rows(op: str, tp: Tensor, dt) -> Tensor:
    """The scan kernel: one work-item per row of tp's last axis."""
    shape = tp.shape
    out = tp.ctx.alloc(math.prod(shape) * dt.itemsize)
    if math.prod(shape):
        spec = make_spec("S", shape[:-1], tp._expr, dt, tp._bufs, reduce=op, rshape=shape[-1:], acc_dtype=dt,
                         scan=True)
        tp.ctx.run(spec, tp._bufs, out)
    return Tensor._make(tp.ctx, shape, dt, Load(0, dt, View.contiguous(shape)), (out,))


def _chunked_scan(op: str, tp: Tensor, dt) -> Tensor:
    """An integer scan of the last axis in C = ceil(sqrt(n)) element chunks: scan every chunk, scan the
    chunk totals, and combine each chunk with the totals before it (exclusive prefix)."""
    *rows, n = tp.shape
    rows = tuple(rows)
    chunk = math.isqrt(n - 1) + 1
    parts = -(-n // chunk)
    flat = ops.cast(tp, dt)
    if parts * chunk != n:
        flat = movement.pad(flat, [(0, 0)] * len(rows) + [(0, parts * chunk - n)], _identity(op, dt))
    local = _scan_rows(op, movement.reshape(flat, rows + (parts, chunk)), dt)
    totals = movement.getitem(local, (..., -1))
    before = movement.pad(movement.getitem(_scan_rows(op, totals, dt), (..., slice(0, -1))),
                          [(0, 0)] * len(rows) + [(1, 0)], _identity(op, dt))
    combined = ops.binary("add" if op == "sum" else "mul", local, movement.unsqueeze(before, -1))
    return movement.getitem(movement.reshape(combined, rows + (parts * chunk,)), (..., slice(0, n)))


def argreduce(op: str, t: Tensor, axis=None, keepdims=False) -> Tensor:
    if axis is None:
        r = _run(op, movement.reshape(t, (-1,)), (0,), D.int64, D.uint8 if t.dtype == D.bool_ else _acc(t.dtype))
        return movement.reshape(r, (1,) * t.ndim) if keepdims else r
    if not isinstance(axis, int):
        raise TypeError(f"{op} takes a single integer axis or None, got {axis!r}")
    axes = normalize_axes(axis, t.ndim)
    acc = D.uint8 if t.dtype == D.bool_ else _acc(t.dtype)
    return _keep(_run(op, t, axes, D.int64, acc), t, axes, keepdims)


def matmul(a, b) -> Tensor:
    like = a if isinstance(a, Tensor) else b
    a, b = ops._operand(a, like), ops._operand(b, like)
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or a.ndim == 0 or b.ndim == 0:
        raise ShapeError("matmul: input operands must be at least 1-d (use * for scalars)")
    dt = D.promote(a.dtype, b.dtype)
    if dt == D.bool_:
        raise D.DTypeError("matmul of bool tensors is not supported; cast to an integer or float dtype")
    a2 = movement.reshape(a, (1, a.shape[0])) if a.ndim == 1 else a
    b2 = movement.reshape(b, (b.shape[0], 1)) if b.ndim == 1 else b
    n, k, k2, m = a2.shape[-2], a2.shape[-1], b2.shape[-2], b2.shape[-1]
    if k != k2:
        raise ShapeError(f"matmul: shapes {a.shape} and {b.shape} do not align: {k} (dim {a.ndim - 1}) != {k2}"
                         f" (dim {max(b.ndim - 2, 0)})")
    batch = broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    # Each operand element is read by many workgroups: compute pending elementwise work once.
    for t in (a2, b2):
        if not t.is_view and not isinstance(t._expr, Const):
            t.realize()
    r = _matmul_kernel(a2, b2, batch, dt)
    if a.ndim == 1:
        r = movement.reshape(r, r.shape[:-2] + r.shape[-1:])
    if b.ndim == 1:
        r = movement.reshape(r, r.shape[:-1])
    return r


def _matmul_kernel(a: Tensor, b: Tensor, batch: tuple[int, ...], dt) -> Tensor:
    """batch + (n, m) result of the tiled kernel (gputwin/tensor/matmul_kernel.py); long k with few outputs
    runs in two stages like the other long sums (docs/tensor.md)."""
    n, k, m = a.shape[-2], a.shape[-1], b.shape[-1]
    shape = normalize_shape(batch + (n, m))     # the result itself must fit (ShapeError past 2**31 - 1)
    outputs = math.prod(shape)
    if outputs == 0 or k == 0:      # an empty sum is +0.0 (0), as numpy's
        return Tensor._make(a.ctx, shape, dt, Const(dt.type(0).item(), dt))
    prod_dt = _acc(dt)  # half products are exact in float32
    ca, cb = ops.cast(a, prod_dt), ops.cast(b, prod_dt)
    (ea, eb), bufs = lazy.merge([(ca._expr, ca._bufs), (cb._expr, cb._bufs)])
    parts, chunk = 1, 0
    if k >= SPLIT_MIN_LENGTH and outputs <= SPLIT_MAX_OUTPUTS:
        chunk = math.isqrt(k - 1) + 1
        parts = -(-k // chunk)
    out_dt = prod_dt if parts > 1 else dt
    label = "M_matmul_" + "x".join(map(str, batch + (n, k, m)))
    spec = MatmulSpec(label, ea, eb, a.shape, b.shape, batch, lazy.arg_dtypes([ea, eb], len(bufs)), prod_dt,
                      out_dt, parts=parts, chunk=chunk, **block_shape(n, m))
    out = a.ctx.alloc(outputs * parts * out_dt.itemsize)
    a.ctx.run(spec, bufs, out)
    full = shape + ((parts,) if parts > 1 else ())
    r = Tensor._make(a.ctx, full, out_dt, Load(0, out_dt, View.contiguous(full)), (out,))
    return _launch("sum", r, shape, (parts,), dt, prod_dt) if parts > 1 else r


def dot(a, b) -> Tensor:
    """numpy.dot: a product with a 0-d operand, else a sum over a's last axis and b's second-to-last
    (b's only axis when it is 1-d), computed as one matmul of a (..., k) by b moved to (k, ...)."""
    like = a if isinstance(a, Tensor) else b
    a, b = ops._operand(a, like), ops._operand(b, like)
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    kb = max(b.ndim - 2, 0)
    rest = tuple(s for d, s in enumerate(b.shape) if d != kb)
    b2 = movement.reshape(movement.permute(b, (kb,) + tuple(d for d in range(b.ndim) if d != kb)),
                          (b.shape[kb], math.prod(rest)))
    r = matmul(movement.reshape(a, (-1, a.shape[-1])), b2)
    return movement.reshape(r, a.shape[:-1] + rest)


def _float_input(t: Tensor) -> Tensor:
    return t if D.is_float(t.dtype) else ops.cast(t, D.float16 if t.dtype in (D.bool_, D.uint8) else D.float32)


def softmax(t: Tensor, axis=-1) -> Tensor:
    """exp(x - max) / sum(exp(x - max)): three kernels (max, fused exp-sum, fused exp-divide)."""
    x = _float_input(t)
    e = (x - reduce("max", x, axis, keepdims=True)).exp()
    return e / reduce("sum", e, axis, keepdims=True)


def log_softmax(t: Tensor, axis=-1) -> Tensor:
    x = _float_input(t)
    shifted = x - reduce("max", x, axis, keepdims=True)
    return shifted - reduce("sum", shifted.exp(), axis, keepdims=True).log()
