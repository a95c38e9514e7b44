"""LLVM-syntax assembly -> bytes (gfx11), table-driven: each line is matched against the table entries
its mnemonic can name (e32 before e64, as LLVM prefers the shorter encoding), operands are checked
against what the entry accepts, and the result is encoded by encode.py. Labels work for branches."""
from __future__ import annotations

import re
from dataclasses import replace

from gputwin.errors import IllegalInstruction

from . import asm_image, image, pixel, sopp_imm
from .asm_mods import DPP_CTRL, SRC_INDEX, Fail, trailing
from .asm_operands import OperandError, Parsed, immediate, parse_operand
from .asm_syntax import NOT_ON_RDNA, NULL_SDST, add_aliases, check_order, vopd_bank_conflict
from .decode import decoder
from .encode import encoder
from .inst import Inst, Operand
from .table import OpInfo, Table, load


class AsmError(ValueError):
    """Bad assembly; names the line and column (1-based)."""

    def __init__(self, message: str, line: int, column: int):
        self.message, self.line, self.column = message, line, column
        super().__init__(f"line {line}, column {column}: {message}")


_BRANCH_KINDS = ("dec", "dec_opt")
# The constant bus (gfx11/gfx12): a VALU instruction reads at most two scalar values (distinct SGPRs and the
# literal), the 64-bit shifts one (LLVM's getConstantBusLimit)
_VALU = frozenset({"VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD", "VOP3P"})
_BUS_LIMIT = {"v_lshlrev_b64": 1, "v_lshrrev_b64": 1, "v_ashrrev_i64": 1}

# a comma-separated piece that starts with a modifier, not an operand
_MODIFIER = re.compile(r"[a-z_0-9]+:|(clamp|glc|slc|dlc|gds|offen|idxen|tfe|row_mirror|row_half_mirror)(\s|$)")


def split_top(text: str, sep: str, start: int = 0) -> list[tuple[str, int]]:
    """Split on sep outside () and [] and ||, keeping each piece's column offset."""
    out, depth, cur, cur_at, i = [], 0, "", start, 0
    while i < len(text):
        ch = text[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if depth == 0 and text.startswith(sep, i):
            out.append((cur, cur_at))
            i += len(sep)
            cur, cur_at = "", start + i
            continue
        cur += ch
        i += 1
    out.append((cur, cur_at))
    return out


def _build_index(table: Table) -> dict[str, list[tuple[OpInfo, bool]]]:
    """Mnemonic as written -> [(entry, dpp form)], preferred first."""
    idx: dict[str, list[tuple[OpInfo, bool]]] = {}

    def add(key, info, dpp):
        idx.setdefault(key, []).append((info, dpp))

    for enc in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3P", "SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "SMEM", "DS",
                "FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF"):
        for info in table.by_enc.get(enc, {}).values():
            add(info.name, info, False)
            base = info.name.removesuffix("_e32").removesuffix("_e64")
            if base != info.name:
                add(base, info, False)
            elif enc in ("VOP3", "VOP3P"):   # names without a suffix (v_fma_f32, v_pk_add_f16, v_nop) take _e64
                add(base + "_e64", info, False)
            if info.dpp:
                # LLVM also takes DPP controls on the plain name (v_mov_b32 v1, v2 row_shl:1), not on _e32/_e64
                if enc in ("VOP1", "VOP2", "VOPC"):
                    add(base + "_dpp", info, True)
                    add(base, info, True)
                elif enc in ("VOP3", "VOP3P"):
                    add(base + "_e64_dpp", info, True)
                    add(base, info, True)
    for lst in idx.values():   # e32 forms before VOP3 forms
        lst.sort(key=lambda e: (e[0].enc in ("VOP3", "VOP3SD"), e[1]))
    return idx


