"""sort / argsort, stable (numpy's kind="stable"), as ordinary Tensor kernels.

Keys (kernel_math.sort_key) are integers in numpy's order: -0.0 == 0.0, NaNs last. Two methods:
- rank (rows up to RANK_MAX): the rank of an element is how many elements of its row
  sort before it (smaller key, or equal key and earlier position): one reduction over the row, then each
  element (or its position) is scattered to its rank. n**2 comparisons per row of n, two kernels.
- bitonic (longer rows): key and position packed into one int64 (key << 32 | position, so all are
  distinct and their order is the stable order; int64 keys travel as a (key, position) pair of columns
  instead), padded to a power of two with INT64_MAX and sorted by a bitonic network: log2(P)(log2(P)+1)/2
  elementwise stages, each element taking the min or max of itself and its partner (a gather at
  position ^ j). The positions come out; the values are gathered from the input at them. n log**2 n work.
"""
from __future__ import annotations

from gputwin.tensor import dtypes as D
from gputwin.tensor import movement, ops
from gputwin.tensor.indexing import gather, position, scatter, view_offsets
from gputwin.tensor.shape import ShapeError, View, contiguous_strides, normalize_axis
from gputwin.tensor.spec import Index
from gputwin.tensor.tensor import Tensor

RANK_MAX = 2048   # longer rows sort by the bitonic network


def _keys(t: Tensor) -> Tensor:
    return ops._build("sortkey", [t], t.dtype, D.int64 if t.dtype == D.int64 else D.int32)


def _row_start(ctx, shape) -> Tensor:
    """Each point's flat offset of its row's first element in a contiguous tensor of `shape`."""
    return Tensor._make(ctx, shape, D.int64, Index(View(shape, contiguous_strides(shape)[:-1] + (0,), 0), D.int64))


def _ranks(t: Tensor) -> Tensor:
    """Rank of every element of t within its last-axis row (int64)."""
    key = _keys(t).realize()
    n = t.shape[-1]
    pair = t.shape + (n,)
    mine = movement.expand(movement.unsqueeze(key, -1), pair)     # [.., i, j] -> key[.., i]
    other = movement.expand(movement.unsqueeze(key, -2), pair)    # [.., i, j] -> key[.., j]
    i, j = position(t.ctx, pair, len(pair) - 2), position(t.ctx, pair, len(pair) - 1)
    before = (other < mine) | ((other == mine) & (j < i))
    return before.sum(axis=-1)


def _by_rank(tp: Tensor, positions: bool) -> Tensor:
    value = position(tp.ctx, tp.shape, tp.ndim - 1) if positions else tp
    dest = _row_start(tp.ctx, tp.shape) + _ranks(tp)
    return movement.reshape(scatter(value, dest, tp.size, "P"), tp.shape)


def _bitonic_stage(cols: tuple, j: int, k: int, before) -> tuple:
    """One compare-exchange stage over rows of (key columns...): element i pairs with i ^ j and keeps
    the smaller when its k-block sorts ascending and it is the lower of the pair (or descending and
    upper), else the larger; `before(other, mine)` orders two column tuples."""
    first = cols[0]
    i = position(first.ctx, first.shape, first.ndim - 1)
    partner = _row_start(first.ctx, first.shape) + (i ^ j)
    other = tuple(gather(c, partner) for c in cols)
    keep_min = ((i & k) == 0) == ((i & j) == 0)
    take = before(other, cols) == keep_min
    return tuple(ops.where(take, o, c).realize() for o, c in zip(other, cols))


def _bitonic_positions(tp: Tensor) -> Tensor:
    """The stable sorted order of each last-axis row of tp, as int64 positions. int32 keys travel
    packed with their position in one int64 (key << 32 | position); int64 keys as a (key, position)
    pair of columns. Rows are padded to a power of two with INT64_MAX, which sorts last."""
    n, pos = tp.shape[-1], position(tp.ctx, tp.shape, tp.ndim - 1)
    keys = _keys(tp)
    if keys.dtype == D.int64:
        cols = (keys, pos)
        def before(o, m): return (o[0] < m[0]) | ((o[0] == m[0]) & (o[1] < m[1]))
    else:
        cols = ((ops.cast(keys, D.int64) << 32) | pos,)
        def before(o, m): return o[0] < m[0]
    size = 1 << (n - 1).bit_length()
    pad = [(0, 0)] * (tp.ndim - 1) + [(0, size - n)]
    cols = tuple(movement.pad(c.realize(), pad, (1 << 63) - 1).realize() for c in cols)
    k = 2
    while k <= size:
        j = k // 2
        while j:
            cols = _bitonic_stage(cols, j, k, before)
            j //= 2
        k *= 2
    order = movement.getitem(cols[-1], (..., slice(0, n)))
    return order if len(cols) == 2 else order & 0xFFFFFFFF


def _sorted(t: Tensor, axis, positions: bool) -> Tensor:
    if axis is None:
        t, axis = movement.reshape(t, (-1,)), 0
    if t.ndim == 0:
        raise ShapeError("cannot sort a 0-d tensor (numpy raises too); use axis=None")
    ax = normalize_axis(axis, t.ndim)
    perm = tuple(d for d in range(t.ndim) if d != ax) + (ax,)
    tp = movement.permute(t, perm)
    if not tp.size:
        out = ops.astype(tp, D.int64) if positions else ops.value_copy(tp)
    elif tp.shape[-1] <= RANK_MAX:
        out = _by_rank(tp, positions)
    else:
        order = _bitonic_positions(tp)
        src = tp if tp.is_view else tp.realize()
        out = order if positions else gather(src, view_offsets(src, src.ndim - 1, order))
    return movement.permute(out, tuple(perm.index(d) for d in range(len(perm))))


def sort(t: Tensor, axis=-1) -> Tensor:
    """numpy.sort(kind="stable"); axis=None sorts the flattened tensor."""
    return _sorted(t, axis, positions=False)


def argsort(t: Tensor, axis=-1) -> Tensor:
    """numpy.argsort(kind="stable"): int64 positions along the axis."""
    return _sorted(t, axis, positions=True)
