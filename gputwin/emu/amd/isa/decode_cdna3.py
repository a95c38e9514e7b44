"""CDNA3 (gfx942) decoding: the GFX9 formats of cdna3_formats.py into the same Inst contract as RDNA3.

What the decoder normalises so that the emulator stays arch-neutral (docs/cdna3.md):
- scalar operand numbering: GFX9 encodes M0 as 124 (the contract's 125) and has no NULL;
  102..105 (FLAT_SCRATCH_LO/HI, XNACK_MASK_LO/HI) become `special` operands with their GFX9 index;
- AGPRs are `agpr` operands (index 0..255): v_accvgpr_* by their encoding, MFMA by ACC_CD (vdst, src2)
  and ACC (src0, src1), DS/FLAT/MUBUF data by the ACC bit;
- `Inst.op` is the RDNA3 mnemonic where the instruction does the same thing (cdna3_names.py), so
  s_load_dwordx2 decodes as op "s_load_b64"; the printed name stays the table's.
GFX9-only fields go to `Inst.extra`: SDWA (`sdwa` = 1, dst_sel, dst_unused, src0_sel, src1_sel,
src0_sext, src1_sext), MAI (cbsz, abid, blgp, acc_cd, acc), sc1, nv, lds, SMEM imm/soe.
"""
from __future__ import annotations

import dataclasses
import functools
import json

from .cdna3_formats import FLAT_SEGMENTS, FORMATS, GFX9_PAIRS, SADDR_OFF, SRC_DPP16, SRC_SDWA
from .cdna3_names import canonical
from .decode import Decoder, _buffer_vaddr, _Illegal, _plan, _reg, _sext, _slow, _src, _vaddr64
from .inst import Inst, Operand
from .table import TABLE_DIR

_F = FORMATS
M0_GFX9, M0 = 124, 125        # GFX9 encodes M0 as 124 and NULL as 125: the contract has them swapped
NULL_GFX9, NULL = 125, 124


@functools.cache
def _extras(arch: str) -> dict[tuple[str, int], dict]:
    """The generator's GFX9 additions per (encoding, opcode): agpr slots, mai, sdwa."""
    doc = json.loads((TABLE_DIR / f"{arch}.json").read_text())
    out = {}
    for enc, ops in doc["encodings"].items():
        for opcode, e in ops.items():
            out[(enc, int(opcode))] = {k: e[k] for k in ("agpr", "mai", "sdwa") if k in e}
    return out


@functools.lru_cache(maxsize=None)
def _norm_sgpr(op: Operand) -> Operand:
    i, n = op.index, op.count
    if i == M0_GFX9:
        return Operand("sgpr", M0, n)
    if i == NULL_GFX9:
        return Operand("sgpr", NULL, n)
    if 102 <= i <= 105 and n <= 2:     # wider ranges (s[100:103] as a buffer resource) stay SGPRs
        if n == 2 and i not in GFX9_PAIRS:
            raise _Illegal(f"scalar pair s[{i}:{i + 1}] is misaligned")
        return Operand("special", i, n)
    return op


def _agpr(op: Operand) -> Operand:
    if op.kind != "vgpr":
        raise _Illegal("an AGPR operand must be a register")
    return Operand("agpr", op.index, op.count)


