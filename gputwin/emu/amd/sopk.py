"""SOPK: scalar instructions with a 16-bit immediate (s_movk, s_cmpk, s_addk, s_call_b64, s_getreg/s_setreg)."""
from __future__ import annotations

import numpy as np

from gputwin.emu.amd import hwreg
from gputwin.emu.amd.salu import CMP, add_i32, set_scc
from gputwin.errors import IllegalInstruction

U32, U64 = np.uint32, np.uint64


def build(inst):
    op = inst.op
    if inst.simm16 is None:
        raise IllegalInstruction(f"{op}: no 16-bit immediate decoded")
    imm = inst.simm16
    simm = U32(((imm & 0xFFFF) ^ 0x8000) - 0x8000 & 0xFFFFFFFF)
    uimm = U32(imm & 0xFFFF)
    dst = inst.operands.get("sdst")
    if op == "s_movk_i32":
        return lambda g: g.set_sgpr(dst.index, simm)
    if op == "s_cmovk_i32":
        return lambda g: g.set_sgpr(dst.index, np.where(g.scc, simm, g.sgpr(dst.index)))
    if op.startswith("s_cmpk_"):
        cmp = CMP[op[7:9]]
        if op.endswith("_i32"):
            k = np.int32(simm.view(np.int32))
            def h(g):
                set_scc(g, cmp(g.sgpr(dst.index).view(np.int32), k))
        else:
            def h(g):
                set_scc(g, cmp(g.sgpr(dst.index), uimm))
        return h
    if op == "s_addk_i32":
        def h(g):
            d, scc = add_i32(g.sgpr(dst.index), simm)
            g.set_sgpr(dst.index, d)
            set_scc(g, scc)
        return h
    if op == "s_mulk_i32":
        return lambda g: g.set_sgpr(dst.index, g.sgpr(dst.index) * simm)
    if op in ("s_version", "s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_expcnt", "s_waitcnt_lgkmcnt"):
        return lambda g: None
    if op == "s_call_b64":
        nxt, target = inst.size, 4 + 4 * int(simm.view(np.int32))

        def h(g):
            g.set_sgpr64(dst.index, np.full(g.n, g.ctx.code_address + g.pc + nxt, U64))
            return g.pc + target
        return h
    if op in ("s_getreg_b32", "s_setreg_b32", "s_setreg_imm32_b32"):
        return hwreg.build(inst, imm)
    return None
