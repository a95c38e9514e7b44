"""Inst -> LLVM's canonical assembly text (what `llvm-mc -disassemble` prints), table-driven."""
from __future__ import annotations

from gputwin.errors import IllegalInstruction

from . import sopp_imm
from .decode import decoder
from .inst import Inst, Operand
from .operands import SCALAR_NAMES, SCALAR_PAIRS, format_imm, literal_bits
from .table import OpInfo, Slot, Table, load

_OMOD = ("", " mul:2", " mul:4", " div:2")
_TABLE_KEY = {"VOP3SD": "VOP3"}


def reg_text(op: Operand) -> str:
    """Register operand text: v5, v[4:7], s3, s[2:3], vcc_lo, vcc, ttmp[4:5], null, m0, exec..."""
    i, n = op.index, op.count
    if op.kind == "vgpr":
        return f"v{i}" if n == 1 else f"v[{i}:{i + n - 1}]"
    if op.kind == "agpr":   # CDNA3 accumulation registers
        return f"a{i}" if n == 1 else f"a[{i}:{i + n - 1}]"
    if op.kind == "special" and i < 128:   # GFX9 FLAT_SCRATCH / XNACK_MASK (cdna3_formats)
        from .cdna3_formats import GFX9_PAIRS, GFX9_SPECIAL
        return GFX9_PAIRS[i] if n == 2 else GFX9_SPECIAL[i]
    if i < 106:
        return f"s{i}" if n == 1 else f"s[{i}:{i + n - 1}]"
    if 108 <= i < 124:
        t = i - 108
        return f"ttmp{t}" if n == 1 else f"ttmp[{t}:{t + n - 1}]"
    if n > 1 and i in SCALAR_PAIRS:
        return SCALAR_PAIRS[i]
    if i not in SCALAR_NAMES:
        raise IllegalInstruction(f"no scalar register {i} (x{n})")
    return SCALAR_NAMES[i]


def src_text(op: Operand, ptype: str | None, neg: bool = False, abs_: bool = False) -> str:
    if op.kind in ("vgpr", "sgpr", "agpr") or op.kind == "special":
        t = reg_text(op)
        imm = False
    elif op.kind == "const":
        t, imm = format_imm(op.value, ptype or "b32"), True
    elif op.kind == "literal":
        t, imm = format_imm(literal_bits(op.value, ptype or "b32"), ptype or "b32"), True
    else:
        t, imm = str(op.value), True
    if abs_:
        t = f"|{t}|"
    if neg:
        t = f"neg({t})" if imm and not abs_ else "-" + t
    return t


def _noted(text: str, op: Operand, note: str) -> str:
    """LLVM's note goes right after the register, inside |...| (`-|v132/*Invalid register...*/|`)."""
    if not note:
        return text
    reg = reg_text(op)
    return text.replace(reg, reg + note, 1)


def _bits(values) -> str:
    return "[" + ",".join("1" if v else "0" for v in values) + "]"


def _dpp_text(inst: Inst) -> str:
    d = inst.dpp
    if d.kind == "dpp8":
        return f" dpp8:{_bits_int(d.sel)}" + (" fi:1" if d.fi else "")
    c = d.ctrl
    if c <= 0xFF:
        ctrl = f"quad_perm:{_bits_int([c >> (2 * i) & 3 for i in range(4)])}"
    elif 0x101 <= c <= 0x10F:
        ctrl = f"row_shl:{c - 0x100}"
    elif 0x111 <= c <= 0x11F:
        ctrl = f"row_shr:{c - 0x110}"
    elif 0x121 <= c <= 0x12F:
        ctrl = f"row_ror:{c - 0x120}"
    elif c == 0x140:
        ctrl = "row_mirror"
    elif c == 0x141:
        ctrl = "row_half_mirror"
    elif 0x150 <= c <= 0x15F:
        ctrl = f"row_share:{c - 0x150}"
    elif 0x160 <= c <= 0x16F:
        ctrl = f"row_xmask:{c - 0x160}"
    else:
        raise IllegalInstruction(f"DPP control {c:#x} is reserved")
    text = f" {ctrl} row_mask:{d.row_mask:#x} bank_mask:{d.bank_mask:#x}"
    return text + (" bound_ctrl:1" if d.bound_ctrl else "") + (" fi:1" if d.fi else "")


