"""CDNA3 packed f32 (v_pk_fma_f32, v_pk_mul_f32, v_pk_add_f32, v_pk_mov_b32).

End to end: fixtures/amd/cl/gfx942/pkf32.cl (float2/float4 code clang-19 -O2 turns into packed f32 with
op_sel / op_sel_hi / neg; FP_CONTRACT OFF so only fma() fuses) against numpy float32 (add/mul are
correctly rounded) and exact fractions for the fma. Hand-assembled (llvm-mc-19 -mcpu=gfx942): NaN, signed
zeros, denormals, clamp, v_pk_mov_b32's dword selects, EXEC-masked lanes, the constant rule."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.standalone import Arena
from gputwin.errors import IllegalInstruction
from tests.emu.amd.test_gfx942_kernels import kernel942
from tests.emu.amd.test_gfx942_ops import LLVM_MC, OBJCOPY, asm942
from tests.emu.amd.valu.helpers import round_frac

M32 = 0xFFFFFFFF


def _fma32(a, b, c):
    """fma rounded once to f32 (finite inputs), as float32 values."""
    out = np.empty(a.shape, np.float32)
    for idx in np.ndindex(a.shape):
        x, y, z = float(a[idx]), float(b[idx]), float(c[idx])
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        out[idx] = round_frac(exact, 24, -126, 127) if exact else (x * y + z)
    return out


def _data(rng, shape):
    v = (rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 20, shape)).astype(np.float32)
    v.flat[::37] = np.float32(1e-40)            # f32 denormals (OpenCL keeps them on gfx942)
    v.flat[5::41] = -0.0
    return v


def test_fma4_fixture_uses_op_sel_hi_on_a_broadcast_scalar():
    rng = np.random.default_rng(42)
    x, y = _data(rng, (128, 4)), _data(rng, (128, 4))
    b = np.array([1.5, -2.0, 0.25, 3.0], np.float32)
    arena, k = kernel942("pkf32", "fma4")
    yv = arena.alloc(y.nbytes, y)
    k(yv, arena.alloc(x.nbytes, x), 0.75, b, grid=(2, 1, 1), block=(64, 1, 1))
    got = arena.array(yv, np.float32, 512).reshape(128, 4)
    t = _fma32(x, np.full_like(x, 0.75), y)
    want = t * b + np.array([2.0, -1.5, 0.5, 4.0], np.float32) - x[:, [1, 0, 3, 2]]
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_swap2_fixture_negates_and_swaps_dwords_and_reads_a_constant():
    rng = np.random.default_rng(43)
    x = _data(rng, (128, 2))
    s = np.array([0.5, -3.0], np.float32)
    arena, k = kernel942("pkf32", "swap2")
    yv = arena.alloc(x.nbytes)
    k(yv, arena.alloc(x.nbytes, x), s, grid=(2, 1, 1), block=(64, 1, 1))
    got = arena.array(yv, np.float32, 256).reshape(128, 2)
    t = x * s + np.float32(1.0)
    want = -t[:, ::-1] * x + t
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("kernel", ["mix4", "shuf2"])
def test_mix4_and_shuf2_fixtures(kernel):
    rng = np.random.default_rng(44)
    width = 4 if kernel == "mix4" else 2
    a, b = _data(rng, (128, width)), _data(rng, (128, width))
    arena, k = kernel942("pkf32", kernel)
    yv = arena.alloc(a.nbytes)
    args = [yv, arena.alloc(a.nbytes, a), arena.alloc(b.nbytes, b)]
    s = np.array([1.25, -0.5], np.float32)
    k(*args, *([s] if kernel == "shuf2" else []), grid=(2, 1, 1), block=(64, 1, 1))
    got = arena.array(yv, np.float32, a.size).reshape(a.shape)
    if kernel == "mix4":
        want = np.stack([a[:, 0] * b[:, 1], a[:, 1] * b[:, 0], a[:, 2] + b[:, 3], a[:, 3] - b[:, 2]], 1) \
            * np.stack([a[:, 3], a[:, 2], np.full(128, 3, np.float32), np.full(128, 3, np.float32)], 1)
    else:
        t = np.stack([a[:, 1], b[:, 0]], 1) * s
        u = np.stack([b[:, 1], t[:, 0]], 1) + np.stack([t[:, 1], a[:, 0]], 1)
        want = _fma32(u, t, np.stack([a[:, 0], b[:, 1]], 1))
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


needs_mc = pytest.mark.skipif(LLVM_MC is None or OBJCOPY is None,
                              reason="needs llvm-mc-19 and llvm-objcopy-19 to assemble gfx942 snippets")


def _run(body: str, v2: np.ndarray, v4: np.ndarray, exec_lo=M32, mode_f32_denorm=True):
    """Run body on one wave64 with v[2:3] and v[4:5] per lane; returns v[6:7] per lane as (64, 2) u32."""
    code = asm942(f"""v_lshlrev_b32_e32 v1, 3, v0
