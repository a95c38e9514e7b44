"""CDNA3 (gfx942) additions to the emulator: AGPRs, MFMA, SDWA, GFX9 v_cmpx, dispatch facts.

The CDNA3 decoder already speaks the RDNA3 vocabulary (isa/decode_cdna3.py); what is left is here:
- AGPRs live in the WaveGroup's register slots 256..511 (a_i is slot 256 + i): `handler` rewrites
  `agpr` operands into those slots, so every load, store and VALU path serves them unchanged;
  v_accvgpr_read/write/mov become moves between the two halves of the file.
- MFMA (v_mfma_*): D = A x B + C over a wave64's lanes. Layout (CDNA3 ISA guide, "Matrix Arithmetic
  Instructions"; AMD's matrix instruction calculator), for an M x M tile with K per block and G = 64 / M
  lane groups: lane l holds row/column l % M and the K/G consecutive k = (K/G) * (l // M) + t of A/B;
  result register r of lane l is D[(r % 4) + 4 * (l // M) + 4 * G * (r // 4)][l % M]. Float products are
  exact in float64 and summed there with C in k order, then rounded once (RNE) to f32: APPROXIMATE VS
  HARDWARE (the hardware's internal order/precision is not modelled); integers are exact (i32 wraps).
  CBSZ/ABID/BLGP broadcasts are not modelled (IllegalInstruction).
- SDWA (VOP1/VOP2/VOPC with src0 = 249): sources are byte/word-selected (zero- or sign-extended) into
  scratch slots, the operation runs as its VOP3 form, and the result is placed by dst_sel (dst_unused:
  pad with zeros, sign-extend, or preserve the rest of vdst).
- GFX9 v_cmpx_* write the compare result to both EXEC and SDST (RDNA3's write EXEC only).
"""
from __future__ import annotations

import dataclasses
import functools

import numpy as np

from gputwin.emu.amd import hwreg
from gputwin.emu.amd.isa.inst import Operand
from gputwin.errors import IllegalInstruction

ARCH = "gfx942"
AGPR_BASE = 256
_T0, _T1, _TD = 512, 513, 514   # register slots past the AGPRs for SDWA's selected operands and result
U32 = np.uint32


def vgpr_count(rsrc1: int) -> int:
    """COMPUTE_PGM_RSRC1.VGPRS on gfx90a/gfx940: granules of 8 of the unified VGPR+AGPR file."""
    return ((rsrc1 & 0x3F) + 1) * 8


def check_dispatch(wave64: bool) -> None:
    if not wave64:
        raise IllegalInstruction("gfx942 runs wave64 only (the kernel descriptor asks for wave32)")


def handler(inst, build):
    """A handler for GFX9-only forms (AGPR operands, MFMA, SDWA, v_cmpx with SDST); None for the rest.
    `build` builds the handler of an ordinary instruction (program._build: faults propagate to build_handler)."""
    ops = inst.operands
    if inst.op in ("s_setreg_b32", "s_setreg_imm32_b32"):     # gfx942's MODE fields (mode_bits.py)
        if inst.simm16 is None:
            raise IllegalInstruction(f"{inst.op}: no 16-bit immediate decoded")
        return hwreg.build(inst, inst.simm16 & 0xFFFF, ARCH)
    if inst.encoding in ("MTBUF", "MUBUF"):   # GFX9 range checks and DFMT/NFMT (mubuf.py, mtbuf.py)
        from gputwin.emu.amd import mubuf
        return mubuf.build(_lower(inst), mubuf.GFX9)
    if inst.op in GFX9_VALU or inst.op in GFX9_DERIVED:
        _register_valu()
    fp8_name = _fp8_names().get(inst.op)
    if fp8_name is not None:            # FNUZ 8-bit floats run under internal names (valu/fp8.py)
        inst = dataclasses.replace(inst, op=fp8_name)
        return handler(inst, build) or build(inst)
    if not (inst.extra or inst.op.startswith(("v_mfma", "v_accvgpr", "v_cmpx")) or
            any(o.kind == "agpr" for o in ops.values())):
        return None
    if inst.op.startswith("v_mfma"):
        return _mfma(_lower(inst))
    if inst.op.startswith("v_accvgpr"):
        return build(dataclasses.replace(_lower(inst), op="v_mov_b32", encoding="VOP3", extra={}))
    if inst.extra.get("sdwa"):
        return _sdwa(_lower(inst), build)
    if inst.op.startswith("v_cmpx") and "sdst" in ops:
        return _cmpx(inst, build)
    if any(o.kind == "agpr" for o in ops.values()):
        return build(_lower(inst))
    return None