def _bits_int(values) -> str:
    return "[" + ",".join(str(v) for v in values) + "]"


def _signed_hex(v: int) -> str:
    return hex(v) if v >= 0 else "-" + hex(-v)


class Printer:
    """asm_style=True prints as llvm-mc -show-encoding does after assembling: there an inline float
    constant in a 16-bit integer operand (only reachable by writing a float) prints as the float, and
    s_version's immediate prints in hex."""

    smem_zero_offset = False   # gfx12 prints an SMEM offset of 0 where gfx11 prints null
    dpp_abs_quirk = False      # gfx12: v_cndmask_b32_dpp's |src1| closes after vcc_lo

    def __init__(self, arch: str, asm_style: bool = False, wave64: bool = False):
        self.table: Table = load(arch)
        self.asm_style = asm_style
        self.wave64 = wave64

    def info(self, inst: Inst) -> OpInfo:
        key = _TABLE_KEY.get(inst.encoding, inst.encoding)
        info = self.table.by_enc[key][inst.opcode]
        return info.for_wave64() if self.wave64 else info

    def _smem_form(self, inst: Inst) -> str | None:
        """gfx11 llvm-mc prints an SMEM offset the way it was written (`0x0`, `s0 offset:0x0`, `null`), though
        the bytes are alike; the assembler records that in extra["smem_form"], the disassembler prints null."""
        return _SMEM_FORMS.get(inst.extra.get("smem_form")) if self.asm_style else None

    def text(self, inst: Inst) -> str:
        if inst.encoding in ("EXP", "LDSDIR", "VDSDIR", "VINTERP"):
            from . import pixel
            return pixel.text(self.table.arch, inst)
        if inst.encoding in ("MIMG", "VIMAGE", "VSAMPLE"):
            from . import image
            return image.text(self.table.arch, inst, lambda kind, th, scope: self.table.cpol[kind].get(f"{th},{scope}", ""))
        if inst.encoding == "VOPD":
            x, y = inst.vopd
            return (self._body(x, self.table.by_enc["VOPDX"][x.opcode]) + " :: " +
                    self._body(y, self.table.by_enc["VOPDY"][y.opcode]))
        return self._body(inst, self.info(inst))

    def _lo128_note(self, s: Slot, op: Operand, dpp: bool = False) -> str:
        """LLVM's note on v128..v255 in a 16-bit e32 operand limited to v0..v127 (the strict decoder lets
        them through where LLVM's disassembler does, the table's "n"; executed, bit 7 picks the high half
        of v0..v127). A DPP source is a plain VGPR field: VGPR_32_Lo128."""
        if op.kind != "vgpr" or op.index < 128 or "n" not in (s.allowed or "") or self.asm_style:
            return ""
        cls = "VS_32_Lo128" if s.kind == "src" and not dpp else "VGPR_32_Lo128"
        return f"/*Invalid register, operand has '{cls}' register class*/"

    def _mnemonic(self, inst: Inst, info: OpInfo) -> str:
        name = info.name
        if inst.dpp is None:
            return name
        if inst.encoding == "VOPC":
            return name.removesuffix("_e32")
        if inst.encoding in ("VOP1", "VOP2"):
            return name.removesuffix("_e32") + "_dpp"
        return name.removesuffix("_e64") + "_e64_dpp"

    def _body(self, inst: Inst, info: OpInfo) -> str:
        ops = inst.operands
        slots = info.rtn_slots if info.rtn_slots and "vdst" in ops else info.slots   # atomics returning
        enc = inst.encoding
        mods = info.mods
        texts = []
        src_i = 0
        for s in slots:
            if s.role == "simm16":
                if not (s.kind.endswith("_opt") and inst.simm16 == 0):
                    texts.append(self._imm16(s.kind, inst.simm16 & 0xFFFF))
                continue
            op = ops.get(s.role)
            if self.wave64:
                s = s.for_wave64()
            if s.kind == "imp":
                texts.append(s.field[1:])
            elif s.kind == "off" and op is None:
                texts.append("off")
            elif op is None and s.kind != "offset":
                texts.append("off")   # saddr / vaddr not used (GLOBAL, SCRATCH)
            elif s.kind in ("src", "ssrc", "src16"):
                i = {"src0": 0, "src1": 1, "src2": 2}.get(s.role, src_i)
                if enc in ("VOP1", "VOP2", "VOPC"):   # e32 DPP: modifiers from the DPP dword
                    dm = mods.get("dpp_negabs", 0)
                    neg, abs_ = inst.neg[i] and bool(dm >> (2 * i) & 1), inst.abs[i] and bool(dm >> (2 * i + 1) & 1)
                else:
                    neg = inst.neg[i] and bool(mods.get("neg", 0) >> i & 1)
                    abs_ = inst.abs[i] and bool(mods.get("abs", 0) >> i & 1)
                if enc == "VOP3P":
                    mix = mods.get("mix")
                    neg, abs_ = bool(mix and inst.neg[i]), bool(mix and inst.neg_hi[i])
                if neg and (mods.get("sext", 0) >> i & 1 if inst.dpp is None or enc not in ("VOP1", "VOP2", "VOPC")
                            else mods.get("dpp_sext", 0) >> (2 * i) & 1):
                    t = f"sext({src_text(op, s.ptype)})"
                else:
                    ptype = "f16" if self.asm_style and s.ptype == "i16" and op.kind == "const" else s.ptype
                    t = src_text(op, ptype, neg, abs_)
                notes = enc == "VOP3P" and not self.asm_style and self.table.family != "cdna3"
                if notes and op.kind == "sgpr" and "s" not in (s.allowed or "s"):
                    # LLVM decodes an SGPR in a VGPR-only WMMA source and says so in the text
                    cls = "VGPR_32" if op.count == 1 else f"VReg_{32 * op.count}"
                    t += f"/*Invalid register, operand has '{cls}' register class*/"
                elif notes and op.kind == "const" and "c" not in (s.allowed or "c"):
                    t += "/*Invalid immediate*/"
                t = _noted(t, op, self._lo128_note(s, op, inst.dpp is not None))
                if s.kind == "src16" and op.kind == "vgpr":   # true16: the half goes inside sext(...)
                    half = ".h" if inst.op_sel[i] else ".l"
                    t = t[:-1] + half + ")" if t.endswith(")") else t + half
                texts.append(t)
            elif s.kind == "v" and inst.dpp is not None and s.role == "src1":
                dm = mods.get("dpp_negabs", 0)
                if inst.neg[1] and dm & 4 and mods.get("dpp_sext", 0) & 4:   # an integer src1 (v_ldexp_f16)
                    texts.append(f"sext({src_text(op, None)})")
                else:
                    t = src_text(op, None, inst.neg[1] and bool(dm & 4), inst.abs[1] and bool(dm & 8))
                    texts.append(_noted(t, op, self._lo128_note(s, op, True)))
            elif s.kind == "v16":
                texts.append(reg_text(op) + (".h" if inst.op_sel[3] else ".l"))
            elif s.kind == "lit":
                texts.append(format_imm(literal_bits(op.value, s.ptype or "b32"), s.ptype or "b32"))
            elif s.kind == "sendmsg":
                texts.append(sopp_imm.fmt_sendmsg(op.value, self.table.sendmsg))
            elif s.kind == "gpr_idx":   # s_set_gpr_idx_on's mode mask
                texts.append(sopp_imm.fmt_gpr_idx(op.value))
            elif s.kind == "offset":   # gfx12 s_prefetch_*: the offset as an operand
                texts.append(_signed_hex(inst.offset))
            elif s.kind == "imm":
                texts.append(str(op.value) if op.value <= 64 else hex(op.value))
            elif s.role == "soffset" and op.kind != "sgpr":
                texts.append(src_text(op, "b32"))
            elif s.role == "soffset" and enc == "SMEM" and op.index == 124 and not any(x.kind == "offset" for x in slots) \
                    and (inst.offset or self.smem_zero_offset or self._smem_form(inst) == "imm") \
                    and self._smem_form(inst) != "sgpr_imm":
                texts.append(_signed_hex(inst.offset))
            elif inst.extra.get("tfe") and s.role in ("vdst", "vdata") and enc in ("MUBUF", "MTBUF"):
                texts.append(reg_text(Operand(op.kind, op.index, op.count + 1)))
            else:
                texts.append(reg_text(op) + self._lo128_note(s, op))
        if self.dpp_abs_quirk and inst.dpp is not None and enc == "VOP2" and slots[-1].kind == "imp" \
                and texts[-2].endswith("|") and not self.asm_style:
            # LLVM's gfx12 disassembler (not its assembler's printer) closes src1's |..| after VCC.
            texts[-2], texts[-1] = texts[-2][:-1], texts[-1] + "|"
        text = self._mnemonic(inst, info)
        if texts:
            text += " " + ", ".join(texts)
        return text + self._suffix(inst, info, slots)

    def _imm16(self, kind: str, v: int) -> str:
        if kind == "waitcnt":
            return sopp_imm.fmt_waitcnt(v)
        if kind == "delay_alu":
            return sopp_imm.fmt_delay_alu(v)
        if kind == "depctr":
            return sopp_imm.fmt_depctr(v)
        if kind == "hwreg":
            return sopp_imm.fmt_hwreg(v, self.table.hwreg)
        if kind == "sendmsg":
            return sopp_imm.fmt_sendmsg(v, self.table.sendmsg)
        if kind == "gpr_idx":
            return sopp_imm.fmt_gpr_idx(v)
        if kind == "symbolic":   # s_version: llvm-mc prints what it assembled in hex
            return hex(v) if self.asm_style else sopp_imm.fmt_version(v)
        if kind.startswith("imm"):
            return str(v) if v <= 64 else hex(v)
        return hex(v) if kind == "hex" else str(v)

    def _suffix(self, inst: Inst, info: OpInfo, slots: tuple[Slot, ...]) -> str:
        enc, mods = inst.encoding, info.mods
        out = ""
        nsrc = sum(1 for s in slots if s.role in ("src0", "src1", "src2") and s.kind != "imp")
        if enc == "VOP3":
            if mods.get("byte_sel"):   # gfx12 fp8/bf8 conversions: OPSEL bits select a byte
                sel = sum(share for share, bit in zip(mods["byte_sel"], inst.op_sel) if bit)
                out += f" byte_sel:{sel}" if sel else ""
            elif mods.get("op_sel"):
                sel = [False] * mods["op_sel_n"]
                for bit, pos in enumerate(mods["op_sel_pos"]):
                    if pos >= 0 and inst.op_sel[bit]:
                        sel[pos] = True
                if any(sel):
                    out += " op_sel:" + _bits(sel)
            if inst.clamp and mods.get("clamp"):
                out += " clamp"
            if mods.get("omod"):
                out += _OMOD[inst.omod]
        elif enc == "VOP3SD":
            if inst.clamp and mods.get("clamp"):
                out += " clamp"
            if mods.get("omod"):
                out += _OMOD[inst.omod]
        elif enc == "VOP3P":
            n = 3 if "wmma" in info.op else nsrc
            hi_default = mods.get("op_sel_hi_default", 1)
            if mods.get("index_key"):   # gfx12 v_swmmac_*: OPSEL bits hold the sparsity index
                sel = sum(share for share, bit in zip(mods["index_key"], inst.op_sel) if bit)
                out += f" index_key:{sel}" if sel else ""
            elif mods.get("op_sel") and any(inst.op_sel[:n]):
                out += " op_sel:" + _bits(inst.op_sel[:n])
            if mods.get("mix"):   # v_fma_mix*: NEG/NEG_HI are the sources' neg/abs, printed in place
                if mods.get("op_sel_hi") and any(b != hi_default for b in inst.op_sel_hi[:n]):
                    out += " op_sel_hi:" + _bits(inst.op_sel_hi[:n])
                out += " clamp" if inst.clamp and mods.get("clamp") else ""
                return out + (_dpp_text(inst) if inst.dpp is not None else "")
            if mods.get("op_sel_hi") and any(b != hi_default for b in inst.op_sel_hi[:n]):
                out += " op_sel_hi:" + _bits(inst.op_sel_hi[:n])
            if mods.get("neg") and any(inst.neg[:n]):
                out += " neg_lo:" + _bits(inst.neg[:n])
            if mods.get("neg_hi") and any(inst.neg_hi[:n]):
                out += " neg_hi:" + _bits(inst.neg_hi[:n])
            if inst.clamp and mods.get("clamp"):
                out += " clamp"
        elif enc == "SMEM":
            if inst.operands.get("soffset", Operand("sgpr", 124)).index != 124 and inst.offset \
                    or self._smem_form(inst) == "sgpr_imm":
                out += " offset:" + (hex(inst.offset) if inst.offset >= 0 else "-" + hex(-inst.offset))
            out += self._cpol(inst, mods)
        elif enc in ("FLAT", "GLOBAL", "SCRATCH"):
            if inst.offset:
                out += f" offset:{inst.offset}"
            out += self._cpol(inst, mods)
        elif enc == "DS":
            if "2addr" in info.op:
                out += (f" offset0:{inst.offset0}" if inst.offset0 else "") + (
                    f" offset1:{inst.offset1}" if inst.offset1 else "")
            elif info.op == "ds_swizzle_b32" and inst.offset:
                out += " offset:" + sopp_imm.fmt_swizzle(inst.offset)
            elif inst.offset:
                out += f" offset:{inst.offset}"
            if inst.gds:
                out += " gds"
        elif enc in ("MUBUF", "MTBUF") and slots:
            x = inst.extra
            if enc == "MTBUF":
                f = self.table.buf_format.get(x.get("format", 1), str(x.get("format")))
                out += f" format:{f}" if f else ""
            out += (" idxen" if x.get("idxen") else "") + (" offen" if x.get("offen") else "")
            out += f" offset:{inst.offset}" if inst.offset else ""
            out += self._cpol(inst, mods) + (" tfe" if x.get("tfe") else "")
        if inst.dpp is not None:
            out += _dpp_text(inst)
        return out

    @staticmethod
    def _cpol(inst: Inst, mods: dict) -> str:
        return (" glc" if inst.glc else "") + (" slc" if inst.slc else "") + (" dlc" if inst.dlc else "")