s_mov_b32 s12, 0
s_mov_b32 s13, {0x3F0 if mode_f32_denorm else 0x300}
s_setreg_b32 hwreg(HW_REG_MODE, 0, 10), s13
global_load_dwordx2 v[2:3], v1, s[0:1]
global_load_dwordx2 v[4:5], v1, s[0:1] offset:512
v_mov_b32_e32 v6, 0x5555
v_mov_b32_e32 v7, 0x7777
s_waitcnt vmcnt(0)
s_mov_b32 exec_lo, s4
{body}
s_mov_b32 exec_lo, -1
global_store_dwordx2 v1, v[6:7], s[2:3]
s_endpgm""")
    arena = Arena()
    src = arena.alloc(1024, np.concatenate([v2, v4]).astype(np.uint32))
    dst = arena.alloc(512)
    run_dispatch(arena.mem, Dispatch(code_address=0, code=code, block=(64, 1, 1), wave64=True,
                                     user_sgprs=[src & M32, src >> 32, dst & M32, dst >> 32, exec_lo]),
                 arch="gfx942")
    return arena.array(dst, np.uint32, 128).reshape(64, 2)


def _bits(*vals):
    return np.array(vals, np.float32).view(np.uint32)


@needs_mc
def test_hand_written_nan_zero_denormal_clamp_and_exec():
    qnan_a, snan_b = 0x7FC0_1234, 0x7F80_0042
    v2 = np.zeros((64, 2), np.uint32)
    v4 = np.zeros((64, 2), np.uint32)
    v2[0], v4[0] = (qnan_a, _bits(1.0)[0]), (_bits(2.0)[0], snan_b)      # NaN in either operand
    v2[1], v4[1] = _bits(-0.0, 0.0), _bits(-0.0, -0.0)                    # signed zeros
    v2[2], v4[2] = _bits(1e-40, 2.0 ** -126), _bits(1e-40, -(2.0 ** -127))   # denormal sums
    v2[3], v4[3] = _bits(0.75, 3.0), _bits(0.5, -5.0)                     # clamp to [0, 1]
    exec_lo = M32 & ~(1 << 4)
    got = _run("v_pk_add_f32 v[6:7], v[2:3], v[4:5]", v2, v4, exec_lo)
    assert got[0, 0] == qnan_a and got[0, 1] == snan_b | 0x400000                  # first NaN, quieted
    assert list(got[1]) == list(_bits(-0.0, 0.0))
    assert list(got[2]) == [2 * _bits(1e-40)[0], _bits(2.0 ** -127)[0]]          # exact denormal sums
    assert list(got[4]) == [0x5555, 0x7777]                                        # EXEC off
    clamped = _run("v_pk_add_f32 v[6:7], v[2:3], v[4:5] clamp", v2, v4)
    assert list(clamped[3]) == list(_bits(1.0, 0.0))
    flushed = _run("v_pk_add_f32 v[6:7], v[2:3], v[4:5]", v2, v4, mode_f32_denorm=False)
    assert list(flushed[2]) == list(_bits(0.0, 2.0 ** -126))      # FP_DENORM f32 = 0: denormal inputs are 0


@needs_mc
def test_hand_written_op_sel_neg_and_mov():
    rng = np.random.default_rng(9)
    v2 = rng.standard_normal((64, 2)).astype(np.float32)
    v4 = rng.standard_normal((64, 2)).astype(np.float32)
    got = _run("v_pk_mul_f32 v[6:7], v[2:3], v[4:5] op_sel:[1,1] op_sel_hi:[0,1] neg_lo:[1,0] neg_hi:[0,1]",
               v2.view(np.uint32), v4.view(np.uint32)).view(np.float32)
    assert np.array_equal(got[:, 0], -v2[:, 1] * v4[:, 1]) and np.array_equal(got[:, 1], v2[:, 0] * -v4[:, 1])
    mov = _run("v_pk_mov_b32 v[6:7], v[2:3], v[4:5] op_sel:[1,0]", v2.view(np.uint32), v4.view(np.uint32))
    assert np.array_equal(mov[:, 0], v2.view(np.uint32)[:, 1]) and np.array_equal(mov[:, 1], v4.view(np.uint32)[:, 0])
    fma = _run("v_pk_fma_f32 v[6:7], v[2:3], v[4:5], v[2:3] op_sel:[0,1,1] op_sel_hi:[1,0,0]",
               v2.view(np.uint32), v4.view(np.uint32)).view(np.float32)
    assert np.array_equal(fma[:, 0], _fma32(v2[:, 0], v4[:, 1], v2[:, 1]))
    assert np.array_equal(fma[:, 1], _fma32(v2[:, 1], v4[:, 0], v2[:, 0]))


@needs_mc
def test_a_constant_read_as_its_high_dword_fails_closed():
    v = np.zeros((64, 2), np.uint32)
    ok = _run("v_pk_mul_f32 v[6:7], v[2:3], 2.0 op_sel_hi:[1,0]", v + _bits(1.5)[0], v)
    assert (ok == _bits(3.0)[0]).all()
    with pytest.raises(IllegalInstruction, match="inline constant and op_sel_hi selects"):
        _run("v_pk_mul_f32 v[6:7], v[2:3], 2.0", v, v)
