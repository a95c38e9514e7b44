"""Scalar ALU: results and SCC, per wave, with the hard cases (carries, overflow, 64-bit, sign handling)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.emu.amd.helpers import M32, M64, run, sgpr, sgpr64


# (instruction, s1, s2, expected s0, expected scc or None for "unchanged")
SOP2_CASES = [
    ("s_add_u32", 0xFFFFFFFF, 2, 1, True),
    ("s_add_u32", 5, 7, 12, False),
    ("s_sub_u32", 3, 5, (3 - 5) & M32, True),
    ("s_add_i32", 0x7FFFFFFF, 1, 0x80000000, True),
    ("s_add_i32", 0xFFFFFFFF, 1, 0, False),
    ("s_sub_i32", 0x80000000, 1, 0x7FFFFFFF, True),
    ("s_min_i32", 0xFFFFFFFE, 3, 0xFFFFFFFE, True),
    ("s_min_u32", 0xFFFFFFFE, 3, 3, False),
    ("s_max_i32", 0xFFFFFFFE, 3, 3, False),
    ("s_max_u32", 7, 7, 7, False),
    ("s_and_b32", 0xF0, 0x0F, 0, False),
    ("s_or_b32", 0xF0, 0x0F, 0xFF, True),
    ("s_xor_b32", 0xFF, 0xFF, 0, False),
    ("s_and_not1_b32", 0xFF, 0x0F, 0xF0, True),
    ("s_or_not1_b32", 0, 0xFFFFFFFF, 0, False),
    ("s_nand_b32", 0xFFFFFFFF, 0xFFFFFFFF, 0, False),
    ("s_nor_b32", 0, 0, 0xFFFFFFFF, True),
    ("s_xnor_b32", 0xF0F0F0F0, 0x0F0F0F0F, 0, False),
    ("s_lshl_b32", 0x80000001, 33, 2, True),          # shift count is S1[4:0]
    ("s_lshr_b32", 0x80000000, 31, 1, True),
    ("s_ashr_i32", 0x80000000, 31, 0xFFFFFFFF, True),
    ("s_bfm_b32", 4, 8, 0xF00, None),
    ("s_mul_i32", 0x10000, 0x10000, 0, None),
    ("s_mul_hi_u32", 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFE, None),
    ("s_mul_hi_i32", 0xFFFFFFFF, 0xFFFFFFFF, 0, None),
    ("s_bfe_u32", 0xABCD1234, (8 << 16) | 12, 0xD1, True),
    ("s_bfe_i32", 0x00000F00, (4 << 16) | 8, 0xFFFFFFFF, True),
    ("s_bfe_u32", 0xFFFFFFFF, 0, 0, False),            # width 0
    ("s_absdiff_i32", 0x80000000, 1, 0x7FFFFFFF, True),
    ("s_lshl1_add_u32", 0x80000000, 1, 1, True),       # carry out of the shifted add
    ("s_lshl4_add_u32", 1, 2, 18, False),
    ("s_pack_ll_b32_b16", 0x1111AAAA, 0x2222BBBB, 0xBBBBAAAA, None),
    ("s_pack_lh_b32_b16", 0x1111AAAA, 0x2222BBBB, 0x2222AAAA, None),
    ("s_pack_hh_b32_b16", 0x1111AAAA, 0x2222BBBB, 0x22221111, None),
]


@pytest.mark.parametrize("op,a,b,expect,scc", SOP2_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(SOP2_CASES)])
def test_sop2_result_and_scc(op, a, b, expect, scc):
    g = run(f"{op} s0, s1, s2", sgprs={1: a, 2: b}, scc=[True, False])
    assert [sgpr(g, 0, w) for w in range(2)] == [expect, expect]
    if scc is None:
        assert g.scc.tolist() == [True, False]       # left alone
    else:
        assert g.scc.tolist() == [scc, scc]


def test_addc_subb_chain_64bit_add_through_scc():
    a, b = 0x00000001_FFFFFFFF, 0x00000002_00000001
    g = run("s_add_u32 s4, s0, s2\ns_addc_u32 s5, s1, s3\ns_sub_u32 s6, s0, s2\ns_subb_u32 s7, s1, s3",
            sgprs={0: a & M32, 1: a >> 32, 2: b & M32, 3: b >> 32})
    assert sgpr64(g, 4) == (a + b) & M64
    assert sgpr64(g, 6) == (a - b) & M64
    assert g.scc.tolist() == [True, True]               # the 64-bit subtraction borrowed


def test_64bit_logic_shifts_and_bit_fields():
    g = run("""s_lshl_b64 s[4:5], s[0:1], 36
