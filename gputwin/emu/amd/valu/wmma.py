"""WMMA on gfx1100 (wave32 and wave64): D = A x B + C for 16x16x16 tiles.

Register layout (AMD Matrix Instruction Calculator, github.com/ROCm/amd_matrix_instruction_calculator,
`-a rdna3 -w 32|64 --detail-instruction`; RDNA3 ISA guide, "Wave Matrix Multiply Accumulate"; AMD
GPUOpen WMMA note). Only C/D differ between the wave sizes:
- A (16x16, M x K): lane l holds row M = l % 16; 16-bit element K = 2j + h sits in VGPR j, half h
  (8 VGPRs). For iu8 four bytes per VGPR (4 VGPRs), iu4 eight nibbles (2 VGPRs). Every group of 16
  lanes repeats lanes 0..15 (wave64 too: same VGPR counts); lanes 0..15 are read.
- B (K x N): lane l holds column N = l % 16 with K laid out as for A.
- C / D: VGPR j of lane l is element (M = (L / 16) j + l // 16, N = l % 16) for wave size L: wave32
  M = 2j + l // 16 in 8 VGPRs, wave64 M = 4j + l // 16 in 4 VGPRs (LLVM's _w64 forms take 4-VGPR C/D,
  e.g. `v_wmma_f32_16x16x16_f16 v[16:19], v[0:7], v[8:15], v[16:19]`). f16/bf16 results sit in the half
  selected by op_sel[2] (the other half is kept).
Float forms: neg[i] / neg_hi[i] negate the low / high 16-bit halves of A (i = 0) and B (i = 1), i.e.
the even / odd K; neg[2] subtracts C and neg_hi[2] takes |C| first (the calculator's NEG notes).
Products are exact in float64 and summed there with C, then rounded once to the result format:
APPROXIMATE VS HARDWARE (the hardware's internal accumulation order/precision is not modelled).
iu8/iu4: neg[0] / neg[1] mark A / B signed; clamp saturates to i32; neg[2] and neg_hi must be zero (raise).
Like every VALU write, D lanes outside EXEC are kept (the hardware requires EXEC all ones).
"""
from __future__ import annotations

import numpy as np

from gputwin.errors import IllegalInstruction

from .fp import BF16, F16, F32, Mode, as_bits, is_inf, round_f64, saturate_f16, to_f64

U16, U32 = np.uint16, np.uint32

# mnemonic -> (input kind, accumulator/result kind)
OPS = {
    "v_wmma_f32_16x16x16_f16": ("f16", "f32"), "v_wmma_f32_16x16x16_bf16": ("bf16", "f32"),
    "v_wmma_f16_16x16x16_f16": ("f16", "f16"), "v_wmma_bf16_16x16x16_bf16": ("bf16", "bf16"),
    "v_wmma_i32_16x16x16_iu8": ("iu8", "i32"), "v_wmma_i32_16x16x16_iu4": ("iu4", "i32"),
}
_FMT = {"f16": F16, "bf16": BF16, "f32": F32}
_AB_VGPRS = {"f16": 8, "bf16": 8, "iu8": 4, "iu4": 2}