_HALF = ("f16", "b16", "i16", "u16", "bf16")


@functools.cache
def _has_op_sel(opcode: int) -> bool:
    from gputwin.emu.amd.isa.table import load
    info = load(ARCH).by_enc["VOP3"].get(opcode)
    return bool(info is not None and info.mods.get("op_sel"))


def zero_high(inst, h):
    """GFX9 16-bit VALU results are zero-extended into the 32-bit VGPR (RDNA3 keeps the other half):
    wrap `h` to clear the high half of the lanes it wrote; op_sel[3] (write the high half) and SDWA keep
    their own placement."""
    if inst.encoding not in ("VOP1", "VOP2", "VOP3") or inst.op_sel[3] or inst.extra.get("sdwa"):
        return h
    from gputwin.emu.amd import valu
    op = valu.OPS.get(inst.op)
    vdst = inst.operands.get("vdst")
    if op is None or op.dst not in _HALF or op.out != "v" or vdst is None or vdst.kind != "vgpr":
        return h
    if inst.encoding == "VOP3" and _has_op_sel(inst.opcode):
        return h     # the GFX9 op_sel forms (v_fma_f16, v_mad_u16...) keep the high half, as on RDNA3
    reg = vdst.index

    def wrapped(g):
        h(g)
        g.set_vgpr(reg, g.vgpr(reg) & U32(0xFFFF))
    return wrapped


# ---- GFX9-only VALU operations, added to the VALU table on first use ------------------------------------
def _lshl_add_u64(c, s0, s1, s2):
    """D.u64 = (S0.u64 << S1[2:0]) + S2.u64 (gfx940)."""
    return (s0 << (s1 & U32(7)).astype(np.uint64)) + s2


GFX9_VALU = {"v_lshl_add_u64": (_lshl_add_u64, ("u64", "u32", "u64"), "u64"),
             "v_mov_b64": (lambda c, a: a, ("b64",), "b64")}


# GFX9 names for an RDNA3 operation in another form: (RDNA3 op, Op fields to change)
GFX9_DERIVED = {"v_fmac_f64": ("v_fma_f64", {"acc": True}), "v_mad_legacy_u16": ("v_mad_u16", {}),
                "v_mad_legacy_i16": ("v_mad_i16", {})}


def _register_valu() -> None:
    from gputwin.emu.amd import valu
    from gputwin.emu.amd.valu.table import Op
    for name, (fn, srcs, dst) in GFX9_VALU.items():
        valu.OPS.setdefault(name, Op(fn, srcs, dst))
    for name, (base, changes) in GFX9_DERIVED.items():
        valu.OPS.setdefault(name, dataclasses.replace(valu.OPS[base], **changes))


@functools.cache
def _fp8_names() -> dict[str, str]:
    from gputwin.emu.amd import valu
    from gputwin.emu.amd.valu import fp8
    ops, names = fp8.cdna3_ops()
    valu.OPS.update(ops)
    return names


def _lower(inst):
    """AGPR operands -> register slots 256 + i."""
    ops = inst.operands
    if not any(o.kind == "agpr" for o in ops.values()):
        return inst
    return dataclasses.replace(inst, operands={r: Operand("vgpr", AGPR_BASE + o.index, o.count) if o.kind == "agpr"
                                               else o for r, o in ops.items()})


# ---- GFX9 v_cmpx -------------------------------------------------------------------------------------
def _cmpx(inst, build):
    cmp = build(dataclasses.replace(inst, op="v_cmp" + inst.op[len("v_cmpx"):]))
    sdst = inst.operands["sdst"].index

    def h(g):
        cmp(g)
        g.set_exec(g.lane_mask(sdst).copy())
    return h


