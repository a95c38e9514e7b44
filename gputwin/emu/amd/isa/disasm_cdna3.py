"""CDNA3 (gfx942) text where GFX9 prints differently from RDNA3: SMEM offsets (IMM/SOE), gfx940 cache
bits (sc0 nt sc1), the GFX9 s_waitcnt layout, DS two-address names, SDWA and MAI modifiers."""
from __future__ import annotations

import dataclasses

from gputwin.errors import IllegalInstruction

from .disasm import Printer, _signed_hex, reg_text, src_text
from .inst import Inst
from .table import OpInfo, Slot

# s_waitcnt (GFX9): vmcnt [3:0] + [15:14] as its high bits, expcnt [6:4], lgkmcnt [11:8].
_SDWA_SEL = ("BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD")
_SDWA_UNUSED = ("UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE")


def fmt_waitcnt(v: int) -> str:
    fields = (("vmcnt", (v & 0xF) | (v >> 14 & 3) << 4, 63), ("expcnt", v >> 4 & 7, 7), ("lgkmcnt", v >> 8 & 0xF, 15))
    shown = [f"{n}({x})" for n, x, mx in fields if x != mx] or [f"{n}({x})" for n, x, _ in fields]
    return " ".join(shown)


_DPP_NAMED = {0x130: "wave_shl:1", 0x134: "wave_rol:1", 0x138: "wave_shr:1", 0x13C: "wave_ror:1",
              0x140: "row_mirror", 0x141: "row_half_mirror", 0x142: "row_bcast:15", 0x143: "row_bcast:31"}


def _dpp_text(inst: Inst) -> str:
    """GFX9 DPP controls: quad_perm, row_shl/shr/ror, the wave shifts/rotates and row broadcasts."""
    d = inst.dpp
    c = d.ctrl
    if c <= 0xFF:
        ctrl = "quad_perm:[" + ",".join(str(c >> (2 * i) & 3) for i in range(4)) + "]"
    elif 0x101 <= c <= 0x12F and c & 0xF:
        ctrl = ("row_shl", "row_shr", "row_ror")[(c - 0x100) >> 4] + f":{c & 0xF}"
    elif c in _DPP_NAMED:
        ctrl = _DPP_NAMED[c]
    else:
        raise IllegalInstruction(f"DPP control {c:#x} is reserved on GFX9")
    text = f" {ctrl} row_mask:{d.row_mask:#x} bank_mask:{d.bank_mask:#x}"
    return text + (" bound_ctrl:1" if d.bound_ctrl else "")


