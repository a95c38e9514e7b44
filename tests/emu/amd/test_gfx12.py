"""gfx12 on the emulator core (gputwin/emu/amd/gfx12*.py): the instructions RDNA4 added or renamed, its MODE
and its initial wave state. Expected values come from numpy / ml-free bit arithmetic, never from the code
under test."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

from gputwin.emu.amd import gfx12
from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.executor import Executor
from gputwin.emu.watchdog import Watchdog
from gputwin.emu.amd.program import Program
from gputwin.emu.amd.standalone import Arena
from gputwin.emu.amd.wave import WaveGroup
from gputwin.errors import IllegalInstruction
from tests.emu.amd.helpers import make_ctx

LLVM_MC, OBJCOPY = shutil.which("llvm-mc-19"), shutil.which("llvm-objcopy-19")
F32 = np.float32


@functools.lru_cache(maxsize=None)
def asm12(text: str) -> bytes:
    """gfx1201 machine code for `text`: llvm-mc-19 when present, else the team assembler."""
    if LLVM_MC is None or OBJCOPY is None:
        from gputwin.emu.amd.isa import assemble
        return assemble(text, "gfx1201")
    with tempfile.TemporaryDirectory() as d:
        obj, raw = os.path.join(d, "a.o"), os.path.join(d, "a.bin")
        out = subprocess.run([LLVM_MC, "-triple=amdgcn", "-mcpu=gfx1201", "-filetype=obj", "-o", obj], input=text,
                             capture_output=True, text=True, check=False)
        if out.returncode:
            raise AssertionError(out.stderr)
        subprocess.run([OBJCOPY, "-O", "binary", "--only-section=.text", obj, raw], check=True)
        with open(raw, "rb") as f:
            return f.read()


def run12(text: str, *, sgprs=None, vgprs=None, n=2, mem=None, mode=None):
    """Run gfx12 `text` (s_endpgm appended) on n wave32 waves; returns the final WaveGroup."""
    ctx = make_ctx(mem, nwg=n)
    g = WaveGroup(ctx, np.arange(n), np.arange(n), wave64=False, pc=0,
                  mode=gfx12.initial_mode(0xF0 << 12) if mode is None else mode)   # denormals kept, RNE
    g.set_exec(np.ones((n, 32), bool))
    for i, v in (sgprs or {}).items():
        g.s[i] = v
    for r, v in (vgprs or {}).items():
        g.set_vgpr(r, np.broadcast_to(np.asarray(v, np.uint32), (n, 32)), mask=np.ones((n, 32), bool))
    ended = []
    Executor(ctx, Program(asm12(text + "\ns_endpgm\n"), "gfx1201"), Watchdog(),
             on_end=ended.append).run([g])
    final = WaveGroup.merge(ended)
    return final.take(np.argsort(final.waves))


def bits32(x) -> np.ndarray:
    return np.asarray(x, F32).view(np.uint32)


SPECIAL = bits32([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, 1e-40, 3e38])
QNAN, SNAN = np.uint32(0x7FC00001), np.uint32(0x7F800005)


# --- scheduling, barriers ----------------------------------------------------------------------------
def test_split_wait_counters_and_cache_controls_are_accepted():
    g = run12("s_mov_b32 s0, 7\ns_wait_loadcnt 0x0\ns_wait_storecnt 0x0\ns_wait_kmcnt 0x0\ns_wait_dscnt 0x0\n"
              "s_wait_loadcnt_dscnt 0x0\ns_wait_alu 0xfffe\nglobal_inv\nglobal_wb\ns_mov_b32 s1, 8")
    assert g.s[0].tolist() == [7, 7] and g.s[1].tolist() == [8, 8]


def test_named_barriers_fail_closed():
    with pytest.raises(IllegalInstruction, match="workgroup barrier"):
        run12("s_barrier_signal 3")
    with pytest.raises(IllegalInstruction, match="workgroup barrier"):
        run12("s_barrier_wait 3")


# --- scalar ALU --------------------------------------------------------------------------------------
def test_64bit_scalar_add_sub_mul_wrap_and_leave_scc():
    a, b = 0xFFFF_FFFF_FFFF_FFF0, 0x1_0000_0020
    g = run12("s_cmp_eq_u32 0, 0\ns_add_nc_u64 s[4:5], s[0:1], s[2:3]\ns_sub_nc_u64 s[6:7], s[2:3], s[0:1]\n"
              "s_mul_u64 s[8:9], s[0:1], s[2:3]",
              sgprs={0: a & 0xFFFFFFFF, 1: a >> 32, 2: b & 0xFFFFFFFF, 3: b >> 32})
    m = (1 << 64) - 1
    for reg, want in ((4, (a + b) & m), (6, (b - a) & m), (8, (a * b) & m)):
        assert int(g.s[reg, 0]) | int(g.s[reg + 1, 0]) << 32 == want
    assert g.scc.all()


def test_renamed_carry_ops_keep_gfx11_semantics():
    g = run12("s_add_co_u32 s2, s0, s1\ns_add_co_ci_u32 s3, 0, 0\ns_sub_co_u32 s4, s1, s0\ns_sub_co_ci_u32 s5, 0, 0",
              sgprs={0: 0xFFFFFFF0, 1: 0x20})
    assert g.s[2, 0] == 0x10 and g.s[3, 0] == 1 and g.s[4, 0] == 0x30 and g.s[5, 0] == 0xFFFFFFFF


def test_scalar_float_arithmetic_rounds_like_f32():
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(2).astype(F32) * F32(1e3) for _ in range(3))
    a[1], b[1] = F32(1e-40), F32(3.0)                 # denormal input kept (FLOAT_MODE denormals on)
    g = run12("s_add_f32 s3, s0, s1\ns_sub_f32 s4, s0, s1\ns_mul_f32 s5, s0, s1\ns_mov_b32 s6, s2\n"
              "s_fmac_f32 s6, s0, s1\ns_fmamk_f32 s7, s0, 0x40400000, s1\ns_fmaak_f32 s8, s0, s1, 0x40400000",
              sgprs={0: bits32(a), 1: bits32(b), 2: bits32(c)})
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    fma = lambda x, y, z: (np.float64(x) * np.float64(y) + np.float64(z)).astype(F32)  # noqa: E731 (exact product)
    assert (g.s[3] == bits32(a + b)).all() and (g.s[4] == bits32(a - b)).all() and (g.s[5] == bits32(a * b)).all()
    assert (g.s[6] == bits32(fma(a64, b64, c))).all()
    assert (g.s[7] == bits32(fma(a64, 3.0, b64))).all() and (g.s[8] == bits32(fma(a64, b64, 3.0))).all()


def test_scalar_float_compare_sets_scc_with_unordered_rules():
    a, b = np.array([1.0, np.nan], F32), np.array([2.0, 1.0], F32)
    lt = run12("s_cmp_lt_f32 s0, s1", sgprs={0: bits32(a), 1: bits32(b)}).scc
    nge = run12("s_cmp_nge_f32 s0, s1", sgprs={0: bits32(a), 1: bits32(b)}).scc
    assert lt.tolist() == [True, False] and nge.tolist() == [True, True]


def test_scalar_conversions_and_rounding():
    x = np.array([-2.5, 3.75e9], F32)
    g = run12("s_cvt_i32_f32 s2, s0\ns_cvt_u32_f32 s3, s0\ns_floor_f32 s4, s0\ns_rndne_f32 s5, s0\n"
              "s_cvt_f32_i32 s6, s1\ns_cvt_hi_f32_f16 s7, s1", sgprs={0: bits32(x), 1: [0xC0003C00, 0x7BFF0000]})
    assert g.s[2].view(np.int32).tolist() == [-2, 2**31 - 1] and g.s[3].tolist() == [0, int(x[1])]
    assert (g.s[4] == bits32(np.floor(x))).all() and (g.s[5] == bits32(np.round(x))).all()
    assert (g.s[6] == bits32(np.array([0xC0003C00, 0x7BFF0000], np.uint32).view(np.int32).astype(F32))).all()
    assert (g.s[7] == bits32(np.array([0xC000, 0x7BFF], np.uint16).view(np.float16).astype(F32))).all()


def test_scalar_f16_results_fail_closed():
    with pytest.raises(IllegalInstruction, match="f16"):
        run12("s_add_f16 s2, s0, s1")


def test_sub_dword_and_96bit_scalar_loads():
    arena = Arena()
    data = np.arange(32, dtype=np.uint8) * 9 + 3
    va = arena.alloc(64, data)
    g = run12("s_load_u8 s4, s[0:1], 0x5\ns_load_i8 s5, s[0:1], 0x1e\ns_load_u16 s6, s[0:1], 0x1e\n"
              "s_load_i16 s7, s[0:1], 0x1e\ns_load_b96 s[8:10], s[0:1], 0x4\ns_wait_kmcnt 0x0",
              sgprs={0: va & 0xFFFFFFFF, 1: va >> 32}, mem=arena.mem)
    i16 = int(data[30:32].view(np.int16)[0])
    assert g.s[4, 0] == data[5] and g.s[5, 0] == np.uint32(np.int32(np.int8(data[30])))
    assert g.s[6, 0] == data[30:32].view(np.uint16)[0] and g.s[7, 0] == np.uint32(np.int32(i16))
    assert g.s[8:11, 1].tolist() == data[4:16].view(np.uint32).tolist()


# --- vector ALU --------------------------------------------------------------------------------------
def _vop(text, a, b):
    n = a.size // 32
    return run12(text, n=n, vgprs={1: a.reshape(n, 32), 2: b.reshape(n, 32)}).vgpr(0).reshape(-1)


def _pairs():
    vals = np.concatenate([SPECIAL, [QNAN, SNAN, QNAN | 0x8000_0000]]).astype(np.uint32)
    a, b = np.meshgrid(vals, vals)
    pad = (-a.size) % 32
    return np.pad(a.reshape(-1), (0, pad)), np.pad(b.reshape(-1), (0, pad))


def _ref_min(a, b, want_max, nan_rule):
    fa, fb = a.view(F32), b.view(F32)
    with np.errstate(invalid="ignore"):
        better = (fa > fb) if want_max else (fa < fb)
    zeros = (fa == 0) & (fb == 0)
    sign_a = (a >> 31) == 1
    better |= zeros & (sign_a != want_max) & ((a >> 31) != (b >> 31))
    r = np.where(better, a, b)
    na, nb = np.isnan(fa), np.isnan(fb)
    sa, sb = na & ((a & 0x400000) == 0), nb & ((b & 0x400000) == 0)
    if nan_rule == "number":              # maximumNumber: NaN inputs step aside; two NaNs: src0 quieted
        r = np.where(nb, a, r)
        r = np.where(na, b, r)
        return np.where(na & nb, a | 0x400000, r)
    r = np.where(nb, b, r)                # IEEE 754-2019 minimum/maximum: sNaN first, then qNaN
    r = np.where(na, a, r)
    r = np.where(sb, b | 0x400000, r)
    return np.where(sa, a | 0x400000, r)


@pytest.mark.parametrize("name,want_max,rule", [("v_minimum_f32", False, "ieee"), ("v_maximum_f32", True, "ieee"),
                                                ("v_min_num_f32", False, "number"),
                                                ("v_max_num_f32", True, "number")])
def test_min_max_nan_and_signed_zero_rules(name, want_max, rule):
    a, b = _pairs()
    got = _vop(f"{name} v0, v1, v2", a, b)
    assert got.tolist() == _ref_min(a, b, want_max, rule).astype(np.uint32).tolist()


def test_three_input_minimum_maximum_chains():
    rng = np.random.default_rng(3)
    a, b, c = (bits32(rng.standard_normal(32)) for _ in range(3))
    c[:4] = [QNAN, SNAN, 0, 0x80000000]
    g = run12("v_minimum3_f32 v0, v1, v2, v3\nv_minimummaximum_f32 v4, v1, v2, v3", n=1,
              vgprs={1: a, 2: b, 3: c})
    mn = _ref_min(a, b, False, "ieee").astype(np.uint32)
    assert g.vgpr(0)[0].tolist() == _ref_min(mn, c, False, "ieee").astype(np.uint32).tolist()
    assert g.vgpr(4)[0].tolist() == _ref_min(mn, c, True, "ieee").astype(np.uint32).tolist()


def test_renamed_mad_co_u64_u32():
    a = np.arange(32, dtype=np.uint32) * np.uint32(0x9E3779B9)
    g = run12("v_mad_co_u64_u32 v[4:5], s0, v1, s2, v[2:3]", n=1,
              vgprs={1: a, 2: 0xFFFFFFFF, 3: 7}, sgprs={2: 0x1234567})
    want = (a.astype(np.uint64) * np.uint64(0x1234567) + np.uint64(7 << 32 | 0xFFFFFFFF))
    got = g.vgpr(4)[0].astype(np.uint64) | g.vgpr(5)[0].astype(np.uint64) << np.uint64(32)
    assert got.tolist() == want.tolist()


def test_vopd_max_num_runs_under_its_gfx11_name():
    a, b = bits32(np.linspace(-3, 3, 32)), bits32(np.linspace(3, -3, 32))
    g = run12("v_dual_max_num_f32 v0, v1, v2 :: v_dual_min_num_f32 v3, v4, v5", n=1,
              vgprs={1: a, 2: b, 4: a, 5: b})
    fa, fb = a.view(F32), b.view(F32)
    assert (g.vgpr(0)[0] == bits32(np.maximum(fa, fb))).all() and (g.vgpr(3)[0] == bits32(np.minimum(fa, fb))).all()


# --- dispatch setup ----------------------------------------------------------------------------------
def test_mode_has_no_ieee_bit_and_clamps_nan_to_zero():
    mode = gfx12.initial_mode((1 << 23) | (1 << 21) | (0xC0 << 12))   # gfx11's IEEE / DX10_CLAMP positions
    assert mode & 0xFF == 0xC0 and not mode >> 9 & 1 and mode >> 8 & 1
    g = run12("v_add_f32_e64 v0, v1, v2 clamp", n=1, vgprs={1: QNAN, 2: 0}, mode=mode)
    assert (g.vgpr(0) == 0).all()


def test_architected_workgroup_and_wave_ids_in_ttmp():
    # each wave stores (ttmp9, ttmp7, ttmp8, s2) at slot ttmp9 + gx * (y + gy * z) times waves + wave
    text = """
    s_and_b32 s4, ttmp7, 0xffff
    s_lshr_b32 s5, ttmp7, 16
    s_mul_i32 s5, s5, 3
    s_add_co_u32 s4, s4, s5
    s_mul_i32 s4, s4, 5
    s_add_co_u32 s4, s4, ttmp9
    s_lshl_b32 s4, s4, 1
    s_bfe_u32 s5, ttmp8, 0x50019
    s_add_co_u32 s4, s4, s5
    s_lshl_b32 s4, s4, 4
    v_mov_b32 v1, ttmp9
    v_mov_b32 v2, ttmp7
    v_mov_b32 v3, ttmp8
    v_mov_b32 v4, s2
    v_mov_b32 v5, s4
    global_store_b128 v5, v[1:4], s[0:1]
    s_endpgm
    """
    arena = Arena()
    grid = (5, 3, 2)
    slots = 2 * grid[0] * grid[1] * grid[2]
    out = arena.alloc(16 * slots, np.full(4 * slots, 0xDEAD, np.uint32))
    run_dispatch(arena.mem, Dispatch(code_address=0, code=asm12(text), grid=grid, block=(64, 1, 1),
                                     user_sgprs=[out & 0xFFFFFFFF, out >> 32], rsrc2=(2 << 1) | (7 << 7)),
                 arch="gfx1201")
    rec = arena.array(out, np.uint32, 4 * slots).reshape(grid[2], grid[1], grid[0], 2, 4)
    z, y, x, w = np.meshgrid(*(np.arange(k) for k in (grid[2], grid[1], grid[0], 2)), indexing="ij")
    assert (rec[..., 0] == x).all() and (rec[..., 1] == (y | z << 16)).all()
    assert (rec[..., 2] == w << 25).all()
    assert (rec[..., 3] == 0).all()          # no system SGPRs are written after the user SGPRs


def test_unknown_arch_still_fails_closed():
    with pytest.raises(IllegalInstruction, match="gfx1030"):
        run_dispatch(Arena().mem, Dispatch(code_address=0, code=asm12("s_endpgm")), arch="gfx1030")


def test_pseudo_scalar_transcendentals_match_the_vector_ones():
    x = bits32([0.75, 3.0e-3])
    vec = run12("v_exp_f32 v0, s0\nv_log_f32 v1, s0\nv_rcp_f32 v2, s0\nv_rsq_f32 v3, s0\nv_sqrt_f32 v4, s0",
                sgprs={0: x})
    g = run12("v_s_exp_f32 s2, s0\nv_s_log_f32 s3, s0\nv_s_rcp_f32 s4, s0\nv_s_rsq_f32 s5, s0\nv_s_sqrt_f32 s6, s0\n"
              "v_s_sqrt_f32 s7, -s0 clamp", sgprs={0: x})
    for k in range(5):
        assert (g.s[2 + k] == vec.vgpr(k)[:, 0]).all()
    assert (g.s[2] == bits32(np.exp2(x.view(F32).astype(np.float64)).astype(F32))).all()   # correctly rounded
    assert (g.s[7] == 0).all()                               # sqrt(-x) is NaN, clamped to +0


def test_pseudo_scalar_f16_fails_closed():
    with pytest.raises(IllegalInstruction, match="f16"):
        run12("v_s_exp_f16 s2, s0")


def test_mode_reads_without_the_emulation_bits_and_rejects_writing_them():
    mode = gfx12.initial_mode(0xC2 << 12)
    g = run12("s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 16)\ns_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0x3\n"
              "s_getreg_b32 s1, hwreg(HW_REG_MODE, 0, 4)", mode=mode)
    assert (g.s[0] == 0xC2).all() and (g.s[1] == 3).all()
    with pytest.raises(IllegalInstruction, match="MODE bits"):
        run12("s_setreg_b32 hwreg(HW_REG_MODE, 8, 2), s1")
    with pytest.raises(IllegalInstruction, match="register 3"):
        run12("s_getreg_b32 s0, hwreg(3, 0, 32)")


def test_gfx12_wmma_forms_without_a_model_fail_closed_rather_than_running_gfx11_semantics():
    with pytest.raises(IllegalInstruction, match="WMMA"):
        run12("v_swmmac_f32_16x16x32_f16 v[0:7], v[8:11], v[12:19], v20", n=1)


def test_buffer_atomics_return_the_old_value_only_with_th_atomic_return():
    arena = Arena()
    va = arena.alloc(4 * 64, np.arange(64, dtype=np.uint32) * 10)
    rsrc = {4: va & 0xFFFFFFFF, 5: va >> 32, 6: 4 * 64, 7: 3 << 28}   # raw buffer (OOB_SELECT 3)
    lane = np.arange(32, dtype=np.uint32)
    g = run12("buffer_atomic_add_u32 v1, v0, s[4:7], null offen th:TH_ATOMIC_RETURN\n"
              "buffer_atomic_add_u32 v2, v0, s[4:7], null offen offset:128", n=1, mem=arena.mem,
              sgprs=rsrc, vgprs={0: 4 * lane, 1: 1, 2: 1000})
    assert g.vgpr(1)[0].tolist() == (lane * 10).tolist()           # returned the pre-op values
    assert g.vgpr(2)[0].tolist() == [1000] * 32                    # no return: VDATA untouched
    mem = arena.array(va, np.uint32, 64)
    assert mem[:32].tolist() == (lane * 10 + 1).tolist() and mem[32:].tolist() == ((lane + 32) * 10 + 1000).tolist()


def test_permlane16_var_takes_each_lanes_select_from_a_vgpr():
    """Hardware-recorded on RDNA4 (tinygrad test/amd/hw/test_rdna4_permlane_var.py): lane l selects lane
    (l ^ 15) of its row / lane (l & 15) of the other row; plus FI / BOUND_CTRL on an inactive source lane."""
    lane = np.arange(32, dtype=np.uint32)
    g = run12("v_permlane16_var_b32 v2, v0, v1\nv_permlanex16_var_b32 v3, v0, v4", n=1,
              vgprs={0: lane, 1: lane ^ 15, 4: lane})
    assert [int(g.vgpr(2)[0, i]) for i in (0, 5, 15, 16, 21, 31)] == [15, 10, 0, 31, 26, 16]
    assert [int(g.vgpr(3)[0, i]) for i in (0, 5, 15, 16, 21, 31)] == [16, 21, 31, 0, 5, 15]
    # lane 3 off: lane 12 (which reads lane 3) keeps v5 without FI/BOUND_CTRL, reads 0 with BOUND_CTRL,
    # reads lane 3's data with FI
    code = ("s_mov_b32 exec_lo, 0xfffffff7\nv_permlane16_var_b32 v5, v0, v1\n"
            "v_permlane16_var_b32 v6, v0, v1 op_sel:[0,1]\nv_permlane16_var_b32 v7, v0, v1 op_sel:[1,0]")
    g = run12(code, n=1, vgprs={0: 100 + lane, 1: lane ^ 15, 5: 7, 6: 7, 7: 7})
    assert (int(g.vgpr(5)[0, 12]), int(g.vgpr(6)[0, 12]), int(g.vgpr(7)[0, 12])) == (7, 0, 103)
    assert int(g.vgpr(5)[0, 3]) == 7 and int(g.vgpr(5)[0, 4]) == 111            # inactive lane / normal lane
