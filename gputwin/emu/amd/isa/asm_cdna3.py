"""LLVM gfx942 assembly -> bytes: the RDNA3 assembler (asm.py) with GFX9 syntax rewritten around it.

Before the shared parser sees a line, the GFX9-only parts are taken out and remembered: AGPR operands
(`a5`, `a[0:3]`, parsed as VGPRs, then marked by position), FLAT_SCRATCH/XNACK_MASK names, gfx940 cache
bits (sc0 -> glc, nt -> slc, sc1), SDWA (`_sdwa` with its selects and source modifiers), MAI modifiers
(cbsz/abid/blgp, f64 neg:[...]), DS write2/read2 offsets, GFX9 DPP controls (wave_shl, row_bcast...),
MUBUF lds and SMEM offset forms. The Inst the shared parser builds gets them back (fields in
`Inst.extra`, as decode_cdna3 reports them) and is encoded by encode_cdna3; GFX9 VOP3 takes no literal,
so such a match fails over to the next candidate, as in LLVM.
"""
from __future__ import annotations

import dataclasses
import re

from . import sopp_imm
from .asm import AsmError, Assembler, _build_index, split_top
from .asm_syntax import add_aliases
from .asm_mods import Fail
from .asm_operands import OperandError, immediate, parse_operand
from .cdna3_formats import GFX9_PAIRS, GFX9_SPECIAL
from .decode import decoder
from .encode import encoder
from .inst import Inst, Operand
from .table import load

_AREG = re.compile(r"^([-|(]*(?:sext\(|neg\(|abs\()?)a(\d+|\[\d+:\d+\])")
_SPECIAL_TEXT = {n: f"s{i}" for i, n in GFX9_SPECIAL.items()} | {n: f"s[{i}:{i + 1}]" for i, n in GFX9_PAIRS.items()}
_SPECIAL_RE = re.compile(r"\b(" + "|".join(sorted(_SPECIAL_TEXT, key=len, reverse=True)) + r")\b")
_SEL = {"BYTE_0": 0, "BYTE_1": 1, "BYTE_2": 2, "BYTE_3": 3, "WORD_0": 4, "WORD_1": 5, "DWORD": 6}
_UNUSED = {"UNUSED_PAD": 0, "UNUSED_SEXT": 1, "UNUSED_PRESERVE": 2}
_DPP9 = {"wave_shl": 0x130, "wave_rol": 0x134, "wave_shr": 0x138, "wave_ror": 0x13C, "row_bcast:15": 0x142,
         "row_bcast:31": 0x143}
_TWO = ("write2", "read2", "wrxchg2")
_OMOD = ("mul:2", "mul:4", "div:2")
_FLAGS = ("sc0", "sc1", "nt", "lds", "glc", "slc", "offen", "idxen", "gds", "clamp")


def parse_waitcnt9(text: str) -> int:
    """GFX9 s_waitcnt: vmcnt [3:0] + [15:14], expcnt [6:4], lgkmcnt [11:8]; unnamed counters at maximum."""
    if re.fullmatch(r"\s*-?(0x[0-9a-fA-F]+|\d+)\s*", text):
        return sopp_imm.parse_int(text) & 0xFFFF
    vm, exp, lgkm = 63, 7, 15
    for m in re.finditer(r"(\w+)\((\w+)\)", text):
        name, x = m.group(1), sopp_imm.parse_int(m.group(2))
        if name == "vmcnt" and 0 <= x < 64:
            vm = x
        elif name == "expcnt" and 0 <= x < 8:
            exp = x
        elif name == "lgkmcnt" and 0 <= x < 16:
            lgkm = x
        else:
            raise sopp_imm.ImmError(f"bad s_waitcnt counter {m.group(0)!r}")
    return (vm & 0xF) | (vm >> 4) << 14 | exp << 4 | lgkm << 8


