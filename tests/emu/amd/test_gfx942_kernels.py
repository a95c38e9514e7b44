"""End to end on CDNA3: the OpenCL C kernels of fixtures/amd/cl compiled by clang-19 for gfx942 (wave64,
fixtures/amd/cl/gfx942/build.sh) run on the emulator with the same numpy checks as the gfx1100 suite
(tests/emu/amd/test_standalone.py: each check computes its expected values and compares bits)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import tests.emu.amd.test_standalone as gfx11
from gputwin.emu.amd.standalone import Arena, load_kernel
from tests.emu.amd.helpers import FIXTURES

GFX942 = FIXTURES / "gfx942"


def kernel942(obj: str, name: str, wave64: bool = True):
    """(Arena, Kernel) for gfx942 fixture code object `obj` (always wave64)."""
    arena = Arena()
    return arena, load_kernel(arena, (GFX942 / f"{obj}.hsaco").read_bytes(), name)


CHECKS = [   # test_standalone's end-to-end checks whose kernels fixtures/amd/cl/gfx942/build.sh builds
    "test_saxpy_matches_numpy_fused_multiply_add", "test_fma_rounds_once_on_hard_inputs",
    "test_correctly_rounded_div_and_sqrt", "test_f64_division", "test_int32_and_int64_arithmetic_wraps",
    "test_data_dependent_loops_diverge_and_reconverge", "test_private_arrays_live_in_per_lane_scratch",
    "test_lds_tree_reduction_with_barriers", "test_tiled_matmul_through_lds",
    "test_naive_matmul_two_dimensional_grid", "test_global_atomics_histogram",
    "test_atomic_tickets_are_a_permutation_and_min_max_fold", "test_lds_atomics_histogram", "test_f16_arithmetic",
    "test_byte_and_short_memory_with_sign_extension", "test_vector_and_struct_loads_and_stores",
    "test_compare_and_swap_loops_for_float_and_64bit_atomics", "test_cross_lane_bpermute_and_readfirstlane",
    "test_barriers_inside_a_loop_with_a_2d_workgroup", "test_out_of_line_call_with_a_stack_in_scratch",
    "test_switch_statement_every_case", "test_loop_with_break_continue_and_early_return",
    "test_three_dimensional_grid_and_workgroup_ids", "test_global_float_atomic_add_folds_in_wave_and_lane_order",
    "test_global_float_atomic_min_max_skip_nan_and_order_signed_zeros",
    "test_lds_float_and_double_atomics_reduce_per_workgroup",
    "test_ds_append_compacts_each_workgroup_in_wave_order",
    "test_uncapped_divergent_loop_every_lane_its_own_trip_count",
    "test_nested_divergent_loops_with_if_else_and_break",
]


@pytest.mark.parametrize("check", CHECKS)
def test_gfx942_kernel_matches_numpy(check, monkeypatch):
    monkeypatch.setattr(gfx11, "kernel", kernel942)
    fn = getattr(gfx11, check)
    if "wave64" in inspect.signature(fn).parameters:
        fn(wave64=True)
    else:
        fn()


def test_gfx942_code_object_reports_its_arch_and_wave64():
    arena, k = kernel942("basic", "add_f32")
    d = k.dispatch(0, 0, 0, 0, grid=(1, 1, 1), block=(64, 1, 1))
    assert k.co.arch == "gfx942" and d.wave64


def test_mfma_f16_tile_matches_numpy_matmul():
    arena, k = kernel942("mfma", "mfma_f16")
    rng = np.random.default_rng(42)
    tiles = 3
    # small integers: every product and partial sum is exact, so the accumulation order cannot matter
    a = rng.integers(-8, 8, (tiles, 16, 16)).astype(np.float16)
    b = rng.integers(-8, 8, (tiles, 16, 16)).astype(np.float16)
    c = rng.integers(-100, 100, (tiles, 16, 16)).astype(np.float32)
    d = arena.alloc(4 * a.size)
    k(d, arena.alloc(2 * a.size, a), arena.alloc(2 * b.size, b), arena.alloc(4 * c.size, c), grid=(tiles, 1, 1),
      block=(64, 1, 1))
    ref = np.einsum("tik,tkj->tij", a.astype(np.float32), b.astype(np.float32)) + c
    got = arena.array(d, np.float32, a.size).reshape(tiles, 16, 16)
    assert (got.view(np.uint32) == ref.view(np.uint32)).all()


@pytest.mark.approx_model
def test_mfma_f16_random_values_match_the_model_rounded_once_from_an_exact_sum():
    """Random f16 inputs: products are exact in float64; the documented model sums C then k = 0..15 in
    float64 and rounds once to f32 (approximate vs hardware, docs/cdna3.md)."""
    arena, k = kernel942("mfma", "mfma_f16")
    rng = np.random.default_rng(7)
    a = rng.standard_normal((1, 16, 16)).astype(np.float16)
    b = rng.standard_normal((1, 16, 16)).astype(np.float16)
    c = rng.standard_normal((1, 16, 16)).astype(np.float32)
    d = arena.alloc(4 * 256)
    k(d, arena.alloc(512, a), arena.alloc(512, b), arena.alloc(1024, c), grid=(1, 1, 1), block=(64, 1, 1))
    tot = c[0].astype(np.float64)
    for kk in range(16):
        tot = tot + a[0, :, kk, None].astype(np.float64) * b[0, None, kk, :].astype(np.float64)
    got = arena.array(d, np.float32, 256).reshape(16, 16)
    assert (got.view(np.uint32) == tot.astype(np.float32).view(np.uint32)).all()


def _run_pairs(obj, name, a, b, n_out_bytes):
    arena, k = kernel942(obj, name)
    o = arena.alloc(n_out_bytes)
    k(o, arena.alloc(a.nbytes, a), arena.alloc(b.nbytes, b), grid=(a.shape[0] // 64, 1, 1), block=(64, 1, 1))
    return arena.array(o, a.dtype, a.size).reshape(a.shape)


def test_sdwa_byte_selects_and_destination_bytes():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (128, 4)).astype(np.uint8)
    b = rng.integers(0, 256, (128, 4)).astype(np.uint8)
    got = _run_pairs("sdwa", "bytes4", a, b, a.nbytes)
    want = np.stack([a[:, 0] * b[:, 1], a[:, 1] + b[:, 2], a[:, 2] ^ b[:, 3], a[:, 3] - b[:, 0]], axis=1)
    assert (got == want).all()


def test_sdwa_word_selects_with_sign_extension():
    rng = np.random.default_rng(4)
    a = rng.integers(-2**15, 2**15, (128, 2)).astype(np.int16)
    b = rng.integers(-2**15, 2**15, (128, 2)).astype(np.int16)
    got = _run_pairs("sdwa", "shorts2", a, b, a.nbytes)
    want = np.stack([a[:, 0] * b[:, 1] + a[:, 1], (a[:, 1] >> 3) - b[:, 0]], axis=1)
    assert (got == want).all()


def test_f16_pairs_swap_halves():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((128, 2)).astype(np.float16)
    b = rng.standard_normal((128, 2)).astype(np.float16)
    got = _run_pairs("sdwa", "halves2", a, b, a.nbytes)
    want = np.stack([a[:, 1] * b[:, 0], a[:, 0] - b[:, 1]], axis=1)
    assert (got.view(np.uint16) == want.view(np.uint16)).all()
