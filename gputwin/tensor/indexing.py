"""numpy indexing on the device: basic (views), integer-array and boolean-mask (gathers), assignment.

Basic indexing (ints, slices, None, ...) is a view change (movement.py). An index with arrays follows
numpy's advanced-indexing rules: boolean masks become their nonzero positions, integers count as
0-d arrays, the index arrays broadcast together, and their shape goes where they stand when they are
adjacent, else in front. The result is a lazy Gather whose element offset is an integer expression,
so it fuses with what follows. Index arrays are checked in bounds before any gather runs (their min
and max are reduced on the device; only those two numbers come back).

Assignment writes into the tensor's storage in place, so views of it see the write, as in numpy.
Tensors whose pending (unrealized) expressions read that storage are computed first, so they keep
the values they had. Basic targets are written through a strided output view; advanced targets by a
scatter (for repeated indices, which of the writes lands is unspecified, unlike numpy's last-wins).
"""
from __future__ import annotations

import math

import numpy as np

from gputwin.tensor import dtypes as D
from gputwin.tensor import lazy, movement, ops, reduce
from gputwin.tensor.shape import ShapeError, View, broadcast_shapes, contiguous_strides
from gputwin.tensor.spec import Const, Gather, Index, Load
from gputwin.tensor.tensor import Tensor, make_spec


def position(ctx, shape, axis: int, dtype=D.int64) -> Tensor:
    """A lazy tensor whose elements are their own index along `axis` (no buffer)."""
    strides = tuple(1 if d == axis else 0 for d in range(len(shape)))
    return Tensor._make(ctx, shape, dtype, Index(View(tuple(shape), strides, 0), dtype))


def scatter_into(value: Tensor, dest: Tensor, storage, label: str) -> None:
    """storage[dest[p]] = value[p] for every point p of value's shape whose dest (same shape) is not
    negative; the caller guarantees dest is in range."""
    (expr, index), bufs = lazy.merge([(value._expr, value._bufs), (dest._expr, dest._bufs)])
    if value.size:
        value.ctx.run(make_spec(label, value.shape, expr, value.dtype, bufs, out_index=index), bufs, storage)


def scatter(value: Tensor, dest: Tensor, size: int, label: str) -> Tensor:
    """A new 1-d tensor of `size` elements filled by scatter_into (every slot must be written)."""
    out = value.ctx.alloc(size * value.dtype.itemsize)
    scatter_into(value, dest, out, label)
    return Tensor._make(value.ctx, (size,), value.dtype, Load(0, value.dtype, View.contiguous((size,))), (out,))


def _as_index(k, t: Tensor):
    """An index array: host data stays a numpy array (int64 or bool), a Tensor stays on its device."""
    if isinstance(k, Tensor):
        if k.ctx is not t.ctx:
            raise ValueError(f"index tensor is on {k.device}, the tensor on {t.device}; use .to()")
        dt = k.dtype
    else:
        k = np.asarray(k)
        k = k.astype(np.int64) if k.size == 0 else k   # numpy takes [] as an empty integer index
        dt = k.dtype
        k = k if dt.kind == "b" else k.astype(np.int64)
    if dt.kind not in "biu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return k


def nonzero(mask: Tensor) -> tuple[Tensor, ...]:
    """numpy.nonzero: the positions of the true elements, one int64 tensor per dim. The true elements
    are counted by a prefix sum on the device (the count, one number, sizes the result), and each
    one's flat position is scattered to its slot."""
    if not mask.ndim:
        raise ValueError("nonzero of a 0-d tensor is not allowed (numpy raises too); use atleast_1d")
    flat = movement.reshape(ops.cast(mask, D.bool_), (-1,))
    n = flat.shape[0]
    count = 0
    if n:
        slots = reduce.scan("sum", flat)
        count = int(movement.getitem(slots, -1).item())
        flat_pos = scatter(position(mask.ctx, (n,), 0), ops.where(flat, slots - 1, -1), count, "N")
    else:
        flat_pos = Tensor(np.zeros(0, np.int64), device=mask.ctx)
    coords = []
    for d, (s, st) in enumerate(zip(mask.shape, contiguous_strides(mask.shape))):
        c = ops.binary("floordiv", flat_pos, st) if st > 1 else flat_pos
        coords.append(ops.binary("mod", c, s) if d else c)
    return tuple(coords)


