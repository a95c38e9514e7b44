"""Bytes -> Inst for RDNA3 (gfx11), driven by the generated tables.

Field semantics the emulator relies on (also in docs/isa.md):
- SOPP branches and s_call_b64: `simm16` is the signed dword offset; other SOPP/SOPK: the raw 16 bits.
- SMEM `offset` is signed 21-bit; FLAT/GLOBAL/SCRATCH `offset` signed 13-bit; DS `offset0`/`offset1` are
  the two 8-bit fields and `offset` = offset1 << 8 | offset0 (the 16-bit offset of one-address forms);
  MUBUF/MTBUF `offset` is unsigned 12-bit.
- Register fields keep hardware numbering (see inst.py); a constant's `value` is its bit pattern as the
  operand's data type (table ptype).
"""
from __future__ import annotations

from functools import lru_cache

from gputwin.errors import IllegalInstruction

from .inst import Dpp, Inst, Operand
from .operands import INLINE_FLOAT_HI, INLINE_FLOAT_LO, INLINE_INT_HI, INLINE_INT_LO, SPECIAL, const_bits
from .rdna3_formats import FLAT_SEGMENTS, FORMATS, SRC_DPP8, SRC_DPP8_FI, SRC_DPP16, SRC_LITERAL
from .table import FAMILIES, OpInfo, Slot, Table, load

_BRANCHES = frozenset({"s_branch", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz", "s_cbranch_vccnz",
                       "s_cbranch_execz", "s_cbranch_execnz", "s_cbranch_cdbgsys", "s_cbranch_cdbguser",
                       "s_cbranch_cdbgsys_or_user", "s_cbranch_cdbgsys_and_user", "s_call_b64"})
_IMPLICIT = {"=vcc_lo": (106, 1), "=vcc": (106, 2), "=exec_lo": (126, 1), "=exec": (126, 2)}
_SCALE = {"sbase": 2, "srsrc": 4}
_F = FORMATS


_PLANS: dict[tuple[int, bool, bool], tuple] = {}


def _plan(slots: tuple[Slot, ...], wave64: bool, strict: bool = True, notes: bool = False) -> tuple:
    """Per slot (role, lo, mask, table, lit_at): table[field value] is the ready Operand, or None for the
    rare cases _slow handles (literals, reserved encodings). Built once per table entry.
    strict=False (execution): 16-bit e32 operand fields LLVM limits to v0..v127 ("w") take all 8 bits,
    bit 7 selecting the register's high half as the hardware does (see _halves). strict=True: the fields
    where LLVM decodes v128..v255 with its note (the table's "n") give the full register (disasm.py prints
    the note); elsewhere (destinations, v_fmamk_f16's VSRC1...) they stay illegal, as in LLVM.
    notes=True (strict WMMA decoding): sources outside the register class decode, so the disassembler can
    print LLVM's "Invalid register" notes; execution never asks for it."""
    plan = _PLANS.get((id(slots), wave64, strict, notes))
    if plan is None:
        rows = []
        for s in slots:
            if wave64:
                s = s.for_wave64()
            if s.role == "simm16" or s.kind in ("off", "offset"):   # offsets live in Inst.offset
                continue
            kind, w16 = s.kind, s.allowed[:1] == "w"
            if w16 and not strict:
                kind, w16 = {"v": "v16", "src": "src16"}.get(kind, kind), False
            elif w16 and "n" in s.allowed:
                w16 = False   # strict: LLVM decodes v128..v255 there too, printing its "Invalid register" note
            allowed = "" if notes and kind == "src" else s.allowed
            table, lit_at = _field_table(kind, s.field, s.count, s.ptype, w16, s.width, allowed)
            rows.append((s.role, s.lo if s.kind not in ("lit", "imp") else 0, (1 << s.width) - 1
                         if s.kind not in ("lit", "imp") else 0, table, lit_at))
        plan = _PLANS[(id(slots), wave64, strict, notes)] = (tuple(rows), slots)   # keep slots alive: the id stays unique
    return plan[0]


_HALVES: dict[tuple[int, bool], tuple] = {}
_HALF_BIT = {"src0": 0, "src1": 1, "src2": 2}


