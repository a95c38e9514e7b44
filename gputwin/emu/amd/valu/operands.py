"""Operand fetch and result write-back for VALU instructions.

Operand types name how a source is read: width (16/32/64 bits) and whether it is a float (then inline
constants are that float format's encoding and abs/neg apply). Sources come back as unsigned bit
arrays broadcastable to (n, L): VGPRs (n, L), scalars (n, 1), constants 0-d.

Rules (RDNA3 ISA guide, "Instruction operands"):
- inline integers 128..208 are 0..64, -1..-16 (sign-extended to the operand width); inline floats
  240..248 are 0.5, -0.5, 1, -1, 2, -2, 4, -4, 1/(2*pi) in the operand's own float format.
- a 32-bit literal feeds a 64-bit float operand as its high dword, a signed 64-bit integer
  sign-extended, an unsigned / untyped one zero-extended, a 16-bit operand through its low half.
- 16-bit operands: VOP3/VOP3P pick the half with op_sel; in VOP1/VOP2/VOPC, RDNA3 uses VGPR field bit 7
  as the half select ("v0.h" is encoded 128): the decoder reports that bit as op_sel too, so one rule
  (op_sel[i] for source i, op_sel[3] for the destination) serves every encoding.
"""
from __future__ import annotations

import numpy as np

from gputwin.errors import IllegalInstruction

from .fp import F16, F32, F64, FMTS

WIDTH = {"b16": 16, "i16": 16, "u16": 16, "f16": 16, "bf16": 16,
         "b32": 32, "i32": 32, "u32": 32, "f32": 32,
         "b64": 64, "i64": 64, "u64": 64, "f64": 64}
UDT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
VCC = 106
M0_INDEX = 125
SHORT_ENCODINGS = ("VOP1", "VOP2", "VOPC")

_FLOAT_CONST = (0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0)
APERTURES = {235: 0, 236: 0xFFFFFFFF, 237: 0, 238: 0xFFFFFFFF}   # src_*_base / src_*_limit: low dword
_INV_2PI = {"f16": 0x3118, "bf16": 0x3E22, "f32": 0x3E22F983, "f64": 0x3FC45F306DC9C882}


def inline_const(index: int, typ: str) -> int:
    """Bits of inline constant `index` for an operand of type typ."""
    w = WIDTH[typ]
    if 128 <= index <= 192:
        return index - 128
    if 193 <= index <= 208:
        return (192 - index) % (1 << w)
    if 240 <= index <= 248:
        f = FMTS.get(typ)
        if f is None:                       # float constant on an integer operand: the f32 bits (f64 for 64-bit)
            f = F64 if w == 64 else (F16 if w == 16 else F32)
        if index == 248:
            return _INV_2PI[f.name]
        return int(np.array(_FLOAT_CONST[index - 240], f.fdt).view(f.udt))
    raise IllegalInstruction(f"inline constant {index} is not modelled")


def _half(v32, hi: bool):
    return ((v32 >> np.uint32(16)) if hi else v32).astype(np.uint16)


