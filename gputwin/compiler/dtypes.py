"""The kernel IR's dtypes: the Tensor dtypes plus two internal ones for bit manipulation."""
from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class DType:
    name: str
    kind: str       # 'f' float, 'i' signed int, 'u' unsigned int, 'b' bool
    bits: int       # storage bits (bool is stored as one byte)
    np: np.dtype = field(compare=False, repr=False)

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


float32 = DType("float32", "f", 32, np.dtype(np.float32))
float16 = DType("float16", "f", 16, np.dtype(np.float16))
bfloat16 = DType("bfloat16", "f", 16, np.dtype(ml_dtypes.bfloat16))
int32 = DType("int32", "i", 32, np.dtype(np.int32))
int64 = DType("int64", "i", 64, np.dtype(np.int64))
uint8 = DType("uint8", "u", 8, np.dtype(np.uint8))
uint32 = DType("uint32", "u", 32, np.dtype(np.uint32))   # internal: bit manipulation in mathlib
int16 = DType("int16", "i", 16, np.dtype(np.int16))      # internal: bits of half floats
bool_ = DType("bool", "b", 8, np.dtype(np.bool_))
DTYPES = {d.name: d for d in (float32, float16, bfloat16, int32, int64, uint8, uint32, int16, bool_)}
_BY_NP = {d.np: d for d in DTYPES.values()}


def dtype(spec) -> DType:
    """An IR dtype from an IR dtype, a name or anything numpy.dtype() accepts."""
    if isinstance(spec, DType):
        return spec
    if isinstance(spec, str) and spec in DTYPES:
        return DTYPES[spec]
    try:
        dt = _BY_NP.get(np.dtype(spec))
    except TypeError:
        dt = None
    if dt is None:
        raise TypeError(f"kernel IR has no dtype {spec!r}; supported: {', '.join(DTYPES)}")
    return dt
