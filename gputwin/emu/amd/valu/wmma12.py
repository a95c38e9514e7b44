"""WMMA on gfx12 (RDNA4, wave32 and wave64): D = A x B + C for 16x16x16 tiles, in RDNA4's register layouts.

Layout (RDNA4 ISA guide, "Wave Matrix Multiply Accumulate"; AMD GPUOpen "Using the Matrix Cores of AMD
RDNA 4 architecture GPUs"; the index maps of tinygrad's RDNA4 emulator, which that project checks against
gfx1201 hardware; wave64: AMD's Matrix Instruction Calculator, `-a rdna4 -w 64`). Lane l is in 16-lane
group g = l // 16; each lane holds a run of elements e (16-bit types two per VGPR, 8-bit four):
- A (M x K): element (m, k) is in lane m + 16 g, element e, with k = 8 (e // 4 + g // 2) + 4 (g % 2) +
  e % 4. Wave32 (g < 2, 8 elements: 4 VGPRs of 16-bit, 2 of 8-bit): lanes 0-15 hold k = 0-3 and 8-11,
  lanes 16-31 k = 4-7 and 12-15 (no replication as on gfx11). Wave64 (4 elements: 2 VGPRs / 1 VGPR):
  group g holds k = 4g .. 4g + 3. Only which A element meets which B element is observable (K is summed),
  so any labelling of k that A and B share is the same instruction; this one is the calculator's for
  16-bit types.
- B (K x N): element (k, n) likewise in lane n + 16 g.
- C / D: element (m, n) is in lane n + 16 g, slot s, with m = 8 (g % 2) + 4 (g // 2) + s: wave32
  m = 8 g + s (8 slots), wave64 (4 slots) the calculator's "C or D[i][j] GPR: i % 4, Lane: 32 *
  (floor(i / 4) % 2) + 16 * floor(i / 8) + j". 32-bit types: slot s is VGPR s (8 / 4 VGPRs); 16-bit
  types packed two per VGPR: VGPR s // 2, half s % 2 (4 / 2 VGPRs).
Products are exact in float64 and summed there with C, then rounded once (nearest even) to the result
format: APPROXIMATE VS HARDWARE for float results (the hardware's internal accumulation order and
precision are not modelled), exact for iu8. fp8 is OCP E4M3 (no infinities, 0x7F/0xFF NaN), bf8 OCP E5M2.
iu8: neg[0] / neg[1] mark A / B signed; clamp saturates to i32. Not modelled (IllegalInstruction):
the iu4 forms, v_swmmac_*, neg / op_sel modifiers on float forms.
"""
from __future__ import annotations

import numpy as np

from gputwin.errors import IllegalInstruction

from .fp import BF16, F16, F32, Mode, as_bits, is_inf, round_f64, saturate_f16, to_f64
from .fp8 import BF8_OCP, FP8_OCP
from .wmma import inf_inputs, vgpr_block

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


def _layout(lanes: int):
    """For a wave of `lanes`: k -> (lane group, element) of A/B, and (lane, slot) -> m of C/D."""
    per = 256 // lanes                                   # A/B elements and C/D slots per lane
    g, e = np.meshgrid(np.arange(lanes // 16), np.arange(per), indexing="ij")
    k = 8 * (e // 4 + g // 2) + 4 * (g % 2) + e % 4
    group, elem = np.zeros(16, np.int64), np.zeros(16, np.int64)
    group[k], elem[k] = g, e
    lane = np.arange(lanes)
    m = (8 * (lane // 16 % 2) + 4 * (lane // 32))[:, None] + np.arange(per)[None, :]
    return per, group, elem, m, np.broadcast_to((lane % 16)[:, None], m.shape)


_LAYOUT = {lanes: _layout(lanes) for lanes in (32, 64)}


# float64 value of every OCP 8-bit code (fp8.py: E4M3 with no infinities, E5M2 IEEE-like)
_FP8 = {"fp8": FP8_OCP.to_f32.view(np.float32).astype(np.float64),
        "bf8": BF8_OCP.to_f32.view(np.float32).astype(np.float64)}


def _matrix(regs, kind: str, signed: bool):
    """(n, lanes, VGPRs) -> (n, 16 rows-or-columns, 16 K) float64 in the RDNA4 A/B layout."""
    n, lanes = regs.shape[:2]
    per, group, elem = _LAYOUT[lanes][:3]
    if kind in ("f16", "bf16"):
        el = regs[..., None].view(U16).reshape(n, lanes, per)       # little endian: low half first
        vals = to_f64(el, _FMT[kind])
    else:
        el = ((regs[..., None] >> (np.arange(4) * 8).astype(U32)) & U32(0xFF)).reshape(n, lanes, per)
        if kind == "iu8":
            v = el.astype(np.int64)
            vals = (v - ((v & 0x80) << 1) if signed else v).astype(np.float64)
        else:
            vals = _FP8[kind][el]
    rows = np.arange(16)[:, None] + 16 * group[None, :]                 # (16, K) -> lane
    return vals[:, rows, np.broadcast_to(elem, rows.shape)]


def build(inst):
    kind_a, kind_b, acc = OPS[inst.op]
    if kind_a != "iu8" and (any(inst.neg) or any(inst.neg_hi)):
        raise IllegalInstruction(f"{inst.op}: neg modifiers on gfx12 float WMMA are not modelled")
    if any(inst.op_sel) or inst.clamp and acc != "i32":
        raise IllegalInstruction(f"{inst.op}: op_sel / clamp on gfx12 float WMMA are not modelled")
    wide = acc in ("f32", "i32")

    def h(group):
        mode = Mode.of(group.mode)
        if acc in _FMT:
            mode.need_rne(_FMT[acc], inst.op)
        per, _, _, m, col = _LAYOUT[group.lanes]
        nab = per // 2 if kind_a in ("f16", "bf16") else per // 4      # A/B VGPRs
        a = _matrix(vgpr_block(group, inst, "src0", nab), kind_a, kind_a == "iu8" and inst.neg[0])
        b = _matrix(vgpr_block(group, inst, "src1", nab), kind_b, kind_b == "iu8" and inst.neg[1])
        with np.errstate(all="ignore"):
            prod = np.einsum("wmk,wnk->wmn", a, b)                     # (n, M, N)
        if wide:
            c = vgpr_block(group, inst, "src2", per)                           # (n, lanes, slots): slot = VGPR
        else:                                                             # slot = 2 VGPR + half
            c = vgpr_block(group, inst, "src2", per // 2)[..., None].view(U16).reshape(group.n, group.lanes, per)
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
            for j in range(per):
                group.set_vgpr(dst + j, out[..., j].astype(U32))
        else:
            o = out.astype(U32)
            for j in range(per // 2):
                group.set_vgpr(dst + j, o[..., 2 * j] | (o[..., 2 * j + 1] << U32(16)))
    return h
