"""CDNA3 through the whole stack: open_device("MOCKAMD:gfx942") (AMD driver, mock KFD, PM4 command
processor, emulator) runs the clang-19 gfx942 fixtures and matches numpy bit for bit.

The checks are test_standalone's (and the MFMA checks of test_gfx942_kernels); `kernel()` here hands
them device buffers, so each buffer is a driver allocation filled with copyin, each call a PM4 dispatch."""
from __future__ import annotations

import numpy as np
import pytest

import tests.emu.amd.test_gfx942_kernels as cdna3
import tests.emu.amd.test_standalone as rdna3
from gputwin.device import emulated_gpu
from tests.emu.amd.device_rig import device, device_kernel
from tests.emu.amd.test_gfx942_kernels import GFX942

SPEC = "MOCKAMD:gfx942"


def kernel(obj: str, name: str, wave64: bool = True):
    return device_kernel(SPEC, (GFX942 / f"{obj}.hsaco").read_bytes(), name)


@pytest.fixture(autouse=True)
def _through_the_driver(monkeypatch):
    monkeypatch.setattr(rdna3, "kernel", kernel)
    monkeypatch.setattr(cdna3, "kernel942", kernel)


@pytest.mark.parametrize("check", ["test_saxpy_matches_numpy_fused_multiply_add",
                                   "test_lds_tree_reduction_with_barriers", "test_global_atomics_histogram",
                                   "test_three_dimensional_grid_and_workgroup_ids",
                                   "test_out_of_line_call_with_a_stack_in_scratch", "test_f16_arithmetic"])
def test_gfx942_device_runs_the_fixture(check):
    getattr(rdna3, check)(wave64=True)


def test_gfx942_device_runs_mfma():
    cdna3.test_mfma_f16_tile_matches_numpy_matmul()


def test_device_is_an_emulated_gfx942_that_executes_the_dispatches():
    dev = device(SPEC)
    assert dev.arch == "gfx942"
    gpu = emulated_gpu(dev)
    before = gpu.stats.wave_insts
    arena, k = kernel("basic", "add_f32")
    a, b = np.arange(64, dtype=np.float32), np.full(64, 0.5, np.float32)
    o = arena.alloc(256)
    k(o, arena.alloc(256, a), arena.alloc(256, b), 64, grid=(1, 1, 1), block=(64, 1, 1))
    assert (arena.array(o, np.float32, 64).view(np.uint32) == (a + b).view(np.uint32)).all()
    assert gpu.stats.wave_insts > before
