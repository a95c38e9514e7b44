"""Bit-level comparisons for the tensor suite: floats compare as bits (NaN payloads aside) or in ULPs."""
import numpy as np


def bits(a: np.ndarray) -> np.ndarray:
    """Raw bits of an array, with every NaN mapped to one pattern (payloads are not compared)."""
    a = np.asarray(a)
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        u = a.view(f"u{a.dtype.itemsize}").copy()
        u[np.isnan(a.astype(np.float32))] = 0
        return u
    return a.view(f"u{a.dtype.itemsize}") if a.dtype != np.bool_ else a


def assert_bits(got: np.ndarray, ref: np.ndarray):
    ref = np.asarray(ref)
    assert got.dtype == ref.dtype, f"dtype {got.dtype} != {ref.dtype}"
    assert got.shape == ref.shape, f"shape {got.shape} != {ref.shape}"
    gb, rb = bits(got), bits(ref)
    bad = np.flatnonzero(gb.reshape(-1) != rb.reshape(-1))
    assert not bad.size, (f"{bad.size} of {got.size} elements differ; first at flat {bad[0]}: "
                          f"got {got.reshape(-1)[bad[0]]!r}, expected {ref.reshape(-1)[bad[0]]!r}")


def ulp_distance(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Distance in units in the last place between two float arrays of the same dtype (NaN==NaN)."""
    n = got.dtype.itemsize * 8
    def ordered(a):
        i = a.view(f"i{n // 8}").astype(np.int64)
        return np.where(i < 0, -(i & ((1 << (n - 1)) - 1)), i)
    d = np.abs(ordered(got) - ordered(ref))
    both_nan = np.isnan(got.astype(np.float32)) & np.isnan(ref.astype(np.float32))
    return np.where(both_nan, 0, d)
