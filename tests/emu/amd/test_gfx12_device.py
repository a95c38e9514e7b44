"""RDNA4 through the whole stack: open_device("MOCKAMD:gfx1201") (AMD driver, mock KFD, PM4 command
processor, emulator) runs the clang-19 gfx1201 fixtures and matches numpy bit for bit.

The checks are test_standalone's; `kernel()` here hands them a device-backed arena, so each buffer is a
driver allocation filled with copyin, each call a PM4 dispatch, each result read back with copyout."""
from __future__ import annotations

import numpy as np
import pytest

import tests.emu.amd.test_standalone as rdna3
from gputwin.device import emulated_gpu
from tests.emu.amd.device_rig import device, device_kernel
from tests.emu.amd.test_gfx12_standalone import gfx1201_image

SPEC = "MOCKAMD:gfx1201"


def kernel(obj: str, name: str, wave64: bool):
    return device_kernel(SPEC, gfx1201_image(obj, name, wave64), name)


@pytest.fixture(autouse=True)
def _through_the_driver(monkeypatch):
    monkeypatch.setattr(rdna3, "kernel", kernel)


for _name in ("test_saxpy_matches_numpy_fused_multiply_add", "test_lds_tree_reduction_with_barriers",
              "test_global_atomics_histogram", "test_three_dimensional_grid_and_workgroup_ids",
              "test_out_of_line_call_with_a_stack_in_scratch", "test_f16_arithmetic"):
    globals()[_name] = getattr(rdna3, _name)


def test_device_is_an_emulated_gfx1201_that_executes_the_dispatches():
    dev = device(SPEC)
    assert dev.arch == "gfx1201"
    gpu = emulated_gpu(dev)
    before = gpu.stats.wave_insts
    arena, k = kernel("basic", "add_f32", False)
    a, b = np.arange(64, dtype=np.float32), np.full(64, 0.5, np.float32)
    o = arena.alloc(256)
    k(o, arena.alloc(256, a), arena.alloc(256, b), 64, grid=(1, 1, 1), block=(64, 1, 1))
    assert (arena.array(o, np.float32, 64).view(np.uint32) == (a + b).view(np.uint32)).all()
    assert gpu.stats.wave_insts > before
