"""Syntax LLVM accepts that the random corpus never writes: older mnemonics (aliases), DPP controls on the
plain mnemonic, bound_ctrl spellings, s_waitcnt forms. Expected output is whatever llvm-mc-19 prints for
the same line (through tools/llvm_mc_vectors.py, the checker run on LLVM's own MC test inputs)."""
from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

from gputwin.emu.amd.isa import assemble
from gputwin.emu.amd.isa.asm import AsmError, assembler
from gputwin.emu.amd.isa.decode import decode
from gputwin.errors import IllegalInstruction
from tests.oracles import oracle

_ROOT = pathlib.Path(__file__).resolve().parents[4]
_spec = importlib.util.spec_from_file_location("llvm_mc_vectors", _ROOT / "tools" / "llvm_mc_vectors.py")
vectors = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vectors)

needs_llvm = oracle("llvm-mc-19")

ALIASES = [
    "flat_atomic_add v[3:4], v7 offset:16",
    "flat_atomic_smax_x2 v[8:9], v[3:4], v[10:11] glc",
    "global_atomic_umin v2, v[4:5], off offset:-8 glc slc",
    "global_load_dword v1, v[2:3], off offset:12",
    "global_store_dwordx4 v[2:3], v[4:7], off",
    "scratch_load_ubyte v1, off, s4 offset:5",
    "buffer_load_dwordx2 v[5:6], off, s[8:11], s3 offset:12 glc",
    "buffer_atomic_cmpswap v[1:2], v0, s[4:7], 0 idxen glc",
    "ds_write_b32 v1, v2 offset:8",
    "ds_read2_b32 v[4:5], v1 offset0:1 offset1:9",
    "ds_write2st64_b64 v1, v[2:3], v[4:5] offset1:3",
    "ds_wrxchg_rtn_b32 v9, v1, v2",
    "s_load_dwordx4 s[8:11], s[0:1], 0x10",
    "s_buffer_load_dword s3, s[4:7], s9 offset:0x40",
    "s_inst_prefetch 0x3",
    "v_mul_legacy_f32 v1, v2, v3",
    "v_mul_legacy_f32_e64 v1, -v2, |v3| clamp",
    "v_cvt_flr_i32_f32 v4, v5",
    "v_cvt_rpi_i32_f32_e64 v4, |v5|",
]

DPP_PLAIN = [
    "v_mov_b32 v1, v2 row_shl:3",
    "v_add_f32 v1, v2, v3 quad_perm:[1,0,3,2] row_mask:0x5",
    "v_max_i32 v0, v1, v2 row_ror:7 bank_mask:0x3 fi:1",
    "v_cmp_lt_f32 vcc_lo, v1, v2 row_mirror",
    "v_add_f32_e64 v1, v2, v3 row_half_mirror",        # rejected: DPP needs the plain or _e64_dpp name
    "v_fma_f32 v1, v2, v3, v4 row_shl:1",
    "v_add_f32 v1, -v2, v3 clamp row_shl:1",
    "v_add_f32 v1, v2, v3 row_shl:1 clamp",             # rejected: clamp comes before the DPP controls
    "v_mov_b32 v1, v2 dpp8:[7,6,5,4,3,2,1,0]",
    "v_mov_b32 v1, v2 row_shl:1 bound_ctrl:0",
    "v_mov_b32 v1, v2 row_shl:1 bound_ctrl:1",
    "v_not_b32 v1, v2 row_xmask:2 bound_ctrl:0 fi:1",
]

ORDER = [   # LLVM takes optional operands in its printing order only (cache bits in any order)
    "v_add_f32_e64 v1, v2, v3 mul:2 clamp",
    "v_fma_f32 v1, v2, v3, v4 clamp div:2",
    "global_load_b32 v1, v[2:3], off glc offset:4",
    "global_load_b32 v1, v[2:3], off offset:4 dlc slc glc",
    "buffer_load_b32 v5, v0, s[8:11], s3 offset:4 offen",
    "ds_store_2addr_b32 v1, v2, v3 offset1:4 offset0:2",
    "v_pk_add_f16 v1, v2, v3 neg_lo:[1,0] op_sel:[1,0]",
    "v_pk_add_f16 v1, v2, v3 op_sel:[1,0] neg_lo:[1,0] clamp",
    "v_mov_b32 v1, v2 fi:1 row_shl:1",
    "v_add_f32 v1, v2, v3 row_shl:1 bank_mask:0x1 row_mask:0x3",
]

