"""Which code the native tier may run: the instruction set S (ops.py) and the regions built from it.

A region is every instruction in S reachable from a loop header through instructions in S; it must hold
the loop's back-edge. Instructions outside S (memory, LDS, barriers, transcendentals, 16/64-bit float
math, DPP, clamp/omod/op_sel, f32 math when MODE does not round to nearest even) are where waves leave
it. Code in a region touches nothing but its own wave's registers, so running each wave through it on
its own gives the same bits as the lock-step numpy tier.
"""
from __future__ import annotations

from gputwin.emu.amd import gfx12
from gputwin.emu.amd.sopp import BRANCHES, branch_target
from gputwin.emu.amd.scalar_ops import const_value
from gputwin.emu.amd.valu.operands import inline_const
from gputwin.errors import GpuFault

from . import fops, ops
from .codegen import EXEC, NULL, SCC, EXECZ, VCCZ

MAX_REGION = 1024          # instructions: beyond this the loop is not the small hot kernel this is for
_VALU_ENCODINGS = ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD")
_MODIFIED = fops.OPS | {"v_cndmask_b32"}     # abs/neg apply to their float sources (the others have none)
_SCALAR_ENCODINGS = ("SOP1", "SOP2", "SOPC", "SOPK")
_NOPS = ops.NOPS | gfx12.NOPS


def as_native(inst, arch: str, wave64: bool, floats: bool = False):
    """`inst` under its gfx11 name when the native tier runs it, else None. `floats`: the f32
    instructions of fops.py are in S (MODE rounds f32 to nearest even)."""
    if inst is None:
        return None
    if arch in gfx12.ARCHES:
        if inst.op in gfx12.NOPS:
            return inst
        try:
            if gfx12.build(inst) is not None:       # gfx12's own semantics: the numpy tier's business
                return None
        except GpuFault:
            return None
        inst = gfx12.as_gfx11(inst)
    enc, name = inst.encoding, inst.op
    if enc == "SOPP":
        return inst if name in _NOPS or name in BRANCHES else None
    if enc in _SCALAR_ENCODINGS:
        return inst if name in ops.SALU_OPS and _scalar_ok(inst) else None
    if enc in _VALU_ENCODINGS:
        return inst if _valu_ok(inst, wave64, floats) else None
    if enc == "VOPD":
        return inst if all(_valu_ok(h, wave64, floats) for h in inst.vopd or ()) and inst.vopd else None
    return None


def _valu_ok(inst, wave64: bool, floats: bool) -> bool:
    name = inst.op
    return (name in ops.VALU_OPS or floats and name in fops.OPS) and _vector_ok(inst, wave64)


def uses_floats(insts: dict) -> bool:
    """Does the region hold an f32 instruction (so it is compiled for one MODE)?"""
    return any(h.op in fops.OPS for inst in insts.values() for h in (inst.vopd or (inst,)))


def _source_ok(op) -> bool:
    if op.kind in ("sgpr", "literal", "imm"):
        return True
    if op.kind == "special":
        return op.index in (SCC, EXECZ, VCCZ)
    if op.kind == "const":
        try:
            const_value(op, False)
            inline_const(op.index, "u32")
        except GpuFault:
            return False
        return True
    return False


def _dst_ok(i: int, wide: bool) -> bool:
    """A scalar destination: any SGPR slot; a 64-bit or (wave64) lane-mask one an aligned pair that does
    not straddle M0 / EXEC."""
    if i in (NULL, EXEC) or (not wide and i < 128):
        return True
    return i <= 106 and i % 2 == 0


def _scalar_ok(inst) -> bool:
    wide = ops.scalar_widths(inst.op)
    for role, op in inst.operands.items():
        if role == "sdst":
            if op.kind != "sgpr" or not _dst_ok(op.index, wide[2]):
                return False
        elif not _source_ok(op) or (op.kind == "sgpr" and op.index >= 127 and wide[role == "src1"]):
            return False
    return True


def _vector_ok(inst, wave64: bool) -> bool:
    if inst.dpp is not None or inst.clamp or inst.omod or inst.extra or any(inst.op_sel):
        return False
    if (any(inst.abs) or any(inst.neg)) and inst.op not in _MODIFIED:
        return False
    for role, op in inst.operands.items():
        if role == "vdst":
            if op.kind != "vgpr" or op.index + op.count > 256:
                return False
        elif role == "sdst":
            if op.kind != "sgpr" or not _dst_ok(op.index, wave64):
                return False
        elif op.kind == "vgpr":
            if op.index + op.count > 256:
                return False
        elif role == "src2" and _reads_mask(inst.op) and op.kind not in ("sgpr", "const"):
            return False        # a lane mask is an SGPR (pair) or an inline constant (valu.operands.read_mask)
        elif not _source_ok(op) or op.kind == "imm" or (op.kind == "sgpr" and op.index >= 127):
            return False
    return True


def _reads_mask(name: str) -> bool:
    """Is src2 of `name` a lane-mask source (v_cndmask's select, a carry-in)?"""
    return name == "v_cndmask_b32" or name in ops.CARRY and ops.CARRY[name][2]


def successors(pc: int, inst) -> list[int]:
    nxt = pc + inst.size
    if inst.op == "s_branch":
        return [branch_target(pc, inst)]
    if inst.op in BRANCHES:
        return [branch_target(pc, inst), nxt]
    return [nxt]


def find(program, header: int, back_edge: int, floats: bool = False) -> dict | None:
    """The region {pc: gfx11 Inst} of the loop whose back-edge at `back_edge` jumps to `header`, or None
    when the loop leaves S before its back-edge, is too big, or branches before the code. `floats` as
    for as_native."""
    arch, wave64 = program.arch, program.wave64
    insts: dict = {}
    outside: set[int] = set()
    todo = [header]
    while todo:
        pc = todo.pop()
        if pc in insts or pc in outside:
            continue
        if pc < 0:
            return None
        inst = as_native(program.step(pc)[2], arch, wave64, floats)
        if inst is None:
            outside.add(pc)
            continue
        insts[pc] = inst
        if len(insts) > MAX_REGION:
            return None
        todo += successors(pc, inst)
    return insts if back_edge in insts else None
