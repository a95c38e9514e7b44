"""Parsing one assembly operand (registers, constants, source modifiers) into encodings, as LLVM's
AMDGPU assembler reads them. Used by asm.py."""
from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .inst import Operand
from .operands import INLINE_FLOAT_HI, INLINE_FLOAT_LO, SCALAR_NAMES, SCALAR_PAIRS, const_bits

_NAMED = {n: (i, 1) for i, n in SCALAR_NAMES.items()} | {n: (i, 2) for i, n in SCALAR_PAIRS.items()}
_NAMED |= {"vccz": (251, 1), "execz": (252, 1), "scc": (253, 1), "lds_direct": (254, 1),
           "shared_base": (235, 1), "shared_limit": (236, 1), "private_base": (237, 1), "private_limit": (238, 1),
           "pops_exiting_wave_id": (239, 1)}
_REG = re.compile(r"(v|s|ttmp)(?:(\d+)|\[(\d+):(\d+)\])(\.[lh])?")
_INT = re.compile(r"-?(0x[0-9a-fA-F]+|0b[01]+|\d+)")
_FLOAT = re.compile(r"-?(\d+\.\d*([eE][-+]?\d+)?|\d+[eE][-+]?\d+|inf|nan)")
INV2PI_TEXT = ("0.15915494", "0.15915494309189532")