OTHER = [
    "s_waitcnt vmcnt(0) & lgkmcnt(0)",
    "s_waitcnt vmcnt(1), expcnt(2)",
    "s_waitcnt_depctr depctr_va_vdst(3) & depctr_sa_sdst(0)",
    "s_delay_alu instid0(VALU_DEP_2) | instskip(SKIP_1) | instid1(TRANS32_DEP_1)",
    "s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)",
    "ds_add_u32 v1, v2 offset:0",
    "s_mov_b32 s0, -4.0",
    "v_mov_b32 v0, 0x3e22f983",
    "buffer_load_b32 v5, off, s[8:11], 0.5 offset:4095",
    "buffer_store_b16 v5, v0, s[8:11], -4.0 offen",
    "s_waitcnt_vscnt null, 0x1234",
    "v_add_f32 v5, lit(0.5), v2",          # LLVM 19 encodes lit(x) as if x were written bare
    "v_add_f32_e64 v5, |lit(2)|, v2",
    "v_add_f32 v5, lit(100), v2",
]

# 16-bit VOP1/VOP2 ops have e32 DPP16 forms; an integer src1 (v_ldexp_f16) prints its NEG bit as sext().
DPP16_16BIT = [
    "v_cos_f16_dpp v1, v2 row_shl:1 row_mask:0xf bank_mask:0xf",
    "v_add_f16_dpp v1, -v2, v3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
    "v_ldexp_f16_dpp v66, -v70, sext(v76) quad_perm:[3,3,1,1] row_mask:0x1 bank_mask:0x1",
]

# GDS / GWS DS instructions (gfx11 only): `gds` is required; gfx12 has none of them and no gds modifier.
GDS = [
    "ds_gws_init v1 gds", "ds_gws_init v1", "ds_gws_sema_v gds", "ds_gws_sema_br v2 offset:8 gds",
    "ds_gws_sema_p gds", "ds_gws_sema_release_all offset:3 gds", "ds_gws_barrier v255 offset:65535 gds",
    "ds_ordered_count v5, v1 offset:4 gds", "ds_ordered_count v5, v1", "ds_add_gs_reg_rtn v[5:6], v1 gds",
    "ds_sub_gs_reg_rtn v[254:255], v255 offset:4 gds", "ds_add_u32 v1, v2 gds", "ds_load_b32 v1, v2 offset:4 gds",
]
GDS_WORDS = [   # GDS set and clear, for the disassembler
    "0x00,0x00,0x66,0xd8,0x01,0x00,0x00,0x00", "0x00,0x00,0x64,0xd8,0x01,0x00,0x00,0x00",
    "0x03,0x00,0x62,0xd8,0x00,0x00,0x00,0x00", "0xff,0xff,0xfe,0xd8,0x01,0x00,0x00,0xff",
    "0x00,0x00,0xfc,0xd8,0x01,0x00,0x00,0x05", "0x00,0x00,0xea,0xd9,0x00,0x01,0x00,0x05",
    "0x00,0x00,0xee,0xd9,0x00,0x01,0x00,0x05", "0x00,0x00,0xe8,0xd9,0x00,0x01,0x00,0x05",
    "0x00,0x00,0x02,0xd8,0x01,0x02,0x00,0x00",
]

BAD = [
    "flat_atomic_addd v[1:2], v3",        # no such alias
    "ds_write2_b32 v1, v2, v3 offset0:256",
    "v_mov_b32 v1, v2 bound_ctrl:2 row_shl:1",
    "buffer_load_b32 v5, off, s[8:11], 1.5",
    "v_add_f32 v5, lit(v1), v2",
    "v_add_f32_e64 v5, -lit(0.5), v2",
]


