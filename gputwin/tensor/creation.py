"""Creating tensors: constants (lazy, so they fuse into their users), host-made ranges and random data.

arange, eye and rand/randn are made by numpy on the host and copied in, so their values equal numpy's
bit for bit on every device; rand/randn draw from numpy's PCG64 generator (seeded by `seed=` or the
module generator `manual_seed` resets).
"""
from __future__ import annotations

import numpy as np

from gputwin.tensor import dtypes as D
from gputwin.tensor.runtime import get_context
from gputwin.tensor.shape import normalize_shape
from gputwin.tensor.spec import Const
from gputwin.tensor.tensor import Tensor

_rng = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    global _rng
    _rng = np.random.default_rng(seed)


def _scalar_dtype(value) -> np.dtype:
    if isinstance(value, (bool, np.bool_)):
        return D.bool_
    if isinstance(value, (int, np.integer)):
        return D.DEFAULT_INT
    if isinstance(value, (float, np.floating)):
        return D.DEFAULT_FLOAT
    raise D.DTypeError(f"fill value must be a number, got {type(value).__name__}")


def full(shape, value, dtype=None, device=None) -> Tensor:
    shape = normalize_shape(shape if isinstance(shape, (tuple, list)) else (shape,))
    dt = D.to_dtype(dtype) if dtype is not None else _scalar_dtype(value)
    return Tensor._make(get_context(device), shape, dt, Const(dt.type(value).item(), dt))


def zeros(*shape, dtype=D.float32, device=None) -> Tensor:
    return full(normalize_shape(shape), 0, dtype, device)


def ones(*shape, dtype=D.float32, device=None) -> Tensor:
    return full(normalize_shape(shape), 1, dtype, device)


def zeros_like(t: Tensor, dtype=None) -> Tensor:
    return full(t.shape, 0, dtype or t.dtype, t.ctx)


def ones_like(t: Tensor, dtype=None) -> Tensor:
    return full(t.shape, 1, dtype or t.dtype, t.ctx)


def full_like(t: Tensor, value, dtype=None) -> Tensor:
    return full(t.shape, value, dtype or t.dtype, t.ctx)


def arange(start, stop=None, step=1, dtype=None, device=None) -> Tensor:
    arr = np.arange(start, stop, step) if stop is not None else np.arange(start)
    if step == 0:
        raise ValueError("arange step must not be zero")
    return Tensor(arr, device=device, dtype=dtype)


def eye(n: int, m: int | None = None, k: int = 0, dtype=D.float32, device=None) -> Tensor:
    return Tensor(np.eye(n, m, k, dtype=np.float32), device=device, dtype=dtype)


def _gen(seed):
    return _rng if seed is None else np.random.default_rng(seed)


def rand(*shape, seed=None, dtype=D.float32, device=None) -> Tensor:
    """Uniform [0, 1) samples."""
    dt = D.to_dtype(dtype)
    if not D.is_float(dt):
        raise D.DTypeError(f"rand makes float tensors, not {dt}")
    return Tensor(_gen(seed).random(normalize_shape(shape), dtype=np.float32), device=device, dtype=dt)


def randn(*shape, seed=None, dtype=D.float32, device=None) -> Tensor:
    """Standard normal samples."""
    dt = D.to_dtype(dtype)
    if not D.is_float(dt):
        raise D.DTypeError(f"randn makes float tensors, not {dt}")
    return Tensor(_gen(seed).standard_normal(normalize_shape(shape), dtype=np.float32), device=device, dtype=dt)
