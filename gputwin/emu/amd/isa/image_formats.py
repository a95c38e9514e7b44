"""Image instruction encodings: gfx11 MIMG, gfx12 VIMAGE and VSAMPLE (where each field sits).

Facts from the RDNA3/RDNA4 ISA guides ("MIMG", "VIMAGE", "VSAMPLE") and LLVM's MIMGe_gfx11 /
VIMAGE_VSAMPLE_Common encodings; tests/emu/amd/isa/test_image_pixel_llvm.py checks every layout against
llvm-mc-19. Bit positions count from bit 0 of the first dword. MIMG is 8 bytes, plus one dword holding
VADDR1..4 when NSA (non-sequential addresses) is set; VIMAGE/VSAMPLE are always 12 bytes with the address
VGPRs in the third dword (VIMAGE's fifth in [63:56]).
"""
from __future__ import annotations

from .rdna3_formats import Format

FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("MIMG", 8, (26, 6, 0b111100), {
        "nsa": (0, 1), "dim": (2, 3), "unorm": (7, 1), "dmask": (8, 4), "slc": (12, 1), "dlc": (13, 1),
        "glc": (14, 1), "r128": (15, 1), "a16": (16, 1), "d16": (17, 1), "op": (18, 8),
        "vaddr0": (32, 8), "vdata": (40, 8), "srsrc": (48, 5), "tfe": (53, 1), "lwe": (54, 1),
        "ssamp": (58, 5), "vaddr1": (64, 8), "vaddr2": (72, 8), "vaddr3": (80, 8), "vaddr4": (88, 8)}),
    Format("VIMAGE", 12, (26, 6, 0b110100), {
        "dim": (0, 3), "r128": (4, 1), "d16": (5, 1), "a16": (6, 1), "op": (14, 8), "dmask": (22, 4),
        "vdata": (32, 8), "rsrc": (41, 9), "scope": (50, 2), "th": (52, 3), "tfe": (55, 1),
        "vaddr4": (56, 8), "vaddr0": (64, 8), "vaddr1": (72, 8), "vaddr2": (80, 8), "vaddr3": (88, 8)}),
    Format("VSAMPLE", 12, (26, 6, 0b111001), {
        "dim": (0, 3), "tfe": (3, 1), "r128": (4, 1), "d16": (5, 1), "a16": (6, 1), "unorm": (13, 1),
        "op": (14, 8), "dmask": (22, 4), "vdata": (32, 8), "lwe": (40, 1), "rsrc": (41, 9), "scope": (50, 2),
        "th": (52, 3), "samp": (55, 9), "vaddr0": (64, 8), "vaddr1": (72, 8), "vaddr2": (80, 8),
        "vaddr3": (88, 8)}),
)}

# The encodings of each family, by the identifying top 6 bits of the first dword.
FAMILY_FORMATS = {"rdna3": ("MIMG",), "rdna4": ("VIMAGE", "VSAMPLE")}
# NSA address fields an encoding has (MIMG's 2..5 only with NSA set), and how many of them a partial-NSA
# form uses before the last one takes the remaining addresses as one VGPR range.
VADDR_FIELDS = {"MIMG": 5, "VIMAGE": 5, "VSAMPLE": 4}
DIMS = ("1D", "2D", "3D", "CUBE", "1D_ARRAY", "2D_ARRAY", "2D_MSAA", "2D_MSAA_ARRAY")


def format_of(family: str, d0: int) -> Format | None:
    """The image format a first dword belongs to, or None."""
    for name in FAMILY_FORMATS.get(family, ()):
        lo, width, value = FORMATS[name].ident
        if d0 >> lo & ((1 << width) - 1) == value:
            return FORMATS[name]
    return None