def _compare(lines: list[str]) -> list[str]:
    want = vectors.run_llvm(lines, False, "gfx1100", False)
    got = vectors.run_gputwin(lines, False, "gfx1100", False)
    return [f"{x}: llvm {w} gputwin {g}" for x, w, g in zip(lines, want, got) if w != g]


@needs_llvm
@pytest.mark.parametrize("group", [ALIASES, DPP_PLAIN, ORDER, OTHER, DPP16_16BIT, BAD],
                         ids=["aliases", "dpp_plain", "order", "other", "dpp16_16bit", "bad"])
def test_assembler_matches_llvm_mc_on_llvm_only_syntax(group):
    assert not _compare(group)


@needs_llvm
def test_llvm_rejects_each_bad_line_and_so_does_gputwin():
    assert vectors.run_llvm(BAD, False, "gfx1100", False) == [None] * len(BAD)
    for line in BAD:
        with pytest.raises(AsmError, match=r"^line 1, column \d+: "):
            assemble(line)


def test_every_alias_names_an_instruction_of_the_table_and_encodes_like_it():
    table = json.loads((_ROOT / "gputwin/emu/amd/isa/tables/gfx1100_aliases.json").read_text())
    assert len(table) > 100
    assert assemble("flat_atomic_add v[3:4], v7") == assemble("flat_atomic_add_u32 v[3:4], v7")
    assert assemble("ds_write2_b32 v1, v2, v3 offset1:4") == assemble("ds_store_2addr_b32 v1, v2, v3 offset1:4")
    assert assemble("v_mul_legacy_f32 v1, v2, v3") == assemble("v_mul_dx9_zero_f32 v1, v2, v3")


def test_checker_extracts_only_instruction_lines():
    text = "// RUN: llvm-mc ...\n\ns_nop 0 // comment\n// GFX11: s_nop 0 ; encoding: [0x00]\n.text\n"
    assert vectors.asm_inputs(text) == ["s_nop 0"]
    dasm = "# RUN: x\n0x00,0x00,0x80,0xbf # GFX11: s_nop 0\n[0x01, 0x02]\n# GFX11: foo\n"
    assert vectors.dasm_inputs(dasm) == ["0x00,0x00,0x80,0xbf", "[0x01, 0x02]"]


@needs_llvm
def test_vopd_is_wave32_only_in_both_directions():
    line = "v_dual_add_f32 v255, -1, v4 :: v_dual_mov_b32 v6, src_scc"
    assert vectors.run_llvm([line], False, "gfx1100", True) == [None]
    assert vectors.run_gputwin([line], False, "gfx1100", True) == [None]
    code = assemble(line)   # wave32 encodes it
    byte_line = ",".join(f"{b:#04x}" for b in code)
    assert vectors.run_gputwin([byte_line], True, "gfx1100", False) == vectors.run_llvm([byte_line], True, "gfx1100",
                                                                                      False)
    with pytest.raises(IllegalInstruction, match="wave32"):
        decode(code, "gfx1100", wave64=True)


@needs_llvm
@pytest.mark.parametrize("arch", ["gfx1100", "gfx1200"])
def test_gds_and_gws_instructions_match_llvm_mc_both_ways(arch):
    assert vectors.run_gputwin(GDS, False, arch, False) == vectors.run_llvm(GDS, False, arch, False)
    assert vectors.run_gputwin(GDS_WORDS, True, arch, False) == vectors.run_llvm(GDS_WORDS, True, arch, False)


def test_gws_ops_need_gds_both_ways():
    assert assemble("ds_gws_init v1 gds") == bytes.fromhex("000066d801000000")
    with pytest.raises(AsmError, match="ds_gws_init needs gds"):
        assemble("ds_gws_init v1")
    with pytest.raises(IllegalInstruction, match="ds_gws_init without bits 0x20000"):
        decode(bytes.fromhex("000064d801000000"), "gfx1100")
    with pytest.raises(AsmError, match="'gds' not allowed"):
        assemble("ds_add_u32 v1, v2 gds", "gfx1200")