# ---- SDWA --------------------------------------------------------------------------------------------
_SEL = {0: (0, 8), 1: (8, 8), 2: (16, 8), 3: (24, 8), 4: (0, 16), 5: (16, 16), 6: (0, 32)}


def _select(v, sel: int, sext: int):
    shift, width = _SEL[sel]
    if width == 32:
        return v
    x = (v >> U32(shift)) & U32((1 << width) - 1)
    if sext:
        x = (x ^ U32(1 << (width - 1))) - U32(1 << (width - 1))   # two's complement sign extension mod 2**32
    return x


def _read32(g, op):
    if op.kind == "vgpr":
        return g.vgpr(op.index)
    if op.kind == "sgpr":
        return g.sgpr(op.index)[:, None]
    if op.kind in ("const", "literal"):
        return U32(op.value & 0xFFFFFFFF)
    raise IllegalInstruction(f"SDWA source {op.kind} is not modelled")


def _sdwa(inst, build):
    x, ops = inst.extra, dict(inst.operands)
    pre = []
    for role, slot, sel, sext in (("src0", _T0, "src0_sel", "src0_sext"), ("src1", _T1, "src1_sel", "src1_sext")):
        if role in ops and sel in x and (x[sel] != 6 or ops[role].kind == "sgpr"):
            pre.append((ops[role], slot, x[sel], x.get(sext, 0)))
            ops[role] = Operand("vgpr", slot, 1)
    dst_sel, unused = x.get("dst_sel", 6), x.get("dst_unused", 0)
    vdst = ops.get("vdst")
    from gputwin.emu.amd import valu
    op = valu.OPS.get(inst.op)
    if vdst is not None and vdst.kind != "vgpr":
        vdst = None                          # VOPC: the SDST lane mask, written by the core
    elif vdst is not None and op is not None and op.dst in ("b64", "u64", "f64"):
        if dst_sel != 6:                     # a 64-bit result (v_cvt_pk_f32_fp8): only DWORD placement
            raise IllegalInstruction(f"{inst.op}: SDWA dst_sel {dst_sel} on a 64-bit result")
        vdst = None                          # written whole by the core
    if vdst is not None:
        ops["vdst"] = Operand("vgpr", _TD, 1)
    low = U32(0xFFFF) if op is not None and op.dst in _HALF else U32(0xFFFFFFFF)   # a 16-bit result
    core = build(dataclasses.replace(inst, encoding="VOP3" if inst.encoding != "VOPC" else "VOP3", operands=ops,
                                     extra={}))
    shift, width = _SEL[dst_sel]
    field = U32(((1 << width) - 1) << shift) if width < 32 else U32(0xFFFFFFFF)

    def h(g):
        for op, slot, sel, sext in pre:
            g.put_vgpr(slot, np.ascontiguousarray(np.broadcast_to(_select(_read32(g, op), sel, sext),
                                                                  (g.n, g.lanes)), dtype=U32))
        core(g)
        if vdst is None:
            return
        res = ((g.vgpr(_TD) & low) << U32(shift)) & field
        if unused == 2:        # UNUSED_PRESERVE
            res = res | (g.vgpr(vdst.index) & ~field)
        elif unused == 1 and shift + width < 32:   # UNUSED_SEXT: copy the field's top bit upward
            top = (res >> U32(shift + width - 1)) & U32(1)
            res = res | (np.where(top.astype(bool), U32(0xFFFFFFFF) << U32(shift + width), U32(0)))
        g.set_vgpr(vdst.index, res)
    return h


