"""Operand encodings shared by every AMD table: scalar-source numbering, inline constants, and how LLVM
prints a constant of each data type ("ptype" in the tables).

ptypes: b32 (any 32-bit operand), f16, i16, bf16, f64, i64, v2f16, v2i16, v2bf16, and hex (the K
constant of v_fmamk/v_fmaak: always printed in hex). The table generator
picks, per source slot, the ptype whose printing matches LLVM on every inline constant and on a set of
literals, so the printer and the constant values below are checked against LLVM for every instruction.
"""
from __future__ import annotations

import struct

INLINE_INT_LO, INLINE_INT_HI = 128, 208          # 128 -> 0, 129..192 -> 1..64, 193..208 -> -1..-16
INLINE_FLOAT_LO, INLINE_FLOAT_HI = 240, 248

_F32 = (0x3F000000, 0xBF000000, 0x3F800000, 0xBF800000, 0x40000000, 0xC0000000, 0x40800000, 0xC0800000,
        0x3E22F983)
_F16 = (0x3800, 0xB800, 0x3C00, 0xBC00, 0x4000, 0xC000, 0x4400, 0xC400, 0x3118)
_BF16 = (0x3F00, 0xBF00, 0x3F80, 0xBF80, 0x4000, 0xC000, 0x4080, 0xC080, 0x3E22)
_F64 = (0x3FE0000000000000, 0xBFE0000000000000, 0x3FF0000000000000, 0xBFF0000000000000,
        0x4000000000000000, 0xC000000000000000, 0x4010000000000000, 0xC010000000000000, 0x3FC45F306DC9C882)
_FLOAT_TEXT = ("0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0")

SCALAR_NAMES = {106: "vcc_lo", 107: "vcc_hi", 124: "null", 125: "m0", 126: "exec_lo", 127: "exec_hi",
                235: "src_shared_base", 236: "src_shared_limit", 237: "src_private_base",
                238: "src_private_limit", 239: "src_pops_exiting_wave_id", 251: "src_vccz", 252: "src_execz",
                253: "src_scc", 254: "src_lds_direct"}
SCALAR_PAIRS = {106: "vcc", 126: "exec"}
SPECIAL = frozenset(n for n in SCALAR_NAMES if n >= 235)


def int_const(enc: int) -> int:
    """Value of an inline integer constant encoding (128..208)."""
    return enc - 128 if enc <= 192 else 192 - enc


def const_bits(enc: int, ptype: str) -> int:
    """Bit pattern an inline constant has as an operand of this ptype (what the hardware reads)."""
    if INLINE_INT_LO <= enc <= INLINE_INT_HI:
        v = int_const(enc)
        width = 64 if ptype in ("f64", "i64") else 16 if ptype in ("f16", "bf16") else 32
        return v & ((1 << width) - 1)
    i = enc - INLINE_FLOAT_LO
    if ptype in ("f16", "v2f16", "i16"):
        return _F16[i]
    if ptype in ("bf16", "v2bf16"):
        return _BF16[i]
    if ptype in ("f64", "i64"):
        return _F64[i]
    return _F32[i]


def literal_bits(lit: int, ptype: str) -> int:
    """Value LLVM gives a 32-bit literal in an operand of this ptype (f64 literals are the high half)."""
    if ptype == "f64":
        return lit << 32
    if ptype == "f16":
        return lit & 0xFFFF
    return lit


def _is_int_inline(v: int) -> bool:
    return -16 <= v <= 64


def _s(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


def _float(v: int, table: tuple[int, ...], inv2pi: str) -> str | None:
    if v in table[:8]:
        return _FLOAT_TEXT[table.index(v)]
    if v == table[8]:
        return inv2pi
    return None


def format_imm(v: int, ptype: str) -> str:
    """LLVM's text for an immediate operand value of this ptype (AMDGPUInstPrinter's printImmediate*)."""
    if ptype == "hex":
        return hex(v)
    if ptype in ("f64", "i64"):
        sv = v if v < 0 else _s(v & (2**64 - 1), 64)
        if _is_int_inline(sv):
            return str(sv)
        f = _float(v & (2**64 - 1), _F64, "0.15915494309189532")
        if f:
            return f
        if ptype == "f64":
            return hex((v & (2**64 - 1)) >> 32)
        return hex(v & (2**64 - 1))
    if ptype == "i16":
        if _is_int_inline(_s(v, 32)):
            return str(_s(v, 32))
        return _float(v, _F32, "0.15915494") or hex(v & 0xFFFF)
    if ptype in ("f16", "bf16"):
        sv = _s(v & 0xFFFF, 16)
        if _is_int_inline(sv):
            return str(sv)
        f = _float(v & 0xFFFF, _BF16 if ptype == "bf16" else _F16, "0.15915494")
        return f if f else hex(v)   # bf16 literals keep all 32 bits
    sv = _s(v & 0xFFFFFFFF, 32)
    if _is_int_inline(sv):
        return str(sv)
    if ptype == "v2f16":
        f = _float(v, _F16, "0.15915494") if v >> 16 == 0 else None
    elif ptype == "v2bf16":
        f = _float(v, _BF16, "0.15915494") if v >> 16 == 0 else None
    else:
        f = _float(v, _F32, "0.15915494")
    return f if f else hex(v)


PTYPES = ("b32", "f16", "i16", "bf16", "f64", "i64", "v2f16", "v2i16", "v2bf16", "hex")


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]