s_lshr_b64 s[6:7], s[0:1], 4
s_ashr_i64 s[8:9], s[2:3], 63
s_bfe_u64 s[10:11], s[0:1], 0x200018
s_bfe_i64 s[12:13], s[2:3], 0x4003c
s_and_not1_b64 s[14:15], -1, s[0:1]
s_bfm_b64 s[16:17], 40, 8
s_cselect_b64 s[18:19], s[0:1], s[2:3]""", sgprs={0: 0x89ABCDEF, 1: 0x01234567, 2: 0, 3: 0x80000000}, scc=True)
    x = 0x01234567_89ABCDEF
    assert sgpr64(g, 4) == (x << 36) & M64
    assert sgpr64(g, 6) == x >> 4
    assert sgpr64(g, 8) == M64
    assert sgpr64(g, 10) == (x >> 24) & ((1 << 32) - 1)
    assert sgpr64(g, 12) == ((1 << 64) - 8) & M64        # 4-bit field 0b1000 sign-extended
    assert sgpr64(g, 14) == ~x & M64
    assert sgpr64(g, 16) == ((1 << 40) - 1) << 8
    assert sgpr64(g, 18) == x                            # SCC from s_and_not1_b64 (s_bfm leaves it)


def test_sop1_bit_counts_and_scans():
    g = run("""s_bcnt1_i32_b32 s4, s0
s_bcnt0_i32_b64 s5, s[0:1]
s_ctz_i32_b32 s6, s0
s_ctz_i32_b32 s7, 0
s_clz_i32_u32 s8, s0
s_cls_i32 s9, s2
s_cls_i32 s10, -1
s_ctz_i32_b64 s11, s[12:13]
s_clz_i32_u64 s14, s[12:13]
s_brev_b32 s15, s0
s_brev_b64 s[16:17], s[0:1]
s_sext_i32_i8 s18, 0x80
s_sext_i32_i16 s19, 0x7fff
s_not_b32 s20, s0
s_abs_i32 s21, 0x80000000
s_wqm_b32 s22, 0x10010
s_quadmask_b32 s23, 0xf0
s_bitset1_b32 s24, 35
s_bitset0_b64 s[26:27], 63""",
            sgprs={0: 0x00F00000, 1: 0, 2: 0x0000FFFF, 12: 0, 13: 0x00000100, 24: 0, 26: M32, 27: M32})
    assert [sgpr(g, i) for i in (4, 5, 6, 7, 8, 9, 10, 11, 14)] == \
        [4, 60, 20, M32, 8, 16, M32, 40, 23]
    assert sgpr(g, 15) == int(f"{0x00F00000:032b}"[::-1], 2)
    assert sgpr64(g, 16) == int(f"{0x00F00000:064b}"[::-1], 2)
    assert [sgpr(g, i) for i in (18, 19, 20, 21, 22, 23, 24)] == \
        [0xFFFFFF80, 0x7FFF, ~0x00F00000 & M32, 0x80000000, 0xF00F0, 0b10, 1 << 3]
    assert sgpr64(g, 26) == (1 << 63) - 1


def test_compares_signed_unsigned_and_64bit():
    cases = [("s_cmp_lt_i32 s0, s1", True), ("s_cmp_lt_u32 s0, s1", False), ("s_cmp_eq_u64 s[0:1], s[2:3]", False),
             ("s_cmp_lg_u64 s[0:1], s[2:3]", True), ("s_bitcmp1_b32 s0, 31", True), ("s_bitcmp0_b64 s[2:3], 33", True),
             ("s_cmpk_lt_i32 s0, 0x0", True), ("s_cmpk_gt_u32 s0, 0xffff", True), ("s_cmpk_eq_i32 s1, 0xffff", False)]
    for text, expect in cases:
        g = run(text, sgprs={0: 0xFFFFFFFF, 1: 1, 2: 0xFFFFFFFF, 3: 0})
        assert g.scc.tolist() == [expect, expect], text


def test_per_wave_values_stay_per_wave():
    g = run("s_add_u32 s0, s1, s2", sgprs={1: [1, 0xFFFFFFFF], 2: [2, 1]})
    assert [sgpr(g, 0, 0), sgpr(g, 0, 1)] == [3, 0]
    assert g.scc.tolist() == [False, True]


def test_saveexec_family_updates_exec_and_returns_old():
    g = run("s_and_saveexec_b32 s0, s1", sgprs={1: 0x0000FFFF})
    assert sgpr(g, 0) == M32 and sgpr(g, 126) == 0xFFFF and g.exec_count == 2 * 16
    assert g.scc.tolist() == [True, True]
    g = run("s_and_not1_saveexec_b32 s0, s1", sgprs={1: 0xFFFFFFFF})
    assert sgpr(g, 126) == 0 and g.exec_count == 0 and g.scc.tolist() == [False, False]
    g = run("s_or_not0_saveexec_b32 s0, s1\ns_and_not0_wrexec_b32 s2, s3", sgprs={1: 0xFFFF0000, 3: 0xFF},
            exec_mask=np.zeros((2, 32), bool))
    # or_not0: EXEC = ~S0 | EXEC = 0x0000FFFF; and_not0_wrexec: EXEC = ~S0 & EXEC = 0xFF00, also written to s2
    assert sgpr(g, 0) == 0 and sgpr(g, 126) == 0xFF00 and sgpr(g, 2) == 0xFF00


def test_wave64_saveexec_uses_register_pairs():
    g = run("s_and_saveexec_b64 s[0:1], s[2:3]", wave64=True, sgprs={2: 0, 3: 0x80000000})
    assert sgpr64(g, 0) == M64
    assert g.exec[:, 63].all() and g.exec_count == 2


def test_writing_exec_directly_updates_the_lane_mask():
    g = run("s_mov_b32 exec_lo, 5", n=1)
    assert g.exec[0, :3].tolist() == [True, False, True] and g.exec_count == 2


def test_movrels_and_movreld_index_by_m0():
    g = run("s_mov_b32 m0, 2\ns_movrels_b32 s0, s10\ns_movreld_b32 s20, s11", sgprs={12: 77, 11: 5})
    assert sgpr(g, 0) == 77 and sgpr(g, 22) == 5


def test_getpc_setpc_and_swappc_jump_absolute():
    g = run("""s_getpc_b64 s[0:1]
