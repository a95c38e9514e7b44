"""Dependencies imported on first use rather than when gputwin is imported.

Opening a device, launching a kernel and float32/int Tensor work never need them, and a fresh process
should not pay for them (ml_dtypes alone takes ~0.5 s to import). One function per dependency returns
the module; callers reach the dependency only through it, so a test can check it stays unimported.
"""
from __future__ import annotations

import functools
import sys

import numpy as np


def ml_dtypes():
    """The ml_dtypes module (bfloat16 and the fp8 formats)."""
    import ml_dtypes
    return ml_dtypes


@functools.cache
def bfloat16() -> np.dtype:
    """numpy's dtype for ml_dtypes' bfloat16 (imports ml_dtypes)."""
    return np.dtype(ml_dtypes().bfloat16)


def is_bfloat16(dt) -> bool:
    """Whether the numpy dtype `dt` is bfloat16, without importing ml_dtypes: until something has
    imported it, no numpy dtype can be its bfloat16."""
    return "ml_dtypes" in sys.modules and dt == bfloat16()


def np_dtype(spec) -> np.dtype:
    """`numpy.dtype(spec)` as if ml_dtypes had been imported: a name only ml_dtypes registers
    ("float8_e4m3fn", ...) resolves the same way as when gputwin imported it eagerly."""
    try:
        return np.dtype(spec)
    except TypeError:
        if "ml_dtypes" in sys.modules or not isinstance(spec, str):
            raise
    ml_dtypes()
    return np.dtype(spec)
