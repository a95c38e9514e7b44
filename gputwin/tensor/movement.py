"""Movement ops: reshape, permute/transpose, expand, slicing, flip, pad, cat, stack, squeeze.

All but cat are view changes applied to every Load of a tensor's expression (no kernel). A Load that
cannot take the change (a padded Load, or a reshape of a strided view that needs a copy) is realized
into a contiguous buffer first. cat runs one copy kernel per input into its slice of the output.
"""
from __future__ import annotations

import math

import numpy as np

from gputwin.tensor import dtypes as D
from gputwin.tensor import lazy
from gputwin.tensor.shape import ShapeError, View, normalize_axes, normalize_axis, normalize_shape
from gputwin.tensor.spec import Load, Op
from gputwin.tensor.tensor import Tensor, make_spec


def _apply(t: Tensor, shape, fn) -> Tensor:
    expr = lazy.move(t._expr, fn)
    if expr is None:
        t = t.contiguous()
        expr = lazy.move(t._expr, fn)
    return Tensor._make(t.ctx, shape, t.dtype, expr, t._bufs)


def reshape(t: Tensor, shape) -> Tensor:
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    shape = [int(s) for s in shape]
    if shape.count(-1) > 1:
        raise ShapeError("can only specify one unknown dimension (-1)")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or t.size % known:
            raise ShapeError(f"cannot reshape tensor of size {t.size} into shape {tuple(shape)}")
        shape[shape.index(-1)] = t.size // known
    shape = normalize_shape(shape)
    if math.prod(shape) != t.size:
        raise ShapeError(f"cannot reshape tensor of size {t.size} into shape {shape}")
    if shape == t.shape:
        return t
    return _apply(t, shape, lambda v: v.reshape(shape))


def permute(t: Tensor, dims) -> Tensor:
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else tuple(dims)
    norm = tuple(normalize_axis(d, t.ndim) for d in dims)
    if sorted(norm) != list(range(t.ndim)):
        raise ShapeError(f"permute needs a permutation of {t.ndim} axes, got {dims}")
    return _apply(t, tuple(t.shape[d] for d in norm), lambda v: v.permute(norm))


def transpose(t: Tensor, axes) -> Tensor:
    """numpy's transpose: no axes reverses them, else a full permutation."""
    if not axes or axes == (None,):
        return permute(t, tuple(reversed(range(t.ndim))))
    return permute(t, axes)


def swapaxes(t: Tensor, a: int, b: int) -> Tensor:
    dims = list(range(t.ndim))
    a, b = normalize_axis(a, t.ndim), normalize_axis(b, t.ndim)
    dims[a], dims[b] = dims[b], dims[a]
    return permute(t, tuple(dims))


def expand(t: Tensor, shape) -> Tensor:
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    lead = len(shape) - t.ndim
    if lead < 0:
        raise ShapeError(f"cannot expand shape {t.shape} to fewer dimensions {tuple(shape)}")
    shape = tuple(t.shape[i - lead] if s == -1 and i >= lead else int(s) for i, s in enumerate(shape))
    normalize_shape(shape)
    for s, n in zip(t.shape, shape[lead:]):
        if s != n and s != 1:
            raise ShapeError(f"cannot broadcast shape {t.shape} to {shape}")
    if shape == t.shape:
        return t
    return _apply(t, shape, lambda v: v.expand(shape))


def flip(t: Tensor, axis=None) -> Tensor:
    axes = normalize_axes(axis, t.ndim)
    return _apply(t, t.shape, lambda v: v.flip(axes))


def getitem(t: Tensor, key) -> Tensor:
    keys = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, (Tensor, list, np.ndarray)) for k in keys):
        raise IndexError("advanced (array) indexing is not supported; use integers, slices, None and ...")
    shape = View.contiguous(t.shape).index(key).shape  # validates the key before anything runs
    return _apply(t, shape, lambda v: v.index(key))