s_add_u32 s0, s0, 16
s_addc_u32 s1, s1, 0
s_setpc_b64 s[0:1]
s_mov_b32 s4, 1
s_mov_b32 s5, 2""")
    # s_getpc returns the address of the next instruction (code at 0x1000): 0x1004 + 16 lands on s_mov s5
    assert sgpr(g, 4) == 0 and sgpr(g, 5) == 2


def test_round_and_denorm_mode_instructions_set_mode_fields():
    g = run("s_round_mode 0x5\ns_denorm_mode 0xa", mode=0x300)
    assert g.mode == 0x3A5


def test_bitreplicate_doubles_each_bit():
    g = run("s_bitreplicate_b64_b32 s[2:3], s0", n=1, sgprs={0: 0x80000005})
    assert sgpr64(g, 2) == 0xC000000000000033


def test_64bit_literals_zero_extend_for_bit_ops_and_sign_extend_for_signed_ops():
    g = run("s_mov_b64 s[0:1], 0xfffff830\ns_ashr_i64 s[2:3], 0xfffff830, 4\ns_cmp_eq_u64 s[0:1], 0xfffff830", n=1)
    assert sgpr64(g, 0) == 0xFFFFF830
    assert sgpr64(g, 2) == (-2000 >> 4) & M64
    assert g.scc.tolist() == [True]


def _dispatch(code: bytes, code_address=0x1000, mem=None):
    from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
    from gputwin.emu.memory import AddressSpace
    return run_dispatch(mem or AddressSpace(), Dispatch(code_address, code=code, block=(32, 1, 1)))


def test_swappc_with_a_constant_source_jumps_to_that_address():
    from gputwin.emu.amd.isa import assemble
    from gputwin.emu.memory import AddressSpace
    mem = AddressSpace()
    out = mem.map(0x10000, 8)
    # code at address 0: s_swappc_b64 s[2:3], 16 jumps over the s_trap to offset 16 and stores the return address
    code = assemble("s_swappc_b64 s[2:3], 16\ns_trap 1\ns_nop 0\ns_nop 0\n"
                    "v_mov_b32 v0, s2\nv_mov_b32 v1, s3\nv_mov_b32 v2, 0x10000\nv_mov_b32 v3, 0\n"
                    "global_store_b64 v[2:3], v[0:1], off\ns_endpgm", "gfx1100")
    _dispatch(code, code_address=0, mem=mem)
    assert out.view(np.uint64).tolist() == [4]


def test_swappc_with_a_constant_source_outside_the_code_faults_naming_the_address():
    from gputwin.emu.amd.isa import assemble
    from gputwin.errors import MemoryFault
    code = bytes.fromhex("bf49debe") + assemble("s_endpgm", "gfx1100")   # s_swappc_b64 s[94:95], 63
    with pytest.raises(MemoryFault, match="instruction fetch from unmapped address") as e:
        _dispatch(code)
    assert e.value.address == 63 and e.value.pc == 0x1000 and e.value.wave == 0
