"""GFX9 / CDNA3 (gfx942) VGPR indexing mode: s_set_gpr_idx_on/off/idx/mode and its effect on VALU operands.

Facts (CDNA3 ISA guide, SOPC/SOP1/SOPP chapters; LLVM's AMDGPU docs, "imask"):
- s_set_gpr_idx_on S0, imask: M0[7:0] = S0[7:0], M0[15:12] = imask, the rest of M0 kept; MODE.gpr_idx_en
  (MODE bit 27) = 1. s_set_gpr_idx_off clears gpr_idx_en; s_set_gpr_idx_idx S0 sets M0[7:0];
  s_set_gpr_idx_mode imask sets M0[15:12].
- While gpr_idx_en is set, a VALU instruction adds M0[7:0] (unsigned) to the VGPR number of each operand
  whose M0[15:12] bit is set: bit 0 src0, 1 src1, 2 src2, 3 dst. Only VGPRs are indexed, never SGPRs or
  inline constants; addressing past the VGPRs is illegal. The guide's "VGPR Indexing Details" table: the
  SGPR destination of v_readlane/v_readfirstlane is not indexed; v_writelane's dst is; v_mac/v_fmac-style
  forms (dst is the addend) index both with the dst bit, their src2 bit has no effect; v_madak indexes
  src0/src1/dst by their bits; v_madmk (D = S0 * K + S1) runs as MAD(src0, K, src2) so its VGPR S1
  follows the src2 bit; the *rev shifts index their fields by their own bits.

M0 is per wave, so the index (and mask) may differ between the waves of a group: a group whose waves agree
runs one rewritten instruction; otherwise each distinct (index, mask) runs on its own waves (taken out and
written back by rows, never per lane). Failing closed (IllegalInstruction) where the guide is silent:
an indexed AGPR operand, an indexed register past v255 (the allocation is not tracked per wave),
DPP/SDWA/MFMA/v_accvgpr/v_movrel/v_cvt_pkaccum forms, vector memory instructions while the mode is on,
masks wider than 4 bits.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from gputwin.emu.amd.scalar_ops import reader32
from gputwin.emu.amd.wave import M0
from gputwin.errors import IllegalInstruction

MODE_GPR_IDX_EN = 1 << 27
_M0_FIELDS = np.uint32(0xF0FF)     # M0[15:12] mask, M0[7:0] index
_ROLES = (("src0", 1), ("src1", 2), ("src2", 4), ("vdst", 8))
_MK_ROLES = (("src0", 1), ("src1", 4), ("vdst", 8))       # D = S0 * K + S1 runs as MAD(src0, K, src2 = S1)
_VALU = {"VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD", "VOP3P"}
_VMEM = {"DS", "FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF"}
_REFUSED = ("v_movrel", "v_mfma", "v_smfmac", "v_accvgpr", "v_cvt_pkaccum")


def build_scalar(inst):
    """The handler of s_set_gpr_idx_*; None for other instructions."""
    op = inst.op
    if op == "s_set_gpr_idx_on":
        return _set(reader32(inst.operands["src0"]), _imask(inst, inst.operands["src1"].value), on=True)
    if op == "s_set_gpr_idx_idx":
        return _set(reader32(inst.operands["src0"]), None, on=False)
    if op == "s_set_gpr_idx_mode":
        return _set(None, _imask(inst, inst.simm16), on=False)
    if op == "s_set_gpr_idx_off":
        def off(g):
            g.mode &= ~MODE_GPR_IDX_EN
        return off
    return None


def _imask(inst, v: int) -> int:
    if not 0 <= v < 16:
        raise IllegalInstruction(f"{inst.op}: mode mask {v:#x} wider than 4 bits is not modelled")
    return v


def _set(index, imask, *, on: bool):
    def h(g):
        m0 = g.s[M0]
        if index is not None:
            m0 = (m0 & np.uint32(0xFFFFFF00)) | (np.asarray(index(g), np.uint32) & np.uint32(0xFF))
        if imask is not None:
            m0 = (m0 & np.uint32(0xFFFF0FFF)) | np.uint32(imask << 12)
        g.set_sgpr(M0, np.broadcast_to(m0, (g.n,)).astype(np.uint32))
        if on:
            g.mode |= MODE_GPR_IDX_EN
    return h


def wrap(inst, h, core):
    """`h` made to honour the indexing mode. `core(inst)` builds the handler of a rewritten instruction."""
    if inst.encoding in _VMEM:
        def vmem(g):
            if g.mode & MODE_GPR_IDX_EN:
                raise IllegalInstruction(f"{inst.op}: vector memory access while VGPR indexing is on is not modelled")
            h(g)
        return vmem
    if inst.encoding not in _VALU:
        return h
    variants: dict[int, object] = {}

    def variant(key: int):
        f = variants.get(key)
        if f is None:
            f = variants[key] = core(_indexed(inst, key & 0xFF, key >> 12 & 0xF))
        return f

    def valu(g):
        if not g.mode & MODE_GPR_IDX_EN:
            return h(g)
        keys = g.s[M0] & _M0_FIELDS
        first = int(keys[0])
        if (keys == first).all():
            return variant(first)(g)
        for key in np.unique(keys):
            _run_on(g, np.flatnonzero(keys == key), variant(int(key)))
    return valu


def _indexed(inst, offset: int, imask: int):
    """`inst` with the VGPR operands selected by imask moved up by offset (the guide's "VGPR Indexing
    Details" table: SGPRs, constants and SGPR destinations are never indexed; a mac form's addend is its
    destination, so DST moves both; v_madmk/v_fmamk's VGPR src1 is the src2 of the MAD it runs as)."""
    if inst.op.startswith(_REFUSED) or inst.dpp is not None or inst.extra:
        raise IllegalInstruction(f"{inst.op}: VGPR indexing of this form (DPP/SDWA/MFMA/AGPR/movrel/pkaccum) "
                                 "is not modelled")
    roles = _MK_ROLES if inst.op.startswith(("v_madmk", "v_fmamk")) else _ROLES
    ops = dict(inst.operands)
    for role, bit in roles:
        o = ops.get(role)
        if not imask & bit or o is None or o.kind in ("sgpr", "special", "const", "literal"):
            continue
        if o.kind != "vgpr":
            raise IllegalInstruction(f"{inst.op}: VGPR indexing of a {o.kind} {role} is not modelled")
        if o.index + offset + o.count > 256:
            raise IllegalInstruction(f"{inst.op}: indexed {role} v{o.index}+{offset} is past v255")
        ops[role] = dataclasses.replace(o, index=o.index + offset)
    return dataclasses.replace(inst, operands=ops)


def _run_on(g, idx: np.ndarray, h) -> None:
    """Run `h` on the waves `idx` of group g alone, then write back the registers it changed (by rows)."""
    sub = g.take(idx)
    before = list(sub.v)
    h(sub)
    for r, a in enumerate(sub.v):
        if a is not before[r]:
            full = np.array(g.vgpr(r))
            full[idx] = a
            g.put_vgpr(r, full)
    for r in np.flatnonzero((g.s[:, idx] != sub.s).any(axis=1)):
        row = g.s[r].copy()
        row[idx] = sub.s[r]
        g.set_sgpr(int(r), row)
