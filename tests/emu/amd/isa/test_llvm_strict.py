"""Strict conformance details against llvm-mc-19: words its disassembler prints with an "Invalid register"
note (so does gputwin's), and lines only its assembler refuses (so does gputwin's; the disassembler still
prints such words). Each case is run through llvm-mc-19 too, so a case that stops being LLVM's behaviour
fails here."""
from __future__ import annotations

import re

import pytest

from gputwin.emu.amd.isa.asm import AsmError, assembler
from gputwin.emu.amd.isa.asm_syntax import ASM_ONLY_RULES
from gputwin.emu.amd.isa.decode import decode
from gputwin.emu.amd.isa.disasm import inst_text
from gputwin.emu.amd.isa.encode import encode
from gputwin.errors import IllegalInstruction

from .oracle import require_llvm

NOTE_WORDS = [   # (arch, bytes): LLVM prints them with its note
    ("gfx1100", "81050a64"),           # v_add_f16_e32 v5, v129/*...VS_32_Lo128...*/, v2
    ("gfx1100", "81050b64"),           # ... and v130/*...VGPR_32_Lo128...*/ as VSRC1
    ("gfx1100", "81b90a7e"),           # v_ceil_f16_e32 v5, v129
    ("gfx1100", "0105 0b7c"),          # v_cmp_lg_f16_e32 vcc_lo, v1, v130
    ("gfx1200", "024045cc00030a18"),   # v_wmma_i32_16x16x16_iu4 ..., s[0:7] from a misaligned field (s2)
    ("gfx1200", "034055cc00032c1c"),   # v_swmmac_i32_16x16x32_iu4 ..., s[0:1] from field s1
    ("gfx1100", "ea1ca36a10937311"),   # v_mul_f16_dpp v81, v16, v142/*...VGPR_32_Lo128...*/ dpp8:...
    ("gfx1100", "eafe0a72aee58a38"),   # v_max_f16_dpp v5, v174/*...VGPR_32_Lo128...*/ (a DPP src0)
]
REFUSED_WORDS = [("gfx1100", "01050b65", "vdst: register"),   # a 16-bit e32 destination above v127
                 ("gfx1100", "01b90a7f", "vdst: register"),
                 ("gfx1100", "b10e0d6efb37b393b3a6a20c", "src1: register")]   # v_fmamk_f16's VSRC1 v135


@pytest.mark.parametrize("arch, hexword", NOTE_WORDS)
def test_words_llvm_prints_with_a_note(arch, hexword):
    _, mc = require_llvm()
    word = bytes.fromhex(hexword.replace(" ", ""))
    out, _ = mc([",".join(f"{b:#04x}" for b in word)], arch, disassemble=True)
    want = out[0].split(";")[0].strip()
    assert "/*Invalid register" in want
    inst = decode(word, arch)
    assert inst_text(inst, arch) == want and encode(inst, arch) == word


def test_execution_reads_bit_7_of_a_16_bit_source_as_the_high_half():
    inst = decode(bytes.fromhex("81050a64"), strict=False)   # v_add_f16_e32 v5, v1.h, v2 on hardware
    assert inst.operands["src0"].index == 1 and inst.op_sel[0]


@pytest.mark.parametrize("arch, hexword, match", REFUSED_WORDS)
def test_words_llvm_refuses(arch, hexword, match):
    """LLVM refuses these (the table's slots without "n"): a destination, v_fmamk_f16's VSRC1."""
    _, mc = require_llvm()
    word = bytes.fromhex(hexword)
    out, err = mc([",".join(f"{b:#04x}" for b in word)], arch, disassemble=True)
    assert "invalid instruction encoding" in err.split("\n")[0]
    with pytest.raises(IllegalInstruction, match=match):
        decode(word, arch)


