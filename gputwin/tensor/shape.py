"""Shapes, broadcasting and strided views (shape, strides and offset in elements).

Movement ops (reshape, permute, expand, slicing, flip) only rewrite a View; a kernel reads any View
directly, so no data moves until an op needs it. All checks here raise before any kernel runs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_ELEMENTS = 2**31 - 1  # kernels index with 32-bit integers


class ShapeError(ValueError):
    """Shapes that do not fit an op (broadcast, reshape, matmul, axes)."""


def normalize_shape(shape) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    out = tuple(int(s) for s in shape)
    if any(s < 0 for s in out):
        raise ShapeError(f"negative dimension in shape {out}")
    if math.prod(out) > MAX_ELEMENTS:
        raise ShapeError(f"shape {out} has more than {MAX_ELEMENTS} elements")
    return out


def normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise ShapeError(f"axis {axis} is out of range for a tensor of {ndim} dimension(s)")
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """Axes for a reduction: None means all; duplicates are an error, as in numpy."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    norm = tuple(normalize_axis(a, ndim) for a in axes)
    if len(set(norm)) != len(norm):
        raise ShapeError(f"repeated axis in {axes}")
    return tuple(sorted(norm))


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        dims = {s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0} - {1}
        if len(dims) > 1:
            raise ShapeError("shapes " + " and ".join(str(s) for s in shapes) + " cannot be broadcast together")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return tuple(reversed(strides))


@dataclass(frozen=True)
class View:
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0

    @staticmethod
    def contiguous(shape: tuple[int, ...]) -> "View":
        return View(shape, contiguous_strides(shape), 0)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def is_contiguous(self) -> bool:
        return all(st == cs for s, st, cs in zip(self.shape, self.strides, contiguous_strides(self.shape))
                   if s != 1)

    def reshape(self, shape: tuple[int, ...]) -> "View | None":
        """The same elements in row-major order under a new shape, or None if that needs a copy."""
        if self.is_contiguous or self.numel == 0:
            return View(shape, contiguous_strides(shape), self.offset)
        # As numpy's no-copy reshape: match groups of old and new dims with equal element counts;
        # each old group must be contiguous within itself, then the new group splits it.
        old = [(s, st) for s, st in zip(self.shape, self.strides) if s != 1]
        strides = [0] * len(shape)
        oi = ni = 0
        while oi < len(old):
            nj, oj, nsize, osize = ni + 1, oi + 1, shape[ni], old[oi][0]
            while nsize != osize:
                if nsize < osize:
                    nsize, nj = nsize * shape[nj], nj + 1
                else:
                    osize, oj = osize * old[oj][0], oj + 1
            if any(old[k][1] != old[k + 1][0] * old[k + 1][1] for k in range(oi, oj - 1)):
                return None
            strides[nj - 1] = old[oj - 1][1]
            for k in range(nj - 1, ni, -1):
                strides[k - 1] = strides[k] * shape[k]
            ni, oi = nj, oj
        return View(shape, tuple(strides), self.offset)

    def permute(self, dims: tuple[int, ...]) -> "View":
        return View(tuple(self.shape[d] for d in dims), tuple(self.strides[d] for d in dims), self.offset)

    def expand(self, shape: tuple[int, ...]) -> "View":
        lead = len(shape) - len(self.shape)
        strides = [0] * lead + [0 if s != n else st for s, n, st in zip(self.shape, shape[lead:], self.strides)]
        return View(shape, tuple(strides), self.offset)

    def flip(self, axes: tuple[int, ...]) -> "View":
        off, strides = self.offset, list(self.strides)
        for a in axes:
            if self.shape[a] > 0:
                off += (self.shape[a] - 1) * strides[a]
            strides[a] = -strides[a]
        return View(self.shape, tuple(strides), off)

    def index(self, key) -> "View":
        """Basic numpy indexing: ints, slices (any step), None and one Ellipsis."""
        key = key if isinstance(key, tuple) else (key,)
        if sum(k is Ellipsis for k in key) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        used = sum(1 for k in key if k is not None and k is not Ellipsis)
        if used > len(self.shape):
            raise IndexError(f"too many indices for tensor: tensor is {len(self.shape)}-dimensional, "
                             f"but {used} were indexed")
        if Ellipsis in key:
            i = key.index(Ellipsis)
            key = key[:i] + (slice(None),) * (len(self.shape) - used) + key[i + 1:]
        else:
            key = key + (slice(None),) * (len(self.shape) - used)
        shape, strides, off, d = [], [], self.offset, 0
        for k in key:
            if k is None:
                shape.append(1)
                strides.append(0)
                continue
            size, st = self.shape[d], self.strides[d]
            if isinstance(k, slice):
                start, stop, step = k.indices(size)
                n = len(range(start, stop, step))
                if n:
                    off += start * st
                shape.append(n)
                strides.append(st * step)
            elif hasattr(k, "__index__") and not isinstance(k, (bool, np.bool_)):
                i = int(k)
                if not -size <= i < size:
                    raise IndexError(f"index {i} is out of bounds for axis {d} with size {size}")
                off += (i % size) * st
            else:
                raise IndexError(f"unsupported index {k!r}: only integers, slices, None and ... are supported")
            d += 1
        return View(tuple(shape), tuple(strides), off)
