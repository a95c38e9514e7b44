"""CDNA3 packed f32 (VOP3P): v_pk_fma_f32, v_pk_mul_f32, v_pk_add_f32, v_pk_mov_b32.

Each source is a 64-bit register pair holding two f32 values (CDNA3 ISA guide, "Packed Math"): the low
result dword reads dword op_sel[i] of source i (0: bits [31:0], 1: bits [63:32]) and the high result dword
reads dword op_sel_hi[i]; neg (NEG_LO) negates the value feeding the low result, neg_hi the high one.
v_pk_mov_b32 is D = {S1[op_sel[1]], S0[op_sel[0]]} (no arithmetic, no modifiers). Each half is then one
f32 operation with the usual rules: FMA rounded once, FP_ROUND / denormals from MODE, a NaN result is the
first NaN source quieted, CLAMP to [0, 1].

An inline constant is a 32-bit value: clang-19 always reads it as dword 0 (`... 1.0 op_sel_hi:[1,1,0]`);
what the hardware puts in dword 1 of a constant is not documented, so selecting it fails closed.
"""
from __future__ import annotations

import numpy as np

from gputwin.errors import IllegalInstruction

from .arith import OPS as ARITH
from .fp import F32, Mode, apply_clamp, fix_nan
from .operands import apply_mods, inline_const, read, write_vdst
from .table import Ctx

U32, U64 = np.uint32, np.uint64

# mnemonic -> (sources, the f32 operation each half runs: the scalar table's, all rounding modes)
OPS = {"v_pk_fma_f32": (3, ARITH["v_fma_f32"].fn), "v_pk_mul_f32": (2, ARITH["v_mul_f32"].fn),
       "v_pk_add_f32": (2, ARITH["v_add_f32"].fn), "v_pk_mov_b32": (2, None)}


def _dwords(group, inst, i: int):
    """(dword 0, dword 1) of source i; a constant has no dword 1 (None)."""
    role = f"src{i}"
    op = inst.operands[role]
    if op.kind == "const":
        return np.asarray(U32(inline_const(op.index, "f32"))), None
    if op.kind == "literal":
        raise IllegalInstruction(f"{inst.op}: a literal source is not modelled (GFX9 VOP3P has none)")
    v = np.asarray(read(group, inst, role, "b64"))
    return (v & U64(0xFFFFFFFF)).astype(U32), (v >> U64(32)).astype(U32)


def _pick(inst, words, i: int, hi_result: bool):
    sel = inst.op_sel_hi[i] if hi_result else inst.op_sel[i]
    v = words[1] if sel else words[0]
    if v is None:
        raise IllegalInstruction(f"{inst.op}: src{i} is an inline constant and op_sel"
                                 f"{'_hi' if hi_result else ''} selects its undocumented high dword")
    return v


def build(inst):
    n, fn = OPS[inst.op]
    if inst.op == "v_pk_mov_b32":
        if inst.clamp or any(inst.neg[:2]) or any(inst.neg_hi[:2]):
            raise IllegalInstruction(f"{inst.op}: clamp / neg on a move are not modelled")

        def mov(group):
            lo = _pick(inst, _dwords(group, inst, 0), 0, False)
            hi = _pick(inst, _dwords(group, inst, 1), 1, False)
            _write(group, inst, lo, hi)
        return mov

    def h(group):
        mode = Mode.of(group.mode)
        c = Ctx(group, inst, mode, mode.round(F32), inst.clamp, None, group.exec)
        words = [_dwords(group, inst, i) for i in range(n)]
        halves = []
        for hi_result in (False, True):
            neg = inst.neg_hi if hi_result else inst.neg
            srcs = [mode.flush_in(apply_mods(_pick(inst, words[i], i, hi_result), "f32", False, neg[i]), F32)
                    for i in range(n)]
            res = fix_nan(np.asarray(fn(c, *srcs)), srcs, F32)
            res = mode.flush_out(res, F32)
            if inst.clamp:
                res = apply_clamp(res, F32, mode)
            halves.append(res)
        _write(group, inst, *halves)
    return h


def _write(group, inst, lo, hi):
    shape = (group.n, group.lanes)
    v = np.broadcast_to(lo, shape).astype(U64) | (np.broadcast_to(hi, shape).astype(U64) << U64(32))
    write_vdst(group, inst, "b64", v, None)