def _cd_layout(lanes: int):
    """C/D VGPR count and the (lane, VGPR) -> M, N index maps for a wave of `lanes` lanes."""
    count = 256 // lanes
    lane = np.arange(lanes)
    rows = (lanes // 16) * np.arange(count)[None, :] + (lane // 16)[:, None]
    return count, rows, np.broadcast_to((lane % 16)[:, None], rows.shape)


_CD = {lanes: _cd_layout(lanes) for lanes in (32, 64)}


def vgpr_block(group, inst, role: str, count: int):
    """`count` consecutive VGPRs of operand `role`, stacked last: (n, lanes, count) uint32."""
    op = inst.operands[role]
    if op.kind != "vgpr":
        raise IllegalInstruction(f"{inst.op}: {role} must be VGPRs")
    return np.stack([group.vgpr(op.index + j) for j in range(count)], axis=-1)   # (n, lanes, count)


def _elements(regs, kind: str, signed: bool):
    """(n, lanes, count) uint32 -> (n, 16 lanes, 16 K) float64 values."""
    regs = regs[:, :16]
    if kind in ("f16", "bf16"):
        h = regs[..., None].view(U16).reshape(regs.shape[0], 16, -1)   # little endian: lo half first
        return to_f64(h, _FMT[kind])
    width = 8 if kind == "iu8" else 4
    per = 32 // width
    shifts = (np.arange(per) * width).astype(U32)
    v = ((regs[..., None] >> shifts) & U32((1 << width) - 1)).astype(np.int64).reshape(regs.shape[0], 16, -1)
    if signed:
        v = v - ((v & (1 << (width - 1))) << 1)
    return v.astype(np.float64)


def _negate_halves(vals, lo: bool, hi: bool):
    """Float A/B: NEG flips the low halves (even K), NEG_HI the high halves (odd K)."""
    if not (lo or hi):
        return vals
    sign = np.where(np.arange(16) % 2 == 0, -1.0 if lo else 1.0, -1.0 if hi else 1.0)
    return vals * sign


def _check_modifiers(inst, kind: str, acc: str) -> None:
    """Fail closed on modifier bits the forms do not define (the calculator: integer NEG[2] and NEG_HI must be
    zero; LLVM rejects op_sel other than op_sel[2] and clamp on float forms, but assembles the integer ones)."""
    if kind.startswith("iu") and (inst.neg[2] or any(inst.neg_hi)):
        raise IllegalInstruction(f"{inst.op}: neg[2] / neg_hi on integer WMMA are not modelled")
    if any(inst.op_sel[:2]) or inst.op_sel[2] and acc not in ("f16", "bf16"):
        raise IllegalInstruction(f"{inst.op}: this op_sel is not modelled")
    if inst.clamp and acc != "i32":
        raise IllegalInstruction(f"{inst.op}: clamp on float WMMA is not modelled")


def inf_inputs(a, b, rows, cols):
    """(waves, lanes, slots): D elements whose row of A (waves, M, K) or column of B (waves, N, K) holds
    an infinity; FP16_OVFL keeps those infinite."""
    return np.isinf(a).any(-1)[:, rows] | np.isinf(b).any(-1)[:, cols]


def execute(group, inst, mode: Mode) -> None:
    kind, acc = OPS[inst.op]
    _check_modifiers(inst, kind, acc)
    if acc in _FMT:
        mode.need_rne(_FMT[acc], inst.op)
    integer = kind.startswith("iu")
    a = _elements(vgpr_block(group, inst, "src0", _AB_VGPRS[kind]), kind, integer and inst.neg[0])
    b = _elements(vgpr_block(group, inst, "src1", _AB_VGPRS[kind]), kind, integer and inst.neg[1])
    if not integer:
        a = _negate_halves(a, inst.neg[0], inst.neg_hi[0])
        b = _negate_halves(b, inst.neg[1], inst.neg_hi[1])
    with np.errstate(all="ignore"):
        prod = np.einsum("wmk,wnk->wmn", a, b)        # (n, M, N), exact sums for integers
    count, rows, cols = _CD[group.lanes]
    c_regs = vgpr_block(group, inst, "src2", count)    # (n, lanes, count)
    hi = bool(inst.op_sel[2])
    if acc == "i32":
        cval = c_regs.view(np.int32).astype(np.int64)
        tot = prod[:, rows, cols].astype(np.int64) + cval
        if inst.clamp:
            tot = np.clip(tot, -2 ** 31, 2 ** 31 - 1)
        out = (tot & 0xFFFFFFFF).astype(U32)
    else:
        f = _FMT[acc]
        cbits = c_regs if f is F32 else ((c_regs >> U32(16)) if hi else c_regs).astype(U16)
        c = to_f64(cbits, f)
        if inst.neg_hi[2]:
            c = np.abs(c)
        if inst.neg[2]:
            c = -c
        with np.errstate(all="ignore"):
            tot = prod[:, rows, cols] + c
            res = as_bits(tot.astype(np.float32), F32) if f is F32 else round_f64(tot, f, 0)
        if f is F16 and mode.fp16_ovfl:
            res = saturate_f16(res, inf_inputs(a, b, rows, cols) | is_inf(cbits, f))
        out = res.astype(U32) if f is F32 else res
    dst = inst.operands["vdst"].index
    for j in range(count):
        v = out[..., j]
        if acc in ("f16", "bf16"):
            old = group.vgpr(dst + j)
            v = (old & U32(0xFFFF)) | (v.astype(U32) << U32(16)) if hi else (old & U32(0xFFFF0000)) | v.astype(U32)
        group.set_vgpr(dst + j, v)