# gfx12 global_load_tr_*: in wave64 the destination is half as many VGPRs (LLVM's +wavefrontsize64 classes).
LOAD_TR = ["global_load_tr_b64 v[1:2], v[3:4], off", "global_load_tr_b64 v1, v[3:4], off offset:-64",
           "global_load_tr_b128 v[4:7], v2, s[4:5]", "global_load_tr_b128 v[4:5], v2, s[4:5] offset:16"]


@needs_llvm
@pytest.mark.parametrize("wave64", [False, True], ids=["wave32", "wave64"])
def test_global_load_tr_register_ranges_follow_the_wave_size(wave64):
    assert vectors.run_gputwin(LOAD_TR, False, "gfx1200", wave64) == vectors.run_llvm(LOAD_TR, False, "gfx1200", wave64)
    words = [",".join(f"{b:#04x}" for b in assemble(x, "gfx1200", wave64)) for x in LOAD_TR[int(wave64)::2]]
    assert vectors.run_gputwin(words, True, "gfx1200", wave64) == vectors.run_llvm(words, True, "gfx1200", wave64)


# llvm-mc prints an SMEM offset as it was written (the bytes are alike); gfx12 always has the offset.
SMEM_FORMS = ["s_load_b32 s5, s[2:3], null", "s_load_b32 s5, s[2:3], 0x0", "s_load_b32 s5, s[2:3], s0 offset:0x0",
              "s_load_b32 s5, s[2:3], null offset:0x0", "s_load_b32 s5, s[2:3], 0x10", "s_load_b32 s5, s[2:3], s0",
              "s_buffer_load_b64 s[6:7], s[4:7], m0 offset:0x10", "s_load_b32 s5, s[2:3], null offset:0x10"]
# gfx12 cache policy: the defaults (value 0) may be written, and are not printed
CPOL_DEFAULTS = ["s_load_b32 s5, s[4:5], s0 offset:0x0 th:TH_LOAD_RT", "s_load_b32 s5, s[4:5], s0 scope:SCOPE_CU",
                 "global_load_b32 v1, v[2:3], off th:TH_LOAD_RT scope:SCOPE_CU",
                 "global_store_b32 v[2:3], v1, off th:TH_STORE_RT", "buffer_atomic_add_u32 v1, off, s[4:7], s3 th:TH_ATOMIC_RT",
                 "global_load_b32 v1, v[2:3], off th:TH_LOAD_NT scope:SCOPE_CU"]
# s_waitcnt_*cnt assemble only with null (LLVM's disassembler prints any SGPR, and so does gputwin's)
WAITCNT_NULL = ["s_waitcnt_vmcnt s1, 0x1234", "s_waitcnt_vmcnt null, 0x1234", "s_waitcnt_vscnt s0, 0x1",
                "s_waitcnt_expcnt exec_lo, 1", "s_waitcnt_lgkmcnt null, 2"]


# a memory SADDR written as null prints as null (and GLOBAL's VADDR is then one VGPR), as written
NULL_SADDR = ["scratch_load_b32 v5, off, null", "global_load_addtid_b32 v5, null offset:4095",
              "global_load_b32 v5, v1, null", "scratch_store_b32 off, v2, null offset:4", "global_load_b32 v5, v1, s[2:3]"]


@needs_llvm
@pytest.mark.parametrize("arch,lines", [("gfx1100", SMEM_FORMS), ("gfx1200", SMEM_FORMS), ("gfx1200", CPOL_DEFAULTS),
                                        ("gfx1100", WAITCNT_NULL), ("gfx1100", NULL_SADDR), ("gfx1200", NULL_SADDR)],
                         ids=["smem11", "smem12", "cpol12", "waitcnt", "saddr11", "saddr12"])
def test_written_forms_print_as_llvm_mc_prints_them(arch, lines):
    assert vectors.run_gputwin(lines, False, arch, False) == vectors.run_llvm(lines, False, arch, False)


