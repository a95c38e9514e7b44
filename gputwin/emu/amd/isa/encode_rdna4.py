"""RDNA4 (gfx12) memory formats for the encoder (the inverse of decode_rdna4.py)."""
from __future__ import annotations

from .encode import Encoder, _b
from .inst import Inst
from .table import OpInfo

_MASK24 = (1 << 24) - 1


class Rdna4Encoder(Encoder):
    def _memory(self, inst: Inst, info: OpInfo, vals: dict) -> None:
        enc, x = inst.encoding, inst.extra
        cpol = {"th": x.get("th", 0), "scope": x.get("scope", 0)}
        if enc == "SMEM":
            vals.update(offset=inst.offset & _MASK24, **cpol)
            if any(s.role == "soffset" for s in info.slots):
                vals.setdefault("soffset", 124)
        elif enc in ("FLAT", "GLOBAL", "SCRATCH"):
            vals.update(offset=inst.offset & _MASK24, **cpol)
            if "saddr" not in inst.operands:
                vals["saddr"] = 124
            if enc == "SCRATCH":
                vals["sve"] = x.get("sve", _b("vaddr" in inst.operands))
                if "addr" in x:
                    vals["addr"] = x["addr"]
        elif enc == "MUBUF":
            vals.update(offset=inst.offset & _MASK24, offen=x.get("offen", 0), idxen=x.get("idxen", 0),
                        tfe=x.get("tfe", 0), format=x.get("format", 1), **cpol)
            if "vaddr" in inst.operands:
                vals["vaddr"] = inst.operands["vaddr"].index
        else:
            super()._memory(inst, info, vals)
