"""Hardware registers seen through s_getreg / s_setreg and the s_sendmsg(_rtn) messages (gfx11 ids).

Only registers whose contents are defined for an emulated wave are modelled; the rest raise
IllegalInstruction naming the register. HW_ID1/HW_ID2 are synthetic (documented in docs/emulator.md):
wave_id is the wave's index inside its workgroup and every other placement field reads 0.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.amd import mode_bits
from gputwin.errors import IllegalInstruction

HW_REG_MODE, HW_REG_STATUS, HW_REG_TRAPSTS = 1, 2, 3
HW_REG_HW_ID1, HW_REG_HW_ID2, HW_REG_SHADER_CYCLES = 23, 24, 29
MSG_DEALLOC_VGPRS = 3
# Flat apertures (high 32 bits of the 64-bit base) as amdkfd programs SH_MEM_BASES on gfx9+ in 64-bit
# mode: LDS at 1 << 48, scratch at 2 << 48 (kfd_flat_memory.c); src_shared_base / src_private_base read these.
SHARED_APERTURE_HI = 0x10000
PRIVATE_APERTURE_HI = 0x20000
MSG_RTN_GET_REALTIME = 131
U32 = np.uint32


def _fields(imm: int):
    rid, offset, size = imm & 0x3F, (imm >> 6) & 0x1F, ((imm >> 11) & 0x1F) + 1
    return rid, offset, (1 << size) - 1


def _read(g, rid: int, op: str) -> np.ndarray:
    if rid == HW_REG_MODE:
        return np.full(g.n, g.mode, U32)
    if rid == HW_REG_STATUS:  # SCC [0], EXECZ [9], VCCZ [10]
        return g.scc.astype(U32) | (g.sgpr(252) << U32(9)) | (g.sgpr(251) << U32(10))
    if rid == HW_REG_TRAPSTS:
        return np.zeros(g.n, U32)
    if rid == HW_REG_HW_ID1:
        return (g.waves % g.ctx.waves_per_group).astype(U32)
    if rid == HW_REG_HW_ID2:
        return np.zeros(g.n, U32)
    if rid == HW_REG_SHADER_CYCLES:  # a deterministic clock: wave-instructions executed so far
        return np.full(g.n, g.ctx.clock() & 0xFFFFF, U32)
    raise IllegalInstruction(f"{op}: hardware register {rid} is not modelled")


def build(inst, imm: int, arch: str = "gfx1100"):
    """s_getreg / s_setreg on gfx11 (gfx12.py and cdna3.py pass their arch: MODE's fields differ).
    A MODE write that sets a field the emulator does not model raises (mode_bits.py)."""
    rid, offset, mask = _fields(imm)
    fam = mode_bits.family(arch)
    op = inst.op
    if op == "s_getreg_b32":
        dst = inst.operands["sdst"].index

        def h(g):
            g.set_sgpr(dst, (_read(g, rid, op) >> U32(offset)) & U32(mask))
        return h
    if rid != HW_REG_MODE:
        raise IllegalInstruction(f"{op}: writing hardware register {rid} is not modelled")
    if op == "s_setreg_imm32_b32":
        lit = next((o for o in inst.operands.values() if o.kind == "literal"), None)
        value = inst.extra.get("imm32", lit.value if lit is not None else None)
        if value is None:
            raise IllegalInstruction(f"{op}: no 32-bit immediate decoded")
        get = lambda g: np.full(g.n, value, U32)  # noqa: E731
    else:
        src = inst.operands.get("src0") or inst.operands.get("sdst")
        get = lambda g: g.sgpr(src.index)  # noqa: E731

    def h(g):
        v = get(g)
        if not (v == v[0]).all():
            raise IllegalInstruction(f"{op}: MODE written with values that differ between waves (not modelled)")
        field = ((int(v[0]) & mask) << offset) & 0xFFFFFFFF
        mode_bits.check_write(fam, op, field)
        g.mode = (g.mode & ~(mask << offset) | field) & 0xFFFFFFFF
    return h


def build_sendmsg_rtn(inst, write):
    imm = inst.operands["src0"].value if "src0" in inst.operands and inst.operands["src0"].value is not None \
        else inst.operands.get("src0").index
    if imm != MSG_RTN_GET_REALTIME:
        raise IllegalInstruction(f"{inst.op}: message {imm} is not modelled")
    return lambda g: write(g, np.full(g.n, g.ctx.clock(), np.uint64 if inst.op.endswith("64") else U32))