def test_waitcnt_counter_sgpr_must_be_null_in_asm_but_any_sgpr_disassembles():
    with pytest.raises(AsmError, match="src0 must be null"):
        assemble("s_waitcnt_vmcnt s1, 0x1234")
    assert decode(bytes.fromhex("341281bc"), "gfx1100").operands["sdst"].index == 1


# Float literals round to nearest even in the operand's type (overflow and inexact underflow are errors), and
# the rounded value may be an inline constant; integer operands take the f32 pattern.
FLOAT_LITERALS = ["v_add_f32 v1, 2.741, v2", "v_add_f32 v1, 1e40, v2", "v_add_f32 v1, 1e-40, v2",
                  "v_add_f16 v1, 2.741, v2", "v_add_f16 v1, 65520.0, v2", "v_add_f16 v1, 1e-6, v2",
                  "v_add_f16 v1, 5.960464477539063e-08, v2", "v_dot2_bf16_bf16 v1, 1.00390625, v2, v3",
                  "v_dot2_bf16_bf16 v1, 1.01171875, v2, v3", "v_add_nc_u16 v1, 2.741, v2", "s_mov_b32 s0, 2.741",
                  "v_pk_add_f16 v1, 2.741, v2", "v_add_f32 v1, -0.0, v2", "v_add_f32 v1, 1.1754942106924411e-38, v2",
                  "v_dual_fmaak_f32    v122, s74, v161, 2.741       ::  v_dual_and_b32       v247, v160, v98"]
# tbuffer formats: after a comma, as a [dfmt, nfmt] pair in either order with defaults, the default written out
FORMATS = ["tbuffer_load_format_x v4, off, s[8:11], s3, format:[BUF_FMT_8_UNORM] offset:4095",
           "tbuffer_load_format_x v4, off, s[8:11], s3 format:[BUF_NUM_FORMAT_SNORM]",
           "tbuffer_load_format_x v4, off, s[8:11], s3 format:[BUF_NUM_FORMAT_FLOAT, BUF_DATA_FORMAT_32]",
           "tbuffer_load_format_x v4, off, s[8:11], s3 format:[BUF_DATA_FORMAT_8, BUF_NUM_FORMAT_FLOAT]",
           "tbuffer_load_format_x v4, off, s[8:11], s3, format:1 offset:4",
           "tbuffer_store_format_xy v[4:5], off, s[8:11], s3 format:[BUF_DATA_FORMAT_INVALID]"]
TH_NAMES = ["buffer_atomic_add_u32 v5, off, s[8:11], s3 th:TH_ATOMIC_RT_RETURN scope:SCOPE_SE",
            "global_atomic_add_u32 v[2:3], v4, off th:TH_ATOMIC_CASCADE_NT scope:SCOPE_SYS",
            "global_load_b32 v1, v[2:3], off th:TH_LOAD_BYPASS", "global_load_b32 v1, v[2:3], off th:TH_LOAD_WB",
            "global_store_b32 v[2:3], v1, off th:TH_STORE_RT_WB", "global_load_b32 v1, v[2:3], off th:TH_DEFAULT"]


@needs_llvm
@pytest.mark.parametrize("arch,lines", [("gfx1100", FLOAT_LITERALS), ("gfx1100", FORMATS), ("gfx1200", FORMATS),
                                        ("gfx1200", TH_NAMES)], ids=["floats", "formats11", "formats12", "th12"])
def test_literal_format_and_cache_policy_spellings_match_llvm_mc(arch, lines):
    assert vectors.run_gputwin(lines, False, arch, False) == vectors.run_llvm(lines, False, arch, False)


def test_float_literal_rounds_to_nearest_even_and_refuses_range_loss():
    assert assemble("v_add_f32 v1, 2.741, v2")[4:] == (0x402F6C8B).to_bytes(4, "little")   # RNE of 2.741
    assert assemble("v_add_f16 v1, 2.741, v2")[4:] == (0x417B).to_bytes(4, "little")
    with pytest.raises(AsmError, match="overflows"):
        assemble("v_add_f16 v1, 65520.0, v2")
    with pytest.raises(AsmError, match="underflows"):
        assemble("v_add_f32 v1, 1e-40, v2")


