"""Inputs of the conformance programs: hard cases first, then seeded random bits. Everything is a function of
(kind, arity, seed), so a recording stores only the seed and the hash of what this module produced."""
from __future__ import annotations

import hashlib

import numpy as np

N = 4096          # lanes per launch (one launch per instruction)

F32_HARD = np.array([      # most telling first: binary/ternary ops cross only a prefix of this list
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x3F800000, 0xBF800000, 0x00000001, 0x807FFFFF,
    0x7F7FFFFF, 0xFF7FFFFF, 0x00800000, 0x80800000, 0x80000001, 0x007FFFFF, 0x3F000000, 0xBF000000, 0x40000000,
    0x3FC00000, 0x40200000, 0xBFC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0x40490FDB, 0xC0490FDB, 0x3FC90FDB,
    0x42B17218, 0xC2CE8ED0, 0x4B000000, 0x4B000001, 0x3F7FFFFF, 0x3F800001, 0x5F000000, 0xCF000000, 0x4EFFFFFF,
    0x49742400, 0x33800000, 0x2F800000, 0x7E800000,
], np.uint32)


def _random_f32(rng: np.random.Generator, n: int) -> np.ndarray:
    """Half uniform over all bit patterns, half over the values transcendentals care about (|x| in [2^-8, 2^8))."""
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    near = rng.uniform(-256.0, 256.0, n // 2).astype(np.float32).view(np.uint32)
    bits[: n // 2] = near
    return bits


def make(kind: str, arity: int, seed: int, n: int = N) -> list[np.ndarray]:
    """`arity` arrays of n uint32 bit patterns. Unary: the hard cases then random; binary/ternary: the hard
    cases crossed with each other (as far as they fit in a quarter of n), then random."""
    if kind not in ("f32", "s32"):
        raise ValueError(f"input kind {kind!r}")
    rng = np.random.default_rng(seed)
    hard = F32_HARD if kind == "f32" else np.array([0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x80000001, 2, 3,
                                                   0x00FFFFFF, 0x01000001, 0xFF000001, 0x7FFFFFC0], np.uint32)
    out = []
    for i in range(arity):
        col = _random_f32(rng, n) if kind == "f32" else rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        if arity == 1:
            col[:len(hard)] = hard
        else:
            k = min(len(hard), round((n // 4) ** (1 / arity)))
            grid = np.stack(np.meshgrid(*([hard[:k]] * arity), indexing="ij"), -1).reshape(-1, arity)
            col[:len(grid)] = grid[:, i]
        out.append(col)
    return out


def digest(arrays: list[np.ndarray]) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, "<u4").tobytes())
    return h.hexdigest()[:16]
