"""Conversions: rounding, clamping, NaN -> 0, f16 denormals, packing."""
from fractions import Fraction

import numpy as np
import pytest

from gputwin.emu.amd.valu import execute

from .helpers import MODE, V, f16, f32, fill, group, inst, round_frac, u64

F32_SPECIAL = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, 0.99999994, -0.0, 1e-45, 65535.5,
                        2147483520.0, -2147483904.0, 4294967040.0, 5e9, -1.5], np.float32)


def _f2i(x, lo, hi):
    x = np.asarray(x, np.float64)
    return np.where(np.isnan(x), 0, np.clip(np.trunc(np.nan_to_num(x, posinf=hi, neginf=lo)), lo, hi)).astype(np.int64)


def test_float_to_int_truncates_clamps_and_zeroes_nan():
    g = group(1)
    fill(g, 1, np.resize(F32_SPECIAL, 32))
    execute(g, inst("v_cvt_i32_f32", "VOP1", vdst=V(0), src0=V(1)))
    execute(g, inst("v_cvt_u32_f32", "VOP1", vdst=V(2), src0=V(1)))
    x = np.resize(F32_SPECIAL, 32)
    np.testing.assert_array_equal(g.vgpr(0)[0].view(np.int32), _f2i(x, -2 ** 31, 2 ** 31 - 1))
    np.testing.assert_array_equal(g.vgpr(2)[0], _f2i(x, 0, 2 ** 32 - 1))
    fill(g, 4, np.resize(F32_SPECIAL.astype(np.float64), 32))
    execute(g, inst("v_cvt_i32_f64", "VOP1", vdst=V(6), src0=V(4, 2)))
    np.testing.assert_array_equal(g.vgpr(6)[0].view(np.int32), _f2i(x, -2 ** 31, 2 ** 31 - 1))


def test_floor_and_nearest_conversions():
    x = np.array([2.5, -2.5, 0.49999997, -0.5, 1.5, 3.7, -3.7, 8388609.0], np.float32)
    g = group(1)
    fill(g, 1, np.resize(x, 32))
    execute(g, inst("v_cvt_floor_i32_f32", "VOP1", vdst=V(0), src0=V(1)))
    execute(g, inst("v_cvt_nearest_i32_f32", "VOP1", vdst=V(2), src0=V(1)))
    np.testing.assert_array_equal(g.vgpr(0)[0, :8].view(np.int32), np.floor(x))
    # floor(x + 0.5) with the add rounded in f32: 0.49999997 + 0.5 rounds to 1.0
    np.testing.assert_array_equal(g.vgpr(2)[0, :8].view(np.int32), np.floor(x + np.float32(0.5)))
    assert g.vgpr(2)[0, 2] == 1


@pytest.mark.parametrize("rmode,name", [(0, "rne"), (3, "rtz"), (1, "up"), (2, "down")])
def test_int_to_f32_rounding_in_every_mode(rmode, name):
    vals = np.array([16777217, 16777219, 2 ** 31 - 1, -2 ** 31 + 1, 33554435, -33554435, 7, 0] * 4, np.int64)
    g = group(1, mode=(MODE & ~0xF) | rmode)
    fill(g, 1, vals.astype(np.int32))
    execute(g, inst("v_cvt_f32_i32", "VOP1", vdst=V(0), src0=V(1)))
    execute(g, inst("v_cvt_f32_u32", "VOP1", vdst=V(2), src0=V(1)))
    want_i = [round_frac(Fraction(int(v)), 24, -126, 127, name) for v in vals]
    want_u = [round_frac(Fraction(int(v) & 0xFFFFFFFF), 24, -126, 127, name) for v in vals]
    np.testing.assert_array_equal(g.vgpr(0)[0], np.array(want_i, np.float32).view(np.uint32))
    np.testing.assert_array_equal(g.vgpr(2)[0], np.array(want_u, np.float32).view(np.uint32))


def test_f32_to_f16_rne_denormals_overflow_and_nan():
    x = np.array([1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, 65519.0, 65520.0, 2 ** -25, 2 ** -25 * 1.0001, 3e-6,
                  -7e-8, np.inf, 1e-30], np.float32)
    g = group(1)
    fill(g, 1, np.resize(x, 32))
    execute(g, inst("v_cvt_f16_f32", "VOP1", vdst=V(0), src0=V(1)))
    want = [round_frac(Fraction(float(v)), 11, -14, 15) if np.isfinite(v) else float(v) for v in x]
    np.testing.assert_array_equal(g.vgpr(0)[0, :10] & 0xFFFF, np.array(want, np.float16).view(np.uint16))
    fill(g, 2, np.uint32(0x7F800001 | (0x155 << 13)))        # signalling NaN with payload
    execute(g, inst("v_cvt_f16_f32", "VOP1", vdst=V(3), src0=V(2)))
    assert g.vgpr(3)[0, 0] & 0xFFFF == 0x7E00 | 0x155