class Cdna3Decoder(Decoder):
    def __init__(self, arch: str, wave64: bool = True, strict: bool = True):
        super().__init__(arch, True, strict)     # gfx942 is wave64 only: lane masks are SGPR pairs
        self.extras = _extras(arch)

    def _decode(self, b: bytes) -> Inst:
        d0 = int.from_bytes(b[:4], "little")
        fname = self.top9[d0 >> 23]
        if fname is None:
            raise _Illegal(f"no encoding format matches word {d0:#010x}")
        if fname in ("VOP1", "VOP2", "VOPC") and d0 & 0x1FF in (SRC_SDWA, SRC_DPP16, 233, 234) and \
                self._reads_src0(fname, d0):   # LLVM ignores SRC0 of v_nop/v_clrexcp: no SDWA/DPP dword
            inst = self._valu_ext(fname, d0, b)
        elif fname in ("SMEM", "DS", "FLAT", "MUBUF", "MTBUF", "VOP3P"):
            if len(b) < 8:
                raise _Illegal(f"truncated {fname} instruction")
            w = int.from_bytes(b[:8], "little")
            inst = getattr(self, "_g9_" + fname.lower())(w, b)
        else:
            if fname == "VOP3" and _vop3_literal(int.from_bytes(b[:8].ljust(8, b"\0"), "little")):
                raise _Illegal("GFX9 VOP3 has no literal constants")
            inst = super()._decode(b)
            ex = self.extras.get((inst.encoding if inst.encoding != "VOP3SD" else "VOP3", inst.opcode), {})
            if ex.get("agpr"):
                inst = self._static_agprs(inst, ex["agpr"])
        return self._normalise(inst)

    def _operands(self, slots, word: int, literal, skip=()) -> dict[str, Operand]:
        """As RDNA3, plus GFX9's NULL (125) where a register pair or wider may stand: LLVM accepts it
        although 125 is odd; it becomes the contract's NULL in _normalise."""
        try:
            return super()._operands(slots, word, literal, skip)
        except _Illegal:
            ops = {}
            for role, lo, mask, table, lit_at in _plan(slots, self.wave64, self.strict):
                v = (word >> lo) & mask
                op = table[v]
                if op is None and v == NULL_GFX9 and len(table) > 124 and table[124] is not None:
                    op = Operand("sgpr", NULL_GFX9, table[124].count)
                ops[role] = op if op is not None else _slow(role, v, lit_at, literal)
            for role in skip:
                ops.pop(role, None)
            return ops

    # ---- normalisation ---------------------------------------------------------------------------
    def _normalise(self, inst: Inst) -> Inst:
        ops = inst.operands
        if any(o.kind == "sgpr" and 102 <= o.index <= 125 and (o.index <= 105 or o.index >= 124)
               for o in ops.values()):
            ops = {r: _norm_sgpr(o) if o.kind == "sgpr" else o for r, o in ops.items()}
        name = canonical(inst.op)
        if ops is inst.operands and name == inst.op:
            return inst
        return dataclasses.replace(inst, op=name, operands=ops)

    def _static_agprs(self, inst: Inst, positions) -> Inst:
        info = self.table.by_enc[inst.encoding if inst.encoding != "VOP3SD" else "VOP3"][inst.opcode]
        ops = dict(inst.operands)
        for p in positions:
            role = info.slots[p].role
            ops[role] = _agpr(ops[role])
        return dataclasses.replace(inst, operands=ops)

    # ---- VALU: SDWA and GFX9 DPP on VOP1/VOP2/VOPC ----------------------------------------------------
    def _reads_src0(self, fname: str, d0: int) -> bool:
        info = self.table.by_enc[fname].get(_F[fname].get(d0, "op"))
        return info is None or any(s.role == "src0" for s in info.slots)

    def _valu_ext(self, fname: str, d0: int, b: bytes) -> Inst:
        fmt = _F[fname]
        opcode = fmt.get(d0, "op")
        info = self._info(fname, opcode, d0)
        src0 = d0 & 0x1FF
        if len(b) < 8:
            raise _Illegal("truncated SDWA/DPP dword")
        d = int.from_bytes(b[4:8], "little")
        if src0 == SRC_DPP16 and info.dpp:
            if d >> 18 & 1:
                raise _Illegal("DPP bit 18 is reserved on GFX9")
            # neg/abs bits an instruction lacks are accepted and ignored on GFX9 (kept for re-encoding)
            extra_bits = (d >> 20 & 0xF) & ~info.mods.get("dpp_negabs", 0)
            if not extra_bits:
                return super()._valu32(fname, d0, b)
            d &= ~(extra_bits << 20)
            inst = super()._valu32(fname, d0, b[:4] + d.to_bytes(4, "little") + b[8:])
            return dataclasses.replace(inst, extra=dict(inst.extra, dpp_negabs=extra_bits))
        if src0 != SRC_SDWA or not self.extras.get((fname, opcode), {}).get("sdwa"):
            raise _Illegal(f"{info.name} has no {'SDWA' if src0 == SRC_SDWA else 'DPP'} form")
        s0 = d & 0xFF if not d >> 23 & 1 else None
        if s0 is None and d & 0xFF == 255 or fname != "VOP1" and d >> 31 & 1 and d0 >> 9 & 0xFF == 255:
            raise _Illegal(f"{info.name}: SDWA takes no literal")
        word = (d0 & ~0x1FF) | (256 + (d & 0xFF) if s0 is not None else d & 0xFF)
        extra = {"sdwa": 1, "src0_sel": d >> 16 & 7, "src0_sext": d >> 19 & 1}
        if fname != "VOPC":
            extra.update(dst_sel=d >> 8 & 7, dst_unused=d >> 11 & 3)
        else:
            extra["sd"] = d >> 15 & 1
        if fname != "VOP1":
            extra.update(src1_sel=d >> 24 & 7, src1_sext=d >> 27 & 1)
        ops = self._operands(info.slots, word, None)
        if fname != "VOP1" and d >> 31 & 1:       # S1: VSRC1 names a scalar source
            ops["src1"] = _src(d0 >> 9 & 0xFF, 1, "b32", None)
        if fname == "VOPC" and extra["sd"]:
            ops["sdst"] = _reg("sgpr", d >> 8 & 0x7F, 2)
        for sel in ("src0_sel", "src1_sel", "dst_sel"):
            if extra.get(sel, 0) > 6:
                raise _Illegal(f"SDWA {sel} 7 is reserved")
        kw = {"neg": (bool(d >> 20 & 1), bool(d >> 28 & 1), False),
              "abs": (bool(d >> 21 & 1), bool(d >> 29 & 1), False)}
        if fname != "VOPC":
            kw.update(clamp=bool(d >> 13 & 1), omod=d >> 14 & 3)
        return Inst(info.op, fname, opcode, 8, ops, extra=extra, **kw)

    # ---- VOP3P and VOP3P-MAI ---------------------------------------------------------------------------
    def _g9_vop3p(self, w: int, b: bytes) -> Inst:
        opcode = w >> 16 & 0x7F
        ex = self.extras.get(("VOP3P", opcode), {})
        if not ex.get("mai"):
            inst = super()._vop3p(w, b)
            return self._static_agprs(inst, ex["agpr"]) if ex.get("agpr") else inst
        info = self._info("VOP3P", opcode, w)
        fmt = _F["VOP3PMAI"]
        ops = self._operands(info.slots, w, None)
        extra = {k: fmt.get(w, k) for k in ("cbsz", "abid", "blgp", "acc_cd", "acc")}
        if ex.get("agpr"):          # v_accvgpr_read/write: fixed by the opcode; ACC/ABID bits are don't-care
            for p in ex["agpr"]:
                ops[info.slots[p].role] = _agpr(ops[info.slots[p].role])
        else:
            # v_smfmac's src2 is the sparsity index: always a VGPR
            src2_acc = extra["acc_cd"] and not info.op.startswith("v_smfmac")
            for role, on in (("vdst", extra["acc_cd"]), ("src2", src2_acc), ("src0", extra["acc"] & 1),
                             ("src1", extra["acc"] >> 1)):
                if on and role in ops and ops[role].kind == "vgpr":
                    ops[role] = _agpr(ops[role])
        return Inst(info.op, "VOP3P", opcode, 8, ops, extra=extra)

    # ---- scalar memory -----------------------------------------------------------------------------------
    def _g9_smem(self, w: int, b: bytes) -> Inst:
        fmt = _F["SMEM"]
        info = self._info("SMEM", fmt.get(w, "op"), w)
        imm, soe = fmt.get(w, "imm"), fmt.get(w, "soe")
        ops = self._operands(info.slots, w, None, skip=("soffset",))
        offset = 0
        if imm:
            offset = _sext(fmt.get(w, "offset"), 21)
            if soe and any(s.role == "soffset" for s in info.slots):
                ops["soffset"] = _reg("sgpr", fmt.get(w, "soffset"), 1)
        elif soe:   # the SGPR offset comes from SOFFSET; LLVM ignores the OFFSET field then (kept in extra)
            ops["soffset"] = _reg("sgpr", fmt.get(w, "soffset"), 1)
        elif any(s.role == "soffset" for s in info.slots):
            ops["soffset"] = _reg("sgpr", fmt.get(w, "offset") & 0x7F, 1)   # OFFSET[6:0] names the SGPR
        extra = {"imm": imm, "soe": soe, "nv": fmt.get(w, "nv")}
        if not imm:
            extra["offset_field"] = fmt.get(w, "offset")
        return Inst(info.op, "SMEM", info.opcode, 8, ops, offset=offset, glc=bool(fmt.get(w, "glc")), extra=extra)

    # ---- LDS ---------------------------------------------------------------------------------------------
    def _g9_ds(self, w: int, b: bytes) -> Inst:
        fmt = _F["DS"]
        info = self._info("DS", fmt.get(w, "op"), w)
        ops = self._operands(info.slots, w, None)
        acc = fmt.get(w, "acc")
        if acc:
            ops = {r: _agpr(o) if r in ("vdst", "data0", "data1") else o for r, o in ops.items()}
        o0, o1 = w & 0xFF, w >> 8 & 0xFF
        return Inst(info.op, "DS", info.opcode, 8, ops, offset=o1 << 8 | o0, offset0=o0, offset1=o1,
                    gds=bool(fmt.get(w, "gds")), extra={"acc": acc} if acc else {})

    # ---- FLAT / GLOBAL / SCRATCH -------------------------------------------------------------------------
    def _g9_flat(self, w: int, b: bytes) -> Inst:
        fmt = _F["FLAT"]
        enc = FLAT_SEGMENTS.get(fmt.get(w, "seg"))
        if enc is None:
            raise _Illegal("FLAT segment 3 is reserved")
        info = self._info(enc, fmt.get(w, "op"), w)
        glc = bool(fmt.get(w, "glc"))
        slots = info.rtn_slots if glc and info.rtn_slots else info.slots
        saddr = fmt.get(w, "saddr")
        skip, extra = set(), {}
        if enc != "FLAT" and saddr == SADDR_OFF:
            skip.add("saddr")
        if enc == "SCRATCH":
            extra["sve"] = fmt.get(w, "sve")
            if not extra["sve"]:
                skip.add("vaddr")
                if fmt.get(w, "addr"):
                    extra["addr"] = fmt.get(w, "addr")
        # "off" (0x7F) is no register a pair could name: decode the word with SADDR cleared, then drop it
        ops = self._operands(slots, w & ~(0x7F << 48) if "saddr" in skip else w, None, skip)
        if enc == "GLOBAL" and saddr == SADDR_OFF:
            _vaddr64(ops)
        for k in ("sc1", "acc"):
            if fmt.get(w, k):
                extra[k] = 1
        if extra.get("acc"):
            ops = {r: _agpr(o) if r in ("vdst", "vdata") else o for r, o in ops.items()}
        off = fmt.get(w, "offset")
        return Inst(info.op, enc, info.opcode, 8, ops, offset=off if enc == "FLAT" else _sext(off, 13), glc=glc,
                    slc=bool(fmt.get(w, "slc")), extra=extra)

    # ---- buffers -----------------------------------------------------------------------------------------
    def _g9_mubuf(self, w: int, b: bytes) -> Inst:
        return self._g9_buf("MUBUF", w)

    def _g9_mtbuf(self, w: int, b: bytes) -> Inst:
        return self._g9_buf("MTBUF", w)

    def _g9_buf(self, enc: str, w: int) -> Inst:
        fmt = _F[enc]
        info = self._info(enc, fmt.get(w, "op"), w)
        ops = self._operands(info.slots, w, None)
        offen, idxen = fmt.get(w, "offen"), fmt.get(w, "idxen")
        _buffer_vaddr(ops, offen, idxen, fmt.get(w, "vaddr"))
        extra = {"offen": offen, "idxen": idxen, "tfe": 0}
        for k in ("sc1", "lds", "acc", "format"):
            if k in fmt.fields and (fmt.get(w, k) or k == "format"):
                extra[k] = fmt.get(w, k)
        if extra.get("acc"):
            ops = {r: _agpr(o) if r in ("vdst", "vdata") else o for r, o in ops.items()}
        return Inst(info.op, enc, info.opcode, 8, ops, offset=fmt.get(w, "offset"), glc=bool(fmt.get(w, "glc")),
                    slc=bool(fmt.get(w, "slc")), extra=extra)


def _vop3_literal(w: int) -> bool:
    """Any VOP3 source field holding the literal code (GFX9 VOP3 cannot read a literal)."""
    return 255 in (w >> 32 & 0x1FF, w >> 41 & 0x1FF, w >> 50 & 0x1FF)