_PRINTERS: dict[tuple[str, bool, bool], Printer] = {}


_SMEM_FORMS = {1: "imm", 2: "sgpr_imm"}


def printer(arch: str, wave64: bool = False, asm_style: bool = False) -> Printer:
    key = (arch, wave64, asm_style)
    if key not in _PRINTERS:
        cls = Printer
        if load(arch).family == "rdna4":
            from .disasm_rdna4 import Rdna4Printer   # RDNA4's memory formats print differently
            cls = Rdna4Printer
        if load(arch).family == "cdna3":
            from .disasm_cdna3 import Cdna3Printer   # GFX9 SMEM, cache bits, waitcnt, SDWA, MAI
            cls = Cdna3Printer
        _PRINTERS[key] = cls(arch, asm_style=asm_style, wave64=wave64)
    return _PRINTERS[key]


def inst_text(inst: Inst, arch: str = "gfx1100", wave64: bool = False) -> str:
    """One decoded instruction as LLVM prints it."""
    return printer(arch, wave64).text(inst)


def disassemble(data, arch: str = "gfx1100", wave64: bool = False) -> list[str]:
    """Bytes -> one line of LLVM assembly per instruction; IllegalInstruction names the bad offset."""
    dec, pr = decoder(arch, wave64), printer(arch, wave64)
    out, off = [], 0
    while off < len(data):
        inst = dec.decode(data, off)
        try:
            out.append(pr.text(inst))
        except IllegalInstruction as e:
            raise IllegalInstruction(f"{arch}: {e.reason} at offset {off:#x}", pc=off) from None
        off += inst.size
    return out