def test_f16_output_denormals_flush_when_f16_denorm_mode_off():
    g = group(1, mode=MODE & ~0xC0)
    fill(g, 1, np.float32(3e-6))
    execute(g, inst("v_cvt_f16_f32", "VOP1", vdst=V(0), src0=V(1)))
    assert g.vgpr(0)[0, 0] & 0xFFFF == 0


def test_f16_to_f32_and_f64_round_trip_exact():
    h = np.arange(0, 0x10000, 2048 + 7, dtype=np.uint16)[:32]
    g = group(1)
    fill(g, 1, np.resize(h, 32).astype(np.uint32))
    execute(g, inst("v_cvt_f32_f16", "VOP1", vdst=V(0), src0=V(1)))
    ref = np.resize(h, 32).view(np.float16).astype(np.float32)
    nan = np.isnan(ref)
    np.testing.assert_array_equal(g.vgpr(0)[0][~nan], ref.view(np.uint32)[~nan])
    assert ((g.vgpr(0)[0][nan] & 0x7FC00000) == 0x7FC00000).all()
    execute(g, inst("v_cvt_f64_f32", "VOP1", vdst=V(2, 2), src0=V(0)))
    np.testing.assert_array_equal(u64(g, 2)[0][~nan], ref.astype(np.float64).view(np.uint64)[~nan])


def test_f64_to_f32_rounding():
    x = np.array([1 + 2 ** -24, 1 + 2 ** -24 + 2 ** -50, 3.4028235677973366e38, 1e-40, -1e-46], np.float64)
    g = group(1)
    fill(g, 2, np.resize(x, 32))
    execute(g, inst("v_cvt_f32_f64", "VOP1", vdst=V(0), src0=V(2, 2)))
    want = [round_frac(Fraction(float(v)), 24, -126, 127) for v in x]
    np.testing.assert_array_equal(g.vgpr(0)[0, :5], np.array(want, np.float32).view(np.uint32))


def test_pk_rtz_ubyte_and_16bit_int_conversions():
    g = group(1)
    fill(g, 1, np.float32(1.0 + 2 ** -11 + 2 ** -12))
    fill(g, 2, np.float32(-70000.0))
    execute(g, inst("v_cvt_pk_rtz_f16_f32", "VOP2", vdst=V(0), src0=V(1), src1=V(2)))
    assert g.vgpr(0)[0, 0] == (0xFBFF << 16) | 0x3C00         # toward zero: 1.0 and -65504
    fill(g, 3, np.uint32(0xC8A10F02))
    for k in range(4):
        execute(g, inst(f"v_cvt_f32_ubyte{k}", "VOP1", vdst=V(4 + k), src0=V(3)))
        assert g.vgpr(4 + k)[0, 0] == f32(float((0xC8A10F02 >> 8 * k) & 0xFF))
    fill(g, 8, np.uint32(0x8000))
    execute(g, inst("v_cvt_i32_i16", "VOP1", vdst=V(9), src0=V(8)))
    execute(g, inst("v_cvt_u32_u16", "VOP1", vdst=V(10), src0=V(8)))
    assert g.vgpr(9)[0, 0] == 0xFFFF8000 and g.vgpr(10)[0, 0] == 0x8000
    fill(g, 11, f16(np.float16(-300.7)).astype(np.uint32))
    execute(g, inst("v_cvt_i16_f16", "VOP1", vdst=V(12), src0=V(11)))
    execute(g, inst("v_cvt_u16_f16", "VOP1", vdst=V(13), src0=V(11)))
    assert g.vgpr(12)[0, 0] & 0xFFFF == (-300) & 0xFFFF and g.vgpr(13)[0, 0] & 0xFFFF == 0


def test_pk_saturating_packs():
    g = group(1)
    fill(g, 1, np.int32(-40000))
    fill(g, 2, np.int32(70000))
    execute(g, inst("v_cvt_pk_i16_i32", vdst=V(0), src0=V(1), src1=V(2)))
    assert g.vgpr(0)[0, 0] == (0x7FFF << 16) | 0x8000
    execute(g, inst("v_cvt_pk_u16_u32", vdst=V(3), src0=V(2), src1=V(1)))
    assert g.vgpr(3)[0, 0] == (0xFFFF << 16) | 0xFFFF
    fill(g, 4, np.float32(300.0))
    fill(g, 5, np.uint32(0x11223344))
    execute(g, inst("v_cvt_pk_u8_f32", vdst=V(6), src0=V(4), src1=V(5), src2=V(5)))   # byte 0x44 & 3 = 0
    assert g.vgpr(6)[0, 0] == 0x112233FF