class Cdna3Assembler(Assembler):
    def __init__(self, arch: str = "gfx942", wave64: bool = True):
        self.arch, self.wave64 = arch, False   # the gfx942 table already has wave64 lane masks
        self.table = load(arch)
        self.index = _build_index(self.table)
        add_aliases(self.index, arch)
        self.vopd, self.vopd_y = {}, {}
        self.encoder = encoder(arch)
        self.decoder = decoder(arch)
        self._e32_only = False

    def parse(self, body: str, line: int, col0: int = 1) -> tuple[Inst, str | None]:
        mnemonic, _, rest = body.partition(" ")
        sdwa = mnemonic.endswith("_sdwa")
        if sdwa:
            mnemonic = mnemonic.removesuffix("_sdwa")
        # trailing words: GFX9 modifiers are taken out here
        ops = [t.strip() for t, _ in split_top(rest, ",")] if rest.strip() else []
        words = [w for w, _ in split_top(ops[-1], " ") if w] if ops else []
        if ops:
            ops[-1] = words[0] if words and not re.match(r"^\w+:", words[0]) and words[0] not in _FLAGS else ""
            words = words[1:] if ops[-1] else words
            if not ops[-1]:
                ops.pop()
        g9: dict = {}
        keep = []
        for w in words:
            name, _, val = w.partition(":")
            if w == "sc0":
                keep.append("glc")
            elif w == "nt":
                keep.append("slc")
            elif w in ("sc1", "lds"):
                g9[w] = 1
            elif name in ("cbsz", "abid", "blgp") or name == "neg" and mnemonic.startswith("v_mfma"):
                g9[name] = sopp_imm.parse_int(val) if name != "neg" else \
                    sum(int(b) << i for i, b in enumerate(val.strip("[]").split(",")))
            elif sdwa and name in ("dst_sel", "src0_sel", "src1_sel"):
                g9[name] = _SEL[val]
            elif sdwa and name == "dst_unused":
                g9[name] = _UNUSED[val]
            elif sdwa and w == "clamp":
                g9["clamp"] = 1
            elif sdwa and w in _OMOD:
                g9["omod"] = _OMOD.index(w) + 1
            elif w in _DPP9 or name in _DPP9:
                g9["dpp"] = _DPP9[w if w in _DPP9 else name]
                keep.append("quad_perm:[0,0,0,0]")
            elif name in ("offset0", "offset1") and any(t in mnemonic for t in _TWO):
                g9[name] = sopp_imm.parse_int(val)
            else:
                keep.append(w)
        agprs, mods9, plain = [], {}, []
        for i, tok in enumerate(ops):
            tok = _SPECIAL_RE.sub(lambda m: _SPECIAL_TEXT[m.group(0)], tok)
            if _AREG.match(tok):
                agprs.append(i)
                tok = _AREG.sub(r"\1v\2", tok)
            if sdwa and ("sext(" in tok or "|" in tok or tok.startswith("-") and not re.match(r"-\d", tok)):
                p = parse_operand(tok)
                mods9[i] = p
                tok = p.text
            plain.append(tok)
        if sdwa:   # sources other than v0..v127: parsed as a VGPR placeholder, put back below
            for i, tok in enumerate(plain):
                p = parse_operand(tok) if i > 0 and tok not in ("vcc", "exec") else None
                if p is not None and (p.kind != "vgpr" or p.index >= 128):
                    mods9.setdefault(i, p)
                    plain[i] = "v0"
        if sdwa and mnemonic.startswith("v_cmp") and plain and plain[0] != "vcc":
            mods9[0] = parse_operand(plain[0])   # VOPC SDWA: an SGPR pair instead of VCC (SD = 1)
            plain[0] = "vcc"
        if mnemonic.startswith(("buffer_", "tbuffer_")):
            if "lds" in g9 and len(plain) == 3:
                plain.insert(0, "v0")            # loads into LDS name no data register: LLVM encodes 0
            if len(plain) == 4 and parse_operand(plain[3]).kind not in ("sgpr", "int"):
                mods9[3] = parse_operand(plain[3])   # soffset: a special register or a float constant
                plain[3] = "s0"
        text = ", ".join(plain)
        text = mnemonic + (" " + text if text else "") + (" " + " ".join(keep) if keep else "")
        self._e32_only = sdwa
        inst, label = super().parse(text, line, col0)
        try:
            return self._finish(inst, agprs, g9, mods9, sdwa), label
        except Fail as e:
            raise AsmError(str(e), line, col0) from None

    def _match(self, info, dpp_form, rest, col):
        if self._e32_only and info.enc not in ("VOP1", "VOP2", "VOPC"):
            raise Fail("SDWA is a VOP1/VOP2/VOPC form", col)
        inst, label = super()._match(info, dpp_form, rest, col)
        if info.enc in ("VOP3", "VOP3SD", "VOP3P") and any(o.kind == "literal" for o in inst.operands.values()):
            raise Fail("GFX9 VOP3 takes no literal", col)
        return inst, label

    def _imm16(self, kind, tok, p, c):
        if kind == "waitcnt":
            try:
                return parse_waitcnt9(tok), None
            except sopp_imm.ImmError as e:
                raise Fail(str(e), c) from None
        return super()._imm16(kind, tok, p, c)

    # ---- the GFX9 parts back into the Inst -------------------------------------------------------------
    def _finish(self, inst: Inst, agprs, g9: dict, mods9: dict, sdwa: bool) -> Inst:
        info = self.table.by_enc["VOP3" if inst.encoding == "VOP3SD" else inst.encoding][inst.opcode]
        slots = info.rtn_slots if info.rtn_slots and "vdst" in inst.operands else info.slots
        roles = [s.role for s in slots]
        ops, extra = dict(inst.operands), dict(inst.extra)
        kw: dict = {}
        for i in agprs:
            r = roles[i]
            ops[r] = Operand("agpr", ops[r].index, ops[r].count)
        enc = inst.encoding
        if enc in ("DS", "FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF") and agprs:
            extra["acc"] = 1
        if "sc1" in g9:
            extra["sc1"] = 1
        if "lds" in g9:
            extra["lds"] = 1
        if enc == "DS" and any(t in info.op for t in _TWO):
            o0, o1 = g9.get("offset0", 0), g9.get("offset1", 0)
            kw.update(offset0=o0, offset1=o1, offset=o1 << 8 | o0)
        if enc == "SMEM":
            so = ops.get("soffset")
            if so is not None and so.kind == "sgpr" and so.index == 124 and "imm" not in extra:
                ops.pop("soffset")            # the shared parser's NULL for "an immediate offset only"
                extra.update(imm=1, soe=0)
            elif so is not None and inst.offset:
                extra.update(imm=1, soe=1)    # sN offset:X
            elif so is not None:              # an SGPR offset alone: OFFSET[6:0] names it (GFX9 numbering)
                extra.update(imm=0, soe=0, offset_field=249 - so.index if so.index in (124, 125) else so.index)
        if enc in ("MUBUF", "MTBUF") and 3 in mods9:
            p = mods9.pop(3)
            ops["soffset"] = Operand(p.kind, p.index, 1) if p.kind == "special" else immediate(p, "b32", True, False)
        if enc == "VOP3P" and info.mods.get("abid") is not None or info.op.startswith("v_accvgpr"):
            if info.op.startswith("v_accvgpr"):   # LLVM's canonical encoding of these two
                extra.update(cbsz=0, abid=8, blgp=0, acc_cd=0, acc=3)
            else:
                extra.update(cbsz=g9.get("cbsz", 0), abid=g9.get("abid", 0), blgp=g9.get("blgp", g9.get("neg", 0)),
                             acc_cd=int(ops["vdst"].kind == "agpr"),
                             acc=int(ops["src0"].kind == "agpr") | int(ops["src1"].kind == "agpr") << 1)
        if "dpp" in g9 and inst.dpp is not None:
            kw["dpp"] = dataclasses.replace(inst.dpp, ctrl=g9["dpp"])
        if sdwa:
            extra.update(sdwa=1, src0_sel=g9.get("src0_sel", 6))
            if enc != "VOPC":
                extra.update(dst_sel=g9.get("dst_sel", 6), dst_unused=g9.get("dst_unused", 2))
            else:
                sd = mods9.pop(0, None)
                extra["sd"] = int(sd is not None)
                if sd is not None:
                    ops["sdst"] = Operand(sd.kind, sd.index, 2)
            kw.update(clamp=bool(g9.get("clamp")), omod=g9.get("omod", 0))
            if enc != "VOP1":
                extra["src1_sel"] = g9.get("src1_sel", 6)
            neg, abs_ = list(inst.neg), list(inst.abs)
            for i, p in mods9.items():
                r = roles[i]
                if r not in ("src0", "src1"):
                    raise Fail(f"SDWA modifiers on {r}", 0)
                if p.kind == "vgpr":
                    ops[r] = Operand("vgpr", p.index, p.count)
                else:
                    s = slots[i]
                    ptype = s.ptype or next((x.ptype for x in slots if x.role == "src0"), "b32") or "b32"
                    try:
                        ops[r] = (Operand(p.kind, p.index, 1) if p.kind in ("sgpr", "special")
                                  else immediate(p, ptype, True, False))
                    except OperandError as e:
                        raise Fail(str(e), 0) from None
                j = int(r[-1])
                neg[j], abs_[j] = p.neg, p.abs
                if p.sext:
                    extra[f"{r}_sext"] = 1
            kw.update(neg=tuple(neg), abs=tuple(abs_))
        inst = dataclasses.replace(inst, operands=ops, extra=extra, **kw)
        # canonical form: what the decoder makes of the encoding (normalised operands, sizes)
        try:
            return self.decoder.decode(self.encoder.encode(inst))
        except Exception as e:   # noqa: BLE001 - any inconsistency is a bad line, not a crash
            raise Fail(f"cannot encode for gfx942: {e}", 0) from None


_ASSEMBLERS: dict[str, Cdna3Assembler] = {}


def cdna3_assembler(arch: str) -> Cdna3Assembler:
    if arch not in _ASSEMBLERS:
        _ASSEMBLERS[arch] = Cdna3Assembler(arch)
    return _ASSEMBLERS[arch]
