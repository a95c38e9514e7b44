"""WMMA on gfx12 (RDNA4, wave32): D = A x B + C for 16x16x16 tiles, in RDNA4's register layouts.

Layout (RDNA4 ISA guide, "Wave Matrix Multiply Accumulate"; AMD GPUOpen "Using the Matrix Cores of AMD
RDNA 4 architecture GPUs"; the index maps of tinygrad's RDNA4 emulator, which that project checks against
gfx1201 hardware), with k = 8 k3 + 4 k2 + k10 (bits):
- A (M x K): element (m, k) is in lane m + 16 k2, at element e = k10 + 4 k3 of the lane's register run:
  16-bit types two per VGPR (4 VGPRs: VGPR e // 2, half e % 2), 8-bit types four per VGPR (2 VGPRs).
  Lanes 0-15 hold k = 0-3 and 8-11, lanes 16-31 k = 4-7 and 12-15 (no replication as on gfx11).
- B (K x N): element (k, n) likewise in lane n + 16 k2.
- C / D: element (m, n) is in lane n + 16 (m // 8); 32-bit types in VGPR m % 8 (8 VGPRs), 16-bit types
  packed two per VGPR: VGPR (m % 8) // 2, half m % 2 (4 VGPRs).
Products are exact in float64 and summed there with C, then rounded once (nearest even) to the result
format: APPROXIMATE VS HARDWARE for float results (the hardware's internal accumulation order and
precision are not modelled), exact for iu8. fp8 is OCP E4M3 (no infinities, 0x7F/0xFF NaN), bf8 OCP E5M2.
iu8: neg[0] / neg[1] mark A / B signed; clamp saturates to i32. Not modelled (IllegalInstruction):
the iu4 forms, v_swmmac_*, neg / op_sel modifiers on float forms, wave64.
"""
from __future__ import annotations

import numpy as np

from gputwin.errors import IllegalInstruction

from .fp import BF16, F16, F32, Mode, as_bits, is_inf, round_f64, saturate_f16, to_f64
from .wmma import inf_inputs

U16, U32 = np.uint16, np.uint32

# mnemonic -> (A kind, B kind, result kind)
OPS = {
    "v_wmma_f32_16x16x16_f16": ("f16", "f16", "f32"), "v_wmma_f32_16x16x16_bf16": ("bf16", "bf16", "f32"),
    "v_wmma_f16_16x16x16_f16": ("f16", "f16", "f16"), "v_wmma_bf16_16x16x16_bf16": ("bf16", "bf16", "bf16"),
    "v_wmma_i32_16x16x16_iu8": ("iu8", "iu8", "i32"),
    "v_wmma_f32_16x16x16_fp8_fp8": ("fp8", "fp8", "f32"), "v_wmma_f32_16x16x16_fp8_bf8": ("fp8", "bf8", "f32"),
    "v_wmma_f32_16x16x16_bf8_fp8": ("bf8", "fp8", "f32"), "v_wmma_f32_16x16x16_bf8_bf8": ("bf8", "bf8", "f32"),
}
_FMT = {"f16": F16, "bf16": BF16, "f32": F32}
_K = np.arange(16)
_LANE_HI = (_K >> 2) & 1                        # k -> which half-wave holds it
_ELEM = (_K & 3) | ((_K >> 1) & 4)              # k -> element index in the lane's run


def _fp8_table(ebits: int, mbits: int, bias: int, fn: bool) -> np.ndarray:
    """float64 value of every 8-bit code (OCP FP8: E4M3 'fn' has no infinities, E5M2 is IEEE-like)."""
    code = np.arange(256)
    sign = np.where(code >> 7, -1.0, 1.0)
    e = (code >> mbits) & ((1 << ebits) - 1)
    m = code & ((1 << mbits) - 1)
    mag = np.where(e == 0, m * 2.0 ** (1 - bias - mbits), (1 + m / (1 << mbits)) * 2.0 ** (e - bias))
    top = e == (1 << ebits) - 1
    if fn:
        mag = np.where(top & (m == (1 << mbits) - 1), np.nan, mag)
    else:
        mag = np.where(top, np.where(m == 0, np.inf, np.nan), mag)
    return sign * mag


