"""WMMA on gfx1100 (wave32): D = A x B + C for 16x16x16 tiles.

Register layout (RDNA3 ISA guide, "Wave Matrix Multiply Accumulate"; AMD GPUOpen WMMA note):
- A (16x16, M x K): lane l holds row M = l % 16; 16-bit element K = 2j + h sits in VGPR j, half h
  (8 VGPRs). For iu8 four bytes per VGPR (4 VGPRs), iu4 eight nibbles (2 VGPRs). Lanes 16..31 repeat.
- B (K x N): lane l holds column N = l % 16 with K laid out as for A.
- C / D: VGPR j of lane l is element (M = 2j + l // 16, N = l % 16); f32/i32 use 8 VGPRs; f16/bf16
  results use 8 VGPRs with the value in the half selected by op_sel[2] (the other half is kept).
Products are exact in float64 and summed there with C, then rounded once to the result format:
APPROXIMATE VS HARDWARE (the hardware's internal accumulation order/precision is not modelled).
iu8/iu4: neg[0] / neg[1] mark A / B signed; clamp saturates to i32. Wave64 WMMA is not modelled.
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


def _regs(group, inst, role: str, count: int):
    op = inst.operands[role]
    if op.kind != "vgpr":
        raise IllegalInstruction(f"{inst.op}: {role} must be VGPRs")
    return np.stack([group.vgpr(op.index + j) for j in range(count)], axis=-1)   # (n, 32, count)


def _elements(regs, kind: str, signed: bool):
    """(n, 32, count) uint32 -> (n, 16 lanes, 16 K) float64 values."""
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


def inf_inputs(a, b, rows, cols):
    """(waves, lanes, slots): D elements whose row of A (waves, M, K) or column of B (waves, N, K) holds
    an infinity; FP16_OVFL keeps those infinite."""
    return np.isinf(a).any(-1)[:, rows] | np.isinf(b).any(-1)[:, cols]


def execute(group, inst, mode: Mode) -> None:
    if group.wave64:
        raise IllegalInstruction(f"{inst.op}: wave64 WMMA is not modelled")
    kind, acc = OPS[inst.op]
    if acc in _FMT:
        mode.need_rne(_FMT[acc], inst.op)
    nregs = {"f16": 8, "bf16": 8, "iu8": 4, "iu4": 2}[kind]
    a = _elements(_regs(group, inst, "src0", nregs), kind, kind.startswith("iu") and inst.neg[0])
    b = _elements(_regs(group, inst, "src1", nregs), kind, kind.startswith("iu") and inst.neg[1])
    prod = np.einsum("wmk,wnk->wmn", a, b)            # (n, M, N), exact sums for integers
    c_regs = _regs(group, inst, "src2", 8)             # (n, 32 lanes, 8)
    lane = np.arange(32)
    rows = 2 * np.arange(8)[None, :] + (lane // 16)[:, None]   # (lane, j) -> M
    cols = np.broadcast_to((lane % 16)[:, None], rows.shape)   # (lane, j) -> N
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
        with np.errstate(all="ignore"):
            tot = prod[:, rows, cols] + to_f64(cbits, f)
        res = as_bits(tot.astype(np.float32), F32) if f is F32 else round_f64(tot, f, 0)
        if f is F16 and mode.fp16_ovfl:
            res = saturate_f16(res, inf_inputs(a, b, rows, cols) | is_inf(cbits, f))
        out = res.astype(U32) if f is F32 else res
    dst = inst.operands["vdst"].index
    for j in range(8):
        v = out[..., j]
        if acc in ("f16", "bf16"):
            old = group.vgpr(dst + j)
            v = (old & U32(0xFFFF)) | (v.astype(U32) << U32(16)) if hi else (old & U32(0xFFFF0000)) | v.astype(U32)
        group.set_vgpr(dst + j, v)
