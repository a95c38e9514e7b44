"""RDNA4 (gfx12) encoding formats: where each field sits in the instruction words.

Facts from AMD's "RDNA4 Instruction Set Architecture" guide and LLVM's gfx12 encodings; the
differential tests against llvm-mc-19 check every layout. SALU, VALU (VOP1/2/C/3/3SD/3P, VOPD, DPP) and
DS keep their gfx11 layouts; SMEM changes (24-bit offset, TH/SCOPE cache policy), FLAT/GLOBAL/SCRATCH
become the 96-bit VFLAT/VGLOBAL/VSCRATCH, and MUBUF/MTBUF become the 96-bit VBUFFER (one format for
buffer_* and tbuffer_*; keyed "MUBUF" in the tables).
"""
from __future__ import annotations

from .rdna3_formats import FORMATS as _GFX11, SRC_DPP8, SRC_DPP8_FI, SRC_DPP16, SRC_LITERAL, Format  # noqa: F401

_CPOL = {"scope": (50, 2), "th": (52, 3)}

FORMATS: dict[str, Format] = {name: f for name, f in _GFX11.items() if name not in ("SMEM", "FLAT", "MUBUF",
                                                                                    "MTBUF")}
FORMATS.update({f.name: f for f in (
    Format("SMEM", 8, (26, 6, 0b111101), {"sbase": (0, 6), "sdata": (6, 7), "op": (13, 6), "scope": (21, 2),
                                          "th": (23, 3), "offset": (32, 24), "soffset": (57, 7)}),
    Format("FLAT", 12, (26, 6, 0b111011), {"saddr": (0, 7), "op": (14, 8), "seg": (24, 2), "vdst": (32, 8),
                                           "sve": (49, 1), **_CPOL, "data": (55, 8), "addr": (64, 8),
                                           "offset": (72, 24)}),
    Format("MUBUF", 12, (26, 6, 0b110001), {"soffset": (0, 7), "op": (14, 8), "tfe": (22, 1), "vdata": (32, 8),
                                            "rsrc": (41, 7), **_CPOL, "format": (55, 7), "offen": (62, 1),
                                            "idxen": (63, 1), "vaddr": (64, 8), "offset": (72, 24)}),
)})

# VFLAT's SEG-like field ([25:24]): 0 VFLAT, 1 VSCRATCH, 2 VGLOBAL.
FLAT_SEGMENTS = {0: "FLAT", 1: "SCRATCH", 2: "GLOBAL"}
ORDER = ("SOP1", "SOPC", "SOPP", "SOPK", "SOP2", "VOP1", "VOPC", "VOP2", "VOP3P", "VOP3", "VOPD", "DS", "FLAT",
         "SMEM", "MUBUF")


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
