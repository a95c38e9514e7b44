"""RDNA3 VALU semantics: `execute(group, inst)` runs one VOP1/VOP2/VOPC/VOP3/VOP3SD/VOP3P/VOPD
instruction on every lane of a WaveGroup (docs/contracts.md, "Inside the RDNA3 emulator").

Semantics are data: each family module contributes a table {mnemonic: Op}; `_fetch` / `_run_op` do what is common
(operand fetch with DPP and modifiers, denormal flushing, NaN quieting, omod/clamp, write-back under
EXEC, lane-mask results). docs/valu.md lists the rules and the decisions taken.
"""
from __future__ import annotations

import numpy as np

from gputwin.errors import IllegalInstruction

from . import arith, cmp, cvt, dpp, fast, fast_float, fspecial, interp, intops, packed, packed_f32, trans, vopd
from .fp import FMTS, Mode
from .lane import SPECIAL
from .operands import SHORT_ENCODINGS, WIDTH, apply_mods, mask_dst, read, read_mask, write_vdst
from .table import Ctx, Op, finish_float

EXEC_INDEX = 126
OPS: dict[str, Op] = {}
for _m in (arith, trans, fspecial, intops, cmp, cvt):
    OPS.update(_m.OPS)
OPS.update(vopd.DOT16)
_HALF_SELECT = ("VOP3", "VOP3SD", "VOP1", "VOP2", "VOPC")   # encodings whose op_sel picks 16-bit halves


def prepare(inst):
    """handler(group) for one decoded instruction (the executor builds it once per instruction);
    raises IllegalInstruction now if the mnemonic is not modelled."""
    if inst.encoding == "VOPD":
        for h in inst.vopd or ():
            if vopd.half_name(h.op) not in vopd.OPS and vopd.half_name(h.op) not in OPS:
                raise IllegalInstruction(f"VOPD half {h.op} is not modelled")
        table = lambda group: vopd.execute(group, inst, OPS.get, _fetch, _run_op)  # noqa: E731
        return fast_float.build(inst, table) or table
    if inst.encoding == "VINTERP":
        return interp.build(inst)
    name = inst.op
    special = SPECIAL.get(name)
    if special is not None:
        return lambda group: special(group, inst, group.exec)
    if name in packed.OPS:
        return lambda group: packed.execute(group, inst)
    if name in packed_f32.OPS:
        return packed_f32.build(inst)
    op = OPS.get(name)
    if op is None:
        raise IllegalInstruction(f"VALU instruction {name} ({inst.encoding}) is not modelled")
    quick = fast.build(inst)                   # 64-bit address arithmetic on 32-bit halves
    if quick is not None:
        return quick
    specs = _plan(inst, op)
    table = lambda group: _run_op(group, inst, op, *_fetch(group, inst, op, specs))  # noqa: E731
    return fast_float.build(inst, table) or table


def execute(group, inst) -> None:
    prepare(inst)(group)


def _k_roles(inst) -> tuple[str, str, str]:
    """Roles of (src0, src1, K) for v_fmamk (D = S0*K + S1) / v_fmaak (D = S0*S1 + K): the decoder
    names the literal K operand "k"."""
    if "k" not in inst.operands:
        raise IllegalInstruction(f"{inst.op}: missing the literal K operand")
    return "src0", "src1", "k"


def _plan(inst, op: Op):
    """Per-source (role, type, high half, format to flush or None, abs, neg), fixed per instruction."""
    roles = _k_roles(inst) if op.k else ("src0", "src1", "src2")
    specs = []
    for i, typ in enumerate(op.srcs):
        role = roles[i]
        sel = inst.op_sel[i] if i < 3 else False
        if op.acc and role == "src2" and role not in inst.operands:
            role = "vdst"                            # VOP2 mac: the destination is the addend, same half
            sel = inst.op_sel[3] if inst.encoding in SHORT_ENCODINGS else sel
        hi = bool(WIDTH[typ] == 16 and sel and inst.encoding in _HALF_SELECT)
        f = FMTS.get(typ) if op.flush else None
        mods = (inst.abs[i], inst.neg[i]) if i < 3 and typ in FMTS else (False, False)
        specs.append((role, typ, hi, f) + mods)
    return tuple(specs)


def _fetch(group, inst, op: Op, specs=None):
    """Read the sources of `op` (DPP on src0, abs/neg, input flush); returns (srcs, write mask)."""
    mode = Mode.of(group.mode)
    wmask = group.exec
    srcs = []
    for i, (role, typ, hi, f, absv, negv) in enumerate(specs or _plan(inst, op)):
        v = read(group, inst, role, typ, hi)
        if i == 0 and inst.dpp is not None:
            v, w = dpp.apply(group, inst.dpp, v)
            wmask = wmask & w
        if absv or negv:
            v = apply_mods(v, typ, absv, negv)
        if f is not None:
            v = mode.flush_in(v, f)
        srcs.append(v)
    return srcs, wmask


def _run_op(group, inst, op: Op, srcs, wmask) -> None:
    """Compute `op` on fetched sources and write its results (shared with VOPD)."""
    mode = Mode.of(group.mode)
    f = op.fmt
    rmode = mode.round(f) if f is not None else 0
    if rmode and not op.directed:
        mode.need_rne(f, inst.op)
    dst_f = FMTS.get(op.dst) if op.dst else None
    if inst.clamp and not (op.int_clamp or dst_f is not None):
        raise IllegalInstruction(f"{inst.op}: clamp is not modelled for this instruction")
    if inst.omod and dst_f is None:
        raise IllegalInstruction(f"{inst.op}: omod on a non-float result")
    cin = None
    if op.cin:
        cin = read_mask(group, inst, "src2" if op.cin == "src2" else "vcc")
    c = Ctx(group, inst, mode, rmode, inst.clamp, cin, group.exec)
    res = op.fn(c, *srcs)
    if op.out == "mask":
        group.set_lane_mask(mask_dst(inst), np.broadcast_to(res, wmask.shape) & wmask)
        return
    if op.out == "exec":
        group.set_lane_mask(EXEC_INDEX, np.broadcast_to(res, wmask.shape) & wmask)
        return
    carry = None
    if op.out == "v+mask":
        res, carry = res
    if dst_f is not None:
        res = finish_float(op, inst, mode, res, srcs)
    write_vdst(group, inst, op.dst, res, None if wmask is group.exec else wmask)
    if carry is not None:
        group.set_lane_mask(mask_dst(inst), np.broadcast_to(carry, wmask.shape) & wmask)


__all__ = ["execute", "prepare", "OPS"]
