"""RDNA4 (gfx12) text for the memory formats: TH/SCOPE cache policy instead of glc/slc/dlc, 24-bit
offsets, VBUFFER's format/idxen/offen/tfe. Everything else prints as on RDNA3 (disasm.py)."""
from __future__ import annotations

from .disasm import Printer, _signed_hex
from .inst import Inst
from .table import OpInfo, Slot


def cpol_kind(op: str) -> str:
    """Which TH names an instruction uses (LLVM prints loads, stores and atomics differently)."""
    return "atomic" if "atomic" in op else "store" if "store" in op else "load"


class Rdna4Printer(Printer):
    smem_zero_offset = True
    dpp_abs_quirk = True

    def _cpol_text(self, inst: Inst) -> str:
        key = f"{inst.extra.get('th', 0)},{inst.extra.get('scope', 0)}"
        text = self.table.cpol[cpol_kind(inst.op)].get(key, "")
        return " " + text if text else ""

    def _suffix(self, inst: Inst, info: OpInfo, slots: tuple[Slot, ...]) -> str:
        enc = inst.encoding
        if enc == "SMEM":
            out = ""
            if any(s.role == "soffset" for s in slots) and not any(s.kind == "offset" for s in slots) and \
                    (inst.operands["soffset"].index != 124 or self._smem_form(inst) == "sgpr_imm"):
                out += " offset:" + _signed_hex(inst.offset)
            return out + (self._cpol_text(inst) if slots else "")
        if enc in ("FLAT", "GLOBAL", "SCRATCH"):
            return (f" offset:{inst.offset}" if inst.offset else "") + self._cpol_text(inst)
        if enc == "MUBUF":
            if not slots:
                return ""
            x = inst.extra
            out = ""
            if info.op.startswith("tbuffer"):
                f = self.table.buf_format.get(x.get("format", 1), str(x.get("format")))
                out += f" format:{f}" if f else ""
            out += (" idxen" if x.get("idxen") else "") + (" offen" if x.get("offen") else "")
            out += f" offset:{inst.offset}" if inst.offset else ""
            return out + self._cpol_text(inst) + (" tfe" if x.get("tfe") else "")
        return super()._suffix(inst, info, slots)
