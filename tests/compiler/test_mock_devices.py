"""Compiled kernels through whole emulated stacks via the public device API, against the CPU device bit for
bit: MOCKAMD (AMD driver -> mock KFD -> RDNA3 emulator, gfx1100 code objects), MOCKUSBAMD gfx1100 / gfx1201
(AM driver -> USB driver -> emulated ASM2464 -> emulated board) and MOCKNV sm_90 / sm_80 (NV driver -> mock
nvidia.ko -> PTX emulator, the compiler's PTX)."""
import ml_dtypes
import numpy as np
import pytest

import gputwin
from gputwin.compiler import ir, load_kernel
from tests.compiler import kernels
from tests.compiler.helpers import bits, cpu_device, elementwise



@pytest.fixture(scope="module", params=["MOCKAMD", "MOCKUSBAMD", "MOCKUSBAMD:gfx1201", "MOCKNV:sm_90", "MOCKNV:sm_80"])
def mockdev(request):
    dev = gputwin.open_device(request.param)
    yield dev
    dev.close()


def launch(dev, kern, args, grid):
    """Run through the public device API only: alloc, copyin, load, call, synchronize, copyout."""
    bufs, arrays = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            b = dev.alloc(a.nbytes)
            dev.copyin(b, a)
            bufs.append(b)
            arrays.append((a, b))
        else:
            bufs.append(a)
    load_kernel(dev, kern)(*bufs, grid=grid, block=kern.local_size)
    dev.synchronize()
    out = []
    for a, b in arrays:
        o = np.empty_like(a)
        dev.copyout(o, b)
        out.append(o)
    return out


def same_bits(dev, kern, args, grid):
    got, want = launch(dev, kern, args, grid), launch(cpu_device(), kern, args, grid)
    for g, w in zip(got, want):
        assert np.array_equal(bits(g), bits(w))


def test_transcendental_chain_matches_cpu_bits(mockdev, rng):
    x = (rng.standard_normal(300) * 3).astype(np.float32)
    y = rng.standard_normal(300).astype(np.float32)
    x[:4] = [np.nan, np.inf, -0.0, 1e-40]
    kern = elementwise("mock_chain", [ir.float32] * 2, ir.float32,
                       lambda a, b: ir.tanh(a) * ir.exp(b) + ir.sin(a) / ir.sqrt(abs(b)))
    same_bits(mockdev, kern, [x, y, np.zeros(300, np.float32), 300], grid=(5, 1, 1))


def test_matmul_and_fused_half_chain_match_cpu_bits(mockdev, rng):
    a = rng.standard_normal((12, 10)).astype(np.float32)
    b = rng.standard_normal((10, 9)).astype(np.float32)
    same_bits(mockdev, kernels.matmul(), [a, b, np.zeros((12, 9), np.float32), 12, 9, 10], grid=(2, 2, 1))
    a = rng.standard_normal((4, 30)).astype(np.float32)
    s = rng.standard_normal(30).astype(np.float32)
    bb = rng.standard_normal(4).astype(ml_dtypes.bfloat16)
    same_bits(mockdev, kernels.fused_chain(), [a, s, bb, np.zeros((4, 30), np.float16), 4, 30], grid=(2, 1, 1))


def test_shared_memory_kernel_runs(mockdev):
    x = np.arange(128, dtype=np.int32)
    (_, out) = launch(mockdev, kernels.shared_reverse(), [x, np.zeros(128, np.int32)], grid=(2, 1, 1))
    assert np.array_equal(out, (x * 3).reshape(2, 64)[:, ::-1].reshape(-1))


def test_uniform_range_with_barriers_matches_cpu_bits(mockdev, rng):
    x = rng.standard_normal(4 * 3 * 64).astype(np.float32)
    same_bits(mockdev, kernels.tiled_accumulate(3), [x, np.zeros(4 * 64, np.float32)], grid=(4, 1, 1))


def test_float_and_int64_scalar_arguments_reach_the_kernel(mockdev):
    k = ir.KernelBuilder("axpy_scalars", local_size=(32, 1, 1))
    x, y = k.buffer("x", ir.float32), k.buffer("y", ir.float32)
    a, n, big = k.scalar("a", ir.float32), k.scalar("n", ir.int32), k.scalar("big", ir.int64)
    i = k.global_id(0)
    with k.if_(i < n):
        y[i] = a * x[i] + y[i] + (big // 1000000000000).cast(ir.float32)
    x_ = np.arange(100, dtype=np.float32)
    (_, got) = launch(mockdev, k.build(), [x_, np.ones(100, np.float32), 2.5, 100, 7 * 10 ** 12], grid=(4, 1, 1))
    assert np.array_equal(got, np.float32(2.5) * x_ + 1 + 7)
