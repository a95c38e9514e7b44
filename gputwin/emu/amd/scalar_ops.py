"""Scalar operand access shared by the core's instruction families (SALU, SMEM, VMEM, DS).

`reader32(op)` / `reader64(op)` turn a decoded scalar source into a function of the group returning a
per-wave uint32 / uint64 (n,) array (a numpy scalar for constants, which broadcasts), so operand
decoding happens once at build time, not per step.
"""
from __future__ import annotations

import struct

import numpy as np

from gputwin.emu.amd.isa.inst import Operand
from gputwin.errors import IllegalInstruction

# Inline float constants 240..248 (0.5, -0.5, 1, -1, 2, -2, 4, -4, 1/(2*pi)) as f32 and f64 bit patterns.
_FLOATS = (0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0)
F32_CONST = {240 + i: struct.unpack("<I", struct.pack("<f", v))[0] for i, v in enumerate(_FLOATS)}
F32_CONST[248] = 0x3E22F983
F64_CONST = {240 + i: struct.unpack("<Q", struct.pack("<d", v))[0] for i, v in enumerate(_FLOATS)}
F64_CONST[248] = 0x3FC45F306DC9C882


def inline_int(index: int) -> int | None:
    """Integer inline constant 128..208 as a Python int (0..64, -1..-16)."""
    if 128 <= index <= 192:
        return index - 128
    if 193 <= index <= 208:
        return 192 - index
    return None


def const_value(op: Operand, wide: bool, signed: bool = False) -> int:
    """The bit pattern of a constant/literal source for a 32- or 64-bit integer/bit operand.

    A 32-bit literal feeding a 64-bit operand is sign-extended for signed (i64) operands and
    zero-extended for unsigned/bit ones, as the hardware does (see LLVM's SIInstrInfo::isOperandLegal)."""
    mask = (1 << 64) - 1 if wide else 0xFFFFFFFF
    if op.kind == "literal":
        lit = op.value & 0xFFFFFFFF
        return (lit | 0xFFFFFFFF00000000) if wide and signed and lit >> 31 else lit
    v = inline_int(op.index)
    if v is not None:
        return v & mask
    table = F64_CONST if wide else F32_CONST
    if op.index in table:
        return table[op.index]
    raise IllegalInstruction(f"constant operand {op.index} is not modelled")


def reader32(op: Operand):
    if op.kind == "sgpr":
        i = op.index
        if 0 <= i < 128 and i != 124:       # a row of the SGPR file itself (124 NULL reads zeros)
            return lambda g: g.s[i]
        return lambda g: g.sgpr(i)
    if op.kind in ("const", "literal"):
        c = np.uint32(const_value(op, False))
        return lambda g: c
    if op.kind == "special":
        i = op.index
        return lambda g: g.sgpr(i)
    if op.kind == "imm":
        c = np.uint32(op.value & 0xFFFFFFFF)
        return lambda g: c
    raise IllegalInstruction(f"scalar source of kind {op.kind!r} is not modelled")


def reader64(op: Operand, signed: bool = False):
    if op.kind == "sgpr":
        i = op.index
        return lambda g: g.sgpr64(i)
    if op.kind in ("const", "literal", "imm"):
        c = np.uint64(const_value(op, True, signed) if op.kind != "imm" else op.value & ((1 << 64) - 1))
        return lambda g: c
    if op.kind == "special":
        i = op.index
        if i in (235, 236, 237, 238):  # apertures read as 64-bit: the full base / limit address
            low = np.uint64(0xFFFFFFFF if i in (236, 238) else 0)
            return lambda g: (g.sgpr(i).astype(np.uint64) << np.uint64(32)) | low
        return lambda g: g.sgpr(i).astype(np.uint64)
    raise IllegalInstruction(f"64-bit scalar source of kind {op.kind!r} is not modelled")
