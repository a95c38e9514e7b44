"""Compiled AMDGPU code objects run on the RDNA3 emulator (gputwin.emu.amd, standalone dispatch entry
point) and produce the same bits as the CPU device: the cross-target determinism contract."""
import os

import ml_dtypes
import numpy as np
import pytest

from gputwin.compiler import ir
from tests.compiler import kernels
from tests.compiler.helpers import bits, elementwise, run, run_elementwise

ARCH = os.environ.get("EMU_ARCH", "gfx1100")   # tests/emu/amd/test_gfx12_compiler.py runs these on gfx1201


def same_on_both(fn):
    """Run fn(on) for the CPU and the emulator (an unmodelled instruction fails the test, naming it)."""
    cpu = fn("cpu")
    emu = fn(ARCH)
    for c, g in zip(cpu, emu):
        assert np.array_equal(bits(c), bits(g))
    return cpu


def floats(rng, dt, n=200):
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]
    return x.astype(dt)


@pytest.mark.parametrize("dt", [np.float32, np.float16, ml_dtypes.bfloat16], ids=["f32", "f16", "bf16"])
def test_float_arithmetic_chain_matches_cpu_bits(dt, rng):
    a, b = floats(rng, dt), floats(rng, dt)[::-1].copy()
    kern = elementwise("chain", [dt, dt], dt, lambda x, y: ir.maximum(x * y - x / y, ir.sqrt(abs(y)) + 1.5))
    same_on_both(lambda on: [run_elementwise(kern, [a, b], dt, on=on)])


def test_integer_division_and_casts_match_cpu_bits(rng):
    a = rng.integers(-1000, 1000, 200).astype(np.int32)
    b = rng.integers(-9, 9, 200).astype(np.int32)
    kern = elementwise("idiv", [np.int32, np.int32], np.int64,
                       lambda x, y: ((x // y) * 7 + x % y).cast(ir.int64) * 3000000000)
    same_on_both(lambda on: [run_elementwise(kern, [a, b], np.int64, on=on)])
    f = floats(rng, np.float32) * 50
    kern = elementwise("f2u8", [np.float32], np.uint8, lambda x: x.cast(ir.uint8) + x.cast(ir.int32).cast(ir.uint8))
    same_on_both(lambda on: [run_elementwise(kern, [f], np.uint8, on=on)])


@pytest.mark.parametrize("name", ["exp", "log", "sin", "tanh"])
def test_transcendentals_match_cpu_bits(name, rng):
    x = floats(rng, np.float32)
    kern = elementwise(f"t_{name}", [np.float32], np.float32, getattr(ir, name))
    same_on_both(lambda on: [run_elementwise(kern, [x], np.float32, on=on)])


def test_pow_matches_cpu_bits(rng):
    x, y = abs(floats(rng, np.float32)), floats(rng, np.float32)
    kern = elementwise("t_pow", [np.float32] * 2, np.float32, ir.pow)
    same_on_both(lambda on: [run_elementwise(kern, [x, y], np.float32, on=on)])


def test_reduction_and_matmul_match_cpu_bits(rng):
    x = rng.standard_normal((40, 67)).astype(np.float32)
    same_on_both(lambda on: run(kernels.row_sum(), [x, np.zeros(40, np.float32), 40, 67], grid=(2, 1, 1), on=on))
    a = rng.standard_normal((10, 12)).astype(np.float32)
    b = rng.standard_normal((12, 9)).astype(np.float32)
    same_on_both(lambda on: run(kernels.matmul(), [a, b, np.zeros((10, 9), np.float32), 10, 9, 12],
                                grid=(2, 2, 1), on=on))


def test_shared_memory_barrier_kernel_matches_cpu():
    x = np.arange(128, dtype=np.int32) - 50
    same_on_both(lambda on: run(kernels.shared_reverse(), [x, np.zeros(128, np.int32)], grid=(2, 1, 1), on=on))


def test_fused_broadcast_chain_matches_cpu_bits(rng):
    a = rng.standard_normal((4, 30)).astype(np.float32)
    s = rng.standard_normal(30).astype(np.float32)
    b = rng.standard_normal(4).astype(ml_dtypes.bfloat16)
    same_on_both(lambda on: run(kernels.fused_chain(), [a, s, b, np.zeros((4, 30), np.float16), 4, 30],
                                grid=(2, 1, 1), on=on))