def read(group, inst, role: str, typ: str, hi: bool = False):
    """Raw bits of source `role` as type `typ`; `hi` selects the high 16 bits of a 32-bit register
    (VOP3 op_sel). abs/neg are applied by the caller (apply_mods)."""
    op = inst.operands.get(role)
    if op is None:
        raise IllegalInstruction(f"{inst.op}: missing operand {role}")
    w = WIDTH[typ]
    k = op.kind
    if k == "vgpr":
        idx = op.index
        lo = group.vgpr(idx)
        if w == 16:
            return _half(lo, hi)
        if w == 32:
            return lo
        return np.stack((lo, group.vgpr(idx + 1)), axis=-1).view(np.uint64)[..., 0]   # little-endian pair
    if k == "sgpr" or k == "special":
        if op.index == 254:
            raise IllegalInstruction(f"{inst.op}: lds_direct source is not modelled")
        if w == 64:
            if k == "special":
                v = group.sgpr(op.index).astype(np.uint64)
                if op.index in APERTURES:        # a 64-bit read is the full address, as on the scalar side
                    v = (v << np.uint64(32)) | np.uint64(APERTURES[op.index])
            else:
                v = group.sgpr64(op.index)
            return v[:, None]
        v = group.sgpr(op.index)[:, None]
        return _half(v, hi) if w == 16 else v
    if k == "const":                         # a 16-bit constant is the low half of a zero-extended dword
        return np.asarray(UDT[w](0 if hi and w == 16 else inline_const(op.index, typ)))
    if k == "literal":
        lit = int(op.value) & 0xFFFFFFFF
        if w == 64:
            if typ == "f64":
                lit <<= 32
            elif typ == "i64" and lit >> 31:
                lit |= 0xFFFFFFFF << 32
            return np.asarray(np.uint64(lit))
        if w == 16:
            return np.asarray(np.uint16((lit >> 16) if hi else lit & 0xFFFF))
        return np.asarray(np.uint32(lit))
    raise IllegalInstruction(f"{inst.op}: operand kind {k!r} is not a VALU source")


def apply_mods(v, typ: str, absv: bool, negv: bool):
    """abs then neg on the sign bit; float types only (integer operands ignore the bits)."""
    if not (absv or negv) or typ not in FMTS:
        return v
    sign = FMTS[typ].sign
    if absv:
        v = v & ~sign
    if negv:
        v = v ^ sign
    return v


def write_vdst(group, inst, typ: str, value, mask) -> None:
    """Write the result (16-bit into one half, 64-bit into a pair) to lanes where mask (None: EXEC) is set;
    an SGPR destination (v_readlane / v_readfirstlane) takes one value per wave."""
    op = inst.operands["vdst"]
    if op.kind == "sgpr":
        group.set_sgpr(op.index, value)
        return
    if op.kind != "vgpr":
        raise IllegalInstruction(f"{inst.op}: destination kind {op.kind!r} is not modelled")
    w = WIDTH[typ]
    value = np.asarray(value)
    idx = op.index
    if w == 32:
        group.set_vgpr(idx, value.astype(np.uint32, copy=False), mask)
    elif w == 64:
        words = np.ascontiguousarray(np.broadcast_to(value.astype(np.uint64, copy=False),
                                                     (group.n, group.lanes))).view(np.uint32)
        group.set_vgpr(idx, words[:, 0::2], mask)
        group.set_vgpr(idx + 1, words[:, 1::2], mask)
    else:
        hi = inst.op_sel[3]
        old = group.vgpr(idx)
        v = value.astype(np.uint32)
        new = (old & np.uint32(0x0000FFFF)) | (v << np.uint32(16)) if hi else (old & np.uint32(0xFFFF0000)) | v
        group.set_vgpr(idx, new, mask)


def mask_dst(inst) -> int:
    """Where a lane-mask result goes: the SDST operand (VOP3 forms), else VCC (VOPC/VOP2)."""
    op = inst.operands.get("sdst")
    return VCC if op is None else op.index


def read_mask(group, inst, role: str):
    """A lane-mask source (carry-in, v_cndmask select): the SGPR(-pair) operand, else VCC."""
    op = inst.operands.get(role)
    if op is None or inst.encoding in ("VOP2", "VOPC", "VOPD"):
        return group.lane_mask(VCC)
    if op.kind == "sgpr":
        return group.lane_mask(op.index)
    if op.kind == "const":                   # e.g. v_cndmask_b32 ..., 0 / -1
        v = inline_const(op.index, "u64")
        bits = (np.uint64(v) >> np.arange(group.lanes, dtype=np.uint64)) & np.uint64(1)
        return np.broadcast_to(bits.astype(bool), (group.n, group.lanes))
    raise IllegalInstruction(f"{inst.op}: mask operand kind {op.kind!r} is not modelled")
