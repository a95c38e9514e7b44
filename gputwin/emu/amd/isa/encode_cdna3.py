"""Inst -> bytes for CDNA3 (gfx942): the inverse of decode_cdna3.py.

Undoes the decoder's normalisation first (M0 125 -> 124, NULL 124 -> 125, GFX9 specials back to their
scalar numbers, AGPRs to register numbers with the ACC bits set), then packs the GFX9 formats of
cdna3_formats.py; SDWA and VOP3P-MAI are encoded here, everything else by the RDNA3 encoder's code.
"""
from __future__ import annotations

import dataclasses

from .cdna3_formats import FORMATS, SADDR_OFF, SRC_SDWA
from .encode import Encoder, EncodeError, _b, src_field
from .inst import Inst, Operand

_F = FORMATS


def _raw(op: Operand) -> Operand:
    """An operand in GFX9 field numbering (AGPRs as plain register numbers)."""
    if op.kind == "sgpr" and op.index in (124, 125):
        return Operand("sgpr", 249 - op.index, op.count)      # 124 <-> 125
    if op.kind == "special" and op.index < 128:
        return Operand("sgpr", op.index, op.count)
    if op.kind == "agpr":
        return Operand("vgpr", op.index, op.count)
    return op


class Cdna3Encoder(Encoder):
    def encode(self, inst: Inst) -> bytes:
        raw = dataclasses.replace(inst, operands={r: _raw(o) for r, o in inst.operands.items()})
        if inst.extra.get("sdwa"):
            return self._sdwa(raw)
        if inst.encoding == "VOP3P" and "cbsz" in inst.extra:
            return self._mai(raw)
        if inst.dpp is not None and inst.extra.get("dpp_negabs"):
            b = super().encode(dataclasses.replace(raw, extra={}))
            d = int.from_bytes(b[4:8], "little") | inst.extra["dpp_negabs"] << 20
            return b[:4] + d.to_bytes(4, "little")
        return super().encode(raw)

    def _sdwa(self, inst: Inst) -> bytes:
        info = self.info(inst)
        fmt, x, ops = info.fmt, inst.extra, inst.operands
        vals = {"op": inst.opcode}
        self._slots(info, dataclasses.replace(inst, operands={r: o for r, o in ops.items()
                                                             if r not in ("src0", "src1", "sdst")}), vals)
        src0, src1 = ops["src0"], ops.get("src1")
        d = (src_field(src0) & 0xFF) | _b(src0.kind != "vgpr") << 23
        d |= x["src0_sel"] << 16 | x.get("src0_sext", 0) << 19 | _b(inst.neg[0]) << 20 | _b(inst.abs[0]) << 21
        if src1 is not None:
            vals["vsrc1"] = src_field(src1) & 0xFF
            d |= _b(src1.kind != "vgpr") << 31 | x["src1_sel"] << 24 | x.get("src1_sext", 0) << 27
            d |= _b(inst.neg[1]) << 28 | _b(inst.abs[1]) << 29
        if inst.encoding == "VOPC":
            if x.get("sd"):
                d |= 1 << 15 | ops["sdst"].index << 8
        else:
            d |= x["dst_sel"] << 8 | x["dst_unused"] << 11 | _b(inst.clamp) << 13 | inst.omod << 14
        vals["src0"] = SRC_SDWA
        return fmt.pack(**vals).to_bytes(4, "little") + d.to_bytes(4, "little")

    def _mai(self, inst: Inst) -> bytes:
        info = self.info(inst)
        vals = {"op": inst.opcode}
        self._slots(info, inst, vals)
        vals.update({k: inst.extra[k] for k in ("cbsz", "abid", "blgp", "acc_cd", "acc")})
        return _F["VOP3PMAI"].pack(**vals).to_bytes(8, "little")

    def _memory(self, inst: Inst, info, vals: dict) -> None:
        enc, x, ops = inst.encoding, inst.extra, inst.operands
        if enc == "SMEM":
            vals.update(imm=x.get("imm", 1), soe=x.get("soe", 0), nv=x.get("nv", 0), glc=_b(inst.glc))
            vals.pop("soffset", None)
            if vals["imm"]:
                vals["offset"] = inst.offset & 0x1FFFFF
                if vals["soe"]:
                    vals["soffset"] = ops["soffset"].index
            elif vals["soe"]:
                vals.update(offset=x.get("offset_field", 0), soffset=ops["soffset"].index)
            else:
                vals["offset"] = x.get("offset_field", ops["soffset"].index if "soffset" in ops else 0)
        elif enc in ("FLAT", "GLOBAL", "SCRATCH"):
            vals.update(offset=inst.offset & 0x1FFF, glc=_b(inst.glc), slc=_b(inst.slc), sc1=x.get("sc1", 0),
                        acc=x.get("acc", 0))
            if "saddr" not in ops and enc != "FLAT":
                vals["saddr"] = SADDR_OFF
            if enc == "SCRATCH":
                vals["sve"] = x.get("sve", _b("vaddr" in ops))
                if "addr" in x:
                    vals["addr"] = x["addr"]
        elif enc == "DS":
            vals.update(offset0=inst.offset0, offset1=inst.offset1, gds=_b(inst.gds), acc=x.get("acc", 0))
        elif enc in ("MUBUF", "MTBUF"):
            vals.update(offset=inst.offset, glc=_b(inst.glc), slc=_b(inst.slc), offen=x.get("offen", 0),
                        idxen=x.get("idxen", 0), acc=x.get("acc", 0), sc1=x.get("sc1", 0))
            if enc == "MUBUF":
                vals["lds"] = x.get("lds", 0)
            else:
                vals["format"] = x.get("format", 1)
            if "vaddr" in ops:
                vals["vaddr"] = ops["vaddr"].index
            if "soffset" in ops:
                vals["soffset"] = src_field(ops["soffset"])
        else:
            raise EncodeError(f"{enc} is not a GFX9 memory format")