_FP8 = {"fp8": _fp8_table(4, 3, 7, True), "bf8": _fp8_table(5, 2, 15, False)}


def _regs(group, inst, role: str, count: int):
    op = inst.operands[role]
    if op.kind != "vgpr":
        raise IllegalInstruction(f"{inst.op}: {role} must be VGPRs")
    return np.stack([group.vgpr(op.index + j) for j in range(count)], axis=-1)   # (n, 32, count)


def _matrix(regs, kind: str, signed: bool):
    """(n, 32 lanes, VGPRs) -> (n, 16 rows-or-columns, 16 K) float64 in the RDNA4 A/B layout."""
    n = regs.shape[0]
    if kind in ("f16", "bf16"):
        el = regs[..., None].view(U16).reshape(n, 32, 8)            # little endian: low half first
        vals = to_f64(el, _FMT[kind])
    else:
        el = ((regs[..., None] >> (np.arange(4) * 8).astype(U32)) & U32(0xFF)).reshape(n, 32, 8)
        if kind == "iu8":
            v = el.astype(np.int64)
            vals = (v - ((v & 0x80) << 1) if signed else v).astype(np.float64)
        else:
            vals = _FP8[kind][el]
    rows = np.arange(16)[:, None] + 16 * _LANE_HI[None, :]              # (16, K) -> lane
    return vals[:, rows, np.broadcast_to(_ELEM, rows.shape)]


def build(inst):
    kind_a, kind_b, acc = OPS[inst.op]
    if kind_a != "iu8" and (any(inst.neg) or any(inst.neg_hi)):
        raise IllegalInstruction(f"{inst.op}: neg modifiers on gfx12 float WMMA are not modelled")
    if any(inst.op_sel) or inst.clamp and acc != "i32":
        raise IllegalInstruction(f"{inst.op}: op_sel / clamp on gfx12 float WMMA are not modelled")
    nab = 4 if kind_a in ("f16", "bf16") else 2
    wide = acc in ("f32", "i32")

    def h(group):
        if group.wave64:
            raise IllegalInstruction(f"{inst.op}: wave64 WMMA is not modelled")
        mode = Mode.of(group.mode)
        if acc in _FMT:
            mode.need_rne(_FMT[acc], inst.op)
        a = _matrix(_regs(group, inst, "src0", nab), kind_a, kind_a == "iu8" and inst.neg[0])
        b = _matrix(_regs(group, inst, "src1", nab), kind_b, kind_b == "iu8" and inst.neg[1])
        with np.errstate(all="ignore"):
            prod = np.einsum("wmk,wnk->wmn", a, b)                     # (n, M, N)
        lane = np.arange(32)
        m = np.arange(8)[None, :] + 8 * (lane // 16)[:, None]            # (lane, slot) -> M
        col = np.broadcast_to((lane % 16)[:, None], m.shape)             # (lane, slot) -> N
        if wide:
            c = _regs(group, inst, "src2", 8)                             # (n, 32, 8): slot = VGPR
        else:
            c = _regs(group, inst, "src2", 4)[..., None].view(U16).reshape(group.n, 32, 8)   # slot = 2 VGPR + half
        if acc == "i32":
            tot = prod[:, m, col].astype(np.int64) + c.view(np.int32).astype(np.int64)
            if inst.clamp:
                tot = np.clip(tot, -2 ** 31, 2 ** 31 - 1)
            out = (tot & 0xFFFFFFFF).astype(U32)
        else:
            f = _FMT[acc]
            with np.errstate(all="ignore"):
                tot = prod[:, m, col] + to_f64(c, f)
            out = as_bits(tot.astype(np.float32), F32) if f is F32 else round_f64(tot, f, 0)
            if f is F16 and mode.fp16_ovfl:
                out = saturate_f16(out, inf_inputs(a, b, m, col) | is_inf(c, f))
        dst = inst.operands["vdst"].index
        if wide:
            for j in range(8):
                group.set_vgpr(dst + j, out[..., j].astype(U32))
        else:
            o = out.astype(U32)
            for j in range(4):
                group.set_vgpr(dst + j, o[..., 2 * j] | (o[..., 2 * j + 1] << U32(16)))
    return h
