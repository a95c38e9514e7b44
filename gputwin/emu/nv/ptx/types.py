"""PTX fundamental types: size, kind and the numpy dtype a value of that type is computed in.

Registers are stored as raw bit containers by size (bool for .pred, uint8/16/32/64 otherwise); an
instruction views a register's bits as its own type. Half and bfloat16 values travel as uint16 bits
(bf16 has no numpy type; f16 is computed through float16 / float32 / float64 views as the op needs).
"""
from __future__ import annotations

import numpy as np

# name -> (bytes, kind) ; kind: "u" unsigned, "s" signed, "b" untyped bits, "f" float, "p" predicate
TYPES: dict[str, tuple[int, str]] = {
    "pred": (1, "p"),
    "b8": (1, "b"), "u8": (1, "u"), "s8": (1, "s"),
    "b16": (2, "b"), "u16": (2, "u"), "s16": (2, "s"), "f16": (2, "f"), "bf16": (2, "f"),
    "b32": (4, "b"), "u32": (4, "u"), "s32": (4, "s"), "f32": (4, "f"), "f16x2": (4, "f"), "bf16x2": (4, "f"),
    "tf32": (4, "f"),
    "b64": (8, "b"), "u64": (8, "u"), "s64": (8, "s"), "f64": (8, "f"),
    "b128": (16, "b"),
}

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SINT = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
FLOAT = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def size(t: str) -> int:
    return TYPES[t][0]


def kind(t: str) -> str:
    return TYPES[t][1]


def dtype(t: str):
    """The numpy dtype a value of PTX type `t` is viewed as (raw unsigned bits for b*, bf16, f16x2...)."""
    n, k = TYPES[t]
    if k == "p":
        return np.bool_
    if k == "s":
        return SINT[n]
    if t in FLOAT:
        return FLOAT[t]
    return UINT[n]


def container(t: str):
    """The register container dtype of a `.reg` of type `t`."""
    n, k = TYPES[t]
    return np.bool_ if k == "p" else UINT[n]