# gfx12 v_swmmac_*: OPSEL is the sparsity index (index_key:N); an SGPR or constant in a VGPR-only WMMA source
# decodes with LLVM's note in the text.
SWMMAC = ["v_swmmac_f32_16x16x32_f16 v[12:19], v[0:3], v[4:11], v20 index_key:1",
          "v_swmmac_i32_16x16x32_iu8 v[6:13], v[0:1], v[2:5], v14 index_key:0",
          "v_swmmac_f32_16x16x32_f16 v[12:19], v[0:3], v[4:11], v20 op_sel:[1,0,0]"]
WMMA_NOTES = ["0x0c,0x48,0x50,0xcc,0x00,0x09,0x52,0x1c", "0x08,0x40,0x40,0xcc,0x00,0x08,0x22,0x1c",
              "0x08,0x40,0x40,0xcc,0xf2,0x08,0x22,0x1c", "0x02,0x40,0x45,0xcc,0x00,0x02,0x0a,0x1c"]


@needs_llvm
def test_swmmac_index_key_and_wmma_operand_notes_match_llvm_mc():
    assert vectors.run_gputwin(SWMMAC, False, "gfx1200", False) == vectors.run_llvm(SWMMAC, False, "gfx1200", False)
    assert vectors.run_gputwin(WMMA_NOTES, True, "gfx1200", False) == vectors.run_llvm(WMMA_NOTES, True, "gfx1200",
                                                                                         False)


# VOP3P: op_sel/op_sel_hi/neg lists of 1 to 4 values; DPP on the plain name; any case; _e64 on suffix-less names
VOP3P_AND_NAMES = ["v_pk_add_f16 v1, v2, v3 op_sel:[1]", "v_pk_add_f16 v1, v2, v3 op_sel:[1,0,0,0]",
                   "v_pk_add_f16 v1, v2, v3 neg_lo:[1,1,1]", "v_dot8_i32_iu4 v3, v4, v5, v0 neg_lo:[1]",
                   "v_pk_fma_f16 v1, v2, v3, v4 op_sel_hi:[0]", "v_pk_add_f16 v1, v2, v3 op_sel_hi:[0,0,0]",
                   "v_fma_mix_f32 v0, v1, v2, v3 op_sel:[0,0,0] row_ror:7 bank_mask:0x1 bound_ctrl:0",
                   "v_fma_mixlo_f16 v0, abs(v1), -v2, abs(v3) dpp8:[2,2,2,2,4,4,4,4]",
                   "v_dot2_f32_f16 v0, v1, v2, v3 neg_lo:[1,1,0] neg_hi:[1,0,1] quad_perm:[3,2,1,0] bank_mask:0xe",
                   "v_nop_e64", "v_fma_f32_e64 v1, v2, v3, v4", "v_pk_add_f16_e64 v1, v2, v3", "V_ADD_F32 v1, v2, v3",
                   "v_fma_f32_e32 v1, v2, v3, v4"]


@needs_llvm
@pytest.mark.parametrize("arch", ["gfx1100", "gfx1200"])
def test_vop3p_lists_dpp_and_mnemonic_spellings_match_llvm_mc(arch):
    lines = VOP3P_AND_NAMES
    assert vectors.run_gputwin(lines, False, arch, False) == vectors.run_llvm(lines, False, arch, False)


@needs_llvm
def test_gfx942_accvgpr_aliases_match_llvm_mc():
    lines = ["v_accvgpr_read v1, a2", "v_accvgpr_write a1, v2", "v_accvgpr_write a1, 7", "v_accvgpr_read_b32 v1, a2"]
    assert vectors.run_gputwin(lines, False, "gfx942", False) == vectors.run_llvm(lines, False, "gfx942", False)


