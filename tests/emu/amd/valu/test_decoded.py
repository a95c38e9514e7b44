"""Real encodings: llvm-mc-19 assembles, the team's decoder decodes, execute() runs; checks that the
operand roles the decoder produces are the ones the VALU reads (K, SDST, carry-in, DPP, VOPD halves)."""
import numpy as np
import pytest

from gputwin.emu.amd.isa import decode
from gputwin.emu.amd.valu import execute

from .helpers import VCC, asm_many, f16, f32, fill, group, u64

RNG = np.random.default_rng(5)
A = (RNG.standard_normal((2, 32)) * 4).astype(np.float32)
B = (RNG.standard_normal((2, 32)) * 4).astype(np.float32)
IA = RNG.integers(0, 1 << 32, (2, 32), dtype=np.uint64).astype(np.uint32)
IB = RNG.integers(0, 1 << 32, (2, 32), dtype=np.uint64).astype(np.uint32)
SEL = RNG.integers(0, 2, (2, 32)).astype(bool)
LANE = np.arange(32)


@pytest.fixture(scope="module")
def code():
    return asm_many(sorted(CASES))


def _run(code, text):
    g = group(2)
    fill(g, 1, A)
    fill(g, 2, B)
    fill(g, 3, IA)
    fill(g, 4, IB)
    g.set_lane_mask(VCC, SEL)
    g.set_sgpr(10, np.array([3, 7], np.uint32))
    execute(g, decode(code[text]))
    return g


def _h(x, hi):
    """f16 value held in the low (hi=0) or high half of each f32 word of x."""
    w = x.view(np.uint32)
    return ((w >> 16) if hi else (w & 0xFFFF)).astype(np.uint16).view(np.float16)


def _pack16(lo, hi):
    return (f16(hi).astype(np.uint32) << 16) | f16(lo).astype(np.uint32)


CASES = {
    "v_add_f32 v0, v1, v2": lambda g: (g.vgpr(0), f32(A + B)),
    "v_sub_f32_e64 v0, -v1, |v2| mul:2": lambda g: (g.vgpr(0), f32(-A - np.abs(B))),   # IEEE mode: no omod
    "v_fmamk_f32 v0, v1, 0x40400000, v2": lambda g: (g.vgpr(0), f32((A.astype(np.float64) * 3 + B)
                                                                      .astype(np.float32))),
    "v_fmaak_f32 v0, v1, v2, 0x40400000": lambda g: (g.vgpr(0), f32((A.astype(np.float64) * B + 3)
                                                                      .astype(np.float32))),
    "v_add_co_u32 v0, s20, v3, v4": lambda g: (g.lane_mask(20), IA.astype(np.int64) + IB > 0xFFFFFFFF),
    "v_add_co_ci_u32 v0, vcc_lo, v3, v4, vcc_lo": lambda g: (g.vgpr(0), (IA.astype(np.int64) + IB + SEL)
                                                              & 0xFFFFFFFF),
    "v_cndmask_b32 v0, v3, v4, vcc_lo": lambda g: (g.vgpr(0), np.where(SEL, IB, IA)),
    "v_cndmask_b32_e64 v0, v3, 0, s10": lambda g: (g.vgpr(0), np.where((np.array([[3], [7]]) >> LANE) & 1 == 1,
                                                                       0, IA)),
    "v_cmp_lt_f32 vcc_lo, v1, v2": lambda g: (g.lane_mask(VCC), A < B),
    "v_cmp_gt_u32_e64 s12, v3, v4": lambda g: (g.lane_mask(12), IA > IB),
    "v_cmpx_le_f32 v1, v2": lambda g: (g.exec, A <= B),
    "v_readlane_b32 s5, v3, 4": lambda g: (g.sgpr(5), IA[:, 4]),
    "v_readfirstlane_b32 s6, v3": lambda g: (g.sgpr(6), IA[:, 0]),
    "v_mov_b32_dpp v0, v3 row_shl:1 row_mask:0xf bank_mask:0xf bound_ctrl:1":
        lambda g: (g.vgpr(0), np.where(LANE % 16 < 15, IA[:, np.minimum(LANE + 1, 31)], 0)),
    "v_mov_b32_dpp v0, v3 dpp8:[7,6,5,4,3,2,1,0]": lambda g: (g.vgpr(0), IA[:, (LANE & ~7) + 7 - (LANE & 7)]),
    # Y reads v1 before X overwrites it
    "v_dual_mul_f32 v1, v2, v2 :: v_dual_add_f32 v0, v1, v3":
        lambda g: (np.stack([g.vgpr(1), g.vgpr(0)]), np.stack([f32(B * B), f32(A + IA.view(np.float32))])),
    "v_mad_u64_u32 v[6:7], null, v3, v4, 5": lambda g: (u64(g, 6), IA.astype(np.uint64) * IB.astype(np.uint64)
                                                         + np.uint64(5)),
    "v_lshlrev_b64 v[6:7], 3, v[3:4]": lambda g: (u64(g, 6), (IA.astype(np.uint64)
                                                              | (IB.astype(np.uint64) << np.uint64(32))) << np.uint64(3)),
    "v_bfe_u32 v0, v3, 4, 8": lambda g: (g.vgpr(0), (IA >> 4) & 0xFF),
    "v_cvt_f16_f32 v0, v1": lambda g: (g.vgpr(0) & 0xFFFF, f16(A.astype(np.float16))),
    # lo = A.hi + B.lo, hi = A.lo + B.hi
    "v_pk_add_f16 v0, v1, v2 op_sel:[1,0] op_sel_hi:[0,1]":
        lambda g: (g.vgpr(0), _pack16(_h(A, 1) + _h(B, 0), _h(A, 0) + _h(B, 1))),
    "v_pk_add_f16 v0, v1, 2.0": lambda g: (g.vgpr(0), _pack16(_h(A, 0) + np.float16(2), _h(A, 1))),
    "v_pk_add_u16 v0, v3, 3 op_sel_hi:[1,0]": lambda g: (g.vgpr(0), (((IA >> 16) + 3) << 16 & 0xFFFF0000)
                                                          | ((IA + 3) & 0xFFFF)),
    "v_fma_f64 v[6:7], v[1:2], 2.0, 0": lambda g: (u64(g, 6), (u64(g, 1).view(np.float64) * 2).view(np.uint64)),
}


@pytest.mark.parametrize("text", sorted(CASES))
def test_decoded_instruction_executes(code, text):
    with np.errstate(all="ignore"):
        got, want = CASES[text](_run(code, text))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
