"""sort / argsort, stable (numpy's kind="stable"), as ordinary Tensor kernels.

Keys (kernel_math.sort_key) are integers in numpy's order: -0.0 == 0.0, NaNs last. Two methods:
- rank (rows up to RANK_MAX, and int64 keys): the rank of an element is how many elements of its row
  sort before it (smaller key, or equal key and earlier position): one reduction over the row, then each
  element (or its position) is scattered to its rank. n**2 comparisons per row of n, two kernels.
- bitonic (longer rows with int32 keys): key and position packed into one int64 (key << 32 | position,
  so all are distinct and their order is the stable order), padded to a power of two with INT64_MAX and
  sorted by a bitonic network: log2(P)(log2(P)+1)/2 elementwise stages, each element taking the min or
  max of itself and its partner (a gather at position ^ j). The positions come out of the low 32 bits;
  the values are gathered from the input at them. n log**2 n work.
"""
from __future__ import annotations

from gputwin.tensor import dtypes as D
from gputwin.tensor import movement, ops
from gputwin.tensor.indexing import gather, position, scatter, view_offsets
from gputwin.tensor.shape import ShapeError, View, contiguous_strides, normalize_axis
from gputwin.tensor.spec import Index
from gputwin.tensor.tensor import Tensor

RANK_MAX = 2048   # longer rows sort by the bitonic network (when their keys fit int32)


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


def _bitonic_stage(cur: Tensor, j: int, k: int) -> Tensor:
    """One compare-exchange stage: element i pairs with i ^ j and keeps the min when its k-block sorts
    ascending and it is the lower of the pair (or descending and upper), else the max."""
    i = position(cur.ctx, cur.shape, cur.ndim - 1)
    mine = cur
    other = gather(cur, _row_start(cur.ctx, cur.shape) + (i ^ j))
    keep_min = ((i & k) == 0) == ((i & j) == 0)
    return ops.where((other < mine) == keep_min, other, mine).realize()


def _bitonic_positions(tp: Tensor) -> Tensor:
    """The stable sorted order of each last-axis row of tp, as int64 positions."""
    n = tp.shape[-1]
    packed = (ops.cast(_keys(tp), D.int64) << 32) | position(tp.ctx, tp.shape, tp.ndim - 1)
    size = 1 << (n - 1).bit_length()
    cur = movement.pad(packed.realize(), [(0, 0)] * (tp.ndim - 1) + [(0, size - n)], (1 << 63) - 1).realize()
    k = 2
    while k <= size:
        j = k // 2
        while j:
            cur = _bitonic_stage(cur, j, k)
            j //= 2
        k *= 2
    return movement.getitem(cur, (..., slice(0, n))) & 0xFFFFFFFF


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
    elif tp.shape[-1] <= RANK_MAX or tp.dtype == D.int64:
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
