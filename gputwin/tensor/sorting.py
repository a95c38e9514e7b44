"""sort / argsort by rank: two kernels per call, both ordinary Tensor kernels.

The rank of element i of a row is the number of elements that sort before it: those with a smaller
key, or an equal key and a smaller position. Ranks are distinct, so the sort is stable (numpy's
kind="stable"), and scattering each element (or its position, for argsort) to its rank sorts the row.
Keys (kernel_math.sort_key) give numpy's order: -0.0 == 0.0, NaNs last. The rank is a reduction over
the row, so the work is n**2 comparisons per row of n (fine for the sizes an emulator runs; a merge
network would do n log**2 n).
"""
from __future__ import annotations

import math

from gputwin.tensor import dtypes as D
from gputwin.tensor import movement, ops
from gputwin.tensor.indexing import position, scatter
from gputwin.tensor.shape import ShapeError, View, contiguous_strides, normalize_axis
from gputwin.tensor.spec import Index
from gputwin.tensor.tensor import Tensor


def _key_dtype(dt):
    return D.int32 if D.is_float(dt) or dt == D.int32 else D.int64


def _ranks(t: Tensor) -> Tensor:
    """Rank of every element of t within its last-axis row (int64)."""
    key = ops._build("sortkey", [t], t.dtype, _key_dtype(t.dtype)).realize()
    n = t.shape[-1]
    pair = t.shape + (n,)
    mine = movement.expand(movement.unsqueeze(key, -1), pair)     # [.., i, j] -> key[.., i]
    other = movement.expand(movement.unsqueeze(key, -2), pair)    # [.., i, j] -> key[.., j]
    i, j = position(t.ctx, pair, len(pair) - 2), position(t.ctx, pair, len(pair) - 1)
    before = (other < mine) | ((other == mine) & (j < i))
    return before.sum(axis=-1)


def _by_rank(t: Tensor, axis: int, value_of) -> Tensor:
    if t.ndim == 0:
        raise ShapeError("cannot sort a 0-d tensor (numpy raises too); use axis=None")
    ax = normalize_axis(axis, t.ndim)
    perm = tuple(d for d in range(t.ndim) if d != ax) + (ax,)
    tp = movement.permute(t, perm)
    shape = tp.shape
    rank = _ranks(tp) if tp.size else tp.astype(D.int64)
    row_start = Tensor._make(t.ctx, shape, D.int64,
                             Index(View(shape, contiguous_strides(shape)[:-1] + (0,), 0), D.int64))
    out = scatter(value_of(tp), row_start + rank, math.prod(shape), "P")
    out = movement.reshape(out, shape)
    inverse = tuple(perm.index(d) for d in range(len(perm)))
    return movement.permute(out, inverse)


def sort(t: Tensor, axis=-1) -> Tensor:
    """numpy.sort(kind="stable"); axis=None sorts the flattened tensor."""
    if axis is None:
        t, axis = movement.reshape(t, (-1,)), 0
    return _by_rank(t, axis, lambda tp: tp)


def argsort(t: Tensor, axis=-1) -> Tensor:
    """numpy.argsort(kind="stable"): int64 positions along the axis."""
    if axis is None:
        t, axis = movement.reshape(t, (-1,)), 0
    return _by_rank(t, axis, lambda tp: position(tp.ctx, tp.shape, tp.ndim - 1))
