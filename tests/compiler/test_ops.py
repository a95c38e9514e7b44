"""ALU ops and casts of the kernel IR, run on the CPU device, against numpy bit for bit."""
import operator
import platform

import ml_dtypes
import numpy as np
import pytest

from gputwin.compiler import ir
from tests.compiler.helpers import bits, elementwise, run_elementwise

rng = np.random.default_rng(1234)
N = 300
FLOATS = [np.float32, np.float16, ml_dtypes.bfloat16]
INTS = [np.int32, np.int64, np.uint8]
QNAN = {2: {np.dtype(np.float16): 0x7E00, np.dtype(ml_dtypes.bfloat16): 0x7FC0}, 4: 0x7FC00000}


def canon(a: np.ndarray) -> np.ndarray:
    """numpy result with NaNs replaced by the canonical quiet NaN every kernel stores."""
    a = np.asarray(a)
    if a.dtype.kind != "f" and a.dtype != np.dtype(ml_dtypes.bfloat16):
        return a
    q = QNAN[4] if a.dtype.itemsize == 4 else QNAN[2][a.dtype]
    b = bits(a).copy()
    b[np.isnan(a.astype(np.float32))] = q
    return b


def float_inputs(dt, n=N):
    x = rng.standard_normal(n).astype(np.float32) * 4
    x[:12] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-40, -3e-39, 65504.0, 1e30, 2.5]
    with np.errstate(over="ignore"):
        return x.astype(dt)


def int_inputs(dt, n=N):
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
    x[:6] = [0, 1, info.max, info.min, 7, 2]
    if info.min < 0:
        x[6:9] = [-1, -7, -2]
    return x


BIN_FLOAT = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
             "max": (ir.maximum, np.maximum), "min": (ir.minimum, np.minimum)}


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", list(BIN_FLOAT))
def test_float_binary_ops_are_exactly_rounded_like_numpy(op, dt):
    f = BIN_FLOAT[op]
    irf, npf = f if isinstance(f, tuple) else (f, f)
    a, b = float_inputs(dt), float_inputs(dt)[::-1].copy()
    kern = elementwise(f"f_{op}", [dt, dt], dt, irf)
    with np.errstate(all="ignore"):
        want = npf(a, b)
    assert np.array_equal(bits(run_elementwise(kern, [a, b], dt)), canon(want))


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: np.dtype(d).name)
def test_float_unary_ops_match_numpy(dt):
    a = float_inputs(dt)
    for name, irf, npf in [("neg", operator.neg, np.negative), ("abs", abs, np.abs),
                           ("sqrt", ir.sqrt, np.sqrt)]:
        kern = elementwise(f"u_{name}", [dt], dt, irf)
        with np.errstate(all="ignore"):
            want = npf(a)
        assert np.array_equal(bits(run_elementwise(kern, [a], dt)), canon(want)), name   # NaNs canonical


def test_maximum_follows_numpy_for_signed_zero_and_nan():
    a = np.array([-0.0, 0.0, np.nan, 1.0, np.nan], np.float32)
    b = np.array([0.0, -0.0, 1.0, np.nan, np.nan], np.float32)
    kern = elementwise("mx", [np.float32] * 2, np.float32, ir.maximum)
    assert np.array_equal(bits(run_elementwise(kern, [a, b], np.float32)), canon(np.maximum(a, b)))


@pytest.mark.parametrize("dt", FLOATS + INTS, ids=lambda d: np.dtype(d).name)
def test_comparisons_match_numpy_including_nan(dt):
    mk = float_inputs if np.dtype(dt).kind == "f" or dt is ml_dtypes.bfloat16 else int_inputs
    a, b = mk(dt), mk(dt)
    b[::3] = a[::3]
    ops = {"lt": (operator.lt, np.less), "le": (operator.le, np.less_equal), "gt": (operator.gt, np.greater),
           "ge": (operator.ge, np.greater_equal), "eq": (lambda x, y: x.eq(y), np.equal),
           "ne": (lambda x, y: x.ne(y), np.not_equal)}
    for name, (irf, npf) in ops.items():
        kern = elementwise(f"c_{name}", [dt, dt], np.bool_, irf)
        with np.errstate(invalid="ignore"):
            want = npf(a, b)
        assert np.array_equal(run_elementwise(kern, [a, b], np.bool_), want), name


INT_OPS = {"add": (operator.add, operator.add), "sub": (operator.sub, operator.sub),
           "mul": (operator.mul, operator.mul), "floordiv": (operator.floordiv, np.floor_divide),
           "mod": (operator.mod, np.remainder), "max": (ir.maximum, np.maximum), "min": (ir.minimum, np.minimum),
           "and": (operator.and_, operator.and_), "or": (operator.or_, operator.or_),
           "xor": (operator.xor, operator.xor)}