# ---- MFMA --------------------------------------------------------------------------------------------
# mnemonic -> (M = N, K, input kind)
MFMA = {
    "v_mfma_f32_16x16x16_f16": (16, 16, "f16"), "v_mfma_f32_32x32x8_f16": (32, 8, "f16"),
    "v_mfma_f32_16x16x16_bf16": (16, 16, "bf16"), "v_mfma_f32_32x32x8_bf16": (32, 8, "bf16"),
    "v_mfma_f32_16x16x4_f32": (16, 4, "f32"), "v_mfma_f32_32x32x2_f32": (32, 2, "f32"),
    "v_mfma_i32_16x16x32_i8": (16, 32, "i8"), "v_mfma_i32_32x32x16_i8": (32, 16, "i8"),
}
_BITS = {"f16": 16, "bf16": 16, "f32": 32, "i8": 8}


def _elements(g, op, kind: str, per_lane: int):
    """(n, 64, per_lane) values of a source: float64 for floats, int64 for i8."""
    bits = _BITS[kind]
    nregs = per_lane * bits // 32
    if op.kind != "vgpr" or op.count != nregs:
        raise IllegalInstruction(f"MFMA source must be {nregs} VGPRs/AGPRs")
    regs = np.stack([g.vgpr(op.index + j) for j in range(nregs)], axis=-1).astype(U32)   # (n, 64, nregs)
    if kind == "f32":
        return regs.view(np.float32).astype(np.float64)
    if kind == "i8":
        return regs.view(np.int8).astype(np.int64)            # little endian: byte t is element t
    h = regs.view(np.uint16)
    if kind == "f16":
        return h.view(np.float16).astype(np.float64)
    return (h.astype(U32) << U32(16)).view(np.float32).astype(np.float64)   # bf16: the top half of an f32


def _mfma(inst):
    spec = MFMA.get(inst.op)
    if spec is None:
        raise IllegalInstruction(f"{inst.op} is not modelled")
    if inst.extra.get("cbsz") or inst.extra.get("abid") or inst.extra.get("blgp"):
        raise IllegalInstruction(f"{inst.op}: CBSZ/ABID/BLGP broadcasts are not modelled")
    m, k, kind = spec
    groups = 64 // m
    per_lane = k // groups
    nout = m * m // 64
    lane = np.arange(64)
    r = np.arange(nout)
    rows = (r % 4)[None, :] + 4 * (lane // m)[:, None] + 4 * groups * (r // 4)[None, :]   # (64, nout)
    cols = np.broadcast_to((lane % m)[:, None], rows.shape)
    ops = inst.operands
    vdst, src2 = ops["vdst"], ops["src2"]

    def h(g):
        if not g.wave64:
            raise IllegalInstruction(f"{inst.op} needs wave64")
        a = _elements(g, ops["src0"], kind, per_lane)              # (n, 64, per_lane)
        b = _elements(g, ops["src1"], kind, per_lane)
        # A[i][kk]: lane i + m * grp holds kk = per_lane * grp + t -> (n, m, k)
        a = a.reshape(g.n, groups, m, per_lane).transpose(0, 2, 1, 3).reshape(g.n, m, k)
        b = b.reshape(g.n, groups, m, per_lane).transpose(0, 2, 1, 3).reshape(g.n, m, k)
        if src2.kind == "vgpr":
            c = np.stack([g.vgpr(src2.index + j) for j in range(nout)], axis=-1).astype(U32)   # (n, 64, nout)
        elif src2.kind == "const":
            c = np.full((g.n, 64, nout), src2.value & 0xFFFFFFFF, U32)
        else:
            raise IllegalInstruction(f"{inst.op}: src2 {src2.kind} is not modelled")
        if kind == "i8":
            d = np.einsum("wik,wjk->wij", a, b)[:, rows, cols] + c.view(np.int32).astype(np.int64)
            out = (d & 0xFFFFFFFF).astype(U32)
        else:
            prod = a[:, :, None, :] * b[:, None, :, :]                       # (n, i, j, k), exact
            with np.errstate(all="ignore"):
                tot = c.view(np.float32).astype(np.float64)
                for kk in range(k):                                         # the documented order: C, then k
                    tot = tot + prod[:, rows, cols, kk]
                out = tot.astype(np.float32).view(U32)
        for j in range(nout):
            g.set_vgpr(vdst.index + j, np.ascontiguousarray(out[..., j]))
    return h
