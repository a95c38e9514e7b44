"""gfx1201 WMMA (valu/wmma12.py) against numpy matmul, with the registers packed here lane by lane from the
RDNA4 layout rule (A(m, k) in lane m + 16 * bit2(k), element (k & 3) + 4 * bit3(k); C/D(m, n) in lane
n + 16 * (m // 8), slot m % 8, 16-bit results two per VGPR). Exact data (small integers, exactly
representable sums) makes the float forms bit-exact; fp8/bf8 values decode through ml_dtypes."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from gputwin.emu.amd.valu import wmma12
from gputwin.errors import IllegalInstruction
from tests.emu.amd.test_gfx12 import run12

from .helpers import V, fill, group, inst


def _pack_ab(mat, bits: int) -> dict[int, np.ndarray]:
    """mat (16 rows-or-columns x 16 K) of `bits`-bit codes -> {vgpr offset: (32 lanes,) uint32}."""
    per = 32 // bits
    regs = np.zeros((8 // per, 32), np.uint64)
    for r in range(16):
        for k in range(16):
            lane = r + 16 * ((k >> 2) & 1)
            e = (k & 3) + 4 * ((k >> 3) & 1)
            regs[e // per, lane] |= np.uint64(int(mat[r, k])) << np.uint64(bits * (e % per))
    return {j: regs[j].astype(np.uint32) for j in range(regs.shape[0])}


def _pack_cd(mat, bits: int) -> dict[int, np.ndarray]:
    regs = np.zeros((8 if bits == 32 else 4, 32), np.uint64)
    for m in range(16):
        for n in range(16):
            lane, slot = n + 16 * (m // 8), m % 8
            if bits == 32:
                regs[slot, lane] = int(mat[m, n])
            else:
                regs[slot // 2, lane] |= np.uint64(int(mat[m, n])) << np.uint64(16 * (slot % 2))
    return {j: regs[j].astype(np.uint32) for j in range(regs.shape[0])}


def _unpack_cd(g, base: int, bits: int) -> np.ndarray:
    out = np.zeros((16, 16), np.uint64)
    for m in range(16):
        for n in range(16):
            lane, slot = n + 16 * (m // 8), m % 8
            if bits == 32:
                out[m, n] = g.vgpr(base + slot)[0, lane]
            else:
                out[m, n] = (int(g.vgpr(base + slot // 2)[0, lane]) >> (16 * (slot % 2))) & 0xFFFF
    return out


def _vgprs(*parts):
    out = {}
    for base, regs in parts:
        out.update({base + j: v for j, v in regs.items()})
    return out


@pytest.mark.parametrize("dtype,name", [(np.float16, "f16"), (ml_dtypes.bfloat16, "bf16")])
def test_f32_result_from_16bit_inputs(dtype, name):
    rng = np.random.default_rng(61)
    a = rng.integers(-8, 8, (16, 16)).astype(dtype)
    b = rng.integers(-8, 8, (16, 16)).astype(dtype)           # stored as columns: b[n, k]
    c = rng.integers(-100, 100, (16, 16)).astype(np.float32)
    g = run12(f"v_wmma_f32_16x16x16_{name} v[0:7], v[8:11], v[12:15], v[0:7]", n=1, vgprs=_vgprs(
        (0, _pack_cd(c.view(np.uint32), 32)), (8, _pack_ab(a.view(np.uint16), 16)),
        (12, _pack_ab(b.view(np.uint16), 16))))
    want = a.astype(np.float32) @ b.astype(np.float32).T + c
    assert np.array_equal(_unpack_cd(g, 0, 32).astype(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("dtype,name", [(np.float16, "f16"), (ml_dtypes.bfloat16, "bf16")])
def test_16bit_results_are_packed_two_per_vgpr(dtype, name):
    rng = np.random.default_rng(62)
    a = rng.integers(-4, 4, (16, 16)).astype(dtype)
    b = rng.integers(-4, 4, (16, 16)).astype(dtype)
    c = rng.integers(-30, 30, (16, 16)).astype(dtype)
    g = run12(f"v_wmma_{name}_16x16x16_{name} v[0:3], v[4:7], v[8:11], v[0:3]", n=1, vgprs=_vgprs(
        (0, _pack_cd(c.view(np.uint16), 16)), (4, _pack_ab(a.view(np.uint16), 16)),
        (8, _pack_ab(b.view(np.uint16), 16))))
    want = (a.astype(np.float32) @ b.astype(np.float32).T + c.astype(np.float32)).astype(dtype)
    assert np.array_equal(_unpack_cd(g, 0, 16).astype(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("signed,clamp", [(False, False), (True, False), (True, True)])
def test_iu8_signedness_and_clamp(signed, clamp):
    rng = np.random.default_rng(63)
    a = rng.integers(0, 256, (16, 16))
    b = rng.integers(0, 256, (16, 16))
    c = rng.integers(-2 ** 31, 2 ** 31, (16, 16))
    c[0, :4] = 2 ** 31 - 1                                     # overflow: wraps, or saturates with clamp
    mods = (" neg_lo:[1,1,0]" if signed else "") + (" clamp" if clamp else "")
    g = run12("v_wmma_i32_16x16x16_iu8 v[0:7], v[8:9], v[10:11], v[0:7]" + mods, n=1, vgprs=_vgprs(
        (0, _pack_cd(c.astype(np.int64) & 0xFFFFFFFF, 32)), (8, _pack_ab(a, 8)), (10, _pack_ab(b, 8))))
    sa, sb = (np.where(x >= 128, x - 256, x) if signed else x for x in (a, b))
    tot = sa @ sb.T + c
    if clamp:
        tot = np.clip(tot, -2 ** 31, 2 ** 31 - 1)
    assert np.array_equal(_unpack_cd(g, 0, 32).astype(np.int64), tot & 0xFFFFFFFF)


def test_fp8_times_bf8():
    rng = np.random.default_rng(64)
    a = rng.integers(-6, 7, (16, 16)).astype(ml_dtypes.float8_e4m3fn)
    b = (rng.integers(-4, 5, (16, 16)) * 0.5).astype(ml_dtypes.float8_e5m2)
    c = rng.integers(-50, 50, (16, 16)).astype(np.float32)
    g = run12("v_wmma_f32_16x16x16_fp8_bf8 v[0:7], v[8:9], v[10:11], v[0:7]", n=1, vgprs=_vgprs(
        (0, _pack_cd(c.view(np.uint32), 32)), (8, _pack_ab(a.view(np.uint8), 8)), (10, _pack_ab(b.view(np.uint8), 8))))
    want = a.astype(np.float64) @ b.astype(np.float64).T + c
    assert np.array_equal(_unpack_cd(g, 0, 32).astype(np.uint32), want.astype(np.float32).view(np.uint32))


def test_unmodelled_gfx12_wmma_forms_fail_closed():
    with pytest.raises(IllegalInstruction, match="v_wmma_i32_16x16x16_iu4: this gfx12 WMMA form is not modelled"):
        run12("v_wmma_i32_16x16x16_iu4 v[0:7], v8, v9, v[0:7]", n=1)
    with pytest.raises(IllegalInstruction, match="neg modifiers on gfx12 float WMMA"):
        run12("v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7] neg_lo:[1,0,0]", n=1)


# --- wave64: registers packed from AMD's Matrix Instruction Calculator (`-a rdna4 -w 64`) ----------------
# A[i][k], 16-bit: VGPR (k // 2) % 2, half k % 2, lane 32 ((k // 8) % 2) + 16 ((k // 4) % 2) + i; 8-bit: VGPR 0,
# byte k % 4, lane 32 ((k // 4) % 2) + 16 ((k // 8) % 2) + i (another K labelling than the model's: only
# which A element meets which B element is observable). C/D[i][j]: 32-bit VGPR i % 4, 16-bit VGPR
# (i // 2) % 2 half i % 2, lane 32 ((i // 4) % 2) + 16 (i // 8) + j.
def _w64_pack_ab(mat, bits: int) -> np.ndarray:
    """mat (16 rows-or-columns x 16 K) of `bits`-bit codes -> (VGPRs, 64 lanes) uint32."""
    i, k = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    if bits == 16:
        reg, shift, lane = (k // 2) % 2, 16 * (k % 2), 32 * ((k // 8) % 2) + 16 * ((k // 4) % 2) + i
    else:
        reg, shift, lane = 0 * k, 8 * (k % 4), 32 * ((k // 4) % 2) + 16 * ((k // 8) % 2) + i
    out = np.zeros((64 // bits, 64), np.uint64)
    np.add.at(out, (reg, lane), np.asarray(mat, np.uint64) << shift.astype(np.uint64))
    return out.astype(np.uint32)


def _w64_cd_place(bits: int):
    i, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    lane = 32 * ((i // 4) % 2) + 16 * (i // 8) + j
    return ((i % 4, lane, 0 * i) if bits == 32 else ((i // 2) % 2, lane, 16 * (i % 2)))


def _w64_pack_cd(mat, bits: int) -> np.ndarray:
    reg, lane, shift = _w64_cd_place(bits)
    out = np.zeros((4 if bits == 32 else 2, 64), np.uint64)
    np.add.at(out, (reg, lane), np.asarray(mat, np.uint64) << shift.astype(np.uint64))
    return out.astype(np.uint32)


def _w64_run(op, a, b, c, bits_ab, bits_cd, **mods):
    g = group(1, wave64=True)
    ra, rb, rc = _w64_pack_ab(a, bits_ab), _w64_pack_ab(b, bits_ab), _w64_pack_cd(c, bits_cd)
    for base, regs in ((8, ra), (12, rb), (0, rc)):
        for j, v in enumerate(regs):
            fill(g, base + j, v[None])
    wmma12.build(inst(op, "VOP3P", vdst=V(0, len(rc)), src0=V(8, len(ra)), src1=V(12, len(rb)), src2=V(0, len(rc)),
                      **mods))(g)
    reg, lane, shift = _w64_cd_place(bits_cd)
    regs = np.stack([g.vgpr(j)[0] for j in range(len(rc))]).astype(np.uint64)
    return (regs[reg, lane] >> shift.astype(np.uint64)) & np.uint64((1 << bits_cd) - 1)


@pytest.mark.parametrize("dtype,name", [(np.float16, "f16"), (ml_dtypes.bfloat16, "bf16")])
def test_wave64_f32_and_16bit_results(dtype, name, rng):
    a = rng.integers(-8, 8, (16, 16)).astype(dtype)
    b = rng.integers(-8, 8, (16, 16)).astype(dtype)                # stored as columns: b[n, k]
    c32 = rng.integers(-100, 100, (16, 16)).astype(np.float32)
    c16 = rng.integers(-30, 30, (16, 16)).astype(dtype)
    got = _w64_run(f"v_wmma_f32_16x16x16_{name}", a.view(np.uint16), b.view(np.uint16), c32.view(np.uint32), 16, 32)
    want = a.astype(np.float64) @ b.astype(np.float64).T
    assert np.array_equal(got, (want + c32).astype(np.float32).view(np.uint32))
    got = _w64_run(f"v_wmma_{name}_16x16x16_{name}", a.view(np.uint16), b.view(np.uint16), c16.view(np.uint16), 16, 16)
    assert np.array_equal(got, (want + c16.astype(np.float64)).astype(dtype).view(np.uint16))


@pytest.mark.parametrize("signed,clamp", [(False, False), (True, False), (True, True)])
def test_wave64_iu8_signedness_and_clamp(signed, clamp, rng):
    a, b = rng.integers(0, 256, (16, 16)), rng.integers(0, 256, (16, 16))
    c = rng.integers(-2 ** 31, 2 ** 31, (16, 16))
    c[0, :4] = 2 ** 31 - 1
    got = _w64_run("v_wmma_i32_16x16x16_iu8", a, b, c & 0xFFFFFFFF, 8, 32, neg=(signed, signed, False), clamp=clamp)
    sa, sb = (np.where(x >= 128, x - 256, x) if signed else x for x in (a, b))
    tot = sa @ sb.T + c
    if clamp:
        tot = np.clip(tot, -2 ** 31, 2 ** 31 - 1)
    assert np.array_equal(got.astype(np.int64), tot & 0xFFFFFFFF)


def test_wave64_fp8_times_bf8(rng):
    a = rng.integers(-6, 7, (16, 16)).astype(ml_dtypes.float8_e4m3fn)
    b = (rng.integers(-4, 5, (16, 16)) * 0.5).astype(ml_dtypes.float8_e5m2)
    c = rng.integers(-50, 50, (16, 16)).astype(np.float32)
    got = _w64_run("v_wmma_f32_16x16x16_fp8_bf8", a.view(np.uint8), b.view(np.uint8), c.view(np.uint32), 8, 32)
    want = a.astype(np.float64) @ b.astype(np.float64).T + c
    assert np.array_equal(got, want.astype(np.float32).view(np.uint32))
