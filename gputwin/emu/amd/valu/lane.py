"""Cross-lane and register-file instructions that do not fit the table's per-lane shape:
v_readlane / v_readfirstlane (SGPR results), v_writelane (ignores EXEC), v_permlane16/x16/64,
v_swap, v_movrel* (M0-relative VGPR addressing), v_nop."""
from __future__ import annotations

import numpy as np

from gputwin.errors import IllegalInstruction

from .operands import M0_INDEX, read, write_vdst

U32 = np.uint32


def _scalar_dst(inst):
    for role in ("sdst", "vdst"):
        op = inst.operands.get(role)
        if op is not None and op.kind == "sgpr":
            return op.index
    raise IllegalInstruction(f"{inst.op}: needs an SGPR destination")


def _lane_index(group, inst, role):
    v = np.broadcast_to(read(group, inst, role, "u32"), (group.n, 1))[:, 0]
    return (v & U32(group.lanes - 1)).astype(np.int64)


def readlane(group, inst, mask):
    src = np.broadcast_to(read(group, inst, "src0", "b32"), (group.n, group.lanes))
    group.set_sgpr(_scalar_dst(inst), src[np.arange(group.n), _lane_index(group, inst, "src1")])


def readfirstlane(group, inst, mask):
    src = np.broadcast_to(read(group, inst, "src0", "b32"), (group.n, group.lanes))
    first = np.where(group.exec.any(axis=1), group.exec.argmax(axis=1), 0)
    group.set_sgpr(_scalar_dst(inst), src[np.arange(group.n), first])


def writelane(group, inst, mask):
    val = np.broadcast_to(read(group, inst, "src0", "b32"), (group.n, 1))
    lane = _lane_index(group, inst, "src1")
    sel = np.arange(group.lanes)[None, :] == lane[:, None]
    write_vdst(group, inst, "b32", np.broadcast_to(val, (group.n, group.lanes)), sel)


def _permlane(cross: bool, var: bool = False):
    """v_permlane16/x16_b32: lane i of a row of 16 reads lane nibble i of {S2, S1} of its own row (x16: of
    the other row of its 32); the gfx12 _var forms take each lane's select from VGPR S1 [3:0] instead.
    op_sel[0] = FI (inactive source lanes are read anyway), op_sel[1] = BOUND_CTRL (they read 0)."""
    def fn(group, inst, mask):
        src = np.broadcast_to(read(group, inst, "src0", "b32"), (group.n, group.lanes))
        i = np.arange(group.lanes)
        if var:
            nib = (np.broadcast_to(read(group, inst, "src1", "u32"), (group.n, group.lanes)) & U32(15)).astype(np.int64)
        else:
            s1 = np.broadcast_to(read(group, inst, "src1", "u32"), (group.n, 1)).astype(np.uint64)
            s2 = np.broadcast_to(read(group, inst, "src2", "u32"), (group.n, 1)).astype(np.uint64)
            sel64 = s1 | (s2 << np.uint64(32))
            nib = ((sel64 >> (4 * (i & 15)).astype(np.uint64)) & np.uint64(15)).astype(np.int64)
        row = i & ~15
        if cross:
            row = row ^ 16
        srcl = row[None, :] + nib
        moved = np.take_along_axis(src, srcl, axis=1)
        fi, bound = inst.op_sel[0], inst.op_sel[1]
        valid = np.ones_like(moved, bool) if fi else np.take_along_axis(group.exec, srcl, axis=1)
        if bound:
            moved = np.where(valid, moved, U32(0))
            write_vdst(group, inst, "b32", moved, mask)
        else:
            write_vdst(group, inst, "b32", moved, mask & valid)
    return fn


def permlane64(group, inst, mask):
    """Swap the two 32-lane halves of a wave64; in wave32 the guide's pseudocode is s_nop (hardware-recorded:
    VDST keeps its value)."""
    if not group.wave64:
        return
    src = np.broadcast_to(read(group, inst, "src0", "b32"), (group.n, group.lanes))
    src = np.concatenate([src[:, 32:], src[:, :32]], axis=1)
    write_vdst(group, inst, "b32", src, mask)


def swap(group, inst, mask):
    d, s = inst.operands["vdst"].index, inst.operands["src0"].index
    vd, vs = group.vgpr(d), group.vgpr(s)
    group.set_vgpr(d, vs, mask)
    group.set_vgpr(s, vd, mask)


def _gather(group, base: int, m0, mask=None):
    """VGPR[base + M0] per wave (M0 usually uniform: loop over its distinct values, not lanes)."""
    out = np.zeros((group.n, group.lanes), U32)
    for off in np.unique(m0):
        reg = base + int(off)
        if not 0 <= reg < 256:
            raise IllegalInstruction(f"v_movrel: VGPR v{reg} out of range")
        w = m0 == off
        out[w] = group.vgpr(reg)[w]
    return out


def _scatter(group, base: int, m0, value, mask):
    for off in np.unique(m0):
        reg = base + int(off)
        if not 0 <= reg < 256:
            raise IllegalInstruction(f"v_movrel: VGPR v{reg} out of range")
        group.set_vgpr(reg, value, mask & (m0 == off)[:, None])


def _movrel(src_rel: bool, dst_rel: bool):
    def fn(group, inst, mask):
        m0 = group.sgpr(M0_INDEX).astype(np.int64)
        zero = np.zeros_like(m0)
        s = inst.operands["src0"]
        if s.kind == "vgpr":
            val = _gather(group, s.index, m0 if src_rel else zero)
        else:
            val = np.broadcast_to(read(group, inst, "src0", "b32"), (group.n, group.lanes))
        _scatter(group, inst.operands["vdst"].index, m0 if dst_rel else zero, val, mask)
    return fn


SPECIAL = {
    "v_readlane_b32": readlane,
    "v_readfirstlane_b32": readfirstlane,
    "v_writelane_b32": writelane,
    "v_permlane16_b32": _permlane(False),
    "v_permlanex16_b32": _permlane(True),
    "v_permlane64_b32": permlane64,
    "v_permlane16_var_b32": _permlane(False, var=True), "v_permlanex16_var_b32": _permlane(True, var=True),
    "v_swap_b32": swap,
    "v_movrels_b32": _movrel(True, False),
    "v_movreld_b32": _movrel(False, True),
    "v_movrelsd_b32": _movrel(True, True),
    "v_nop": lambda group, inst, mask: None,
    "v_pipeflush": lambda group, inst, mask: None,
}
