"""Decoder field semantics on encodings taken from llvm-mc-19 -show-encoding (the asm text in each
comment is what LLVM assembled), and its failure modes."""
from __future__ import annotations

import pytest

from gputwin.emu.amd.isa import Operand, decode, decode_all
from gputwin.errors import IllegalInstruction


def b(*xs: int) -> bytes:
    return bytes(xs)


def test_vop2_registers_and_sizes():
    inst = decode(b(0x02, 0x07, 0x02, 0x06))                         # v_add_f32_e32 v1, v2, v3
    assert (inst.op, inst.encoding, inst.opcode, inst.size) == ("v_add_f32", "VOP2", 3, 4)
    assert inst.operands == {"vdst": Operand("vgpr", 1), "src0": Operand("vgpr", 2), "src1": Operand("vgpr", 3)}


def test_inline_float_constant_carries_its_f32_bits():
    inst = decode(b(0xF2, 0x06, 0x02, 0x06))                         # v_add_f32_e32 v1, 1.0, v3
    assert inst.operands["src0"] == Operand("const", 242, 1, 0x3F800000)


def test_literal_extends_the_instruction():
    inst = decode(b(0xFF, 0x06, 0x02, 0x06, 0x78, 0x56, 0x34, 0x12))  # v_add_f32_e32 v1, 0x12345678, v3
    assert inst.size == 8 and inst.operands["src0"] == Operand("literal", 255, 1, 0x12345678)


def test_vop3_abs_neg_clamp_omod():
    inst = decode(b(0x01, 0x81, 0x03, 0xD5, 0x02, 0x07, 0x02, 0x28))  # v_add_f32_e64 v1, -|v2|, v3 clamp mul:2
    assert (inst.encoding, inst.opcode) == ("VOP3", 0x103)
    assert inst.abs == (True, False, False) and inst.neg == (True, False, False)
    assert inst.clamp and inst.omod == 1


def test_vop3sd_carry_out_is_sdst():
    inst = decode(b(0x01, 0x05, 0x00, 0xD7, 0x02, 0x07, 0x02, 0x00))  # v_add_co_u32 v1, s5, v2, v3
    assert inst.encoding == "VOP3SD" and inst.operands["sdst"] == Operand("sgpr", 5)
    assert inst.operands["vdst"] == Operand("vgpr", 1)


def test_vopc_e64_destination_is_sdst_and_e32_writes_vcc():
    e64 = decode(b(0x05, 0x00, 0x12, 0xD4, 0x01, 0x05, 0x02, 0x00))  # v_cmp_eq_f32_e64 s5, v1, v2
    assert e64.operands["sdst"] == Operand("sgpr", 5) and "vdst" not in e64.operands
    e32 = decode(b(0x01, 0x05, 0x24, 0x7C))                          # v_cmp_eq_f32_e32 vcc_lo, v1, v2
    assert e32.operands["sdst"] == Operand("sgpr", 106)


def test_vop3p_op_sel_and_op_sel_hi():
    inst = decode(b(0x01, 0x48, 0x0F, 0xCC, 0x02, 0x07, 0x02, 0x10))  # v_pk_add_f16 ... op_sel:[1,0] op_sel_hi:[0,1]
    assert inst.op == "v_pk_add_f16" and inst.op_sel[:2] == (True, False)
    assert inst.op_sel_hi[:2] == (False, True)


def test_wmma_register_ranges():
    inst = decode(b(0x00, 0x40, 0x40, 0xCC, 0x08, 0x21, 0x02, 0x1C))  # v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], ...
    assert inst.operands["vdst"] == Operand("vgpr", 0, 8) and inst.operands["src1"] == Operand("vgpr", 16, 8)


def test_dpp16_and_dpp8_fields():
    d16 = decode(b(0xFA, 0x02, 0x02, 0x7E, 0x02, 0xB1, 0x00, 0xFF))  # v_mov_b32_dpp v1, v2 quad_perm:[1,0,3,2]
    assert d16.size == 8 and d16.operands["src0"] == Operand("vgpr", 2)
    assert (d16.dpp.kind, d16.dpp.ctrl, d16.dpp.row_mask, d16.dpp.bank_mask) == ("dpp16", 0xB1, 0xF, 0xF)
    d8 = decode(b(0xE9, 0x02, 0x02, 0x7E, 0x02, 0xC1, 0xC4, 0xFA))   # dpp8:[1,0,3,2,4,5,6,7]
    assert d8.dpp.kind == "dpp8" and d8.dpp.sel == (1, 0, 3, 2, 4, 5, 6, 7) and not d8.dpp.fi