def _halves(slots: tuple[Slot, ...], strict: bool) -> tuple:
    """(op_sel position, lo, width, is_src) of the 16-bit VGPR fields whose bit 7 selects the high half:
    the true16 slots, and in execution (strict=False) also the "w" slots LLVM 19 limits to v0..v127."""
    got = _HALVES.get((id(slots), strict))
    if got is None:
        rows = tuple((_HALF_BIT.get(s.role, 3), s.lo, s.width, s.kind in ("src", "src16")) for s in slots
                     if s.kind in ("v16", "src16") or not strict and s.allowed[:1] == "w" and s.kind in ("v", "src"))
        got = _HALVES[(id(slots), strict)] = (rows, slots)
    return got[0]


@lru_cache(maxsize=None)
def _field_table(k: str, field: str, count: int, ptype: str | None, w16: bool, width: int,
                 allowed: str = "") -> tuple:
    """(table, lit_at) for one kind of operand field; shared by every entry with such a field (a fresh
    process builds only the few it meets). `allowed` (v w s c l; empty = any) drops the source kinds the
    instruction's register class excludes: v_readlane's src0 is a VGPR, v_writelane's an SGPR or constant."""
    mask = (1 << width) - 1
    if k == "lit":
        return (None,), 0
    if k == "imp":
        return (_reg("sgpr", *_IMPLICIT[field]),), -1
    if k in ("src", "ssrc", "src16"):
        t = _src_table(count, ptype)
        if k == "ssrc":   # SALU sources: no LDS_DIRECT
            t = t[:254] + (None,) + t[255:256]
        if k == "src16":   # bit 7 of a VGPR picks the half (reported as op_sel): the register is v & 127
            t = tuple(t[v & ~128 if v >= 256 else v] for v in range(512))
        if allowed:
            t = tuple(None if o is None or not _kind_allowed(o, allowed) else o for o in t)
        lit_at = SRC_LITERAL if not allowed or "l" in allowed else -2   # -2: takes no literal
        return (t[:384] + (None,) * 128 if w16 else t[:mask + 1]), lit_at
    if k == "v":
        return tuple(_reg("vgpr", v, count) if not (w16 and v >= 128) and v + count <= 256 else None
                     for v in range(mask + 1)), -1
    if k == "s" and field == "soffset" and mask == 0xFF:   # MUBUF/MTBUF: an SGPR or inline constant
        return _src_table(1, "b32")[:256], -1
    if k == "s":
        scale = _SCALE.get(field, 1)
        return tuple(_reg("sgpr", v * scale, count) if _sgpr_ok(v * scale, count) else None
                     for v in range(mask + 1)), -1
    if k == "v16":
        return tuple(_reg("vgpr", v & 127, 1) for v in range(mask + 1)), -1
    # immediates printed symbolically (sendmsg ids, s_atc_probe's sdata)
    return tuple(Operand("imm", 0, 1, v) for v in range(mask + 1)), -1


def _kind_allowed(op: Operand, allowed: str) -> bool:
    if op.kind == "vgpr":
        return "v" in allowed or "w" in allowed
    if op.kind == "const":
        return "c" in allowed
    if op.kind == "special" or op.index >= 106:   # LLVM prints VCC, M0, NULL, EXEC, src_scc... in any slot
        return True
    return "s" in allowed


_LIT_FIELDS: dict[int, tuple] = {}


def _lit_fields(slots: tuple[Slot, ...]) -> tuple:
    """(lo, mask) of the source fields that may hold the literal code 255."""
    got = _LIT_FIELDS.get(id(slots))
    if got is None:
        got = _LIT_FIELDS[id(slots)] = (tuple((s.lo, (1 << s.width) - 1) for s in slots
                                              if s.kind in ("src", "ssrc", "src16")), slots)
    return got[0]


def _sgpr_ok(index: int, count: int) -> bool:
    """An SGPR range LLVM accepts: inside one register group and aligned (2 for pairs, 4 for more)."""
    if count == 1:
        return index < 128
    align = 2 if count == 2 else 4
    base = 108 if 108 <= index < 124 else 0
    if (index - base) % align:
        return False
    return index + count <= 106 or 108 <= index and index + count <= 124 or count == 2 and index in (106, 124, 126)


