"""CDNA3 (gfx942, GFX9 family) encoding formats: where each field sits in the instruction words.

Facts from AMD's "CDNA3 Instruction Set Architecture" guide (chapter "Microcode Formats", which keeps
the GCN3/Vega layouts) and LLVM's GFX9/GFX940 encodings; the differential tests against llvm-mc-19
(-mcpu=gfx942) check every layout. Differences from RDNA3 that matter here:
- VOP3 is 0b110100 at [31:26] (VOP3P 0b110100111 at [31:23] sits inside it and is tested first);
- SMEM is 0b110000 with IMM/SOE bits, DS/FLAT/MUBUF put their opcode one bit lower than gfx11;
- FLAT's SEG is [15:14], SADDR "off" is 0x7F, bit 55 is the AGPR bit (ACC) of data/vdst, bit 13 is
  SCRATCH's SVE (gfx940 reuses GFX9's LDS bit);
- VOP3P-MAI (MFMA, v_accvgpr_*) reuses VOP3P's word with CBSZ/ABID/ACC_CD/ACC/BLGP fields;
- MTBUF's FORMAT is DFMT [22:19] | NFMT [25:23] << 4, one 7-bit field as on gfx11;
- VOP1/VOP2/VOPC take an SDWA (src0 = 249) or GFX9 DPP (src0 = 250) dword; there is no VOPD or DPP8.
"""
from __future__ import annotations

from .rdna3_formats import SRC_DPP16, Format  # noqa: F401  (SRC_DPP16: the same code on GFX9)

SRC_SDWA = 249

_SRCS = {"src0": (32, 9), "src1": (41, 9), "src2": (50, 9)}

FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("SOP2", 4, (30, 2, 0b10), {"op": (23, 7), "sdst": (16, 7), "ssrc1": (8, 8), "ssrc0": (0, 8)}),
    Format("SOPK", 4, (28, 4, 0b1011), {"op": (23, 5), "sdst": (16, 7), "simm16": (0, 16)}),
    Format("SOP1", 4, (23, 9, 0b101111101), {"sdst": (16, 7), "op": (8, 8), "ssrc0": (0, 8)}),
    Format("SOPC", 4, (23, 9, 0b101111110), {"op": (16, 7), "ssrc1": (8, 8), "ssrc0": (0, 8)}),
    Format("SOPP", 4, (23, 9, 0b101111111), {"op": (16, 7), "simm16": (0, 16)}),
    # SMEM: IMM=1 -> OFFSET is a 21-bit signed byte offset; IMM=0 -> OFFSET[6:0] names an SGPR (soffset);
    # SOE=1 adds the SGPR in SOFFSET [63:57] to the immediate.
    Format("SMEM", 8, (26, 6, 0b110000), {"op": (18, 8), "imm": (17, 1), "glc": (16, 1), "nv": (15, 1),
                                          "soe": (14, 1), "sdata": (6, 7), "sbase": (0, 6),
                                          "offset": (32, 21), "soffset": (57, 7)}),
    Format("VOP1", 4, (25, 7, 0b0111111), {"vdst": (17, 8), "op": (9, 8), "src0": (0, 9)}),
    Format("VOPC", 4, (25, 7, 0b0111110), {"op": (17, 8), "vsrc1": (9, 8), "src0": (0, 9)}),
    Format("VOP2", 4, (31, 1, 0), {"op": (25, 6), "vdst": (17, 8), "vsrc1": (9, 8), "src0": (0, 9)}),
    Format("VOP3", 8, (26, 6, 0b110100), {"op": (16, 10), "clamp": (15, 1), "op_sel": (11, 4),
                                          "abs": (8, 3), "vdst": (0, 8), **_SRCS,
                                          "omod": (59, 2), "neg": (61, 3)}),
    Format("VOP3SD", 8, (26, 6, 0b110100), {"op": (16, 10), "clamp": (15, 1), "sdst": (8, 7),
                                            "vdst": (0, 8), **_SRCS, "omod": (59, 2), "neg": (61, 3)}),
    Format("VOP3P", 8, (23, 9, 0b110100111), {"op": (16, 7), "clamp": (15, 1), "op_sel_hi2": (14, 1),
                                              "op_sel": (11, 3), "neg_hi": (8, 3), "vdst": (0, 8),
                                              **_SRCS, "op_sel_hi": (59, 2), "neg": (61, 3)}),
    # MFMA and v_accvgpr_read/write: ACC_CD makes vdst and src2 AGPRs, ACC[i] makes src i an AGPR.
    Format("VOP3PMAI", 8, (23, 9, 0b110100111), {"op": (16, 7), "acc_cd": (15, 1), "abid": (11, 4),
                                                 "cbsz": (8, 3), "vdst": (0, 8), **_SRCS, "acc": (59, 2),
                                                 "blgp": (61, 3)}),
    Format("DS", 8, (26, 6, 0b110110), {"acc": (25, 1), "op": (17, 8), "gds": (16, 1), "offset1": (8, 8),
                                        "offset0": (0, 8), "addr": (32, 8), "data0": (40, 8),
                                        "data1": (48, 8), "vdst": (56, 8)}),
    # gfx940 names GLC/SLC/bit 25 SC0/NT/SC1.
    Format("FLAT", 8, (26, 6, 0b110111), {"sc1": (25, 1), "op": (18, 7), "slc": (17, 1), "glc": (16, 1),
                                          "seg": (14, 2), "sve": (13, 1), "offset": (0, 13), "addr": (32, 8),
                                          "data": (40, 8), "saddr": (48, 7), "acc": (55, 1),
                                          "vdst": (56, 8)}),
    Format("MUBUF", 8, (26, 6, 0b111000), {"op": (18, 7), "slc": (17, 1), "lds": (16, 1), "sc1": (15, 1),
                                           "glc": (14, 1), "idxen": (13, 1), "offen": (12, 1),
                                           "offset": (0, 12), "vaddr": (32, 8), "vdata": (40, 8),
                                           "srsrc": (48, 5), "acc": (55, 1), "soffset": (56, 8)}),
    Format("MTBUF", 8, (26, 6, 0b111010), {"format": (19, 7), "op": (15, 4), "glc": (14, 1),
                                           "idxen": (13, 1), "offen": (12, 1), "offset": (0, 12),
                                           "vaddr": (32, 8), "vdata": (40, 8), "srsrc": (48, 5),
                                           "sc1": (53, 1), "slc": (54, 1), "acc": (55, 1),
                                           "soffset": (56, 8)}),
)}

FLAT_SEGMENTS = {0: "FLAT", 1: "SCRATCH", 2: "GLOBAL"}
SADDR_OFF = 0x7F
# Scalar operands 102..105 (no SGPRs on GFX9): decoded as `special` operands with these names.
GFX9_SPECIAL = {102: "flat_scratch_lo", 103: "flat_scratch_hi", 104: "xnack_mask_lo", 105: "xnack_mask_hi"}
GFX9_PAIRS = {102: "flat_scratch", 104: "xnack_mask"}
ORDER = ("SOP1", "SOPC", "SOPP", "SOPK", "SOP2", "VOP1", "VOPC", "VOP2", "VOP3P", "VOP3", "DS", "FLAT", "SMEM",
         "MUBUF", "MTBUF")


def _build_top9() -> list[str | None]:
    table: list[str | None] = [None] * 512
    for top in range(512):
        for name in ORDER:
            lo, width, value = FORMATS[name].ident
            if ((top << 23) >> lo) & ((1 << width) - 1) == value:
                table[top] = name
                break
    return table


TOP9 = _build_top9()


def is_mai(opcode: int) -> bool:
    """VOP3P opcodes 0x40..0x7F are the VOP3P-MAI half (MFMA, SMFMAC, v_accvgpr_read/write)."""
    return opcode >= 0x40
