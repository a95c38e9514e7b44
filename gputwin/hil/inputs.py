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


F64_HARD = np.array([
    0x0000000000000000, 0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
    0x3FF0000000000000, 0xBFF0000000000000, 0x0000000000000001, 0x800FFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF,
    0xFFEFFFFFFFFFFFFF, 0x0010000000000000, 0x8010000000000000, 0x3FE0000000000000, 0x4000000000000000,
    0x3FEFFFFFFFFFFFFF, 0x3FF0000000000001, 0x400921FB54442D18, 0x7FF0000000000001, 0x3810000000000000,
    0x380FFFFFFFFFFFFF, 0x47EFFFFFE0000000, 0x36A0000000000000, 0x5FE0000000000000,
], np.uint64)


def _random_f64(rng: np.random.Generator, n: int) -> np.ndarray:
    bits = rng.integers(0, 1 << 63, n, dtype=np.uint64) | (rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63))
    bits[: n // 2] = rng.uniform(-256.0, 256.0, n // 2).view(np.uint64)
    return bits


def _random_f32(rng: np.random.Generator, n: int) -> np.ndarray:
    """Half uniform over all bit patterns, half over the values transcendentals care about (|x| in [2^-8, 2^8))."""
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    near = rng.uniform(-256.0, 256.0, n // 2).astype(np.float32).view(np.uint32)
    bits[: n // 2] = near
    return bits


def make(kind: str, arity: int, seed: int, n: int = N) -> list[np.ndarray]:
    """`arity` arrays of n bit patterns (uint32; uint64 for f64). Unary: the hard cases then random;
    binary/ternary: the hard cases crossed with each other (as far as they fit in a quarter of n), then random."""
    if kind not in ("f32", "s32", "f64"):
        raise ValueError(f"input kind {kind!r}")
    rng = np.random.default_rng(seed)
    hard = {"f32": F32_HARD, "f64": F64_HARD}.get(kind)
    if hard is None:
        hard = np.array([0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x80000001, 2, 3, 0x00FFFFFF, 0x01000001,
                         0xFF000001, 0x7FFFFFC0], np.uint32)
    out = []
    for i in range(arity):
        if kind == "f32":
            col = _random_f32(rng, n)
        elif kind == "f64":
            col = _random_f64(rng, n)
        else:
            col = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
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
        h.update(np.ascontiguousarray(a, f"<u{a.dtype.itemsize}").tobytes())
    return h.hexdigest()[:16]
