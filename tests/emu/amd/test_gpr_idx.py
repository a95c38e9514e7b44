"""gfx942 VGPR indexing mode (gputwin/emu/amd/gpr_idx.py) on the emulator, snippets assembled by llvm-mc-19.

The reference is a numpy model of the documented rule (CDNA3 ISA guide; LLVM's "imask" docs): while
s_set_gpr_idx_on is in force, VALU operands whose M0[15:12] bit is set (src0, src1, src2, dst) name
VGPR (field + M0[7:0]). Four waves of one workgroup run together as one group; their index is taken from
their wave number, so the per-wave path (different index per wave) is exercised as well as the uniform one."""
from __future__ import annotations

import numpy as np
import pytest

from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.standalone import Arena
from gputwin.errors import IllegalInstruction
from tests.emu.amd.test_gfx942_ops import asm942
from tests.oracles import oracle

pytestmark = oracle("llvm-mc-19", "llvm-objcopy-19")
WAVES, N = 4, 256
ROWS_IN, FIRST_IN = 16, 10          # rows 0..15 land in v10..v25


def run(body: str, rows_in: np.ndarray, out_regs: range) -> np.ndarray:
    """v1 = tid * 4, v10..v25 = input rows, s4 = wave number (tid >> 6 of lane 0), then `body`; returns
    the VGPRs `out_regs` as (len, 256)."""
    pre = ["v_lshlrev_b32_e32 v1, 2, v0", "v_lshrrev_b32_e32 v2, 6, v0", "v_readfirstlane_b32 s4, v2"]
    for blk in range(ROWS_IN // 4):   # rows 4k..4k+3 from v1 + 4096 k (GLOBAL offsets stop at 4095)
        pre += [f"v_add_u32_e32 v3, {blk * 4096:#x}, v1"]
        pre += [f"global_load_dword v{FIRST_IN + 4 * blk + r}, v3, s[0:1] offset:{r * 1024}" for r in range(4)]
    post = [f"v_add_u32_e32 v3, {i * 1024:#x}, v1\nglobal_store_dword v3, v{reg}, s[2:3]"
            for i, reg in enumerate(out_regs)]
    code = asm942("\n".join(pre + ["s_waitcnt vmcnt(0)", body, "s_set_gpr_idx_off"] + post + ["s_endpgm"]))
    arena = Arena()
    src = arena.alloc(rows_in.nbytes, np.ascontiguousarray(rows_in, np.uint32))
    dst = arena.alloc(1024 * len(out_regs))
    d = Dispatch(code_address=0, code=code, grid=(1, 1, 1), block=(N, 1, 1), wave64=True,
                 user_sgprs=[src & 0xFFFFFFFF, src >> 32, dst & 0xFFFFFFFF, dst >> 32])
    run_dispatch(arena.mem, d, arch="gfx942")
    return arena.array(dst, np.uint32, N * len(out_regs)).reshape(len(out_regs), N)


def model(rows_in: np.ndarray) -> np.ndarray:
    """The reference register file (64 VGPRs x 256 lanes) after the prologue; unwritten VGPRs read 0."""
    v = np.zeros((64, N), np.uint64)
    v[FIRST_IN:FIRST_IN + ROWS_IN] = rows_in
    return v


def lanes(w: int) -> slice:
    return slice(64 * w, 64 * (w + 1))


def inputs(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1 << 32, (ROWS_IN, N), dtype=np.uint64)


def test_src_and_dst_indexing_with_a_different_index_per_wave():
    rows = inputs(1)
    got = run("""s_mul_i32 s5, s4, 3
s_set_gpr_idx_on s5, gpr_idx(SRC0,DST)
v_mov_b32_e32 v30, v10
s_set_gpr_idx_on s5, gpr_idx(SRC0,SRC1,DST)
v_add_u32_e32 v40, v11, v12
s_set_gpr_idx_on s5, gpr_idx(SRC1)
v_sub_u32_e32 v50, v13, v14""", rows, range(30, 61))
    v = model(rows)
    for w in range(WAVES):
        o, ln = 3 * w, lanes(w)
        v[30 + o, ln] = v[10 + o, ln]
        v[40 + o, ln] = (v[11 + o, ln] + v[12 + o, ln]) & 0xFFFFFFFF
        v[50, ln] = (v[13, ln] - v[14 + o, ln]) & 0xFFFFFFFF
    np.testing.assert_array_equal(got, v[30:61].astype(np.uint32))


def test_uniform_index_64bit_pairs_and_vop3_src2():
    rows = inputs(3)
    got = run("""s_mov_b32 s5, 2
s_set_gpr_idx_on s5, gpr_idx(SRC1,DST)
v_lshlrev_b64 v[34:35], 3, v[14:15]
s_set_gpr_idx_on s5, gpr_idx(SRC2,DST)
v_mad_u32_u24 v30, v10, v11, v12""", rows, range(30, 40))
    v = model(rows)
    pair = v[16] | (v[17] << np.uint64(32))
    res = (pair << np.uint64(3)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    v[36], v[37] = res & np.uint64(0xFFFFFFFF), res >> np.uint64(32)
    v[32] = ((v[10] & 0xFFFFFF) * (v[11] & 0xFFFFFF) + v[14]) & 0xFFFFFFFF
    np.testing.assert_array_equal(got, v[30:40].astype(np.uint32))


def test_idx_and_mode_change_the_index_and_mask_while_on():
    rows = inputs(4)
    got = run("""s_mov_b32 s5, 1
s_set_gpr_idx_on s5, gpr_idx(SRC0)
s_set_gpr_idx_idx s4
s_set_gpr_idx_mode gpr_idx(DST)
v_mov_b32_e32 v30, v10
s_set_gpr_idx_off
v_mov_b32_e32 v40, v11""", rows, range(30, 41))
    v = model(rows)
    for w in range(WAVES):
        v[30 + w, lanes(w)] = v[10, lanes(w)]
    v[40] = v[11]
    np.testing.assert_array_equal(got, v[30:41].astype(np.uint32))


def test_m0_fields_and_exec_masked_lanes_and_lane_mask_results():
    """M0[7:0] and M0[15:12] are set, M0's other bits kept; inactive lanes keep the indexed destination's
    old value; a v_cmp with an indexed source writes each wave's own lane mask."""
    rows = inputs(5)
    got = run("""s_mov_b32 m0, 0xabcd0f00
s_add_u32 s5, s4, 1
s_set_gpr_idx_on s5, gpr_idx(SRC0,DST)
s_mov_b32 s6, m0
v_cmp_gt_u32_e64 s[8:9], v10, v11
v_cmp_lt_u32_e32 vcc, v12, v13
s_and_saveexec_b64 s[10:11], vcc
v_mov_b32_e32 v30, v14
s_mov_b64 exec, s[10:11]
s_set_gpr_idx_off
v_mov_b32_e32 v20, s6
v_mov_b32_e32 v41, s8
v_mov_b32_e32 v42, s9""", rows, range(20, 43))
    v = model(rows)
    for w in range(WAVES):
        o, ln = w + 1, lanes(w)
        v[20, ln] = (0xABCD0F00 & ~0xF0FF) | o | (0x9 << 12)
        gt = v[10 + o, ln] > v[11, ln]
        bits = int(sum(int(b) << i for i, b in enumerate(gt)))
        v[41, ln], v[42, ln] = bits & 0xFFFFFFFF, bits >> 32
        lt = v[12 + o, ln] < v[13, ln]
        v[30 + o, ln] = np.where(lt, v[14 + o, ln], v[30 + o, ln])
    np.testing.assert_array_equal(got, v[20:43].astype(np.uint32))


def f32(x) -> np.ndarray:
    return np.asarray(x, np.uint64).astype(np.uint32).view(np.float32)


def bits(x) -> np.ndarray:
    return np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)


def test_documented_special_cases_per_wave():
    """The guide's rules: SGPR / constant operands and SGPR destinations are not indexed; a mac form's
    addend is its destination (DST bit; its SRC2 bit does nothing); v_fmamk's VGPR S1 follows the SRC2
    bit (SRC1 does nothing); v_writelane's destination follows DST."""
    rows = inputs(7)
    small = np.random.default_rng(8).integers(-8, 9, (8, N)).astype(np.float32)
    rows[8:] = bits(small)                        # v18..v25: small integers as f32 (exact products)
    got = run("""v_mov_b32_e32 v41, v24
v_mov_b32_e32 v42, v25
v_mov_b32_e32 v43, v24
v_mov_b32_e32 v44, v25
s_add_u32 s5, s4, 1
s_set_gpr_idx_on s5, gpr_idx(SRC0,SRC1,SRC2,DST)
v_mov_b32_e32 v30, s4
v_readfirstlane_b32 s6, v10
v_cmp_gt_u32_e64 s[8:9], v11, v12
v_add_u32_e32 v36, 7, v13
s_set_gpr_idx_mode gpr_idx(SRC2,DST)
v_fmac_f32_e32 v40, v18, v19
s_set_gpr_idx_mode gpr_idx(SRC2)
v_fmac_f32_e32 v45, v20, v21
v_fmamk_f32 v46, v22, 0x40000000, v23
s_set_gpr_idx_mode gpr_idx(SRC1)
v_fmamk_f32 v47, v22, 0x40000000, v23
s_set_gpr_idx_mode gpr_idx(DST)
v_writelane_b32 v50, s4, 5
s_set_gpr_idx_off
v_mov_b32_e32 v55, s6
v_mov_b32_e32 v56, s8
v_mov_b32_e32 v57, s9""", rows, range(30, 58))
    v = model(rows)
    v[41], v[42], v[43], v[44] = v[24], v[25], v[24], v[25]
    for w in range(WAVES):
        o, ln = w + 1, lanes(w)
        v[30 + o, ln] = w
        v[55, ln] = v[10 + o, 64 * w]
        gt = v[11 + o, ln] > v[12 + o, ln]
        mask = sum(int(b) << i for i, b in enumerate(gt))
        v[56, ln], v[57, ln] = mask & 0xFFFFFFFF, mask >> 32
        v[36 + o, ln] = (7 + v[13 + o, ln]) & 0xFFFFFFFF
        v[40 + o, ln] = bits(f32(v[18, ln]) * f32(v[19, ln]) + f32(v[40 + o, ln]))
        v[45, ln] = bits(f32(v[20, ln]) * f32(v[21, ln]) + f32(v[45, ln]))
        v[46, ln] = bits(f32(v[22, ln]) * np.float32(2) + f32(v[23 + o, ln]))
        v[47, ln] = bits(f32(v[22, ln]) * np.float32(2) + f32(v[23, ln]))
        v[50 + o, 64 * w + 5] = w
    np.testing.assert_array_equal(got, v[30:58].astype(np.uint32))


@pytest.mark.parametrize("body,match", [
    ("s_movk_i32 s5, 0xf0\ns_set_gpr_idx_on s5, gpr_idx(DST)\nv_mov_b32_e32 v30, v10", "past v255"),
    ("s_set_gpr_idx_on s4, gpr_idx(SRC0)\nv_accvgpr_write_b32 a3, v10", "VGPR indexing of this form"),
    ("s_set_gpr_idx_on s4, gpr_idx(SRC0)\nv_mov_b32_dpp v30, v10 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
     "DPP/SDWA"),
    ("s_set_gpr_idx_on s4, gpr_idx(SRC0)\nglobal_load_dword v30, v1, s[0:1]",
     "vector memory access while VGPR indexing is on"),
])
def test_unmodelled_combinations_fail_closed(body, match):
    with pytest.raises(IllegalInstruction, match=match):
        run(body, inputs(6), range(30, 31))