class Assembler:
    images: dict = {}   # image_* mnemonic -> entries (MIMG, VIMAGE, VSAMPLE; none on gfx942): asm_image.py
    pixel: dict = {}    # exp/export, LDS-direct loads, v_interp_*: pixel.py

    def __init__(self, arch: str = "gfx1100", wave64: bool = False):
        self.arch = arch
        self.wave64 = wave64
        self.table = load(arch)
        self.index = _build_index(self.table)
        add_aliases(self.index, arch)
        self.vopd = {i.name: ("VOPDX", i) for i in self.table.by_enc["VOPDX"].values()}
        self.vopd_y = {i.name: i for i in self.table.by_enc["VOPDY"].values()}
        self.encoder = encoder(arch)
        self.images = image.by_name(arch)
        self.pixel = pixel.mnemonics(arch)

    # ---- whole programs -----------------------------------------------------------------------
    def assemble(self, text: str) -> bytes:
        return b"".join(code for _, _, code in self.assemble_lines(text))

    def assemble_lines(self, text: str, errors: list | None = None) -> list[tuple[int, str, bytes]]:
        """[(line number, source line, bytes)] for every instruction line; labels resolved. With an
        `errors` list, bad lines are collected there (AsmError) and skipped instead of raising."""
        return [(n, raw, code) for n, raw, code, _ in self.assemble_items(text, errors)]

    def assemble_items(self, text: str, errors: list | None = None,
                       labels: dict | None = None) -> list[tuple[int, str, bytes, Inst | None]]:
        """Like assemble_lines, with each line's parsed Inst (None for .long data); a `labels` dict is filled
        with each label's byte offset."""
        items, pc = [], 0
        labels = {} if labels is None else labels
        for n, raw in enumerate(text.splitlines(), 1):
            try:
                pc = self._first_pass(n, raw, items, labels, pc)
            except AsmError as e:
                if errors is None:
                    raise
                errors.append(e)
        out = []
        for n, raw, inst, label in items:
            try:
                out.append((n, raw, self._second_pass(inst, label, labels, n), None if isinstance(inst, bytes) else inst))
            except AsmError as e:
                if errors is None:
                    raise
                errors.append(e)
        return out

    def _first_pass(self, n: int, raw: str, items: list, labels: dict, pc: int) -> int:
        if True:
            line = re.split(r";|//|#", raw, maxsplit=1)[0].rstrip()
            body = line.strip()
            col0 = len(line) - len(line.lstrip()) + 1
            m = re.match(r"([A-Za-z_.$][\w.$]*):", body)
            if m:
                if m.group(1) in labels:
                    raise AsmError(f"label {m.group(1)!r} defined twice", n, col0)
                labels[m.group(1)] = pc
                body = body[m.end():].strip()
                col0 = len(line) - len(line.lstrip()) + m.end() + 1
            if not body or body in (".text",):
                return pc
            if body.startswith(".long"):
                try:
                    code = b"".join(int(v, 0).to_bytes(4, "little") for v in body[5:].split(","))
                except (ValueError, OverflowError):
                    raise AsmError(".long takes 32-bit numbers", n, col0) from None
                items.append((n, raw, code, None))
                return pc + len(code)
            if body.startswith("."):
                raise AsmError(f"unsupported directive {body.split()[0]!r}", n, col0)
            inst, label = self.parse(body, n, col0)
            size = len(self.encoder.encode(inst))
            items.append((n, raw, inst, (label, pc + 4, col0) if label else None))
            return pc + size

    def _second_pass(self, inst, label, labels: dict, n: int) -> bytes:
        if isinstance(inst, bytes):
            return inst
        if label:
            name, next_pc, col = label
            if name not in labels:
                raise AsmError(f"unknown label {name!r}", n, col)
            delta = (labels[name] - next_pc) // 4
            if not -(1 << 15) <= delta < 1 << 15:
                raise AsmError(f"branch to {name!r} is out of range", n, col)
            inst = replace(inst, simm16=delta)
        code = self.encoder.encode(inst)
        if inst.encoding not in image.ENCODINGS:
            # never emit bytes the strict decoder (what LLVM accepts) refuses: modifier bits an entry lacks
            # (neg_lo/neg_hi on integer and fp8 WMMA/dot) are only caught there
            try:
                decoder(self.arch, self.wave64).decode(code)
            except IllegalInstruction as e:
                raise AsmError(f"invalid operand for instruction ({e.reason.split(' at offset')[0]})", n,
                               label[2] if label else 1) from None
        return code

    # ---- one instruction ------------------------------------------------------------------------
    def parse(self, body: str, line: int, col0: int = 1) -> tuple[Inst, str | None]:
        """One instruction (no label/comment) -> (Inst, branch label or None)."""
        if "::" in body:
            if self.wave64:
                raise AsmError("instruction requires wavesize=32", line, col0)
            return self._vopd(body, line, col0), None
        mnemonic, _, rest = body.partition(" ")
        rest_col = col0 + len(mnemonic) + 1
        if mnemonic.lower() in self.pixel:
            try:
                return pixel.parse(self.arch, mnemonic.lower(), rest.strip(),
                                   rest_col + len(rest) - len(rest.lstrip())), None
            except pixel.PixelError as e:
                raise AsmError(str(e), line, e.col) from None
        images = self.images.get(mnemonic.lower())
        if images:
            try:
                return asm_image.parse(self.arch, self.table, images, rest.strip(),
                                       rest_col + len(rest) - len(rest.lstrip())), None
            except Fail as e:
                raise AsmError(str(e), line, e.col) from None
        cands = self.index.get(mnemonic.lower())   # LLVM matches mnemonics in any case
        if not cands:
            raise AsmError(f"unknown instruction {mnemonic!r}", line, col0)
        best = None
        for info, dpp in cands:
            try:
                return self._match(info, dpp, rest.strip(), rest_col + len(rest) - len(rest.lstrip()))
            except Fail as e:
                if best is None or e.col > best.col:
                    best = e
        raise AsmError(str(best), line, best.col)

    def _split(self, info: OpInfo, rest: str, col: int) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
        """Operands and trailing modifiers (space separated after the last operand)."""
        if not rest:
            return [], []
        special = info.slots and info.slots[0].kind in ("waitcnt", "delay_alu", "depctr", "symbolic")
        if special:
            return [(rest, col)], []
        ops = split_top(rest, ",", col)
        ops = [(t.strip(), c + len(t) - len(t.lstrip())) for t, c in ops]
        lead = []   # LLVM also takes a comma before the modifiers (`v3, op_sel:[1,1]`, `s3, format:[...]`)
        while len(ops) > 1 and _MODIFIER.match(ops[-1][0]):
            lead = [(w, c) for w, c in split_top(ops[-1][0], " ", ops[-1][1]) if w] + lead
            ops = ops[:-1]
        last, lcol = ops[-1]
        words = [(w, c) for w, c in split_top(last, " ", lcol) if w] + lead
        if not words:
            raise Fail("missing operand", lcol)
        nslots = len(info.rtn_slots or info.slots) if info.rtn_slots else len(info.slots)
        # Modifiers start at the first word that looks like one (name:value or a bare flag).
        k = 1
        if len(ops) == 1 and nslots == 0:
            k = 0
        ops[-1] = words[0] if k else ("", lcol)
        if not k:
            ops = []
        return ops, words[k:]

    def _match(self, info: OpInfo, dpp_form: bool, rest: str, col: int) -> tuple[Inst, str | None]:
        if self.wave64:
            info = info.for_wave64()
        ops, mods = self._split(info, rest, col)
        modmap = self._mods(info, mods, dpp_form)
        slots = info.rtn_slots if info.rtn_slots and len(ops) == len(info.rtn_slots) else info.slots
        # gfx12: the returning form sets TH_ATOMIC_RETURN (checked with the cache policy)
        glc = slots is info.rtn_slots if self.table.family == "rdna4" else "glc" in modmap
        if slots and slots[-1].kind.endswith("_opt") and len(ops) == len(slots) - 1:
            slots = slots[:-1]   # s_endpgm: the immediate may be left out (0)
        if info.rtn_slots and (slots is info.rtn_slots) != glc:
            raise Fail("the returning form of an atomic needs glc (gfx12: th:TH_ATOMIC_RETURN), and only it", col)
        if len(ops) != len(slots):   # point at the first extra operand, or just past the last one
            at = ops[len(slots)][1] if len(ops) > len(slots) else ops[-1][1] + len(ops[-1][0]) if ops else col
            raise Fail(f"{info.name} takes {len(slots)} operands, got {len(ops)}", at)
        return self._build(info, slots, ops, modmap, col)

    def _mods(self, info: OpInfo, words: list[tuple[str, int]], dpp_form: bool) -> dict:
        out: dict = {}
        for w, c in words:
            name, _, val = w.partition(":")
            if name in out:
                raise Fail(f"duplicate modifier {name!r}", c)
            out[name] = (val, c)
        has_dpp = any(k in ("quad_perm", "dpp8", "row_mirror", "row_half_mirror") or k in DPP_CTRL for k in out)
        if has_dpp != dpp_form:
            first = next(iter(out.values()), ("", 0))[1]
            raise Fail("DPP modifiers need a DPP form" if has_dpp else "missing DPP control", first)
        if self.table.family == "rdna3":
            check_order(out)
        return out

    # ---- operands into an Inst ----------------------------------------------------------------
    def _build(self, info: OpInfo, slots, ops, modmap: dict, col: int) -> tuple[Inst, str | None]:
        operands: dict[str, Operand] = {}
        kw: dict = {}
        neg, abs_, opsel = [False] * 3, [False] * 3, [False] * 4
        literal = None
        label = None
        extra: dict[str, int] = {}
        enc = info.enc
        for s, (tok, c) in zip(slots, ops):
            if self.wave64:
                s = s.for_wave64()   # lane masks are SGPR pairs, WMMA accumulators half as long
            try:
                p = parse_operand(tok) if s.kind not in ("waitcnt", "delay_alu", "depctr", "hwreg", "sendmsg",
                                                         "symbolic", "gpr_idx") else None
            except OperandError as e:
                raise Fail(str(e), c + e.offset) from None
            if s.role == "simm16":
                v, label = self._imm16(s.kind, tok, p, c)
                kw["simm16"] = v
                continue
            if s.kind in ("sendmsg", "gpr_idx"):
                try:
                    operands[s.role] = Operand("imm", 0, 1, sopp_imm.parse_sendmsg(tok, self.table.sendmsg)
                                               if s.kind == "sendmsg" else sopp_imm.parse_gpr_idx(tok))
                except (sopp_imm.ImmError, KeyError) as e:
                    raise Fail(str(e), c) from None
                continue
            if s.kind == "imp":
                if tok != s.field[1:]:
                    raise Fail(f"expected {s.field[1:]}", c)
                continue
            if p.kind == "off" and (s.kind == "off" or s.role in ("saddr", "vaddr") and enc in ("GLOBAL", "SCRATCH")):
                continue
            if s.kind == "off":   # MUBUF vaddr
                if p.kind != "vgpr" or p.count > 2:
                    raise Fail("expected off or a VGPR address", c)
                operands["vaddr"] = Operand("vgpr", p.index, p.count)
                continue
            if s.kind == "offset":   # gfx12 s_prefetch_*: the offset written as an operand
                if p.kind != "int":
                    raise Fail("expected an offset", c)
                kw["offset"] = p.value
                continue
            if s.kind == "imm":
                if p.kind != "int" or not 0 <= p.value < 128:
                    raise Fail("expected an immediate 0..127", c)
                operands[s.role] = Operand("imm", 0, 1, p.value)
                continue
            if s.kind == "lit":
                try:
                    op = immediate(p, s.ptype, False, True)
                except OperandError as e:
                    raise Fail(str(e), c) from None
                if literal is not None and literal != op.value:
                    raise Fail("only one literal is allowed", c)
                literal = op.value
                operands[s.role] = op
                continue
            op = self._reg_or_const(info, s, p, c)
            if s.role == "sdst" and info.op in NULL_SDST and op.index != 124:
                raise Fail("src0 must be null", c)
            if op.kind == "literal":
                if literal is not None and literal != op.value:
                    raise Fail("only one literal is allowed", c)
                literal = op.value
            i = SRC_INDEX.get(s.role)
            if p.neg or p.abs or p.sext:
                self._check_srcmods(info, s, p, i, c, dpp=bool(modmap) and "dpp8" in modmap or
                                    any(k in modmap for k in ("quad_perm", "row_mirror", "row_half_mirror",
                                                              *DPP_CTRL)))
                if i is not None:
                    neg[i] = p.neg or p.sext
                    abs_[i] = p.abs
            if p.half:
                if s.kind not in ("v16", "src16"):
                    raise Fail("this operand has no 16-bit halves", c)
                opsel[3 if s.kind == "v16" else i] = p.half == ".h"
            elif s.kind in ("v16", "src16") and op.kind == "vgpr":
                raise Fail("a 16-bit VGPR half (.l or .h) is required", c)
            operands[s.role] = op
        if info.enc in ("SOPP", "SOPK"):
            kw.setdefault("simm16", 0)
        if enc in _VALU and self.table.family in ("rdna3", "rdna4"):
            scalars = {(o.index, o.count) for r, o in operands.items() if r in SRC_INDEX and o.kind == "sgpr"
                       and o.index != 124}
            if len(scalars) + (literal is not None) > _BUS_LIMIT.get(info.op, 2):
                raise Fail("invalid operand (violates constant bus restrictions)", col)
        inst = trailing(self.table, info, operands, modmap, kw, neg, abs_, opsel, extra, col)
        return inst, label

    def _reg_or_const(self, info: OpInfo, s, p: Parsed, c: int) -> Operand:
        k = s.kind
        if p.kind == "special" and p.index in NOT_ON_RDNA and self.table.family in ("rdna3", "rdna4"):
            raise Fail(NOT_ON_RDNA[p.index], c)   # llvm-mc-19 refuses them as written (disassembly prints them)
        if k in ("src", "ssrc", "src16"):
            allowed = s.allowed or "v"
            if p.kind == "vgpr":
                if "v" not in allowed and "w" not in allowed or "v" not in allowed and p.index >= 128:
                    raise Fail("VGPR not allowed here", c)
                if p.count != s.count:
                    raise Fail(f"expected a {s.count}-dword register", c)
                return Operand("vgpr", p.index, p.count)
            if p.kind in ("sgpr", "special"):
                if "s" not in allowed:
                    raise Fail("scalar register not allowed here", c)
                if p.count != s.count and not (p.kind == "special" or p.index in (124, 125) and p.count == 1):
                    raise Fail(f"expected a {s.count}-dword register", c)
                return Operand(p.kind, p.index, s.count if p.kind == "special" or p.index >= 124 else p.count)
            if p.kind in ("int", "float"):
                try:
                    return immediate(p, s.ptype, "c" in allowed, "l" in allowed)
                except OperandError as e:
                    raise Fail(str(e), c) from None
            raise Fail(f"unexpected {p.text!r}", c)
        if k in ("v", "v16"):
            counts = {s.count}
            if s.role == "vaddr" and info.enc == "GLOBAL":
                counts.add(2)                 # no saddr: a 64-bit address (checked with the modifiers)
            if s.role in ("vdst", "vdata") and info.fmt.name in ("MUBUF", "MTBUF"):
                counts.add(s.count + 1)       # tfe adds a status dword (checked with the modifiers)
            if p.kind != "vgpr" or p.count not in counts:
                raise Fail(f"expected a {s.count}-dword VGPR" if s.count > 1 else "expected a VGPR", c)
            if s.allowed[:1] == "w" and p.index >= 128:
                raise Fail("16-bit operands of e32 forms use v0..v127", c)
            return Operand("vgpr", p.index, p.count)
        if k == "s":
            if s.role == "soffset" and p.kind in ("int", "float") and info.fmt.name in ("MUBUF", "MTBUF") \
                    and s.width == 8:
                try:
                    return immediate(p, "b32", True, False)
                except OperandError as e:
                    raise Fail(str(e), c) from None
            if p.kind == "int" and s.role == "soffset" and info.enc == "SMEM":
                return Operand("imm", 0, 1, p.value)   # an immediate offset in soffset's place
            if p.kind != "sgpr" or p.count != s.count and not (p.index == 124 and p.count == 1):
                raise Fail(f"expected a {s.count}-dword scalar register", c)
            scale = {"sbase": 2, "srsrc": 4}.get(s.field, 1)
            if p.index % scale:
                raise Fail(f"register must be aligned to {scale}", c)
            return Operand("sgpr", p.index, s.count)
        raise Fail(f"unexpected operand {p.text!r}", c)

    def _check_srcmods(self, info: OpInfo, s, p: Parsed, i, c: int, dpp: bool) -> None:
        mods = info.mods
        if i is None:
            raise Fail("modifiers not allowed on this operand", c)
        if info.enc in ("VOP1", "VOP2", "VOPC"):
            if not dpp:
                raise Fail("source modifiers need the e64 or DPP form", c)
            dm, sx = mods.get("dpp_negabs", 0), mods.get("dpp_sext", 0)
            ok_neg = dm >> (2 * i) & 1 and (bool(sx >> (2 * i) & 1) == p.sext)
            ok_abs = dm >> (2 * i + 1) & 1
        elif info.enc == "VOP3P":
            ok_neg = ok_abs = bool(mods.get("mix")) and not p.sext
        else:
            ok_neg = mods.get("neg", 0) >> i & 1 and (bool(mods.get("sext", 0) >> i & 1) == p.sext)
            ok_abs = mods.get("abs", 0) >> i & 1
        if (p.neg or p.sext) and not ok_neg or p.abs and not ok_abs:
            raise Fail("source modifier not allowed here", c)

    def _imm16(self, kind: str, tok: str, p: Parsed | None, c: int) -> tuple[int, str | None]:
        t = self.table
        try:
            if kind == "waitcnt":
                return sopp_imm.parse_waitcnt(tok), None
            if kind == "delay_alu":
                return sopp_imm.parse_delay_alu(tok), None
            if kind == "depctr":
                return sopp_imm.parse_depctr(tok), None
            if kind == "hwreg":
                return sopp_imm.parse_hwreg(tok, t.hwreg), None
            if kind == "sendmsg":
                return sopp_imm.parse_sendmsg(tok, t.sendmsg), None
            if kind == "symbolic":
                return sopp_imm.parse_version(tok), None
            if kind == "gpr_idx":
                return sopp_imm.parse_gpr_idx(tok), None
        except (sopp_imm.ImmError, KeyError) as e:
            raise Fail(str(e), c) from None
        if p.kind == "sym" and kind in _BRANCH_KINDS:
            return 0, p.text
        if p.kind != "int" or not -(1 << 15) <= p.value < 1 << 16:
            raise Fail("expected a 16-bit immediate", c)
        return p.value & 0xFFFF if p.value >= 0 or kind not in _BRANCH_KINDS else p.value, None

    # ---- VOPD -----------------------------------------------------------------------------------
    def _vopd(self, body: str, line: int, col0: int) -> Inst:
        xraw, yraw = body.split("::", 1)
        xtext, ytext = xraw.strip(), yraw.strip()
        halves = []
        for text, table, col in ((xtext, self.table.by_enc["VOPDX"], col0),
                                 (ytext, self.table.by_enc["VOPDY"], col0 + len(xraw) + 2 + len(yraw) - len(yraw.lstrip()))):
            mnemonic, _, rest = text.partition(" ")
            info = next((i for i in table.values() if i.name == mnemonic), None)
            if info is None:
                raise AsmError(f"unknown VOPD instruction {mnemonic!r}", line, col)
            try:
                inst, _ = self._match(info, False, rest.strip(), col + len(mnemonic) + 1)
            except Fail as e:
                raise AsmError(str(e), line, e.col) from None
            halves.append(replace(inst, encoding="VOPD"))
        x, y = halves
        lits = {o.value for h in halves for o in h.operands.values() if o.kind in ("literal", "lit")}
        if len(lits) > 1:   # the two halves share one literal dword
            raise AsmError("VOPD halves can use only one literal value", line, col0)
        sgprs = {o.index for h in halves for r, o in h.operands.items()
                 if r != "vdst" and o.kind == "sgpr" and o.index != 124}      # null reads nothing
        vcc = any(h.op == "v_cndmask_b32" for h in halves)   # the implicit VCC_LO, counted apart (as LLVM)
        if len(sgprs) + vcc + len(lits) > 2:   # the constant bus of the pair: two scalar values
            raise AsmError("VOPD halves read more than two scalar values (SGPRs and the literal)", line, col0)
        if (x.operands["vdst"].index ^ y.operands["vdst"].index) & 1 == 0:
            raise AsmError("VOPD destinations must be one even and one odd VGPR", line, col0)
        bad = vopd_bank_conflict(x, y, self.table.family == "rdna4")
        if bad:
            raise AsmError(f"invalid VOPD {bad}: both halves use the same VGPR bank", line, col0)
        return Inst("v_dual", "VOPD", x.opcode << 5 | y.opcode, 0, vopd=(x, y))


_ASSEMBLERS: dict[tuple[str, bool], Assembler] = {}


def assembler(arch: str, wave64: bool = False) -> Assembler:
    if load(arch).family == "cdna3":   # GFX9 syntax around the shared parser (asm_cdna3.py)
        from .asm_cdna3 import cdna3_assembler
        return cdna3_assembler(arch)
    if (arch, wave64) not in _ASSEMBLERS:
        _ASSEMBLERS[(arch, wave64)] = Assembler(arch, wave64)
    return _ASSEMBLERS[(arch, wave64)]


def assemble(text: str, arch: str = "gfx1100", wave64: bool = False) -> bytes:
    """Assemble LLVM-syntax text (one instruction per line, labels allowed); AsmError names line/column."""
    return assembler(arch, wave64).assemble(text)