def _slow(role: str, v: int, lit_at: int, literal: int | None) -> Operand:
    """The entries a plan table leaves None: the literal, or an encoding that is no operand here."""
    if v == lit_at:
        return Operand("literal", 255, 1, literal)
    if lit_at == -1:   # a VGPR or SGPR field
        raise _Illegal(f"{role}: register {v} is out of range or misaligned for this operand "
                       "(16-bit e32 operands reach v0..v127; ranges end at v255; SGPR ranges are aligned)")
    if v == SRC_LITERAL:
        raise _Illegal(f"{role}: this operand takes no literal")
    if v >= 256:
        raise _Illegal(f"{role}: v{v - 256} is not allowed here (the operand's register class excludes VGPRs, "
                       "16-bit e32 operands reach v0..v127, ranges end at v255)")
    if v < 128:
        raise _Illegal(f"{role}: scalar register {v} is not allowed here (the operand's register class, "
                       "or misaligned / out of range for its size)")
    raise _Illegal(f"{role}: source encoding {v} is reserved or not of this operand's register class")


def _hi_bits(halves: tuple, word: int):
    """16-bit e32 operands: bit 7 of a VGPR field picks the high half, reported as op_sel [src0 src1 src2
    dst]; None when every operand is a low half."""
    bits = [False] * 4
    for pos, lo, width, is_src in halves:
        v = (word >> lo) & ((1 << width) - 1)
        if (not is_src or v >= 256) and v & 128:
            bits[pos] = True
    return tuple(bits) if any(bits) else None