@pytest.mark.parametrize("dt", INTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", list(INT_OPS))
def test_integer_ops_wrap_and_divide_like_numpy(op, dt):
    irf, npf = INT_OPS[op]
    a, b = int_inputs(dt), int_inputs(dt)[::-1].copy()
    b[:4] = [0, 0, 1, 2]                              # division by zero gives 0 as in numpy
    if np.iinfo(dt).min < 0:
        a[4], b[4] = np.iinfo(dt).min, -1             # INT_MIN // -1 wraps
        b[5:8] = [-3, 5, -5]
    kern = elementwise(f"i_{op}", [dt, dt], dt, irf)
    with np.errstate(all="ignore"):
        want = npf(a, b)
    assert np.array_equal(run_elementwise(kern, [a, b], dt), want)


@pytest.mark.parametrize("dt", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_integer_neg_abs_invert_wrap(dt):
    a = int_inputs(dt)
    for name, irf, npf in [("neg", operator.neg, np.negative), ("abs", abs, np.abs),
                           ("inv", operator.invert, np.invert)]:
        kern = elementwise(f"iu_{name}", [dt], dt, irf)
        with np.errstate(all="ignore"):
            assert np.array_equal(run_elementwise(kern, [a], dt), npf(a)), name


def test_shifts_take_the_count_modulo_the_width():
    a = int_inputs(np.int32)
    s = np.arange(N, dtype=np.int32) % 40
    kern = elementwise("shl", [np.int32] * 2, np.int32, operator.lshift)
    assert np.array_equal(run_elementwise(kern, [a, s], np.int32), a << (s % 32))
    kern = elementwise("shr", [np.int32] * 2, np.int32, operator.rshift)
    assert np.array_equal(run_elementwise(kern, [a, s], np.int32), a >> (s % 32))


def test_bool_logic_and_where():
    a = rng.integers(0, 2, N).astype(np.bool_)
    b = rng.integers(0, 2, N).astype(np.bool_)
    x, y = float_inputs(np.float32), float_inputs(np.float32)[::-1].copy()
    kern = elementwise("bl", [np.bool_] * 2, np.bool_, lambda p, q: (p & ~q) | (q ^ p))
    assert np.array_equal(run_elementwise(kern, [a, b], np.bool_), (a & ~b) | (b ^ a))
    kern = elementwise("wh", [np.bool_, np.float32, np.float32], np.float32, ir.where)
    assert np.array_equal(bits(run_elementwise(kern, [a, x, y], np.float32)), canon(np.where(a, x, y)))


def test_fma_rounds_once():
    a = np.array([1 + 2.0 ** -23, 3.0], np.float32)
    b = np.array([1 - 2.0 ** -23, 0.1], np.float32)
    c = np.array([-1.0, -0.3], np.float32)
    kern = elementwise("fm", [np.float32] * 3, np.float32, ir.fma)
    got = run_elementwise(kern, [a, b, c], np.float32)
    exact = (a.astype(np.float64) * b.astype(np.float64) + c).astype(np.float32)   # products are exact in f64
    assert np.array_equal(bits(got), bits(exact))
    assert got[0] != a[0] * b[0] + c[0]     # two roundings lose the -2^-46 term


ALL = FLOATS + INTS + [np.bool_]


def cast_inputs(src):
    src = np.dtype(src)
    if src == np.bool_:
        return rng.integers(0, 2, N).astype(np.bool_)
    if src.kind in "iu":
        return int_inputs(src)
    x = rng.uniform(-120, 250, N).astype(np.float32)      # in range for every integer target
    x[:8] = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, 255.75, -1.99]
    return x.astype(src)


@pytest.mark.parametrize("src", ALL, ids=lambda d: np.dtype(d).name)
def test_casts_match_numpy_astype(src):
    a = cast_inputs(src)
    for dst in ALL:
        if np.dtype(dst) == np.dtype(src):
            continue
        kern = elementwise("cast", [src], dst, lambda x, dst=dst: x.cast(dst))
        with np.errstate(all="ignore"):
            # bfloat16 -> integer in ml_dtypes is a C++ float->int cast, undefined for negative -> uint8
            # (ml_dtypes 0.7 gives 0); the documented rule is numpy's float32 one (-1.99 -> -1 -> 255), and
            # bfloat16 -> float32 is exact
            via = a.astype(np.float32) if src == ml_dtypes.bfloat16 and np.dtype(dst).kind in "iu" else a
            want = via.astype(dst)
        assert np.array_equal(bits(run_elementwise(kern, [a], dst)), bits(canon(want))), np.dtype(dst).name


@pytest.mark.skipif(platform.machine() != "x86_64", reason="numpy's out-of-range float->int result is x86's")
def test_out_of_range_float_to_int_casts_follow_numpy_on_x86():
    a = np.array([3e9, -3e9, np.nan, np.inf, -np.inf, 1e19, 300.0, -1.0, 1e10], np.float32)
    for dst in INTS:
        kern = elementwise("oor", [np.float32], dst, lambda x, dst=dst: x.cast(dst))
        with np.errstate(all="ignore"):
            assert np.array_equal(run_elementwise(kern, [a], dst), a.astype(dst)), np.dtype(dst).name


def test_every_float16_converts_to_float32_exactly():
    h = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    kern = elementwise("h2f", [np.float16], np.float32, lambda x: x.cast(ir.float32), local=256)
    got = run_elementwise(kern, [h], np.float32)
    assert np.array_equal(bits(got), canon(h.astype(np.float32)))


@pytest.mark.parametrize("dt", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
def test_float32_rounds_to_half_types_like_numpy(dt):
    raw = rng.integers(0, 1 << 32, 60000, dtype=np.uint64).astype(np.uint32)
    # concentrate on the interesting exponents: subnormal, normal edges, overflow, ties
    edge = (rng.integers(0x32000000, 0x48000000, 60000, dtype=np.uint64).astype(np.uint32)
            | (rng.integers(0, 2, 60000).astype(np.uint32) << 31))
    ties = np.array([0x33000000, 0x33000001, 0x387FE000, 0x387FF000, 0x477FEFFF, 0x477FF000, 0x3F801000,
                     0x3F803000, 0x7F7FFFFF, 0x7F800000, 0x7FC00000, 0x00000001], np.uint32)
    x = np.concatenate([raw, edge, ties]).view(np.float32)
    kern = elementwise("f2h", [np.float32], dt, lambda v, dt=dt: v.cast(dt), local=256)
    got = run_elementwise(kern, [x], dt)
    with np.errstate(all="ignore"):
        assert np.array_equal(bits(got), canon(x.astype(dt)))