def _is_mask(k) -> bool:
    return isinstance(k, (Tensor, np.ndarray)) and k.dtype == np.bool_


def _expand_key(t: Tensor, key) -> list:
    """The key as one entry per indexed position: None, slice, int, int index array (numpy or
    Tensor); boolean masks expanded to their nonzero positions, Ellipsis to full slices."""
    keys = list(key) if isinstance(key, tuple) else [key]
    keys = [_as_index(k, t) if isinstance(k, (Tensor, list, np.ndarray)) else k for k in keys]
    for k in keys:
        if isinstance(k, (bool, np.bool_)):
            raise IndexError("a Python bool as an index is not supported; use a boolean tensor")
    used = sum(k.ndim if _is_mask(k) else 1
               for k in keys if k is not None and k is not Ellipsis)
    if sum(k is Ellipsis for k in keys) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if used > t.ndim:
        raise IndexError(f"too many indices for tensor: tensor is {t.ndim}-dimensional, but {used} were indexed")
    fill = [slice(None)] * (t.ndim - used)
    at = next((i for i, k in enumerate(keys) if k is Ellipsis), None)   # not `in`: Tensor == is elementwise
    keys = keys[:at] + fill + keys[at + 1:] if at is not None else keys + fill
    out, d = [], 0
    for k in keys:
        if _is_mask(k):
            if k.shape != t.shape[d:d + k.ndim]:
                raise IndexError(f"boolean index of shape {k.shape} does not match the indexed dims "
                                 f"{t.shape[d:d + k.ndim]} (from axis {d})")
            if not k.ndim:
                raise IndexError("a 0-d boolean index is not supported; use a mask of the indexed shape")
            out.extend(nonzero(k) if isinstance(k, Tensor) else np.nonzero(k))  # host data: host positions
            d += k.ndim
            continue
        out.append(k)
        d += k is not None
    return out


def _checked(idx, size: int, axis: int, ctx) -> Tensor:
    """idx as an int64 tensor with negative indices wrapped, after checking every index is in range
    (host data on the host, a tensor by its device-reduced min and max)."""
    if idx.size:
        lo, hi = (int(idx.min()), int(idx.max())) if isinstance(idx, np.ndarray) else \
            (int(idx.min().item()), int(idx.max().item()))
        bad = hi if hi >= size else (lo if lo < -size else None)
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {size}")
    if isinstance(idx, np.ndarray):
        return Tensor(np.where(idx < 0, idx + size, idx), device=ctx, dtype=D.int64)
    idx = ops.cast(idx, D.int64)
    return ops.where(idx < 0, idx + size, idx)


def _plan(t: Tensor, key):
    """For an advanced key: (view tensor of the basic part, result shape, int64 offset tensor of
    that shape into the view's storage), or None for a basic key."""
    entries = _expand_key(t, key)
    if not any(isinstance(k, (Tensor, np.ndarray)) for k in entries):
        return None
    basic = tuple(k if k is None or isinstance(k, slice) else slice(None) for k in entries)
    v = movement.getitem(t, basic)
    adv, idx, d = [], [], 0
    for vd, k in enumerate(entries):
        if k is not None and not isinstance(k, slice):
            if isinstance(k, (Tensor, np.ndarray)):
                idx.append(_checked(k, v.shape[vd], d, t.ctx))
            else:
                i = int(k)
                if not -v.shape[vd] <= i < v.shape[vd]:
                    raise IndexError(f"index {i} is out of bounds for axis {d} with size {v.shape[vd]}")
                idx.append(Tensor._make(t.ctx, (), D.int64, Const(i % v.shape[vd], D.int64)))
            adv.append(vd)
        d += k is not None
    b = broadcast_shapes(*(i.shape for i in idx))
    if not v.is_view:   # after the checks: a bad index runs no kernel
        v = v.realize()
    rest = [vd for vd in range(v.ndim) if vd not in adv]
    adjacent = adv == list(range(adv[0], adv[-1] + 1))
    front = adv[0] if adjacent else 0
    shape = tuple(v.shape[vd] for vd in rest[:front]) + b + tuple(v.shape[vd] for vd in rest[front:])
    view = v._expr.view
    strides = [view.strides[vd] for vd in rest[:front]] + [0] * len(b) + [view.strides[vd] for vd in rest[front:]]
    off = Tensor._make(t.ctx, shape, D.int64, Index(View(shape, tuple(strides), view.offset), D.int64))
    place = (1,) * front + b + (1,) * (len(rest) - front)
    for i, vd in zip(idx, adv):
        i = movement.expand(movement.reshape(movement.expand(i, b), place), shape)
        off = off + i * view.strides[vd]
    return v, shape, off


