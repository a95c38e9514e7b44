"""Transcendentals (gputwin/compiler/mathlib.py) against a float64 numpy reference: the documented
ULP bounds (docs/compiler.md) and the IEEE/C99 special values, bit for bit."""
import ml_dtypes
import numpy as np
import pytest

from gputwin.compiler import ir
from tests.compiler.helpers import bits, elementwise, run_elementwise

N = 20000
# function -> (ir function, float64 reference, sample inputs from a generator, documented max ULP)
CASES = {
    "exp": (ir.exp, np.exp, lambda rng: np.concatenate([rng.uniform(-104, 89, N), rng.uniform(-1, 1, N)]), 1.0),
    "log": (ir.log, np.log, lambda rng: np.concatenate([np.exp(rng.uniform(-103, 88, N)), rng.uniform(0.5, 2, N),
                                                    rng.uniform(0, 1e-38, 100)]), 1.0),
    "sin": (ir.sin, np.sin, lambda rng: np.concatenate([rng.uniform(-10, 10, N), rng.uniform(-2 ** 20, 2 ** 20, N)]),
            2.0),
    "cos": (ir.cos, np.cos, lambda rng: np.concatenate([rng.uniform(-10, 10, N), rng.uniform(-2 ** 20, 2 ** 20, N)]),
            2.0),
    "tanh": (ir.tanh, np.tanh, lambda rng: np.concatenate([rng.uniform(-10, 10, N), rng.uniform(-1, 1, N)]), 2.0),
}


def ulp_error(got: np.ndarray, ref: np.ndarray) -> float:
    """Max error in units of the float32 spacing at the reference; beyond float32's range the result
    must be the infinity of the right sign."""
    with np.errstate(over="ignore"):
        ref32 = ref.astype(np.float32)
    big = np.isinf(ref32)
    assert np.array_equal(got[big], ref32[big])
    spacing = np.spacing(np.abs(ref32[~big])).astype(np.float64)
    return float(np.max(np.abs(got[~big].astype(np.float64) - ref[~big]) / spacing))


@pytest.mark.parametrize("name", list(CASES))
def test_transcendental_stays_within_its_ulp_bound(name, rng):
    fn, ref, sample, bound = CASES[name]
    x = sample(rng).astype(np.float32)
    got = run_elementwise(elementwise(name, [np.float32], np.float32, fn), [x], np.float32)
    assert ulp_error(got, ref(x.astype(np.float64))) <= bound


def test_pow_stays_within_its_ulp_bound(rng):
    x = np.concatenate([np.exp(rng.uniform(-20, 20, N)), rng.uniform(0, 4, N)]).astype(np.float32)
    y = np.concatenate([rng.uniform(-4, 4, N), rng.uniform(-20, 20, N)]).astype(np.float32)
    got = run_elementwise(elementwise("pw", [np.float32] * 2, np.float32, ir.pow), [x, y], np.float32)
    ref = np.power(x.astype(np.float64), y.astype(np.float64))
    assert ulp_error(got, ref) <= 8.0


SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-30, -1e-30, 2e-45, 100.0, -200.0],
                    np.float32)


@pytest.mark.parametrize("name", list(CASES))
def test_special_values_match_numpy_bits(name):
    fn, _, _, _ = CASES[name]
    got = run_elementwise(elementwise(f"s_{name}", [np.float32], np.float32, fn), [SPECIALS], np.float32)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(SPECIALS)
    exact = ~np.isfinite(want) | (want == 0) | (np.abs(want) == 1) | (np.abs(SPECIALS) < 1e-20)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    nan = np.isnan(want)
    assert np.array_equal(bits(got[exact & ~nan]), bits(want[exact & ~nan]))


def test_pow_special_cases_follow_c99():
    cases = [(0.0, -1.0), (-0.0, -1.0), (-0.0, 3.0), (-0.0, 0.5), (-8.0, 1 / 3), (-2.0, 3.0), (-2.0, 2.0),
             (1.0, np.nan), (np.nan, 0.0), (-1.0, np.inf), (0.5, np.inf), (2.0, -np.inf), (np.inf, -2.0),
             (-np.inf, 3.0), (-np.inf, -3.0), (2.0, 10.0), (np.nan, 1.0), (4.0, 0.5)]
    x = np.array([c[0] for c in cases], np.float32)
    y = np.array([c[1] for c in cases], np.float32)
    got = run_elementwise(elementwise("pws", [np.float32] * 2, np.float32, ir.pow), [x, y], np.float32)
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(bits(got[~np.isnan(want)]), bits(want[~np.isnan(want)]))


@pytest.mark.parametrize("dt", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
def test_half_types_compute_in_float32_and_round_once(dt, rng):
    x = rng.uniform(-4, 4, 2000).astype(dt)
    got = run_elementwise(elementwise("hx", [dt], dt, ir.exp), [x], dt)
    f32 = run_elementwise(elementwise("fx", [np.float32], np.float32, ir.exp), [x.astype(np.float32)], np.float32)
    assert np.array_equal(bits(got), bits(f32.astype(dt)))


def test_transcendentals_reject_integers():
    k = ir.KernelBuilder("bad")
    a = k.buffer("a", ir.int32)
    with pytest.raises(ir.IRError, match="float"):
        ir.exp(a[0])
