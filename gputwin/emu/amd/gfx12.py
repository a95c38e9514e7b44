"""RDNA4 (gfx1200, gfx1201) on the emulator core: what differs from gfx11 for compute kernels.

The core and the VALU tables model gfx11. gfx12 keeps most instructions and their semantics but renames
some, splits s_waitcnt into per-counter waits and s_barrier into signal + wait, adds SALU floats and
64-bit SALU arithmetic, and changes the initial wave state. This module holds those facts:

- `build(inst)`: a handler for an instruction gfx12 added or changed (or None); `as_gfx11(inst)`: the
  same instruction under its gfx11 name, for what gfx12 only renamed (docs/rdna4.md lists both).
- `initial_mode(rsrc1)`: gfx12 has no IEEE mode and no DX10_CLAMP bit (RSRC1 bits 21 and 23 mean
  WG_RR_EN and DISABLE_PERF there); the emulator's MODE runs it as IEEE = 0 (omod applies; the min/max
  _num instructions are IEEE-754-2019 minimumNumber/maximumNumber, gfx12_valu.py) and DX10_CLAMP = 1
  (clamp turns NaN into +0, as LLVM's mode defaults assume).
- `init_sgprs(...)`: "architected SGPRs": workgroup ids live in TTMP9 (X) and TTMP7 (Y in [15:0], Z in
  [31:16]), the wave's index in its workgroup in TTMP8[29:25]; no system SGPRs follow the user SGPRs.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from gputwin.emu.amd import hwreg
from gputwin.emu.amd.control import BARRIER
from gputwin.emu.amd.gfx12_salu import build as _build_salu
from gputwin.emu.amd.gfx12_valu import build as _build_valu
from gputwin.errors import IllegalInstruction

ARCHES = frozenset({"gfx1200", "gfx1201"})   # gfx1201 decodes with gfx1200's table (isa/table.py)

TTMP7, TTMP8, TTMP9 = 115, 116, 117   # SGPR-space indices (TTMP0 is 108)

# gfx12 name -> gfx11 name of the same operation (under the gfx12 MODE described above)
RENAMES = {
    "s_add_co_u32": "s_add_u32", "s_add_co_i32": "s_add_i32", "s_add_co_ci_u32": "s_addc_u32",
    "s_sub_co_u32": "s_sub_u32", "s_sub_co_i32": "s_sub_i32", "s_sub_co_ci_u32": "s_subb_u32",
    "s_addk_co_i32": "s_addk_i32",
    "v_mad_co_u64_u32": "v_mad_u64_u32", "v_mad_co_i64_i32": "v_mad_i64_i32",
}
for _m in ("min", "max"):   # float atomics: gfx11's already skip NaN and order -0 below +0 (minimumNumber)
    for _seg in ("global", "flat"):
        RENAMES[f"{_seg}_atomic_{_m}_num_f32"] = f"{_seg}_atomic_{_m}_f32"
    for _t in ("f32", "f64"):
        RENAMES[f"ds_{_m}_num_{_t}"] = f"ds_{_m}_{_t}"
        RENAMES[f"ds_{_m}_num_rtn_{_t}"] = f"ds_{_m}_rtn_{_t}"

# Scheduling and cache controls with nothing to model in a functional, in-order emulator. The split
# wait counters stand where gfx11 had s_waitcnt; memory is coherent and complete when an access returns.
NOPS = frozenset({
    "s_wait_loadcnt", "s_wait_storecnt", "s_wait_kmcnt", "s_wait_dscnt", "s_wait_expcnt", "s_wait_samplecnt",
    "s_wait_bvhcnt", "s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt", "s_wait_alu", "s_singleuse_vdst",
    "global_inv", "global_wb", "global_wbinv", "s_prefetch_inst", "s_prefetch_inst_pc_rel", "s_prefetch_data",
    "s_prefetch_data_pc_rel", "s_buffer_prefetch_data",
})
BARRIER_WORKGROUP = 0xFFFFFFFF   # s_barrier_signal/_wait -1: the workgroup barrier (others are named barriers)


def _nop(g):
    return None


def _barrier(inst):
    """s_barrier_signal -1 then s_barrier_wait -1 is gfx11's s_barrier: the wait is where the wave parks
    (all waves of the workgroup have signalled once all have reached the wait or ended)."""
    if inst.op == "s_barrier_signal":
        src = inst.operands.get("src0")
        value = src.value if src is not None and src.kind in ("const", "literal") else None
        if value is None or value & 0xFFFFFFFF != BARRIER_WORKGROUP:
            raise IllegalInstruction("s_barrier_signal: only the workgroup barrier (-1) is modelled")
        return _nop
    imm = (inst.simm16 or 0) & 0xFFFF
    if imm != 0xFFFF:
        raise IllegalInstruction(f"s_barrier_wait {imm:#x}: only the workgroup barrier (-1) is modelled")
    return lambda g: BARRIER


# MODE bits the emulator uses for gfx11's IEEE (9) and DX10_CLAMP (8) behaviour; gfx12 has neither bit.
MODE_EMULATION_BITS = 0x300
HW_REG_MODE, HW_REG_TRAPSTS_GFX11, HW_REG_SHADER_CYCLES_HI = 1, 3, 30


def _hwreg(inst):
    """s_getreg/s_setreg where gfx12 differs from gfx11: MODE has no IEEE / DX10_CLAMP bits (reads give 0,
    writes raise; other writes are checked against gfx12's MODE fields, mode_bits.py), id 3 (gfx11 TRAPSTS)
    is no register, SHADER_CYCLES_HI (30) is not modelled. Other ids (SHADER_CYCLES_LO keeps gfx11's id 29)
    run as on gfx11 (None)."""
    imm = (inst.simm16 or 0) & 0xFFFF
    rid, offset, mask = imm & 0x3F, (imm >> 6) & 0x1F, (1 << (((imm >> 11) & 0x1F) + 1)) - 1
    if rid in (HW_REG_TRAPSTS_GFX11, HW_REG_SHADER_CYCLES_HI):
        raise IllegalInstruction(f"{inst.op}: hardware register {rid} is not modelled on gfx12")
    if rid != HW_REG_MODE:
        return None
    if inst.op != "s_getreg_b32":
        if (mask << offset) & MODE_EMULATION_BITS:
            raise IllegalInstruction(f"{inst.op}: MODE bits 8-9 are not gfx12 MODE fields")
        return hwreg.build(inst, imm, "gfx1200")
    dst = inst.operands["sdst"].index
    return lambda g: g.set_sgpr(dst, np.full(g.n, ((g.mode & ~MODE_EMULATION_BITS) >> offset) & mask, np.uint32))


def build(inst):
    """A handler for an instruction that gfx12 added, or None when gfx11's semantics apply (as_gfx11)."""
    op = inst.op
    if op in NOPS:
        return _nop
    if op in ("s_barrier_signal", "s_barrier_wait"):
        return _barrier(inst)
    if op in ("s_getreg_b32", "s_setreg_b32", "s_setreg_imm32_b32"):
        return _hwreg(inst)
    if op.startswith(("v_wmma_", "v_swmmac_")):   # same names as gfx11, other register layouts
        from gputwin.emu.amd.valu import wmma12
        if op not in wmma12.OPS:
            raise IllegalInstruction(f"{op}: this gfx12 WMMA form is not modelled")
        return wmma12.build(inst)
    if inst.encoding in ("MUBUF", "MTBUF"):   # gfx11's buffer ops under GFX12's range checks (mubuf.py)
        from gputwin.emu.amd import mubuf
        return mubuf.build(as_gfx11(inst), mubuf.GFX12)
    h = _build_salu(inst)
    if h is None:
        h = _build_valu(inst)
    return h


def as_gfx11(inst):
    """`inst` as gfx11 has it: its gfx11 name (VOPD halves too), and for buffer atomics the return
    request in GLC, where gfx12 puts it in TH bit 0 (TH_ATOMIC_RETURN). Unchanged when nothing differs."""
    if inst.vopd is not None:
        halves = tuple(as_gfx11(h) for h in inst.vopd)
        return inst if halves == inst.vopd else dataclasses.replace(inst, vopd=halves)
    if inst.encoding == "MUBUF" and "_atomic_" in inst.op and inst.extra.get("th", 0) & 1:
        inst = dataclasses.replace(inst, glc=True)
    new = RENAMES.get(inst.op)
    return inst if new is None else dataclasses.replace(inst, op=new)


def initial_mode(rsrc1: int) -> int:
    """MODE at wave start: FLOAT_MODE (RSRC1 [19:12]) -> MODE [7:0], DX10_CLAMP behaviour on, IEEE off,
    FP16_OVFL (RSRC1 26) -> bit 23."""
    return ((rsrc1 >> 12) & 0xFF) | 1 << 8 | ((rsrc1 >> 26) & 1) << 23


def init_sgprs(g, d, wg_ids: np.ndarray, gx: int, gy: int, wpg: int) -> None:
    """User SGPRs, then the architected TTMP7/TTMP8/TTMP9 (see the module docstring)."""
    count = (d.rsrc2 >> 1) & 0x1F
    user = [int(v) & 0xFFFFFFFF for v in d.user_sgprs]
    if count and len(user) > count:
        raise ValueError(f"{len(user)} user SGPR values but RSRC2.USER_SGPR is {count}")
    if d.rsrc2 >> 10 & 1:
        raise IllegalInstruction("COMPUTE_PGM_RSRC2.TG_SIZE_EN (workgroup info SGPR) is not modelled on gfx12")
    for i, v in enumerate(user):
        g.s[i] = v
    x, y, z = wg_ids % gx, (wg_ids // gx) % gy, wg_ids // (gx * gy)
    if (y > 0xFFFF).any() or (z > 0xFFFF).any():
        raise ValueError("gfx12 workgroup ids Y and Z must fit 16 bits (TTMP7)")
    g.s[TTMP9] = x.astype(np.uint32)
    g.s[TTMP7] = (y | z << 16).astype(np.uint32)
    g.s[TTMP8] = ((np.arange(g.n) % wpg) << 25).astype(np.uint32)
