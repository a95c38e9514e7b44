"""gfx12 scalar instructions that gfx11 lacks: 64-bit SALU add/sub/mul, SALU f32 floats, sub-dword and
96-bit scalar loads.

SALU floats compute exactly what the VALU instruction of the same name computes (the RDNA4 guide gives
them the same pseudocode, under the same MODE rounding and denormal fields), so each one runs the VALU
table entry on a (waves, 1) column. The f16 forms raise: where their 16-bit result lands in the 32-bit
SGPR (and what the other half holds) is not documented.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.amd.salu import set_scc
from gputwin.emu.amd.scalar_ops import reader32, reader64
from gputwin.emu.amd.smem import U64
from gputwin.errors import IllegalInstruction, MemoryFault

U32 = np.uint32

# --- 64-bit integer ops: name -> fn(a, b) (wrapping, SCC untouched) ----------------------------------
_SOP2_64 = {
    "s_add_nc_u64": lambda a, b: a + b,
    "s_sub_nc_u64": lambda a, b: a - b,
    "s_mul_u64": lambda a, b: a * b,
}

# --- floats: gfx12 name -> (VALU table entry, source roles in the VALU operand order) ----------------
_FLOAT = {
    "s_add_f32": ("v_add_f32", ("src0", "src1")),
    "s_sub_f32": ("v_sub_f32", ("src0", "src1")),
    "s_mul_f32": ("v_mul_f32", ("src0", "src1")),
    "s_fmac_f32": ("v_fma_f32", ("src0", "src1", "sdst")),
    "s_fmamk_f32": ("v_fma_f32", ("src0", "k", "src1")),
    "s_fmaak_f32": ("v_fma_f32", ("src0", "src1", "k")),
    "s_max_num_f32": ("v_max_num_f32", ("src0", "src1")),
    "s_min_num_f32": ("v_min_num_f32", ("src0", "src1")),
    "s_maximum_f32": ("v_maximum_f32", ("src0", "src1")),
    "s_minimum_f32": ("v_minimum_f32", ("src0", "src1")),
    "s_cvt_f32_i32": ("v_cvt_f32_i32", ("src0",)),
    "s_cvt_f32_u32": ("v_cvt_f32_u32", ("src0",)),
    "s_cvt_i32_f32": ("v_cvt_i32_f32", ("src0",)),
    "s_cvt_u32_f32": ("v_cvt_u32_f32", ("src0",)),
    "s_cvt_f32_f16": ("v_cvt_f32_f16", ("src0",)),
    "s_cvt_hi_f32_f16": ("v_cvt_f32_f16", ("src0",)),
    "s_ceil_f32": ("v_ceil_f32", ("src0",)),
    "s_floor_f32": ("v_floor_f32", ("src0",)),
    "s_trunc_f32": ("v_trunc_f32", ("src0",)),
    "s_rndne_f32": ("v_rndne_f32", ("src0",)),
}
for _c in ("lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt"):
    _FLOAT[f"s_cmp_{_c}_f32"] = (f"v_cmp_{_c}_f32", ("src0", "src1"))


def _valu_op(name: str):
    from gputwin.emu.amd import valu
    from gputwin.emu.amd.gfx12_valu import OPS as OPS12
    return OPS12.get(name) or valu.OPS[name]


def _float(inst):
    from gputwin.emu.amd.valu.fp import FMTS, Mode
    from gputwin.emu.amd.valu.table import Ctx, finish_float

    vname, roles = _FLOAT[inst.op]
    op = _valu_op(vname)
    readers = []
    for role in roles:
        operand = inst.operands.get(role)
        if operand is None:
            raise IllegalInstruction(f"{inst.op}: missing operand {role}")
        readers.append(reader32(operand))
    half = 16 if inst.op == "s_cvt_hi_f32_f16" else 0
    sdst = inst.operands.get("sdst")

    def h(g):
        mode = Mode.of(g.mode)
        srcs = []
        for read, typ in zip(readers, op.srcs):
            v = np.broadcast_to(read(g), (g.n,)).reshape(g.n, 1)
            if typ == "f16":
                v = ((v >> U32(half)) & U32(0xFFFF)).astype(np.uint16)
            if op.flush and typ in FMTS:
                v = mode.flush_in(v, FMTS[typ])
            srcs.append(v)
        f = op.fmt
        rmode = mode.round(f) if f is not None else 0
        if rmode and not op.directed:
            mode.need_rne(f, inst.op)
        res = op.fn(Ctx(g, inst, mode, rmode, False, None, np.ones((g.n, 1), bool)), *srcs)
        if op.out == "mask":
            set_scc(g, np.broadcast_to(res, (g.n, 1))[:, 0])
            return
        if op.dst in FMTS:
            res = finish_float(op, inst, mode, res, srcs)
        g.set_sgpr(sdst.index, np.broadcast_to(res, (g.n, 1))[:, 0].astype(U32))
    return h


def _sop2_64(inst):
    fn = _SOP2_64[inst.op]
    ra = reader64(inst.operands["src0"], signed=True)
    rb = reader64(inst.operands["src1"], signed=True)
    dst = inst.operands["sdst"].index
    return lambda g: g.set_sgpr64(dst, np.broadcast_to(fn(ra(g), rb(g)), (g.n,)).astype(U64))


# --- scalar loads gfx12 added: name -> (bytes, signed) ------------------------------------------------
_LOADS = {"s_load_u8": (1, False), "s_load_i8": (1, True), "s_load_u16": (2, False), "s_load_i16": (2, True),
          "s_load_b96": (12, False)}


def _load(inst):
    nbytes, signed = _LOADS[inst.op]
    sdst = inst.operands["sdata"].index
    sbase = inst.operands["sbase"].index
    soff = inst.operands.get("soffset")
    soff_i = soff.index if soff is not None and soff.kind == "sgpr" and soff.index != 124 else None
    imm = int(inst.offset)
    align = ~3 if nbytes >= 4 else ~(nbytes - 1)   # the hardware ignores the low address bits

    def h(g):
        addrs = g.sgpr64(sbase).astype(np.int64) + imm
        if soff_i is not None:
            addrs = addrs + g.sgpr(soff_i).astype(np.int64)
        addrs = addrs.astype(U64) & U64(align & ((1 << 64) - 1))
        uniq, inv = np.unique(addrs, return_inverse=True)   # usually one address for the whole group
        try:
            raw = g.ctx.mem.load(uniq, nbytes)[inv.reshape(-1)]
        except MemoryFault as e:
            e.wave = int(g.waves[0])
            raise
        if nbytes == 12:
            words = raw.view(np.uint32).reshape(g.n, 3)
            for k in range(3):
                g.set_sgpr(sdst + k, words[:, k])
            return
        val = raw.view(np.uint8 if nbytes == 1 else np.uint16).reshape(g.n)
        if signed:
            val = val.view(np.int8 if nbytes == 1 else np.int16).astype(np.int32).view(U32)
        g.set_sgpr(sdst, val.astype(U32))
    return h


def build(inst):
    """A handler for a gfx12-only scalar instruction modelled here, else None."""
    op = inst.op
    if op in _SOP2_64:
        return _sop2_64(inst)
    if op in _FLOAT:
        return _float(inst)
    if op in _LOADS:
        return _load(inst)
    if inst.encoding in ("SOP1", "SOP2", "SOPC") and (op.endswith("_f16") or op == "s_cvt_pk_rtz_f16_f32"):
        raise IllegalInstruction(f"{op}: SALU f16 results are not modelled")
    return None