def gather(src: Tensor, offsets: Tensor) -> Tensor:
    """A lazy tensor of offsets' shape: the elements of src's storage (src is a view) at the int64
    element offsets; the caller guarantees they are in range."""
    expr = Gather(len(offsets._bufs), src.dtype, offsets._expr)
    return Tensor._make(src.ctx, offsets.shape, src.dtype, expr, offsets._bufs + src._bufs)


def view_offsets(src: Tensor, axis: int, along: Tensor) -> Tensor:
    """int64 offsets into src's storage of the elements src[..., along[...], ...] (along indexes
    `axis`, the other dims are the point's own; src is a view)."""
    view = src._expr.view
    strides = tuple(0 if d == axis else st for d, st in enumerate(view.strides))
    base = Tensor._make(src.ctx, src.shape, D.int64, Index(View(src.shape, strides, view.offset), D.int64))
    return base + along * view.strides[axis]


def getitem(t: Tensor, key) -> Tensor:
    plan = _plan(t, key)
    if plan is None:
        return movement.getitem(t, key)
    v, _, off = plan
    return gather(v, off)


def _value(value, t: Tensor, shape) -> Tensor:
    """The assigned value as a tensor of t's dtype broadcast to the target shape (numpy casts
    unsafely on assignment; a Python int must fit the dtype)."""
    if not isinstance(value, Tensor):
        arr = np.asarray(value)
        if arr.ndim == 0 and arr.dtype.kind in "biuf":
            return Tensor._make(t.ctx, shape, t.dtype, Const(t.dtype.type(value).item(), t.dtype))
        value = Tensor(arr, device=t.ctx)
    value = ops._operand(value, t)
    while value.ndim > len(shape) and value.shape[0] == 1:
        value = movement.reshape(value, value.shape[1:])
    try:
        value = movement.expand(value, shape)
    except ShapeError:
        raise ShapeError(f"could not broadcast input of shape {value.shape} into shape {shape}") from None
    return ops.cast(value, t.dtype)


def _reads_elsewhere(x: Tensor, storage, region: View | None) -> bool:
    """Whether x reads `storage` anywhere but at the element `region` maps each point to."""
    return any(x._bufs[ld.arg] is storage and (region is None or isinstance(ld, Gather) or ld.mask is not None
                                               or ld.view != region) for ld in lazy.loads(x._expr))


def setitem(t: Tensor, key, value) -> None:
    if not t.is_view:
        t.realize()
    view, (storage,) = t._expr.view, t._bufs
    if any(st == 0 and s > 1 for s, st in zip(view.shape, view.strides)):
        raise ValueError("assignment destination is read-only: a broadcast view (use .copy())")
    plan = _plan(t, key)
    shape = plan[1] if plan else View.contiguous(t.shape).index(key).shape
    val, dest = _value(value, t, shape), plan[2] if plan else None
    region = None if plan else view.index(key)
    # what the write reads must not be the storage it writes (other than each point's own element,
    # as in t[...] = t * 2): read copies instead
    val = val.copy() if _reads_elsewhere(val, storage, region) else val
    dest = dest.copy() if dest is not None and _reads_elsewhere(dest, storage, None) else dest
    t.ctx.flush_readers(storage, but=(val, dest))
    if not math.prod(shape):
        return
    if dest is None:
        spec = make_spec("W", shape, val._expr, t.dtype, val._bufs, out_view=region)
        t.ctx.run(spec, val._bufs, storage)
    else:
        scatter_into(val, dest, storage, "W")
