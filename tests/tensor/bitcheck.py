"""Bit-level comparisons for the tensor suite: floats compare as bits, every NaN as one canonical NaN
(payload and sign aside, which numpy leaves to the host CPU), or in ULPs."""
import ml_dtypes
import numpy as np

# the positive quiet NaN of each float width; every NaN of an array is compared as this pattern
CANONICAL_NAN = {2: 0x7E00, 4: 0x7FC0_0000, 8: 0x7FF8_0000_0000_0000}
BFLOAT16_NAN = 0x7FC0


def _is_float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f" or a.dtype == np.dtype(ml_dtypes.bfloat16)


def bits(a: np.ndarray) -> np.ndarray:
    """Raw bits of an array, with every NaN mapped to the canonical quiet NaN of its type: a NaN still
    differs from every number (+0.0 included), but payloads and signs are not compared."""
    a = np.asarray(a)
    if _is_float(a):
        u = a.view(f"u{a.dtype.itemsize}").copy()
        nan = BFLOAT16_NAN if a.dtype == np.dtype(ml_dtypes.bfloat16) else CANONICAL_NAN[a.dtype.itemsize]
        u[np.isnan(a.astype(np.float64))] = nan
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


NAN_MISMATCH = np.iinfo(np.int64).max


def ulp_distance(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Distance in units in the last place between two float arrays of the same dtype: 0 where both are
    NaN, NAN_MISMATCH where exactly one is."""
    n = got.dtype.itemsize * 8
    def ordered(a):
        i = a.view(f"i{n // 8}").astype(np.int64)
        return np.where(i < 0, -(i & ((1 << (n - 1)) - 1)), i)
    d = np.abs(ordered(got) - ordered(ref))
    gn, rn = np.isnan(got.astype(np.float64)), np.isnan(ref.astype(np.float64))
    return np.where(gn & rn, 0, np.where(gn | rn, NAN_MISMATCH, d))