class OperandError(ValueError):
    """A bad operand; `offset` is the character offset in the token where the problem is."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


@dataclass
class Parsed:
    """An operand as written: a register (kind/index/count/half) or an immediate (int or float text)."""
    text: str                 # the operand without its modifiers
    kind: str                 # vgpr sgpr special int float off sym
    index: int = 0
    count: int = 1
    half: str | None = None   # ".l" / ".h" (true16)
    value: int | float | None = None
    neg: bool = False
    abs: bool = False
    sext: bool = False
    negmnemo: bool = False    # written as neg(...)


def parse_operand(tok: str) -> Parsed:
    t = tok
    neg = abs_ = sext = negm = False
    if t.startswith("neg(") and t.endswith(")"):
        t, neg, negm = t[4:-1], True, True
    if t.startswith("sext(") and t.endswith(")"):
        t, sext = t[5:-1], True
    if t.startswith("-|") and t.endswith("|"):
        t, neg, abs_ = t[2:-1], True, True
    elif t.startswith("|") and t.endswith("|"):
        t, abs_ = t[1:-1], True
    elif t.startswith("abs(") and t.endswith(")"):
        t, abs_ = t[4:-1], True
    elif t.startswith("-") and not _INT.fullmatch(t) and not _FLOAT.fullmatch(t):
        t, neg = t[1:], True
    if t.startswith("lit(") and t.endswith(")"):
        # LLVM 19 accepts lit(x) and encodes x as if written bare; a constant is required, no leading '-'
        p = _plain(t[4:-1].strip())
        if p.kind not in ("int", "float") or neg:
            raise OperandError("expected immediate with lit modifier")
    else:
        p = _plain(t)
    p.neg, p.abs, p.sext, p.negmnemo = neg, abs_, sext, negm
    return p


def _plain(t: str) -> Parsed:
    m = _REG.fullmatch(t)
    if m:
        kind, one, lo, hi, half = m.groups()
        lo_i = int(one) if one is not None else int(lo)
        count = 1 if one is not None else int(hi) - int(lo) + 1
        if count < 1:
            raise OperandError(f"bad register range {t!r}")
        if kind == "v":
            if lo_i + count > 256:
                raise OperandError(f"VGPR {t!r} out of range (v0..v255)")
            return Parsed(t, "vgpr", lo_i, count, half)
        if half:
            raise OperandError(f"{t!r}: only VGPRs have .l/.h halves")
        base, limit = (0, 106) if kind == "s" else (108, 16)
        if lo_i + count > limit:
            raise OperandError(f"register {t!r} out of range")
        align = 1 if count == 1 else 2 if count == 2 else 4
        if lo_i % align:
            raise OperandError(f"register {t!r} is not aligned to {align}")
        return Parsed(t, "sgpr", base + lo_i, count)
    name = t.removeprefix("src_") if t.startswith("src_") and t not in _NAMED else t
    if name in _NAMED:
        idx, count = _NAMED[name]
        return Parsed(t, "special" if idx >= 128 else "sgpr", idx, count)
    if t == "off":
        return Parsed(t, "off")
    if _INT.fullmatch(t):
        s = t.lstrip("-")
        v = int(s, 16) if s.startswith("0x") else int(s, 2) if s.startswith("0b") else int(s)
        return Parsed(t, "int", value=-v if t.startswith("-") else v)
    if _FLOAT.fullmatch(t):
        return Parsed(t, "float", value=float(t))
    if re.fullmatch(r"[A-Za-z_.$][\w.$]*", t):
        return Parsed(t, "sym")
    raise OperandError(f"cannot parse operand {t!r}")


def _round_float(x: float, ebits: int, mbits: int) -> int:
    """x rounded to nearest-even in a binary format with `ebits` exponent and `mbits` fraction bits, as
    LLVM converts a written float literal: precision may be lost, not range (overflow, or an inexact
    result below the smallest normal number, is an error)."""
    if x != x:
        return (1 << ebits) - 1 << mbits | 1 << mbits - 1   # the quiet NaN
    sign = (1 << ebits + mbits) if math.copysign(1.0, x) < 0 else 0
    a = Fraction(abs(x)) if abs(x) != math.inf else None
    bias = (1 << ebits - 1) - 1
    if a is None:
        return sign | (1 << ebits) - 1 << mbits
    if a == 0:
        return sign
    e = max(math.frexp(abs(x))[1] - 1, 1 - bias)   # the exponent of the result's ulp grid
    n = round(a / Fraction(2) ** (e - mbits))        # Fraction rounds half to even
    if n >> mbits + 1:                               # rounded up into the next binade
        n, e = n >> 1, e + 1
    if e > bias:
        raise OperandError(f"{x} overflows the operand's float type")
    if n >> mbits == 0 and n * Fraction(2) ** (e - mbits) != a:
        raise OperandError(f"{x} underflows the operand's float type")
    field = e + bias if n >> mbits else 0
    return sign | field << mbits | n & (1 << mbits) - 1


def _float_bits(x: float, ptype: str) -> int:
    if ptype in ("f16", "v2f16"):
        return _round_float(x, 5, 10)
    if ptype in ("f64", "i64"):   # LLVM keeps the high 32 bits (with a warning when the low ones are lost)
        return struct.unpack("<Q", struct.pack("<d", x))[0] >> 32
    if ptype in ("bf16", "v2bf16"):
        return _round_float(x, 8, 7)
    return _round_float(x, 8, 23)   # f32, and integer operands (a 16-bit one reads the low half)


def immediate(p: Parsed, ptype: str | None, allow_const: bool, allow_literal: bool) -> Operand:
    """A written constant as an inline constant (preferred, as LLVM does) or a 32-bit literal."""
    ptype = ptype or "b32"
    if p.kind == "int":
        v = p.value
        if -16 <= v <= 64 and allow_const and ptype != "hex":
            return Operand("const", 128 + v if v >= 0 else 192 - v, 1, const_bits(128 + v if v >= 0 else 192 - v, ptype))
        if ptype in ("f16", "bf16") and -(1 << 15) <= v < 0:
            v &= 0xFFFF
        if not -(1 << 31) <= v < 1 << 32:
            raise OperandError(f"literal {p.text} does not fit in 32 bits")
        v &= 0xFFFFFFFF
        if ptype in ("f16", "v2f16", "i16") and v >> 16 == 0 and allow_const:
            bits16 = True
        else:
            bits16 = False
        # LLVM turns a written bit pattern of an inline float into the inline constant, except for
        # 16-bit integer operands (0x3c00 stays a literal there).
        if allow_const and ptype not in ("hex", "f64", "i64", "bf16", "i16"):
            for enc in range(INLINE_FLOAT_LO, INLINE_FLOAT_HI + 1):
                if const_bits(enc, ptype) == v and (bits16 or ptype not in ("f16", "i16", "v2f16")):
                    return Operand("const", enc, 1, const_bits(enc, ptype))
        if not allow_literal:
            raise OperandError("no literal allowed here")
        return Operand("literal", 255, 1, v)
    if p.kind == "float":
        x = p.value
        if allow_const:
            for enc in range(INLINE_FLOAT_LO, INLINE_FLOAT_HI):
                if (0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0)[enc - INLINE_FLOAT_LO] == x:
                    return Operand("const", enc, 1, const_bits(enc, ptype))
            if p.text in INV2PI_TEXT:
                return Operand("const", INLINE_FLOAT_HI, 1, const_bits(INLINE_FLOAT_HI, ptype))
        bits = _float_bits(x, ptype)
        if allow_const and ptype not in ("f64", "i64"):
            # LLVM converts first, then looks for an inline constant: the rounded value may be one (1.0 for
            # 1.00390625 in bf16), and so may the bit pattern read as an integer (f16 denormal 0x0001 is `1`)
            width = 16 if ptype in ("f16", "v2f16", "bf16", "v2bf16") else 32
            if bits <= 64:
                return Operand("const", 128 + bits, 1, const_bits(128 + bits, ptype))
            if bits >= (1 << width) - 16:
                enc = 192 + (1 << width) - bits
                return Operand("const", enc, 1, const_bits(enc, ptype))
            for enc in range(INLINE_FLOAT_LO, INLINE_FLOAT_HI):
                if const_bits(enc, ptype) == bits:
                    return Operand("const", enc, 1, bits)
        if not allow_literal:
            raise OperandError("no literal allowed here")
        return Operand("literal", 255, 1, bits)
    raise OperandError(f"expected a constant, got {p.text!r}")
