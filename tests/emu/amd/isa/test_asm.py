"""The assembler on hand-written input: LLVM's preferred encodings, labels, and errors that name the
line and column (expected bytes are llvm-mc-19 -show-encoding's for the same text)."""
from __future__ import annotations

import pytest
import re

from gputwin.emu.amd.isa import assemble, disassemble
from gputwin.emu.amd.isa.asm import AsmError


def test_prefers_e32_and_falls_back_to_e64():
    assert assemble("v_add_f32 v1, v2, v3") == bytes([0x02, 0x07, 0x02, 0x06])
    assert assemble("v_add_f32 v1, s2, s3") == bytes([0x01, 0x00, 0x03, 0xD5, 0x02, 0x06, 0x00, 0x00])


def test_inline_constant_and_literal():
    assert assemble("v_add_f32 v1, 1.0, v3") == bytes([0xF2, 0x06, 0x02, 0x06])
    assert assemble("v_add_f32 v1, 0x12345678, v3") == bytes([0xFF, 0x06, 0x02, 0x06, 0x78, 0x56, 0x34, 0x12])


def test_modifiers_and_dpp():
    assert assemble("v_add_f32_e64 v1, -|v2|, v3 clamp mul:2") == bytes(
        [0x01, 0x81, 0x03, 0xD5, 0x02, 0x07, 0x02, 0x28])
    assert assemble("v_mov_b32_dpp v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf") == bytes(
        [0xFA, 0x02, 0x02, 0x7E, 0x02, 0xB1, 0x00, 0xFF])
    assert assemble("v_mov_b32_dpp v1, v2 dpp8:[1,0,3,2,4,5,6,7]") == bytes(
        [0xE9, 0x02, 0x02, 0x7E, 0x02, 0xC1, 0xC4, 0xFA])


def test_memory_and_scalar_forms():
    assert assemble("global_load_b32 v1, v2, s[4:5] offset:-16") == bytes(
        [0xF0, 0x1F, 0x52, 0xDC, 0x02, 0x00, 0x04, 0x01])
    assert assemble("s_load_b64 s[0:1], s[2:3], 0x10") == bytes([0x01, 0x00, 0x04, 0xF4, 0x10, 0x00, 0x00, 0xF8])
    assert assemble("s_waitcnt vmcnt(0) lgkmcnt(0)") == bytes([0x07, 0x00, 0x89, 0xBF])
    assert assemble("v_dual_add_f32 v1, v2, v3 :: v_dual_mov_b32 v4, v5") == bytes(
        [0x02, 0x07, 0x10, 0xC9, 0x05, 0x01, 0x04, 0x01])


def test_labels_resolve_to_signed_dword_offsets():
    code = assemble("top:\n  s_nop 0\n  s_cbranch_scc0 top\n  s_branch done\n  s_nop 0\ndone:\n  s_endpgm")
    assert disassemble(code) == ["s_nop 0", "s_cbranch_scc0 65534", "s_branch 1", "s_nop 0", "s_endpgm"]


def test_comments_and_blank_lines_are_ignored():
    assert assemble("; a comment\n\n  s_endpgm  // done\n") == bytes([0x00, 0x00, 0xB0, 0xBF])


@pytest.mark.parametrize("text, line, column, words", [
    ("s_nop 0\nv_bogus_op v1, v2", 2, 1, "unknown instruction"),
    ("v_add_f32 v1, v2, v[3:4]", 1, 19, "VGPR"),
    ("s_mov_b64 s[1:2], s[4:5]", 1, 11, "aligned"),
    ("v_add_f32 v1, v2", 1, 17, "operands"),
    ("v_fma_f32 v1, 0x1234, 0x5678, v2", 1, 23, "one literal"),
    ("v_add_f32_e32 v1, v2, v3 clamp", 1, 26, "clamp"),
    ("s_branch nowhere", 1, 1, "unknown label"),
    ("v_add_f32 v1, v2, v300", 1, 19, "out of range"),
    ("s_waitcnt vmcnt(99)", 1, 11, "out of range"),
])
def test_errors_name_line_and_column(text, line, column, words):
    with pytest.raises(AsmError, match=re.escape(words)) as e:
        assemble(text)
    assert (e.value.line, e.value.column) == (line, column), str(e.value)
    assert words in str(e.value)