class Cdna3Printer(Printer):
    def __init__(self, arch: str, asm_style: bool = False, wave64: bool = True):
        super().__init__(arch, asm_style=asm_style, wave64=True)

    def _imm16(self, kind: str, v: int) -> str:
        if kind == "waitcnt":
            return fmt_waitcnt(v)
        if kind == "sendmsg":   # GFX9 keeps message fields above bit 7: LLVM prints those as numbers
            return self.table.sendmsg[v] if v < 256 else str(v)
        return super()._imm16(kind, v)

    def _mnemonic(self, inst: Inst, info: OpInfo) -> str:
        if inst.extra.get("sdwa"):
            return info.name.removesuffix("_e32") + "_sdwa"
        return super()._mnemonic(inst, info)

    def _body(self, inst: Inst, info: OpInfo) -> str:
        if inst.extra.get("sdwa"):
            return self._sdwa_body(inst, info)
        if inst.encoding in ("MUBUF", "MTBUF") and inst.extra.get("lds"):
            # loads into LDS print no data register: drop the first operand
            name, _, rest = super()._body(dataclasses.replace(inst, operands={
                r: o for r, o in inst.operands.items() if r != "vdst"}), info).partition(" ")
            return name + " " + rest.split(", ", 1)[1]
        if inst.encoding != "SMEM":
            return super()._body(inst, info)
        ops, x = inst.operands, inst.extra
        texts = [(str(ops[s.role].value) if ops[s.role].value <= 64 else hex(ops[s.role].value)) if s.kind == "imm"
                 else reg_text(ops[s.role]) for s in info.slots if s.role in ("sdata", "sbase") and s.role in ops]
        if any(s.role == "soffset" for s in info.slots):
            if not x.get("imm"):
                texts.append(reg_text(ops["soffset"]))
            elif x.get("soe"):
                texts.append(reg_text(ops["soffset"]) + " offset:" + _signed_hex(inst.offset))
            else:
                texts.append(_signed_hex(inst.offset))
        text = info.name + (" " + ", ".join(texts) if texts else "")
        return text + (" glc" if inst.glc and "glc" in info.mods else "")

    def _cpol(self, inst: Inst, mods: dict) -> str:
        """gfx940 cache bits, where the instruction has them: SC0 (the GLC bit), NT (SLC), SC1."""
        return ((" sc0" if inst.glc and "glc" in mods else "") + (" nt" if inst.slc and "slc" in mods else "") +
                (" sc1" if inst.extra.get("sc1") and "sc1" in mods else ""))

    def _suffix(self, inst: Inst, info: OpInfo, slots: tuple[Slot, ...]) -> str:
        enc, x = inst.encoding, inst.extra
        if x.get("sdwa"):
            return self._sdwa(inst)
        if enc == "VOP3P" and "cbsz" in x and "abid" in info.mods:
            out = "".join(f" {k}:{x[k]}" for k in ("cbsz", "abid") if x[k])
            if "_f64" in info.op:   # f64 MFMA: the BLGP field negates sources
                return out + (f" neg:[{x['blgp'] & 1},{x['blgp'] >> 1 & 1},{x['blgp'] >> 2 & 1}]" if x["blgp"] else "")
            return out + (f" blgp:{x['blgp']}" if x["blgp"] else "")
        if enc == "DS":
            gds = " gds" if inst.gds and info.mods.get("gds") else ""
            if any(t in info.op for t in ("write2", "read2", "wrxchg2")):
                return ((f" offset0:{inst.offset0}" if inst.offset0 else "") +
                        (f" offset1:{inst.offset1}" if inst.offset1 else "") + gds)
            return super()._suffix(dataclasses.replace(inst, gds=False), info, slots) + gds
        if inst.dpp is not None:
            return super()._suffix(dataclasses.replace(inst, dpp=None), info, slots) + _dpp_text(inst)
        if enc in ("MUBUF", "MTBUF") and not slots:   # buffer_inv, buffer_wbl2: cache bits only
            return self._cpol(inst, info.mods)
        if enc in ("MUBUF", "MTBUF"):
            out = ""
            if enc == "MTBUF":
                f = self.table.buf_format.get(x.get("format", 1), str(x.get("format")))
                out += f" format:{f}" if f else ""
            out += (" idxen" if x.get("idxen") else "") + (" offen" if x.get("offen") else "")
            out += f" offset:{inst.offset}" if inst.offset else ""
            return out + self._cpol(inst, info.mods) + (" lds" if x.get("lds") else "")
        return super()._suffix(inst, info, slots)

    def _sdwa_body(self, inst: Inst, info: OpInfo) -> str:
        texts, ptype = [], None
        for s in info.slots:
            op = inst.operands.get(s.role)
            if s.kind == "imp" and not (s.role == "sdst" and inst.extra.get("sd")):
                texts.append(s.field[1:].replace("vcc_lo", "vcc"))
            elif s.role in ("src0", "src1"):
                i = int(s.role[-1])
                ptype = s.ptype or ptype or "b32"
                t = src_text(op, ptype, inst.neg[i], inst.abs[i])
                texts.append(f"sext({t})" if inst.extra.get(f"{s.role}_sext") else t)
            elif op is not None:
                texts.append(reg_text(op))
        return self._mnemonic(inst, info) + (" " + ", ".join(texts) if texts else "") + self._sdwa(inst)

    def _sdwa(self, inst: Inst) -> str:
        x, out = inst.extra, ""
        if inst.clamp:
            out += " clamp"
        if inst.omod:
            out += (" mul:2", " mul:4", " div:2")[inst.omod - 1]
        if "dst_sel" in x:
            out += f" dst_sel:{_SDWA_SEL[x['dst_sel']]} dst_unused:{_SDWA_UNUSED[x['dst_unused']]}"
        out += f" src0_sel:{_SDWA_SEL[x['src0_sel']]}"
        if "src1_sel" in x:
            out += f" src1_sel:{_SDWA_SEL[x['src1_sel']]}"
        return out
