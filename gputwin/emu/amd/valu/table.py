"""The shape of one entry in the VALU semantics tables, and the per-instruction context it receives."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .fp import F16, FMTS, Fmt, Mode, apply_clamp, apply_omod, fix_nan, has_inf, is_inf, saturate_f16


@dataclass(frozen=True)
class Op:
    """How execute() runs one mnemonic.

    fn(c, *srcs) gets the sources as bit arrays (after DPP, abs/neg, input denormal flushing) and returns
    the result bits, or (result, mask) for out="v+mask", or a bool mask for out="mask"/"exec".
    """
    fn: Callable
    srcs: tuple[str, ...]           # operand type of src0, src1, src2
    dst: str | None = None          # result type (None: no VGPR result)
    out: str = "v"                  # v | mask | v+mask | exec (v_cmpx)
    fmt: Fmt | None = None          # float format whose FP_ROUND applies; None: the op does not round
    directed: bool = False          # fn implements the non-nearest rounding modes itself
    flush: bool = True              # flush denormal float inputs per FP_DENORM
    nan: bool = True                # NaN results: quiet the first NaN source / canonical NaN
    int_clamp: bool = False         # fn implements the clamp bit as integer saturation
    cin: str | None = None          # lane-mask input: "src2" (VCC in VOP2) or "vcc" (always VCC)
    acc: bool = False               # VOP2 mac form: src2 is the destination register
    k: bool = False                 # v_fmamk / v_fmaak: sources are (src0, src1, literal K)


@dataclass
class Ctx:
    group: object
    inst: object
    mode: Mode
    rmode: int = 0
    clamp: bool = False
    cin: object = None              # bool (n, L) or None
    exec: object = None             # bool (n, L): lanes that execute


def float_sources(op: Op, srcs) -> list:
    """(bits, Fmt) of every float input of `op`; a 32-bit source of an op with a 16-bit float result
    (v_dot2_f16_f16) holds two packed values of the result's format."""
    out = [(s, FMTS[t]) for s, t in zip(srcs, op.srcs) if t in FMTS]
    half = FMTS.get(op.dst)
    if half is not None and half.bits == 16:
        u32 = np.uint32
        for s, t in zip(srcs, op.srcs):
            if t == "b32":
                s = np.asarray(s, u32)
                out += [((s & u32(0xFFFF)).astype(half.udt), half), ((s >> u32(16)).astype(half.udt), half)]
    return out


def finish_float(op: Op, inst, mode: Mode, res, srcs):
    """Post-processing of a float result: NaN quieting, output denormal flush, FP16_OVFL saturation,
    omod (saturated again), then clamp."""
    f = FMTS[op.dst]
    if op.nan:
        res = fix_nan(res, [s for s, t in zip(srcs, op.srcs) if FMTS.get(t) is f], f)
    res = mode.flush_out(res, f)
    ovfl = f is F16 and mode.fp16_ovfl
    if ovfl and is_inf(res, f).any():
        res = saturate_f16(res, has_inf(float_sources(op, srcs)))
    if inst.omod and not mode.ieee:          # the hardware ignores omod in IEEE mode
        res = apply_omod(res, f, inst.omod, mode)
        if ovfl and is_inf(res, f).any():    # an omod overflow saturates as well
            res = saturate_f16(res, has_inf(float_sources(op, srcs)))
    if inst.clamp:
        res = apply_clamp(res, f, mode)
    return res
