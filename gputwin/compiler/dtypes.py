"""The kernel IR's dtypes: the Tensor dtypes plus two internal ones for bit manipulation."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from gputwin.deferred import bfloat16 as _np_bfloat16
from gputwin.deferred import is_bfloat16, np_dtype


@dataclass(frozen=True)
class DType:
    name: str
    kind: str       # 'f' float, 'i' signed int, 'u' unsigned int, 'b' bool
    bits: int       # storage bits (bool is stored as one byte)

    @cached_property
    def np(self) -> np.dtype:
        """The numpy dtype, on first use: bfloat16's imports ml_dtypes (gputwin.deferred)."""
        return _np_bfloat16() if self.name == "bfloat16" else np.dtype(self.name)

    @property
    def itemsize(self) -> int:
        return self.bits // 8

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    def __str__(self) -> str:
        return self.name


float32 = DType("float32", "f", 32)
float16 = DType("float16", "f", 16)
bfloat16 = DType("bfloat16", "f", 16)
int32 = DType("int32", "i", 32)
int64 = DType("int64", "i", 64)
uint8 = DType("uint8", "u", 8)
uint32 = DType("uint32", "u", 32)  # internal: bit manipulation in mathlib
int16 = DType("int16", "i", 16)    # internal: bits of half floats
bool_ = DType("bool", "b", 8)
DTYPES = {d.name: d for d in (float32, float16, bfloat16, int32, int64, uint8, uint32, int16, bool_)}
_BY_NP = {d.np: d for d in DTYPES.values() if d is not bfloat16}


def dtype(spec) -> DType:
    """An IR dtype from an IR dtype, a name or anything numpy.dtype() accepts."""
    if isinstance(spec, DType):
        return spec
    if isinstance(spec, str) and spec in DTYPES:
        return DTYPES[spec]
    try:
        npdt = np_dtype(spec)
        dt = bfloat16 if is_bfloat16(npdt) else _BY_NP.get(npdt)
    except TypeError:
        dt = None
    if dt is None:
        raise TypeError(f"kernel IR has no dtype {spec!r}; supported: {', '.join(DTYPES)}")
    return dt