def _sext(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


@lru_cache(maxsize=None)
def _reg(kind: str, index: int, count: int) -> Operand:
    return Operand(kind, index, count)


def _vaddr64(ops: dict) -> None:
    """GLOBAL with no SGPR base: vaddr is a 64-bit VGPR address."""
    if "vaddr" in ops:
        if ops["vaddr"].index == 255:
            raise _Illegal("vaddr v[255:256] runs past v255")
        ops["vaddr"] = _reg("vgpr", ops["vaddr"].index, 2)


def _buffer_vaddr(ops: dict, offen: int, idxen: int, va: int) -> None:
    """Buffer instructions: VADDR holds the index and/or offset that IDXEN / OFFEN ask for."""
    if offen or idxen:
        n = 2 if offen and idxen else 1
        if va + n > 256:
            raise _Illegal(f"vaddr v{va} (x{n}) runs past v255")
        ops["vaddr"] = _reg("vgpr", va, n)


def _tfe_fits(ops: dict, tfe: int) -> None:
    """TFE adds a status dword after the data registers."""
    for role in ("vdst", "vdata"):
        if tfe and role in ops and ops[role].index + ops[role].count + 1 > 256:
            raise _Illegal(f"{role} with tfe runs past v255")


@lru_cache(maxsize=None)
def _const(enc: int, ptype: str | None) -> Operand:
    return Operand("const", enc, 1, const_bits(enc, ptype or "b32"))


class _Illegal(Exception):
    pass


_SRC_TABLES: dict[tuple[int, str | None], tuple] = {}


def _src_table(count: int, ptype: str | None) -> tuple:
    """Every 9-bit source encoding as its Operand (None: literal or reserved), per size and data type."""
    table = _SRC_TABLES.get((count, ptype))
    if table is None:
        rows = []
        for v in range(512):
            try:
                ok = _sgpr_ok(v, count) if v < 128 else v < 256 or v - 256 + count <= 256
                rows.append(None if v == SRC_LITERAL or not ok else _src_slow(v, count, ptype, None))
            except _Illegal:
                rows.append(None)
        table = _SRC_TABLES[(count, ptype)] = tuple(rows)
    return table


def _src(v: int, count: int, ptype: str | None, literal: int | None) -> Operand:
    op = _src_table(count, ptype)[v]
    return op if op is not None else _src_slow(v, count, ptype, literal)


def _src_slow(v: int, count: int, ptype: str | None, literal: int | None) -> Operand:
    if v >= 256:
        return _reg("vgpr", v - 256, count)
    if v < 128:
        return _reg("sgpr", v, count)
    if INLINE_INT_LO <= v <= INLINE_INT_HI or INLINE_FLOAT_LO <= v <= INLINE_FLOAT_HI:
        return _const(v, ptype)
    if v == SRC_LITERAL:
        return Operand("literal", 255, 1, literal)
    if v in SPECIAL:
        return _reg("special", v, count)
    raise _Illegal(f"source encoding {v} is reserved")


# Operand fields: where an instruction has no operand, the hardware does not read the field.
_OPERAND_FIELDS = ("vdst", "sdst", "src0", "src1", "src2", "vsrc1", "ssrc0", "ssrc1", "addr", "data0", "data1",
                   "data", "vaddr", "vdata", "saddr", "sdata", "soffset", "offset0", "offset1")
# Per-source modifier fields of VOP3/VOP3P (bit i of the field belongs to source i).
_SOURCE_MODS = ("abs", "neg", "neg_hi", "op_sel", "op_sel_hi")


def ignored_bits(info: OpInfo) -> int:
    """The bits of `info.reject` the hardware does not read: operand fields of operands the instruction
    does not have (src2 of a 2-source VOP3, VDST of a no-return DS atomic, ds_nop's offsets) and the
    abs/neg/op_sel bits of absent sources. The rest of `reject` (clamp or omod where the instruction has
    none, reserved bits) stays illegal in both modes: what the hardware does with them is not documented."""
    fields = info.fmt.fields
    used = {s.field for s in info.slots + (info.rtn_slots or ())}
    bits = 0
    for name in _OPERAND_FIELDS:
        if name in fields and name not in used:
            lo, width = fields[name]
            bits |= ((1 << width) - 1) << lo
    if info.enc in ("VOP3", "VOP3SD", "VOP3P"):
        present = {s.role for s in info.slots}
        for i, src in enumerate(("src0", "src1", "src2")):
            if src in present:
                continue
            for name in _SOURCE_MODS:
                if name in fields and i < fields[name][1]:
                    bits |= 1 << (fields[name][0] + i)
            if i == 2 and "op_sel_hi2" in fields:
                bits |= 1 << fields["op_sel_hi2"][0]
    return info.reject & bits


# The identifying top 6 bits of the image formats per family (image_formats.py).
_IMAGE_IDS = {"rdna3": (0b111100,), "rdna4": (0b110100, 0b111001)}
# EXP (0b111110), LDSDIR/VDSDIR and VINTERP (0b110011, then 0xCE / 0xCD in the top byte): pixel.py
_PIXEL_IDS = (0b111110, 0b110011)
class Decoder:
    """Decodes one architecture; keeps a cache of decoded words (an Inst is immutable).

    strict=True (assembler, disassembler, conformance): reject every encoding LLVM rejects. strict=False
    (the emulator): also decode what the hardware executes although LLVM 19 refuses it: fields of absent
    operands (ignored_bits) and 16-bit e32 VGPR fields with bit 7 set (the high half). Encodings that
    neither can mean (a register class the operand excludes, reserved codes, a literal where none can be
    read) raise IllegalInstruction in both modes (docs/isa.md, "Decoder modes")."""

    def __init__(self, arch: str, wave64: bool = False, strict: bool = True):
        self.arch = arch
        self.wave64 = wave64
        self.strict = strict
        self._ignored: dict[int, int] = {}
        self.table: Table = load(arch)
        self.top9 = FAMILIES[self.table.family].TOP9
        # Decoded instructions by their exact bytes, one dict per size (4, 8, 12): a hit costs a slice and
        # a lookup or two; code repeats words a lot (s_waitcnt, v_mov, address arithmetic).
        self._cache: dict[int, dict[bytes, Inst]] = {4: {}, 8: {}, 12: {}}

    def decode(self, data, offset: int = 0) -> Inst:
        c = self._cache
        where = offset   # for messages: the caller's offset, also when only a slice is decoded
        if type(data) is not bytes:
            data = bytes(data[offset:offset + 12])
            offset = 0
        hit = c[4].get(data[offset:offset + 4]) or c[8].get(data[offset:offset + 8]) or \
            c[12].get(data[offset:offset + 12])
        if hit is not None:
            return hit
        key = data[offset:offset + 12]
        if len(key) < 4:
            raise IllegalInstruction(f"{self.arch}: truncated instruction at offset {where:#x}", pc=where)
        try:
            inst = self._decode(key)
        except _Illegal as e:
            raise IllegalInstruction(f"{self.arch}: {e} at offset {where:#x} (bytes {key[:8].hex()})",
                                     pc=where) from None
        if inst.size > len(key):
            raise IllegalInstruction(f"{self.arch}: truncated {inst.op} at offset {where:#x}", pc=where)
        bucket = c[inst.size]
        if len(bucket) < 1 << 16:
            bucket[key[:inst.size]] = inst
        return inst

    def _info(self, enc: str, opcode: int, word: int) -> OpInfo:
        info = self.table.by_enc.get(enc, {}).get(opcode)
        if info is None:
            raise _Illegal(f"no {enc} instruction with opcode {opcode}")
        if self.wave64 and info.w64 is not None:
            info = info.w64
        bad = word & info.reject   # bits LLVM refuses for this instruction (reserved, absent modifiers)
        if bad and not self.strict:
            ign = self._ignored.get(id(info))
            if ign is None:
                ign = self._ignored[id(info)] = ignored_bits(info)   # OpInfo objects live as long as the table
            bad &= ~ign
        if bad:
            raise _Illegal(f"{info.name} with reserved or unsupported bits {bad:#x} set")
        return info

    def _decode(self, b: bytes) -> Inst:
        d0 = int.from_bytes(b[:4], "little")
        fname = self.top9[d0 >> 23]
        if fname is None and d0 >> 26 in _IMAGE_IDS.get(self.table.family, ()):
            return self._image(b)
        if fname is None and d0 >> 26 in _PIXEL_IDS:
            return self._pixel(b)
        if fname is None:
            raise _Illegal(f"no encoding format matches word {d0:#010x}")
        if fname.startswith("SOP"):
            return self._salu(fname, d0, b)
        word = int.from_bytes(b[:8], "little")
        if fname in ("VOP1", "VOP2", "VOPC"):
            return self._valu32(fname, d0, b)
        if fname == "VOP3":
            return self._vop3(word, b)
        if fname == "VOP3P":
            return self._vop3p(word, b)
        if fname == "VOPD":
            if self.wave64:
                raise _Illegal("VOPD (v_dual_*) needs wave32")
            return self._vopd(word, b)
        if len(b) < 8:
            raise _Illegal(f"truncated {fname} instruction")
        return getattr(self, "_" + fname.lower())(word)

    # ---- helpers -------------------------------------------------------------------------------
    @staticmethod
    def _literal(b: bytes, at: int) -> int:
        if len(b) < at + 4:
            raise _Illegal("truncated literal")
        return int.from_bytes(b[at:at + 4], "little")

    def _operands(self, slots, word: int, literal: int | None, skip=(), notes: bool = False) -> dict[str, Operand]:
        ops: dict[str, Operand] = {}
        for role, lo, mask, table, lit_at in _plan(slots, self.wave64, self.strict, notes):
            v = (word >> lo) & mask
            op = table[v]
            ops[role] = op if op is not None else _slow(role, v, lit_at, literal)
        for role in skip:
            ops.pop(role, None)
        return ops

    @staticmethod
    def _needs_literal(info: OpInfo, word: int) -> bool:
        if info.literal:
            return True
        for lo, mask in _lit_fields(info.slots):
            if (word >> lo) & mask == SRC_LITERAL:
                return True
        return False

    # ---- scalar ----------------------------------------------------------------------------------
    def _salu(self, fname: str, d0: int, b: bytes) -> Inst:
        fmt = _F[fname]
        info = self._info(fname, fmt.get(d0, "op"), d0)
        lit = self._literal(b, 4) if self._needs_literal(info, d0) else None
        ops = self._operands(info.slots, d0, lit)
        kw = {}
        if fname in ("SOPK", "SOPP"):
            simm = d0 & 0xFFFF
            kw["simm16"] = _sext(simm, 16) if info.op in _BRANCHES else simm
        return Inst(info.op, fname, info.opcode, 4 if lit is None else 8, ops, **kw)

    def _smem(self, w: int) -> Inst:
        fmt = _F["SMEM"]
        info = self._info("SMEM", fmt.get(w, "op"), w)
        return Inst(info.op, "SMEM", info.opcode, 8, self._operands(info.slots, w, None),
                    offset=_sext(fmt.get(w, "offset"), 21), glc=bool(fmt.get(w, "glc")), dlc=bool(fmt.get(w, "dlc")))

    # ---- vector ALU ------------------------------------------------------------------------------
    def _dpp(self, b: bytes, at: int, src0: int) -> tuple[Dpp, int, int]:
        """The DPP dword: (Dpp, source VGPR, neg/abs bits [23:20])."""
        if len(b) < at + 4:
            raise _Illegal("truncated DPP dword")
        d = int.from_bytes(b[at:at + 4], "little")
        if src0 == SRC_DPP16:
            return (Dpp("dpp16", ctrl=d >> 8 & 0x1FF, row_mask=d >> 28, bank_mask=d >> 24 & 0xF,
                        bound_ctrl=bool(d >> 19 & 1), fi=bool(d >> 18 & 1)), d & 0xFF, d >> 20 & 0xF)
        sel = tuple(d >> (8 + 3 * i) & 7 for i in range(8))
        return Dpp("dpp8", fi=src0 == SRC_DPP8_FI, sel=sel), d & 0xFF, 0

    def _valu32(self, fname: str, d0: int, b: bytes) -> Inst:
        fmt = _F[fname]
        info = self._info(fname, fmt.get(d0, "op"), d0)
        src0 = d0 & 0x1FF
        size, dpp, kw = 4, None, {}
        lit = None
        if src0 in (SRC_DPP16, SRC_DPP8, SRC_DPP8_FI) and info.dpp:
            dpp, vreg, negabs = self._dpp(b, 4, src0)
            if negabs & ~info.mods.get("dpp_negabs", 0):
                raise _Illegal(f"{info.name} has no DPP source modifiers {negabs:#x}")
            d0 = (d0 & ~0x1FF) | (256 + vreg)
            size = 8
            if negabs:
                kw["neg"] = (bool(negabs & 1), bool(negabs & 4), False)
                kw["abs"] = (bool(negabs & 2), bool(negabs & 8), False)
        elif self._needs_literal(info, d0):
            lit = self._literal(b, 4)
            size = 8
        ops = self._operands(info.slots, d0, lit)
        halves = _halves(info.slots, self.strict)
        if halves:
            hi = _hi_bits(halves, d0)
            if hi:
                kw["op_sel"] = hi
        return Inst(info.op, fname, info.opcode, size, ops, dpp=dpp, **kw)

    def _vop3_common(self, enc: str, info: OpInfo, w: int, b: bytes, kw: dict) -> Inst:
        src0 = w >> 32 & 0x1FF
        size, dpp, lit = 8, None, None
        if src0 in (SRC_DPP16, SRC_DPP8, SRC_DPP8_FI) and info.dpp:
            dpp, vreg, negabs = self._dpp(b, 8, src0)
            w = (w & ~(0x1FF << 32)) | ((256 + vreg) << 32)
            if self._needs_literal(info, w):   # the DPP dword takes the literal's place
                raise _Illegal(f"{info.name}: DPP with a literal source")
            size = 12
            if negabs:
                kw["extra"] = dict(kw.get("extra", {}), dpp_negabs=negabs)
        elif self._needs_literal(info, w):
            lit = self._literal(b, 8)
            size = 12
        notes = self.strict and enc == "VOP3P" and "wmma" in info.op   # LLVM decodes these with a note
        if notes:
            w, kw = self._misaligned_sgprs(info, w, kw)
        ops = self._operands(info.slots, w, lit, notes=True) if notes else self._operands(info.slots, w, lit)
        return Inst(info.op, enc, info.opcode, size, ops, dpp=dpp, **kw)

    def _misaligned_sgprs(self, info: OpInfo, w: int, kw: dict) -> tuple[int, dict]:
        """An SGPR range at a misaligned register in a VGPR-only WMMA source: LLVM aligns it down and prints
        its note (the field is kept in extra["<role>_field"] so that encoding is exact)."""
        for s in info.slots:
            s = s.for_wave64() if self.wave64 else s
            v = (w >> s.lo) & ((1 << s.width) - 1)
            if s.kind == "src" and "s" not in s.allowed and v < 106 and s.count > 1 and not _sgpr_ok(v, s.count):
                align = 2 if s.count == 2 else 4
                w = (w & ~(((1 << s.width) - 1) << s.lo)) | (v & ~(align - 1)) << s.lo
                kw["extra"] = dict(kw.get("extra", {}), **{f"{s.role}_field": v})
        return w, kw

    def _vop3(self, w: int, b: bytes) -> Inst:
        info = self._info("VOP3", w >> 16 & 0x3FF, w)
        neg = (bool(w >> 61 & 1), bool(w >> 62 & 1), bool(w >> 63 & 1))
        kw = {"clamp": bool(w >> 15 & 1), "omod": w >> 59 & 3, "neg": neg}
        hidden = info.hidden_vdst
        if hidden >= 0 and w & 0xFF != hidden:   # VDST bits of an entry without a destination operand
            kw["extra"] = {"vdst": w & 0xFF}
        if info.enc == "VOP3SD":
            return self._vop3_common("VOP3SD", info, w, b, kw)
        kw["abs"] = (bool(w >> 8 & 1), bool(w >> 9 & 1), bool(w >> 10 & 1))
        kw["op_sel"] = tuple(bool(w >> (11 + i) & 1) for i in range(4))
        return self._vop3_common("VOP3", info, w, b, kw)

    def _vop3p(self, w: int, b: bytes) -> Inst:
        info = self._info("VOP3P", w >> 16 & 0x7F, w)
        if self.strict and w & info.need != info.need:   # gfx12 WMMA/SWMMAC, fp8 dot4: OP_SEL_HI all ones
            raise _Illegal(f"{info.name} without bits {info.need & ~w:#x} (OP_SEL_HI) LLVM requires")
        kw = {"clamp": bool(w >> 15 & 1),
              "neg": (bool(w >> 61 & 1), bool(w >> 62 & 1), bool(w >> 63 & 1)),
              "neg_hi": (bool(w >> 8 & 1), bool(w >> 9 & 1), bool(w >> 10 & 1)),
              "op_sel": (bool(w >> 11 & 1), bool(w >> 12 & 1), bool(w >> 13 & 1), False),
              "op_sel_hi": (bool(w >> 59 & 1), bool(w >> 60 & 1), bool(w >> 14 & 1))}
        return self._vop3_common("VOP3P", info, w, b, kw)

    def _vopd(self, w: int, b: bytes) -> Inst:
        fmt = _F["VOPD"]
        opx, opy = fmt.get(w, "opx"), fmt.get(w, "opy")
        x, y = self._info("VOPDX", opx, 0), self._info("VOPDY", opy, 0)
        srcs = (fmt.get(w, "srcx0"), fmt.get(w, "srcy0"))
        lit = self._literal(b, 8) if x.literal or y.literal or SRC_LITERAL in srcs else None
        size = 8 if lit is None else 12
        vdstx = fmt.get(w, "vdstx")
        hx = Inst(x.op, "VOPD", opx, size, self._operands(x.slots, w, lit))
        yops = self._operands(y.slots, w, lit, skip=("vdst",))
        # VDSTY holds bits [7:1]; bit 0 is the complement of VDSTX's bit 0 (the two go to different banks).
        yops["vdst"] = _reg("vgpr", fmt.get(w, "vdsty") << 1 | (~vdstx & 1), 1)
        hy = Inst(y.op, "VOPD", opy, size, yops)
        return Inst("v_dual", "VOPD", opx << 5 | opy, size, vopd=(hx, hy))

    def _pixel(self, b: bytes) -> Inst:
        """EXP, LDSDIR/VDSDIR, VINTERP (pixel.py). VINTERP in execution mode also takes the sources the
        hardware reads besides VGPRs (a scalar I/J, constants; LLVM's register class is VGPRs only)."""
        from . import pixel

        def src(role: str, v: int, ptype: str) -> Operand:
            if v == SRC_LITERAL or v in (SRC_DPP16, SRC_DPP8, SRC_DPP8_FI):
                raise pixel.PixelError(f"{role}: source encoding {v} (literal / DPP) is not allowed")
            return _src(v, 1, ptype, None)
        try:
            return pixel.decode(self.arch, b, self.strict, src)
        except pixel.PixelError as e:
            raise _Illegal(str(e)) from None

    # ---- memory ----------------------------------------------------------------------------------
    def _image(self, b: bytes) -> Inst:
        """MIMG (gfx11), VIMAGE/VSAMPLE (gfx12): image.py; the emulator refuses to run them."""
        from . import image   # loads its table on first use: kernels never meet images
        try:
            return image.decode(self.arch, b)
        except image.ImageError as e:
            raise _Illegal(str(e)) from None

    def _ds(self, w: int) -> Inst:
        info = self._info("DS", w >> 18 & 0xFF, w)
        if w & info.need != info.need:   # the GWS ops, ds_ordered_count, ds_*_gs_reg_rtn exist only with GDS
            raise _Illegal(f"{info.name} without bits {info.need & ~w:#x} (GDS) it needs")
        o0, o1 = w & 0xFF, w >> 8 & 0xFF
        return Inst(info.op, "DS", info.opcode, 8, self._operands(info.slots, w, None),
                    offset=o1 << 8 | o0, offset0=o0, offset1=o1, gds=bool(w >> 17 & 1))

    def _flat(self, w: int) -> Inst:
        fmt = _F["FLAT"]
        enc = FLAT_SEGMENTS.get(fmt.get(w, "seg"))
        if enc is None:
            raise _Illegal("FLAT segment 3 is reserved")
        info = self._info(enc, fmt.get(w, "op"), w)
        glc = bool(fmt.get(w, "glc"))
        slots = info.rtn_slots if glc and info.rtn_slots else info.slots
        saddr = fmt.get(w, "saddr")
        sve = fmt.get(w, "sve")
        skip = set()
        extra = {}
        if enc != "FLAT" and saddr == 124:
            skip.add("saddr")
        if enc == "SCRATCH":
            extra["sve"] = sve
            if not sve:
                skip.add("vaddr")
                if fmt.get(w, "addr"):   # unused ADDR bits, kept so that encoding is exact
                    extra["addr"] = fmt.get(w, "addr")
        ops = self._operands(slots, w, None, skip)
        if enc == "GLOBAL" and saddr == 124:
            _vaddr64(ops)
        return Inst(info.op, enc, info.opcode, 8, ops, offset=_sext(fmt.get(w, "offset"), 13), glc=glc,
                    slc=bool(fmt.get(w, "slc")), dlc=bool(fmt.get(w, "dlc")), extra=extra)

    def _buf(self, enc: str, w: int) -> Inst:
        fmt = _F[enc]
        info = self._info(enc, fmt.get(w, "op"), w)
        ops = self._operands(info.slots, w, None)
        offen, idxen = fmt.get(w, "offen"), fmt.get(w, "idxen")
        _buffer_vaddr(ops, offen, idxen, fmt.get(w, "vaddr"))
        tfe = fmt.get(w, "tfe")
        _tfe_fits(ops, tfe)
        extra = {"offen": offen, "idxen": idxen, "tfe": tfe}
        if enc == "MTBUF":
            extra["format"] = fmt.get(w, "format")
        return Inst(info.op, enc, info.opcode, 8, ops, offset=fmt.get(w, "offset"), glc=bool(fmt.get(w, "glc")),
                    slc=bool(fmt.get(w, "slc")), dlc=bool(fmt.get(w, "dlc")), extra=extra)

    def _mubuf(self, w: int) -> Inst:
        return self._buf("MUBUF", w)

    def _mtbuf(self, w: int) -> Inst:
        return self._buf("MTBUF", w)


@lru_cache(maxsize=None)
def decoder(arch: str, wave64: bool = False, strict: bool = True) -> Decoder:
    """The cached decoder; strict=False is the emulator's (see Decoder)."""
    if load(arch).family == "rdna4":
        from .decode_rdna4 import Rdna4Decoder   # RDNA4's memory formats; everything else is shared
        return Rdna4Decoder(arch, wave64, strict)
    if load(arch).family == "cdna3":
        from .decode_cdna3 import Cdna3Decoder   # GFX9 formats, operand numbering and names (wave64 only)
        return Cdna3Decoder(arch, wave64, strict)
    return Decoder(arch, wave64, strict)


def decode(data, arch: str = "gfx1100", offset: int = 0, wave64: bool = False, strict: bool = True) -> Inst:
    """Decode the instruction at `offset`; raises IllegalInstruction (pc=offset) for bytes that are none.
    wave64: lane-mask operands (VOPC/VOP3 SDST, carry in/out, v_cndmask's mask) are SGPR pairs.
    strict=False: what the hardware executes (the emulator's mode; see Decoder)."""
    return decoder(arch, wave64, strict).decode(data, offset)


def decode_all(data, arch: str = "gfx1100", wave64: bool = False, strict: bool = True) -> list[tuple[int, Inst]]:
    """Decode a whole code blob from offset 0: [(offset, Inst), ...]."""
    dec = decoder(arch, wave64, strict)
    data = bytes(data)
    out, off, n = [], 0, len(data)
    while off < n:
        inst = dec.decode(data, off)
        out.append((off, inst))
        off += inst.size
    return out