ASM_ONLY = [   # (arch, line): llvm-mc-19 refuses each; gputwin refuses with an ASM_ONLY_RULES message
    ("gfx1100", "s_add_i32 s0, execz, s2"),
    ("gfx1100", "v_mov_b32 v0, lds_direct"),
    ("gfx1200", "s_add_co_i32 s0, s1, src_pops_exiting_wave_id"),
    ("gfx1100", "v_dual_add_f32 v1, v1, v5 :: v_dual_mov_b32 v2, v1"),          # SRC0 banks
    ("gfx1100", "v_dual_add_f32 v1, v4, v0 :: v_dual_add_f32 v2, v5, v4"),      # SRC1 banks
    ("gfx1100", "v_dual_fmamk_f32 v6, v1, 0xaf123456, v3 :: v_dual_fmac_f32 v5, v2, v3"),   # SRC2 banks
    ("gfx1100", "v_dot2_f16_f16_e64_dpp v0, v1, v2, v3 op_sel:[1,1,0,0] quad_perm:[0,1,2,3]"),
    ("gfx1100", "buffer_store_format_x v[1:2], off, s[12:15], s4 offset:4095 tfe"),
    ("gfx1100", "v_lshlrev_b64 v[5:6], s2, s[0:1]"),                         # 64-bit shifts: one
    ("gfx1100", "v_fma_f32 v0, s1, s2, s3"),                                     # three scalar values
]
ACCEPTED = [   # the other side of each rule: llvm-mc-19 and gputwin assemble these to the same bytes
    ("gfx1200", "v_dual_mov_b32 v2, v5 :: v_dual_mov_b32 v3, v1"),              # gfx12 mov::mov: DST only
    ("gfx1100", "v_dot2_f16_f16_e64_dpp v0, v1, v2, v3 op_sel:[0,0,1,0] quad_perm:[0,1,2,3]"),
    ("gfx1100", "v_add_f32_e64 v0, s1, s2"),
    ("gfx1100", "v_fma_f32 v0, s1, s1, s1"),                                     # one SGPR read thrice
    ("gfx1200", "v_lshlrev_b64 v[5:6], s2, v[0:1]"),
    ("gfx1200", "image_store v0, v0, s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_1D th:TH_STORE_BYPASS scope:SCOPE_SYS"),
]


def _llvm(arch: str, line: str) -> tuple[list[str], str]:
    _, mc = require_llvm()
    return mc([line], arch, disassemble=False)


@pytest.mark.parametrize("arch, line", ASM_ONLY)
def test_assembler_only_checks_refuse_like_llvm(arch, line):
    out, err = _llvm(arch, line)
    assert not out and "error" in err
    with pytest.raises(AsmError) as e:
        assembler(arch).assemble(line)
    assert e.value.message.startswith(ASM_ONLY_RULES)


@pytest.mark.parametrize("arch, line", ACCEPTED)
def test_the_other_side_of_each_rule_assembles_like_llvm(arch, line):
    out, err = _llvm(arch, line)
    assert out, err
    want = bytes(int(x, 16) for x in re.search(r"encoding: \[(.*)\]", out[0])[1].split(","))
    assert assembler(arch).assemble(line) == want


def test_refused_gfx12_cache_policies_like_llvm():
    for line in ("image_store v0, v0, s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_1D th:TH_STORE_RT_WB scope:SCOPE_SYS",
                 "global_load_b32 v1, v0, s[0:1] th:TH_LOAD_LU scope:SCOPE_SYS",
                 "global_atomic_add_u32 v1, v0, v2, s[0:1] th:TH_ATOMIC_NT_RETURN scope:SCOPE_SYS",
                 "s_load_b32 s5, s[4:5], s0 offset:0x0 th:TH_LOAD_NT_RT"):
        out, err = _llvm("gfx1200", line)
        assert not out and "error" in err, line
        with pytest.raises(AsmError, match="cache policy"):
            assembler("gfx1200").assemble(line)


@pytest.mark.parametrize("key", [1, 2, 3])
def test_wave64_swmmac_index_key_has_two_bits(key):
    """gfx12 wave64 v_swmmac_*: index_key 0-3 (two OPSEL bits; wave32 has one): the table's w64_mods and
    w64_reject, both ways against llvm-mc-19 -mattr=+wavefrontsize64."""
    _, mc = require_llvm()
    line = f"v_swmmac_f32_16x16x32_f16 v[6:9], v[0:1], v[2:5], v10 index_key:{key}"
    out, err = mc([line], "gfx1200", disassemble=False, wave64=True)
    want = bytes(int(x, 16) for x in re.search(r"encoding: \[(.*)\]", out[0])[1].split(","))
    assert assembler("gfx1200", wave64=True).assemble(line) == want
    assert inst_text(decode(want, "gfx1200", wave64=True), "gfx1200", wave64=True) == line
    if key > 1:   # wave32 has no such index
        with pytest.raises(IllegalInstruction):
            decode(want, "gfx1200")