def test_alias_tables_name_table_instructions_only():
    for arch in ("gfx1100", "gfx1200", "gfx942"):
        aliases = json.loads((_ROOT / f"gputwin/emu/amd/isa/tables/{arch}_aliases.json").read_text())
        asm = assembler(arch)
        assert all(a != c and c in asm.index and a in asm.index for a, c in aliases.items()), arch
    assert assemble("s_andn2_b32 s0, s1, s2", "gfx1200") == assemble("s_and_not1_b32 s0, s1, s2", "gfx1200")
    assert assemble("v_ffbh_u32_e64_dpp v5, v1 quad_perm:[3,2,1,0]") == assemble(
        "v_clz_i32_u32_e64_dpp v5, v1 quad_perm:[3,2,1,0]")


# a comma may come before the modifiers; s_version takes an expression of names
COMMA_MODS = ["v_add_f32_e64 v1, v2, v3, clamp", "v_pk_add_f16 v1, v2, v3, op_sel:[1,0]",
              "global_load_b32 v1, v[2:3], off, offset:4", "ds_add_u32 v1, v2, offset:4",
              "buffer_load_b32 v1, off, s[4:7], s3, offset:4", "v_mov_b32 v1, v2, row_shl:1",
              "v_add_f32_e64 v1, v2, v3, clamp, mul:2", "global_load_b32 v1, v[2:3], off, offset:4, glc"]


@needs_llvm
def test_comma_before_modifiers_and_version_expressions_match_llvm_mc():
    assert vectors.run_gputwin(COMMA_MODS, False, "gfx1100", False) == vectors.run_llvm(COMMA_MODS, False, "gfx1100",
                                                                                         False)
    lines = ["s_version UC_VERSION_GFX12 | UC_VERSION_W32_BIT", "v_permlane16_var_b32 v5, v1, v50, op_sel:[1,1]"]
    assert vectors.run_gputwin(lines, False, "gfx1200", False) == vectors.run_llvm(lines, False, "gfx1200", False)


# operand limits LLVM's matcher enforces: one literal and two scalar values per VOPD pair (null reads nothing,
# v_dual_cndmask's VCC counts), no literal in DPP, VOP3P and gfx11 VOP3 DPP read src1 from a VGPR
LIMITS = ["v_dual_mul_f32 v11, 0x24681357, v2 :: v_dual_mul_f32 v10, 0xbabe, v5",
          "v_dual_mul_f32 v11, 0x24681357, v2 :: v_dual_mul_f32 v10, 0x24681357, v5",
          "v_dual_fmaak_f32 v122, s74, v161, 2.741 :: v_dual_and_b32 v247, s75, v98",
          "v_dual_fmaak_f32 v122, s74, v161, 2.741 :: v_dual_and_b32 v247, s74, v98",
          "v_dual_add_f32 v255, s1, v2 :: v_dual_cndmask_b32 v6, s2, v3",
          "v_dual_add_f32 v255, s1, v2 :: v_dual_cndmask_b32 v6, s1, v3",
          "v_dual_dot2acc_f32_f16 v255, vcc_lo, v2 :: v_dual_fmaak_f32 v6, null, v3, 0xaf123456",
          "v_add3_u32_e64_dpp v5, v1, s1, v0 dpp8:[7,6,5,4,3,2,1,0]",
          "v_add3_u32_e64_dpp v5, v1, v2, s1 dpp8:[7,6,5,4,3,2,1,0]",
          "v_add3_u32_e64_dpp v5, v1, v2, 123456 dpp8:[7,6,5,4,3,2,1,0]",
          "v_add_f32_e64_dpp v5, v1, 2.0 quad_perm:[0,1,2,3]", "v_fma_mix_f32_e64_dpp v5, v1, s3, v4 quad_perm:[3,2,1,0]"]


@needs_llvm
@pytest.mark.parametrize("arch", ["gfx1100", "gfx1200"])
def test_vopd_and_dpp_operand_limits_match_llvm_mc(arch):
    assert vectors.run_gputwin(LIMITS, False, arch, False) == vectors.run_llvm(LIMITS, False, arch, False)
