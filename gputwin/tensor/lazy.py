"""Lazy expressions: a tensor's value as a kernel-spec tree over device storages.

Every tensor is an expression (spec nodes) plus the storages its Loads read. A realized tensor is a
single unmasked Load: a strided view of one storage. Elementwise ops combine expressions without
running anything (so chains fuse into one kernel); movement ops rewrite every Load's view, since
elementwise ops commute with them; a Load whose view cannot take the movement forces a realize.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from gputwin.tensor.shape import View
from gputwin.tensor.spec import Gather, Index, Load, Node, Op

MAX_FUSED_OPS = 48  # beyond this an operand is realized first, to keep kernels and compiles small
MAX_ARGS = 8


def loads(node: Node | None) -> list[Load | Gather]:
    """Every node that reads an input buffer (Loads and Gathers)."""
    if isinstance(node, Load):
        return [node]
    if isinstance(node, Gather):
        return [node] + loads(node.index)
    if isinstance(node, Op):
        return [ld for s in node.srcs for ld in loads(s)]
    return []


def arg_dtypes(nodes: list[Node], count: int) -> tuple:
    """The dtype each of `count` storages is read as by the Loads of `nodes` (a kernel's buffer types)."""
    out = [None] * count
    for node in nodes:
        for ld in loads(node):
            out[ld.arg] = ld.dtype
    return tuple(out)


def map_loads(node: Node, fn: Callable[[Node], Node]) -> Node:
    """node with fn applied to every leaf that has a view or a buffer: Load, Index, Gather (a
    Gather's index expression is mapped first)."""
    if isinstance(node, Op):
        return Op(node.op, tuple(map_loads(s, fn) for s in node.srcs), node.dtype)
    if isinstance(node, Gather):
        node = replace(node, index=map_loads(node.index, fn))
    return fn(node) if isinstance(node, (Load, Index, Gather)) else node


def move(node: Node, fn: Callable[[View], View | None]) -> Node | None:
    """Apply a view transform to every Load and Index, or None when some Load cannot take it.
    A Gather reads a flat element, so only its index expression moves."""
    failed = False

    def one(ld):
        nonlocal failed
        if isinstance(ld, Gather):
            return ld
        view = None if getattr(ld, "mask", None) is not None else fn(ld.view)
        if view is None:
            failed = True
            return ld
        return replace(ld, view=view)

    out = map_loads(node, one)
    return None if failed else out


def merge(parts: list[tuple[Node, tuple]]) -> tuple[list[Node], tuple]:
    """Renumber the Loads of several (expr, storages) pairs onto one shared storage tuple."""
    storages: list = []
    index: dict[int, int] = {}
    out = []
    for expr, bufs in parts:
        def renum(ld, bufs=bufs):
            if isinstance(ld, Index):
                return ld
            st = bufs[ld.arg]
            if id(st) not in index:
                index[id(st)] = len(storages)
                storages.append(st)
            return replace(ld, arg=index[id(st)])
        out.append(map_loads(expr, renum))
    return out, tuple(storages)

