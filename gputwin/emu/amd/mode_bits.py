"""The MODE register's fields per architecture, and which of them a shader may set on the emulator.

Positions from the ISA guides' MODE tables (RDNA3 "Mode Register Fields", RDNA4 Table 7, CDNA3 Table 4),
which agree with LLVM's Hwreg::ModeRegisterMasks (SIDefines.h); gfx942's LOD_CLAMPED comes from LLVM alone.
Each field is one of:
- MODELLED: the emulator implements its effect (FP_ROUND, FP_DENORM, DX10_CLAMP, IEEE, FP16_OVFL, GPR_IDX_EN);
- INERT: it changes no result a compute kernel can observe here (performance counting, a texture status
  bit, scalar prefetch hints, which the emulator runs as no-ops anyway), so it is stored and read back;
- UNMODELLED: it would change what the wave does (exception traps, trap-after-instruction, VSKIP, the
  conditional-branch stack): writing a 1 there raises IllegalInstruction naming the field.
Bits no table names are reserved and fail the same way. docs/mode.md has the reasoning per field.
"""
from __future__ import annotations

from gputwin.errors import IllegalInstruction

MODELLED, INERT, UNMODELLED = "modelled", "inert", "unmodelled"

_COMMON = (("FP_ROUND", 0, 4, MODELLED), ("FP_DENORM", 4, 4, MODELLED))
_NAN_MODES = (("DX10_CLAMP", 8, 1, MODELLED), ("IEEE", 9, 1, MODELLED))

# arch family -> ((name, first bit, width, kind), ...)
FIELDS = {
    "gfx11": _COMMON + _NAN_MODES + (
        ("LOD_CLAMPED", 10, 1, INERT), ("TRAP_AFTER_INST", 11, 1, UNMODELLED), ("EXCP_EN", 12, 10, UNMODELLED),
        ("FP16_OVFL", 23, 1, MODELLED), ("DISABLE_PERF", 27, 1, INERT)),
    "gfx12": _COMMON + (
        ("FP16_OVFL", 23, 1, MODELLED), ("SCALAR_PREFETCH_EN", 24, 1, INERT), ("DISABLE_PERF", 27, 1, INERT)),
    "gfx942": _COMMON + _NAN_MODES + (
        ("LOD_CLAMPED", 10, 1, INERT), ("DEBUG", 11, 1, UNMODELLED), ("EXCP_EN", 12, 9, UNMODELLED),
        ("FP16_OVFL", 23, 1, MODELLED), ("DISABLE_PERF", 26, 1, INERT), ("GPR_IDX_EN", 27, 1, MODELLED),
        ("VSKIP", 28, 1, UNMODELLED), ("CSP", 29, 3, UNMODELLED)),
}


def family(arch: str) -> str:
    return "gfx12" if arch.startswith("gfx12") else "gfx942" if arch == "gfx942" else "gfx11"


def _settable(fields) -> int:
    return sum(((1 << w) - 1) << lo for _, lo, w, kind in fields if kind != UNMODELLED)


SETTABLE = {fam: _settable(f) for fam, f in FIELDS.items()}


def field_of(fam: str, bit: int) -> str:
    for name, lo, w, _ in FIELDS[fam]:
        if lo <= bit < lo + w:
            return f"{name} (bit {bit})"
    return f"reserved bit {bit}"


def check_write(fam: str, op: str, bits: int) -> None:
    """`bits`: the MODE bits an s_setreg sets to 1 (already shifted into place)."""
    bad = bits & ~SETTABLE[fam]
    if bad:
        bit = (bad & -bad).bit_length() - 1
        raise IllegalInstruction(f"{op}: MODE {field_of(fam, bit)} set to 1 is not modelled on {fam}")


# Kernel-descriptor fields that set MODE bits at wave start which the emulator does not model: the
# single-step debug mode and the float / integer-divide exception enables (each would make the wave trap).
_DESCRIPTOR_UNMODELLED = (("COMPUTE_PGM_RSRC1.DEBUG_MODE", 1, 22, 1), ("COMPUTE_PGM_RSRC2.EXCP_EN", 2, 24, 7))


def check_descriptor(rsrc1: int, rsrc2: int) -> None:
    """Fail closed on a dispatch whose descriptor turns on MODE fields that are not modelled."""
    for name, which, lo, width in _DESCRIPTOR_UNMODELLED:
        value = ((rsrc1 if which == 1 else rsrc2) >> lo) & ((1 << width) - 1)
        if value:
            raise IllegalInstruction(f"{name} = {value:#x} (MODE exception enables / debug mode) is not modelled")
