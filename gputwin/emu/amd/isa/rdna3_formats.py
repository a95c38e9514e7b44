"""RDNA3 (gfx11) encoding formats: where each field sits in the instruction words.

Facts from AMD's "RDNA3 Instruction Set Architecture" guide (chapter "Microcode Formats") and LLVM's
AMDGPU encodings; the differential tests against llvm-mc-19 check every layout below. Bit positions
count from bit 0 of the first dword; fields at 32 and above are in the second dword.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    name: str
    size: int                              # bytes before any literal / DPP dword
    ident: tuple[int, int, int]            # (lo bit, width, value) that identifies the format
    fields: dict[str, tuple[int, int]]     # name -> (lo bit, width)

    def get(self, word: int, name: str) -> int:
        lo, width = self.fields[name]
        return (word >> lo) & ((1 << width) - 1)

    def fields_mask(self, *names: str) -> int:
        """The bits the named fields cover (every field when none is named)."""
        bits = 0
        for name in names or self.fields:
            lo, width = self.fields[name]
            bits |= ((1 << width) - 1) << lo
        return bits

    def ident_mask(self) -> int:
        lo, width, _ = self.ident
        return ((1 << width) - 1) << lo

    def pack(self, **values: int) -> int:
        lo, width, value = self.ident
        word = value << lo
        for name, v in values.items():
            flo, fwidth = self.fields[name]
            if v < 0 or v >> fwidth:
                raise ValueError(f"{self.name}.{name}={v} does not fit {fwidth} bits")
            word |= v << flo
        return word


_VOP3_SRCS = {"src0": (32, 9), "src1": (41, 9), "src2": (50, 9)}
_BUF = {"offset": (0, 12), "slc": (12, 1), "dlc": (13, 1), "glc": (14, 1), "vaddr": (32, 8),
        "vdata": (40, 8), "srsrc": (48, 5), "tfe": (53, 1), "offen": (54, 1), "idxen": (55, 1),
        "soffset": (56, 8)}

FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("SOP2", 4, (30, 2, 0b10), {"op": (23, 7), "sdst": (16, 7), "ssrc1": (8, 8), "ssrc0": (0, 8)}),
    Format("SOPK", 4, (28, 4, 0b1011), {"op": (23, 5), "sdst": (16, 7), "simm16": (0, 16)}),
    Format("SOP1", 4, (23, 9, 0b101111101), {"sdst": (16, 7), "op": (8, 8), "ssrc0": (0, 8)}),
    Format("SOPC", 4, (23, 9, 0b101111110), {"op": (16, 7), "ssrc1": (8, 8), "ssrc0": (0, 8)}),
    Format("SOPP", 4, (23, 9, 0b101111111), {"op": (16, 7), "simm16": (0, 16)}),
    Format("SMEM", 8, (26, 6, 0b111101), {"op": (18, 8), "glc": (14, 1), "dlc": (13, 1), "sdata": (6, 7),
                                          "sbase": (0, 6), "offset": (32, 21), "soffset": (57, 7)}),
    Format("VOP1", 4, (25, 7, 0b0111111), {"vdst": (17, 8), "op": (9, 8), "src0": (0, 9)}),
    Format("VOPC", 4, (25, 7, 0b0111110), {"op": (17, 8), "vsrc1": (9, 8), "src0": (0, 9)}),
    Format("VOP2", 4, (31, 1, 0), {"op": (25, 6), "vdst": (17, 8), "vsrc1": (9, 8), "src0": (0, 9)}),
    Format("VOP3", 8, (26, 6, 0b110101), {"op": (16, 10), "clamp": (15, 1), "op_sel": (11, 4),
                                          "abs": (8, 3), "vdst": (0, 8), **_VOP3_SRCS,
                                          "omod": (59, 2), "neg": (61, 3)}),
    Format("VOP3SD", 8, (26, 6, 0b110101), {"op": (16, 10), "clamp": (15, 1), "sdst": (8, 7),
                                            "vdst": (0, 8), **_VOP3_SRCS, "omod": (59, 2), "neg": (61, 3)}),
    Format("VOP3P", 8, (24, 8, 0b11001100), {"op": (16, 7), "clamp": (15, 1), "op_sel_hi2": (14, 1),
                                             "op_sel": (11, 3), "neg_hi": (8, 3), "vdst": (0, 8),
                                             **_VOP3_SRCS, "op_sel_hi": (59, 2), "neg": (61, 3)}),
    Format("VOPD", 8, (26, 6, 0b110010), {"opx": (22, 4), "opy": (17, 5), "vsrcx1": (9, 8), "srcx0": (0, 9),
                                          "srcy0": (32, 9), "vsrcy1": (41, 8), "vdsty": (49, 7),
                                          "vdstx": (56, 8)}),
    Format("DS", 8, (26, 6, 0b110110), {"op": (18, 8), "gds": (17, 1), "offset1": (8, 8), "offset0": (0, 8),
                                        "addr": (32, 8), "data0": (40, 8), "data1": (48, 8), "vdst": (56, 8)}),
    Format("FLAT", 8, (26, 6, 0b110111), {"op": (18, 7), "seg": (16, 2), "slc": (15, 1), "glc": (14, 1),
                                          "dlc": (13, 1), "offset": (0, 13), "addr": (32, 8), "data": (40, 8),
                                          "saddr": (48, 7), "sve": (55, 1), "vdst": (56, 8)}),
    Format("MUBUF", 8, (26, 6, 0b111000), {"op": (18, 8), **_BUF}),
    Format("MTBUF", 8, (26, 6, 0b111010), {"format": (19, 7), "op": (15, 4), **_BUF}),
)}

# FLAT's SEG field picks the address space and the mnemonic prefix.
FLAT_SEGMENTS = {0: "FLAT", 1: "SCRATCH", 2: "GLOBAL"}


def _build_top9() -> list[str | None]:
    """Format name by the top 9 bits of the first dword (the fields that tell formats apart)."""
    table: list[str | None] = [None] * 512
    for top in range(512):
        word = top << 23
        for name in ("SOP1", "SOPC", "SOPP", "SOPK", "SOP2", "VOP1", "VOPC", "VOP2", "VOP3P", "VOP3",
                     "VOPD", "DS", "FLAT", "SMEM", "MUBUF", "MTBUF"):
            lo, width, value = FORMATS[name].ident
            if (word >> lo) & ((1 << width) - 1) == value:
                table[top] = name
                break
    return table


TOP9 = _build_top9()

# Source-operand encodings that are not registers or inline constants.
SRC_LITERAL = 255
SRC_DPP16 = 250
SRC_DPP8 = 233
SRC_DPP8_FI = 234
