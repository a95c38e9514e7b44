"""VOPD dual issue: two VOP2-like halves (X, Y) in one instruction. Both halves read all of their
sources before either writes, so a Y source naming X's destination sees the old value.
Also the 2-element dot products that exist only as VOPD halves or VOP3 (float64 sums, one rounding:
approximate vs hardware, see docs/valu.md)."""
from __future__ import annotations

import numpy as np

from gputwin.errors import IllegalInstruction

from .fp import BF16, F16, F32, as_bits, round_f64, to_f64
from .table import Op

U16, U32 = np.uint16, np.uint32


def _dot2acc(hf):
    """D.f32 += S0.lo*S1.lo + S0.hi*S1.hi (products exact; float64 sums, one final rounding)."""
    def fn(c, a, b, d):
        a, b = np.asarray(a, U32), np.asarray(b, U32)
        lo = lambda x: (x & U32(0xFFFF)).astype(U16)
        hi = lambda x: (x >> U32(16)).astype(U16)
        with np.errstate(all="ignore"):
            x = (to_f64(lo(a), hf) * to_f64(lo(b), hf) + to_f64(hi(a), hf) * to_f64(hi(b), hf)
                 + to_f64(np.asarray(d, U32), F32))
        return as_bits(x.astype(np.float32), F32)
    return fn


def _dot2_16(hf):
    """VOP3 v_dot2_f16_f16 / v_dot2_bf16_bf16: packed S0, S1; S2 and D are one half (op_sel)."""
    def fn(c, a, b, d):
        a, b = np.asarray(a, U32), np.asarray(b, U32)
        lo = lambda x: (x & U32(0xFFFF)).astype(U16)
        hi = lambda x: (x >> U32(16)).astype(U16)
        with np.errstate(all="ignore"):
            x = to_f64(lo(a), hf) * to_f64(lo(b), hf) + to_f64(hi(a), hf) * to_f64(hi(b), hf) + to_f64(d, hf)
        return round_f64(x, hf, 0)
    return fn


# halves that have no stand-alone table entry, and the VOP3 16-bit dots built the same way
OPS = {
    "v_dot2acc_f32_f16": Op(_dot2acc(F16), ("b32", "b32", "f32"), "f32", fmt=F32, acc=True),
    "v_dot2acc_f32_bf16": Op(_dot2acc(BF16), ("b32", "b32", "f32"), "f32", fmt=F32, acc=True),
}
DOT16 = {
    "v_dot2_f16_f16": Op(_dot2_16(F16), ("b32", "b32", "f16"), "f16", fmt=F16),
    "v_dot2_bf16_bf16": Op(_dot2_16(BF16), ("b32", "b32", "bf16"), "bf16", fmt=BF16),
}


def half_name(name: str) -> str:
    return "v_" + name[len("v_dual_"):] if name.startswith("v_dual_") else name


def execute(group, inst, lookup, fetch, run_op) -> None:
    if not inst.vopd or len(inst.vopd) != 2:
        raise IllegalInstruction(f"{inst.op}: VOPD without its two halves")
    staged = []
    for h in inst.vopd:
        name = half_name(h.op)
        op = OPS.get(name) or lookup(name)
        if op is None:
            raise IllegalInstruction(f"VOPD half {h.op} is not modelled")
        srcs, wmask = fetch(group, h, op)
        staged.append((h, op, srcs, wmask))
    for h, op, srcs, wmask in staged:
        run_op(group, h, op, srcs, wmask)
