"""Kernel specs: what one tensor kernel computes, independent of any compiler or device.

A KernelSpec is a hashable description: an expression tree over strided loads from input buffers,
evaluated at every point of an iteration space, optionally reduced over its trailing dims, and stored
contiguously. Shapes, strides and dtypes are baked in, so a spec is also the compile-cache key.
`lower.py` turns a spec into the compiler's kernel IR.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from gputwin.tensor.shape import View

# Op names are the keys of lower._OPS plus "cast". Semantics (docs/tensor.md): float16/bfloat16 ops
# compute in float32 and round once per op; integer ops wrap; max/min/relu propagate NaN.


@dataclass(frozen=True)
class Load:
    """Element of input buffer `arg` at the iteration index mapped through `view`. With `mask`
    (per dim (lo, hi)) points outside lo <= i < hi read `fill` instead (pad)."""
    arg: int
    dtype: np.dtype
    view: View
    mask: tuple[tuple[int, int], ...] | None = None
    fill: float | int | bool = 0


@dataclass(frozen=True)
class Index:
    """The element offset `view` maps the iteration index to, as an integer of `dtype`: a Load without
    the memory read. Movement ops rewrite its view like a Load's, so it is the position of an element
    in any arrangement (argsort's indices, nonzero's positions, integer-array indexing's offsets)."""
    view: View
    dtype: np.dtype


@dataclass(frozen=True)
class Gather:
    """Element `index` (an integer expression, in elements) of input buffer `arg`: a data-dependent
    load, for integer-array indexing. The index is checked in bounds before any kernel runs."""
    arg: int
    dtype: np.dtype
    index: "Node"


@dataclass(frozen=True)
class Const:
    value: float | int | bool
    dtype: np.dtype


@dataclass(frozen=True)
class Op:
    op: str
    srcs: tuple
    dtype: np.dtype


Node = Load | Index | Gather | Const | Op


@dataclass(frozen=True)
class KernelSpec:
    """out[i] = expr(i) over `shape`; with `reduce`, out[i] = reduce_j expr(i ++ j) over `rshape`
    in row-major order of j, accumulated in `acc_dtype`, then cast to `out_dtype`. The output is
    contiguous from element 0 unless `out_view` or `out_index` says where each point goes."""
    name: str
    shape: tuple[int, ...]
    expr: Node
    out_dtype: np.dtype
    arg_dtypes: tuple[np.dtype, ...]
    reduce: str | None = None
    rshape: tuple[int, ...] = ()
    acc_dtype: np.dtype | None = None
    out_view: View | None = None  # where out[i] is stored (cat writes into part of a buffer)
    out_index: Node | None = None  # or: the flat element it is stored at, skipped when negative (scatter)
    scan: bool = False  # with `reduce`: store every prefix, out[i ++ j] = reduce of expr(i ++ 0..j)

    @property
    def symbol(self) -> str:
        return stable_symbol(self)


def stable_symbol(spec) -> str:
    """A kernel's symbol: unique per spec (`name` + hash of its repr) and stable across processes (so the
    compiler's disk cache hits)."""
    return f"{spec.name}_{hashlib.sha1(repr(spec).encode()).hexdigest()[:10]}"


def count_ops(node: Node) -> int:
    if isinstance(node, Gather):
        return 1 + count_ops(node.index)
    return 1 + sum(count_ops(s) for s in node.srcs) if isinstance(node, Op) else 0