def squeeze(t: Tensor, axis=None) -> Tensor:
    axes = [a for a in range(t.ndim) if t.shape[a] == 1] if axis is None else normalize_axes(axis, t.ndim)
    for a in axes:
        if t.shape[a] != 1:
            raise ShapeError(f"cannot squeeze axis {a} of size {t.shape[a]}")
    return reshape(t, tuple(s for i, s in enumerate(t.shape) if i not in axes))


def unsqueeze(t: Tensor, axis: int) -> Tensor:
    a = normalize_axis(axis, t.ndim + 1)
    return reshape(t, t.shape[:a] + (1,) + t.shape[a:])


def _pad_width(pad_width, ndim: int) -> list[tuple[int, int]]:
    pw = np.asarray(pad_width)
    if pw.dtype.kind not in "iu":
        raise ShapeError(f"pad widths must be integers, got {pad_width!r}")
    try:
        pw = np.broadcast_to(pw, (ndim, 2))
    except ValueError:
        raise ShapeError(f"pad widths {pad_width!r} do not fit a {ndim}-d tensor") from None
    if (pw < 0).any():
        raise ShapeError(f"pad widths must be non-negative, got {pad_width!r}")
    return [(int(a), int(b)) for a, b in pw]


def pad(t: Tensor, pad_width, value=0) -> Tensor:
    """numpy.pad(mode='constant'): widths as numpy takes them (int, (before, after), or per axis)."""
    pw = _pad_width(pad_width, t.ndim)
    fill = t.dtype.type(value).item()
    shape = normalize_shape([s + a + b for s, (a, b) in zip(t.shape, pw)])
    if not t.is_view:
        t = t.realize()
    ld = t._expr
    view = ld.view
    offset = view.offset - sum(a * st for (a, _), st in zip(pw, view.strides))
    mask = tuple((a, a + s) for (a, _), s in zip(pw, t.shape))
    expr = Load(ld.arg, ld.dtype, View(shape, view.strides, offset), mask, fill)
    return Tensor._make(t.ctx, shape, t.dtype, expr, t._bufs)


def cat(tensors, axis: int = 0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise ValueError("need at least one tensor to concatenate")
    first = tensors[0]
    for t in tensors:
        if t.ctx is not first.ctx:
            raise ValueError(f"tensors are on different devices ({t.device} and {first.device}); use .to()")
        if t.ndim != first.ndim:
            raise ShapeError(f"all inputs must have the same number of dimensions, got {first.shape} and {t.shape}")
    ax = normalize_axis(axis, first.ndim)
    for t in tensors:
        if t.shape[:ax] + t.shape[ax + 1:] != first.shape[:ax] + first.shape[ax + 1:]:
            raise ShapeError(f"cat along axis {ax}: shapes {first.shape} and {t.shape} differ off that axis")
    dt = first.dtype
    for t in tensors[1:]:
        dt = D.promote(dt, t.dtype)
    shape = normalize_shape(first.shape[:ax] + (sum(t.shape[ax] for t in tensors),) + first.shape[ax + 1:])
    ctx = first.ctx
    out = ctx.alloc(math.prod(shape) * dt.itemsize)
    full, start = View.contiguous(shape), 0
    for t in tensors:
        if t.size:
            region = full.index((slice(None),) * ax + (slice(start, start + t.shape[ax]),))
            expr = t._expr if t.dtype == dt else Op("cast", (t._expr,), dt)
            ctx.run(make_spec("C", t.shape, expr, dt, t._bufs, out_view=region), t._bufs, out)
        start += t.shape[ax]
    return Tensor._make(ctx, shape, dt, Load(0, dt, full), (out,))


def stack(tensors, axis: int = 0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise ValueError("need at least one tensor to stack")
    if any(t.shape != tensors[0].shape for t in tensors):
        raise ShapeError("stack needs equal shapes, got " + ", ".join(str(t.shape) for t in tensors))
    ax = normalize_axis(axis, tensors[0].ndim + 1)
    return cat([unsqueeze(t, ax) for t in tensors], ax)