def test_vopd_halves_use_base_mnemonics():
    inst = decode(b(0x02, 0x07, 0x10, 0xC9, 0x05, 0x01, 0x04, 0x01))  # v_dual_add_f32 v1, v2, v3 :: v_dual_mov_b32 v4, v5
    x, y = inst.vopd
    assert (x.op, y.op) == ("v_add_f32", "v_mov_b32")
    assert x.operands == {"vdst": Operand("vgpr", 1), "src0": Operand("vgpr", 2), "src1": Operand("vgpr", 3)}
    assert y.operands == {"vdst": Operand("vgpr", 4), "src0": Operand("vgpr", 5)}


def test_sopp_branch_offset_is_signed():
    inst = decode(b(0xFB, 0xFF, 0xA0, 0xBF))                         # s_branch -5 (encoded 0xfffb)
    assert inst.op == "s_branch" and inst.simm16 == -5


def test_waitcnt_keeps_raw_simm16():
    assert decode(b(0x07, 0x00, 0x89, 0xBF)).simm16 == 7             # s_waitcnt vmcnt(0) lgkmcnt(0)


def test_smem_offset_is_signed_21_bit_and_sbase_is_a_pair():
    inst = decode(b(0x41, 0x00, 0x00, 0xF4, 0xF0, 0xFF, 0x1F, 0xF8))  # s_load_b32 s1, s[2:3], -0x10
    assert inst.offset == -16 and inst.operands["sbase"] == Operand("sgpr", 2, 2)
    assert inst.operands["sdata"] == Operand("sgpr", 1) and inst.operands["soffset"] == Operand("sgpr", 124)


def test_global_offset_is_signed_13_bit_with_saddr():
    inst = decode(b(0xF0, 0x1F, 0x52, 0xDC, 0x02, 0x00, 0x04, 0x01))  # global_load_b32 v1, v2, s[4:5] offset:-16
    assert inst.encoding == "GLOBAL" and inst.offset == -16
    assert inst.operands == {"vdst": Operand("vgpr", 1), "vaddr": Operand("vgpr", 2), "saddr": Operand("sgpr", 4, 2)}


def test_global_without_saddr_has_64_bit_vaddr():
    inst = decode(b(0x00, 0x00, 0x6A, 0xDC, 0x01, 0x03, 0x7C, 0x00))  # global_store_b32 v[1:2], v3, off
    assert inst.operands == {"vaddr": Operand("vgpr", 1, 2), "vdata": Operand("vgpr", 3)}


def test_ds_two_address_offsets():
    inst = decode(b(0x04, 0x08, 0x38, 0xD8, 0x01, 0x02, 0x03, 0x00))  # ds_store_2addr_b32 v1, v2, v3 offset0:4 offset1:8
    assert (inst.offset0, inst.offset1) == (4, 8)
    assert set(inst.operands) == {"addr", "data0", "data1"}


def test_mubuf_offen_vaddr_and_constant_soffset():
    inst = decode(b(0x10, 0x00, 0x50, 0xE0, 0x02, 0x01, 0x41, 0x80))  # buffer_load_b32 v1, v2, s[4:7], 0 offen offset:16
    assert inst.operands["vdst"] == Operand("vgpr", 1) and inst.operands["vaddr"] == Operand("vgpr", 2)
    assert inst.operands["srsrc"] == Operand("sgpr", 4, 4) and inst.operands["soffset"].kind == "const"
    assert inst.offset == 16 and inst.extra["offen"] == 1


def test_decode_all_walks_variable_sizes():
    code = b(0xFF, 0x06, 0x02, 0x06, 0x78, 0x56, 0x34, 0x12) + b(0x02, 0x07, 0x02, 0x06) + b(0x00, 0x00, 0xB0, 0xBF)
    assert [(off, i.op) for off, i in decode_all(code)] == [(0, "v_add_f32"), (8, "v_add_f32"), (12, "s_endpgm")]


def test_unknown_format_raises_with_offset():
    with pytest.raises(IllegalInstruction, match="no encoding format matches word 0xffffffff") as e:
        decode(b(0, 0, 0, 0) + b(0xFF, 0xFF, 0xFF, 0xFF), offset=4)
    assert e.value.pc == 4 and "0x4" in str(e.value)


def test_unknown_opcode_raises():
    with pytest.raises(IllegalInstruction, match="VOP3 instruction with opcode 256"):
        decode(b(0x01, 0x00, 0x00, 0xD5, 0x02, 0x07, 0x02, 0x00))


def test_truncated_instruction_raises():
    with pytest.raises(IllegalInstruction, match="truncated"):
        decode(b(0xFF, 0x06, 0x02, 0x06))                            # literal missing
    with pytest.raises(IllegalInstruction, match="truncated"):
        decode(b(0x01, 0x00))
