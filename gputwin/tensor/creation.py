"""Creating tensors: constants (lazy, so they fuse into their users), host-made ranges and random data.

arange, eye and rand/randn are made by numpy on the host and copied in, so their values equal numpy's
bit for bit on every device; rand/randn draw from numpy's PCG64 generator (seeded by `seed=` or the
module generator `manual_seed` resets).
"""
from __future__ import annotations

import numpy as np

from gputwin.tensor import dtypes as D
from gputwin.tensor.ops import where as ops_where
from gputwin.tensor.runtime import get_context
from gputwin.tensor.shape import normalize_shape
from gputwin.tensor.spec import Const, Op
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


def full_like(t: Tensor, fill_value, dtype=None, *, shape=None) -> Tensor:
    return full(t.shape if shape is None else shape, fill_value, dtype or t.dtype, t.ctx)


def zeros_like(t: Tensor, dtype=None, *, shape=None) -> Tensor:
    return full_like(t, 0, dtype, shape=shape)


def ones_like(t: Tensor, dtype=None, *, shape=None) -> Tensor:
    return full_like(t, 1, dtype, shape=shape)


def arange(start, stop=None, step=1, dtype=None, device=None) -> Tensor:
    arr = np.arange(start, stop, step) if stop is not None else np.arange(start)
    if step == 0:
        raise ValueError("arange step must not be zero")
    return Tensor(arr, device=device, dtype=dtype)


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype=None, axis=0,
             device=None):
    """numpy.linspace for scalar start/stop, computed on the device: start + i * step with
    step = (stop - start) / (num - endpoint) in float64 on the host (one number), evaluated per
    element in double-float32 (kernel_math.lerp) and rounded once, so it differs from numpy's
    float64 evaluation only where that lies within ~2**-44 relative of a float32 rounding midpoint
    (docs/tensor.md). The last point is `stop` exactly when endpoint; integer dtypes floor, as numpy."""
    if np.ndim(start) or np.ndim(stop) or isinstance(start, Tensor) or isinstance(stop, Tensor):
        raise TypeError("linspace takes scalar start and stop")
    num = int(num)
    if num < 0:
        raise ValueError(f"number of samples, {num}, must be non-negative")
    if not 0 <= num <= 1 << 24:
        raise ValueError(f"linspace supports up to 2**24 samples (exact float32 positions), got {num}")
    dt = D.to_dtype(dtype) if dtype is not None else D.DEFAULT_FLOAT
    div = num - 1 if endpoint else num
    start, stop = float(start), float(stop)
    step = (stop - start) / div if div > 0 else 0.0
    ctx = get_context(device)
    from gputwin.tensor.indexing import position
    i = position(ctx, (num,), 0, D.float32)
    op = "lerpfloor" if D.is_int(dt) else "lerp"   # numpy floors the float64 values for integer dtypes
    y = Tensor._make(ctx, (num,), D.float32, Op(op, (i._expr,) + tuple(
        Const(v, D.float32) for v in (*_split(start), *_split(step))), D.float32))
    if endpoint and num > 1:
        y = ops_where(i == num - 1, float(np.floor(stop)) if D.is_int(dt) else stop, y)
    y = y.astype(dt)
    return (y, step if div > 0 else float("nan")) if retstep else y


def _split(x: float) -> tuple[float, float]:
    """x as float32 hi + lo (their sum carries ~48 bits of x)."""
    hi = float(np.float32(x))
    return hi, float(np.float32(x - hi)) if np.isfinite(hi) else 0.0


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
