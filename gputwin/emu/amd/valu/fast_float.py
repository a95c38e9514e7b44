"""Fast path for the f32 add / subtract / multiply that dominate compiled float kernels (matmul's k-loop).

The table path (`_fetch` / `_run_op`) handles every modifier and MODE setting, with several passes over
the lanes per instruction (input flush, NaN classification on bits, output flush, masked write). When
the instruction has no modifiers (no DPP, abs, neg, clamp, omod) and MODE says nearest-even with f32
denormals kept (what compiled kernels run under), the result is numpy's IEEE float32 operation, except
for NaN results, which the hardware makes a quieted copy of the first NaN source (or the canonical NaN):
a NaN-propagating min detects any and only then the table path's `fix_nan` runs. Other MODE settings fall back to
the table handler at run time. Both give the same bits (tests/emu/amd/valu/test_fast_float.py).
"""
from __future__ import annotations

import numpy as np

from .fp import F32, Mode, fix_nan
from .operands import read
from .vopd import half_name

_OPS = {"v_add_f32": np.add, "v_sub_f32": np.subtract, "v_mul_f32": np.multiply}
_REVERSED = {"v_subrev_f32": np.subtract}
_ENCODINGS = ("VOP2", "VOP3", "VOPD")
_MIN = np.minimum.reduce


_PLAIN: dict[int, bool] = {}


def _plain_mode(raw: int) -> bool:
    """MODE rounds f32 to nearest even and keeps f32 denormals in and out."""
    plain = _PLAIN.get(raw)
    if plain is None:
        m = Mode.of(raw)
        plain = _PLAIN[raw] = m.round(F32) == 0 and m.keeps_denormals(F32)
    return plain


def _compute(inst, encoding: str):
    """(fn(group) -> f32 result bits, uint32) for one plain instruction or VOPD half, else None."""
    name = half_name(inst.op) if encoding == "VOPD" else inst.op
    fn, swap = _OPS.get(name), False
    if fn is None:
        fn, swap = _REVERSED.get(name), True
    if fn is None or inst.dpp is not None or inst.clamp or inst.omod or any(inst.abs) or any(inst.neg):
        return None
    if any(inst.op_sel) or inst.operands.get("vdst") is None or inst.operands["vdst"].kind != "vgpr":
        return None
    r0, r1 = ("src1", "src0") if swap else ("src0", "src1")

    def compute(g):
        """The result bits (the caller holds np.errstate(all="ignore"))."""
        res = fn(read(g, inst, r0, "f32").view(np.float32), read(g, inst, r1, "f32").view(np.float32))
        bits = np.asarray(res).view(np.uint32)
        low = _MIN(res, axis=None)         # min propagates NaN: one reduction, no bool temporary
        if low != low:
            bits = fix_nan(bits, [np.asarray(read(g, inst, r, "f32")) for r in ("src0", "src1")], F32)
        return bits
    return compute


def build(inst, fallback):
    """handler(group) for a plain f32 add/sub/mul (VOP2, VOP3 or a VOPD pair of them), else None;
    `fallback` runs the instruction when MODE is not the plain one."""
    if inst.encoding not in _ENCODINGS:
        return None
    halves = inst.vopd if inst.encoding == "VOPD" else (inst,)
    if not halves:
        return None
    parts = [_compute(h, inst.encoding) for h in halves]
    if any(p is None for p in parts):
        return None

    dsts = [half.operands["vdst"].index for half in halves]
    if len(parts) == 1:
        (one,), (dst,) = parts, dsts

        def h(g):
            if not _plain_mode(g.mode):
                return fallback(g)
            with np.errstate(all="ignore"):
                g.set_vgpr(dst, one(g))
        return h

    def pair(g):
        if not _plain_mode(g.mode):
            return fallback(g)
        with np.errstate(all="ignore"):
            results = [p(g) for p in parts]        # VOPD: both halves read before either writes
        for dst, bits in zip(dsts, results):
            g.set_vgpr(dst, bits)
    return pair
