"""PTX from LLVM's NVPTX back end (gputwin.compiler via llvmlite) parses and runs; results equal the same
kernel IR compiled for and run on the CPU device (an independent back end)."""
import numpy as np
import pytest

from gputwin.compiler import compile_kernel, ir
from gputwin.emu.nv.ptx import load_module
from tests.compiler import kernels
from tests.compiler.helpers import run as run_cpu
from tests.emu.nv.ptx.rig import ARCHES, Rig


def run_ptx(kern, args, grid, arch):
    mod = load_module(compile_kernel(kern, arch))
    r = Rig()
    vas = [r.buf(a) if isinstance(a, np.ndarray) else a for a in args]
    r.run(mod, kern.name, vas, grid=grid, block=kern.local_size, arch=arch)
    return [r.get(va, a.dtype, a.size).reshape(a.shape) for a, va in zip(args, vas) if isinstance(a, np.ndarray)]


@pytest.mark.parametrize("arch", ARCHES)
def test_llvm_shared_reverse(arch):
    rng = np.random.default_rng(50)
    x = rng.integers(-1000, 1000, 256).astype(np.int32)
    args = [x, np.zeros(256, np.int32)]
    got = run_ptx(kernels.shared_reverse(), args, (4, 1, 1), arch)
    assert (got[1] == run_cpu(kernels.shared_reverse(), args, (4, 1, 1))[1]).all()
    assert (got[1].reshape(4, 64) == (x.reshape(4, 64) * 3)[:, ::-1]).all()


@pytest.mark.parametrize("arch", ARCHES)
def test_llvm_batched_matmul(arch):
    rng = np.random.default_rng(51)
    b, m, n, k = 2, 9, 10, 7
    A, B = rng.standard_normal((b, m, k)).astype(np.float32), rng.standard_normal((b, k, n)).astype(np.float32)
    args = [A, B, np.zeros((b, m, n), np.float32), m, n, k]
    grid = (2, 2, b)
    got = run_ptx(kernels.matmul(batched=True), args, grid, arch)[2]
    ref = run_cpu(kernels.matmul(batched=True), args, grid)[2]
    assert (got.view(np.uint32) == ref.view(np.uint32)).all()


@pytest.mark.parametrize("arch", ARCHES)
def test_llvm_reductions(arch):
    rng = np.random.default_rng(52)
    rows, cols = 40, 33
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    args = [x, np.zeros(rows, np.float32), rows, cols]
    got = run_ptx(kernels.row_sum(), args, (2, 1, 1), arch)[1]
    assert (got.view(np.uint32) == run_cpu(kernels.row_sum(), args, (2, 1, 1))[1].view(np.uint32)).all()
    args = [x, np.zeros(cols, np.float32), rows, cols, cols]
    got = run_ptx(kernels.col_max(), args, (2, 1, 1), arch)[1]
    assert (got == x.max(axis=0)).all()


@pytest.mark.parametrize("arch", ARCHES)
def test_llvm_fused_chain_bf16_in_f16_out(arch):
    rng = np.random.default_rng(53)
    rows, cols = 7, 19
    a = (rng.standard_normal((rows, cols)) * 3).astype(np.float32)
    s = rng.standard_normal(cols).astype(np.float32)
    b = (rng.standard_normal(rows).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    args = [a, s, b, np.zeros((rows, cols), np.float16), rows, cols]
    grid = ((rows * cols + 63) // 64, 1, 1)
    got = run_ptx(kernels.fused_chain(), args, grid, arch)[3]
    ref = run_cpu(kernels.fused_chain(), args, grid)[3]
    assert (got.view(np.uint16) == ref.view(np.uint16)).all()


@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos", "tanh", "sqrt"])
def test_llvm_mathlib_equals_cpu_bit_for_bit(name):
    """gputwin.compiler's transcendentals are IEEE-op sequences (no .approx): the PTX emulator and the CPU
    back end must agree on every bit, specials included."""
    from tests.compiler.helpers import elementwise
    rng = np.random.default_rng(54)
    x = np.concatenate([rng.uniform(-30, 30, 400), rng.uniform(-1, 1, 100)]).astype(np.float32)
    x[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 88.7, -104.0]
    if name in ("log", "sqrt"):
        x = np.abs(x)
    kern = elementwise(name, [np.float32], np.float32, getattr(ir, name))
    n = len(x)
    args = [x, np.zeros(n, np.float32), n]
    grid = ((n + kern.local_size[0] - 1) // kern.local_size[0], 1, 1)
    got = run_ptx(kern, args, grid, "sm_90")[1]
    ref = run_cpu(kern, args, grid)[1]
    assert (got.view(np.uint32) == ref.view(np.uint32)).all()
