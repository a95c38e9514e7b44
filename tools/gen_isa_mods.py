"""Probing per-instruction details through the LLVM oracle: source kinds and data types, modifiers,
DPP support, and the VOPD halves (helper of tools/gen_isa.py)."""
from __future__ import annotations

import struct

from gen_isa_probe import FORMATS, TAIL, parse_reg, split_text, word_bytes

from gputwin.emu.amd.isa.operands import PTYPES, const_bits, format_imm, literal_bits

CONSTS = [128, 129, 192, 193, 208] + list(range(240, 249))
LITERALS = [0x12345678, 0x3F800000, 0xFFFFFFFF, 0x3C00, 0x3E22F983, 0x3118, 0x80000000, 0x4000,
            0x40000000, 0xFFFF3800, 0x3800, 0x42280000, 0x41, 0x10]


def _token(text: str, pos: int) -> str | None:
    _, ops, _ = split_text(text)
    return ops[pos] if pos < len(ops) else None


def _dis_word(sw, fmt_name: str, values: dict, tail: bytes = TAIL):
    fmt = FORMATS[fmt_name]
    return sw.dis(word_bytes(fmt, fmt.pack(**values)) + tail)


def _lo128(sw, fmt_name: str, values: dict, field: str, value: int) -> str:
    """"n" if LLVM decodes a VGPR above v127 in this v0..v127 field, with its note; else ""."""
    fmt = FORMATS[fmt_name]
    return "n" if sw.lo128_note(word_bytes(fmt, fmt.pack(**dict(values, **{field: value}))) + TAIL) else ""


def probe_types(sw, fmt_name: str, e: dict) -> None:
    """Per source slot: which kinds LLVM accepts (v s c l) and the ptype its constants print as."""
    values = dict(e["probe"])
    for pos, slot in enumerate(e["slots"]):
        if slot[3] == "v" and fmt_name in ("VOP1", "VOP2", "VOPC") and slot[1] in FORMATS[fmt_name].fields:
            # 16-bit operands of e32 forms only reach v0..v127 ("w"); others any VGPR ("v"). "n": LLVM
            # still decodes v128..v255 there, printing its Lo128 register-class note.
            size, _ = _dis_word(sw, fmt_name, dict(values, **{slot[1]: 200}))
            slot.extend(["v" if size else "w" + _lo128(sw, fmt_name, values, slot[1], 200), None])
            continue
        if slot[3] == "lit":   # the K constant of v_fmamk/v_fmaak, s_setreg_imm32
            seen = []
            for lit in LITERALS:
                size, text = _dis_word(sw, fmt_name, values, struct.pack("<II", lit, 0))
                seen.append((None, lit, _token(text, pos)))
            slot.extend(["l", _ptype(e, "K", seen)])
            continue
        if slot[3] not in ("src", "ssrc", "src16"):
            continue
        field = slot[1]
        allowed = ""
        trials = {"v": 256 + 200, "w": 256 + 100, "s": 100, "c": 129, "l": 255}
        for k, v in trials.items():
            if k in "vw" and slot[3] == "ssrc" or k == "w" and "v" in allowed:
                continue
            size, text = _dis_word(sw, fmt_name, dict(values, **{field: v}))
            if size and _token(text, pos) is not None:
                allowed += k
        if "w" in allowed:
            allowed += _lo128(sw, fmt_name, values, field, 256 + 200)
        seen = []
        if "c" in allowed:
            for c in CONSTS:
                size, text = _dis_word(sw, fmt_name, dict(values, **{field: c}))
                if size:
                    seen.append((c, None, _token(text, pos)))
        if "l" in allowed:
            for lit in LITERALS:
                size, text = _dis_word(sw, fmt_name, dict(values, **{field: 255}), struct.pack("<II", lit, 0))
                if size:
                    seen.append((None, lit, _token(text, pos)))
        slot.extend([allowed, _ptype(e, field, seen) if seen else None])


def _ptype(e: dict, field: str, seen: list) -> str:
    """The first ptype whose printing matches everything LLVM printed for this slot."""
    for cand in PTYPES:
        if all(format_imm(const_bits(c, cand) if c is not None else literal_bits(lit, cand), cand) == tok
               for c, lit, tok in seen):
            return cand
    raise SystemExit(f"gen_isa: no ptype prints like LLVM for {e['name']} {field}: {seen}")


# Modifier bits to probe, per format: name -> list of (field, value) settings.
_MOD_BITS = {
    "VOP3": [("clamp", 1), ("omod", 1)] + [("abs", 1 << i) for i in range(3)] + [("neg", 1 << i) for i in range(3)]
            + [("op_sel", 1 << i) for i in range(4)],
    "VOP3SD": [("clamp", 1), ("omod", 1)] + [("neg", 1 << i) for i in range(3)],
    "VOP3P": [("clamp", 1)] + [("op_sel", 1 << i) for i in range(3)] + [("neg", 1 << i) for i in range(3)]
             + [("neg_hi", 1 << i) for i in range(3)] + [("op_sel_hi", 1), ("op_sel_hi", 2), ("op_sel_hi2", 1)],
    "SMEM": [("glc", 1), ("dlc", 1)],
    "FLAT": [("glc", 1), ("slc", 1), ("dlc", 1), ("sve", 1)],
    "DS": [("gds", 1)],
    "MUBUF": [("glc", 1), ("slc", 1), ("dlc", 1), ("tfe", 1), ("offen", 1), ("idxen", 1)],
    "MTBUF": [("glc", 1), ("slc", 1), ("dlc", 1), ("tfe", 1), ("offen", 1), ("idxen", 1)],
}
_GFX12_CPOL = [("th", 1), ("th", 2), ("th", 4), ("scope", 1), ("scope", 2)]
_MOD_BITS_GFX12 = dict(_MOD_BITS, SMEM=_GFX12_CPOL, FLAT=_GFX12_CPOL + [("sve", 1)],
                       MUBUF=_GFX12_CPOL + [("tfe", 1), ("offen", 1), ("idxen", 1)])


def probe_reject(sw, fmt_name: str, e: dict) -> None:
    """Bits outside the opcode and operand fields that LLVM refuses when set (one at a time): the decoder
    rejects words with any of them (reserved bits, modifiers the instruction does not have)."""
    fmt = FORMATS[fmt_name]
    values = dict(e["probe"])
    base = fmt.pack(**values)
    lo, width, _ = fmt.ident
    used = ((1 << width) - 1) << lo
    for name, (flo, fwidth) in fmt.fields.items():
        if name in ("op", "seg") or any(sl[1] == name for sl in e["slots"]) or \
                any(sl[1] == name for sl in e.get("rtn_slots", ())):
            used |= ((1 << fwidth) - 1) << flo
    # Set bits an instruction cannot do without are looked for only in GDS (the GWS ops) and VOP3P's
    # OP_SEL_HI (gfx12 WMMA/SWMMAC take only the default, all ones); elsewhere a set probe bit (FLAT's
    # SADDR = off) is part of the operand encoding the decoder already checks.
    gds = 0
    for name in ("gds", "op_sel_hi", "op_sel_hi2"):
        if name in fmt.fields:
            gds |= ((1 << fmt.fields[name][1]) - 1) << fmt.fields[name][0]
    reject = need = 0
    for bit in range(fmt.size * 8):
        if used >> bit & 1 or base >> bit & 1 and not gds >> bit & 1:
            continue
        size, _ = sw.dis(word_bytes(fmt, base ^ 1 << bit) + TAIL)
        if not size:
            if base >> bit & 1:
                need |= 1 << bit    # a bit the instruction cannot do without (GDS of the GWS ops)
            else:
                reject |= 1 << bit
    if reject:
        e["reject"] = reject
    if need:
        e["need"] = need


def probe_mods(sw, fmt_name: str, e: dict) -> None:
    """Which modifier bits LLVM accepts and prints for this instruction, and DPP support for VOP1/2/C/3."""
    values = dict(e["probe"])
    _, base_text = _dis_word(sw, fmt_name, values)
    mods: dict[str, int] = {}
    for field, bit in (_MOD_BITS_GFX12 if "th" in FORMATS["FLAT"].fields else _MOD_BITS).get(fmt_name, []):
        cur = values.get(field, 0)
        size, text = _dis_word(sw, fmt_name, dict(values, **{field: cur ^ bit}))
        if size and text != base_text:
            mods[field] = mods.get(field, 0) | bit
    byte_sel = []
    if fmt_name == "VOP3" and mods.get("op_sel"):
        # gfx12 fp8/bf8 conversions: OPSEL bits pick a byte, printed byte_sel:N (each bit's share of N).
        for i in range(4):
            text = _dis_word(sw, fmt_name, dict(values, op_sel=1 << i))[1] or ""
            byte_sel.append(int(text.split("byte_sel:")[1].split(" ")[0]) if "byte_sel:" in text else 0)
    index_key = []
    if fmt_name == "VOP3P" and mods.get("op_sel"):
        # gfx12 v_swmmac_*: OPSEL bits hold the sparsity index, printed index_key:N (each bit's share of N).
        for i in range(3):
            text = _dis_word(sw, fmt_name, dict(values, op_sel=1 << i))[1] or ""
            index_key.append(int(text.split("index_key:")[1].split(" ")[0]) if "index_key:" in text else 0)
    if any(byte_sel):
        mods["byte_sel"] = byte_sel
    elif any(index_key):
        mods["index_key"] = index_key
    elif fmt_name in ("VOP3", "VOP3P") and mods.get("op_sel"):
        # Where each op_sel bit lands in the printed op_sel:[...] list (and how long the list is).
        pos = []
        for i in range(4 if fmt_name == "VOP3" else 3):
            size, text = _dis_word(sw, fmt_name, dict(values, op_sel=1 << i))
            sel = text.split("op_sel:[")[1].split("]")[0].split(",") if size and "op_sel:[" in text else []
            pos.append(sel.index("1") if "1" in sel else -1)
            mods["op_sel_n"] = max(mods.get("op_sel_n", 0), len(sel))
        mods["op_sel_pos"] = pos
    if fmt_name in ("VOP3", "VOP3SD") and mods.get("neg"):
        # Integer sources print the NEG bit as sext(...).
        sext = 0
        for i in range(3):
            size, text = _dis_word(sw, fmt_name, dict(values, neg=1 << i))
            if size and "sext(" in text:
                sext |= 1 << i
        if sext:
            mods["sext"] = sext
    if fmt_name == "VOP3P" and mods.get("neg"):
        # The mix ops (v_fma_mix*) use NEG/NEG_HI as per-source neg/abs, printed as -x and |x|.
        size, text = _dis_word(sw, fmt_name, dict(values, neg=mods["neg"] & -mods["neg"]))
        if size and "neg_lo:" not in text:
            mods["mix"] = 1
    if fmt_name in ("SOPP", "SOPK"):
        for slot in e["slots"]:
            if slot[0] == "simm16" and slot[3] in ("dec", "hex"):
                slot[3] = _imm_style(sw, fmt_name, values, e["slots"].index(slot))
    if fmt_name == "VOP3P":
        # Packed math defaults op_sel_hi to all ones (not printed); the mix ops default to zeros.
        mods["op_sel_hi_default"] = 0 if "op_sel_hi:" in base_text else 1
    e["mods"] = mods
    if fmt_name in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD", "VOP3P") and any(s[1] == "src0" for s in e["slots"]):
        dpp = []
        v = dict(values, src0=250)
        size, base = _dis_word(sw, fmt_name, v, struct.pack("<II", 0xFF00E400 | 20, 0))
        if size:
            dpp.append("dpp16")
            negabs = 0   # DPP dword bits [23:20]: src0 neg, src0 abs, src1 neg, src1 abs (e32 forms)
            for bit in range(4):
                s2, t2 = _dis_word(sw, fmt_name, v, struct.pack("<II", 0xFF00E400 | 20 | 1 << (20 + bit), 0))
                if s2 and t2 != base:
                    negabs |= 1 << bit
                    if "sext(" in t2:
                        mods["dpp_sext"] = mods.get("dpp_sext", 0) | 1 << bit
            if negabs:
                mods["dpp_negabs"] = negabs
        v = dict(values, src0=233)
        if _dis_word(sw, fmt_name, v, struct.pack("<II", 0xFAC688 << 8 | 20, 0))[0]:
            dpp.append("dpp8")
        e["dpp"] = dpp


def probe_vopd(sw) -> dict:
    """VOPD: sweep OPX with OPY = v_dual_mov_b32 and OPY with OPX = v_dual_mov_b32."""
    fmt = FORMATS["VOPD"]
    out: dict[str, dict] = {"VOPDX": {}, "VOPDY": {}}
    # Sources of the two halves sit in different VGPR banks (reg % 4), as VOPD requires.
    values = {"srcx0": 256 + 20, "vsrcx1": 62, "vdstx": 10, "srcy0": 256 + 121, "vsrcy1": 131, "vdsty": 90}
    for half, (field, other) in {"VOPDX": ("opx", "opy"), "VOPDY": ("opy", "opx")}.items():
        src1, other_src1 = ("vsrcx1", "vsrcy1") if half == "VOPDX" else ("vsrcy1", "vsrcx1")
        for op in range(1 << fmt.fields[field][1]):
            for v1 in (values[src1], 0):   # the mov half (and a one-source op) needs VSRC1 = 0
                vals = dict(values, **{field: op, other: 8, src1: v1, other_src1: 0})
                size, text = sw.dis(word_bytes(fmt, fmt.pack(**vals)) + TAIL)
                if size:
                    break
            if not size:
                continue
            x, y = text.split(" :: ")
            part = x if half == "VOPDX" else y
            mnemonic, ops, _ = split_text(part)
            regs = ({"v10": ("vdst", "vdstx"), "v20": ("src0", "srcx0"), "v62": ("src1", "vsrcx1")}
                    if half == "VOPDX" else
                    {"v181": ("vdst", "vdsty"), "v121": ("src0", "srcy0"), "v131": ("src1", "vsrcy1")})
            slots = []
            for tok in ops:
                if tok in regs:
                    role, f = regs[tok]
                    slots.append([role, f, 1, "src" if role == "src0" else "v"])
                elif tok == "0x12345678":
                    slots.append(["k", "=literal", 1, "lit"])
                else:
                    raise SystemExit(f"gen_isa: cannot map VOPD operand {tok!r} in {text!r}")
            if parse_reg(ops[0]) is None:
                raise SystemExit(f"gen_isa: unexpected VOPD text {text!r}")
            out[half][str(op)] = {"name": mnemonic, "op": "v_" + mnemonic.removeprefix("v_dual_"), "enc": "VOPD",
                                  "size": 8, "literal": "0x12345678" in part, "slots": slots, "mods": {}}
    return out


def probe_symbols(sw, tables: dict) -> dict:
    """Names LLVM prints inside hwreg(...), sendmsg(...), MTBUF format:[...] and (gfx12) th:/scope:."""
    sopk, sopp = FORMATS["SOPK"], FORMATS["SOPP"]
    getreg = next(op for op in range(32) if (sw.dis(sopk.pack(op=op, sdst=1).to_bytes(4, "little"))[1] or "")
                  .startswith("s_getreg_b32"))
    sendmsg = next(op for op in range(128) if (sw.dis(sopp.pack(op=op).to_bytes(4, "little"))[1] or "")
                   .startswith("s_sendmsg "))
    hwreg, msgs, fmts = {}, {}, {}
    for i in range(64):
        _, text = sw.dis(sopk.pack(op=getreg, sdst=1, simm16=i | 31 << 11).to_bytes(4, "little"))
        name = text.split("hwreg(")[1].rstrip(")")
        if not name.isdigit():
            hwreg[str(i)] = name
    for i in range(256):
        _, text = sw.dis(sopp.pack(op=sendmsg, simm16=i).to_bytes(4, "little"))
        msgs[str(i)] = text.split(" ", 1)[1]
    if "MTBUF" in FORMATS:
        buf, fields = FORMATS["MTBUF"], {"op": 0, "vdata": 1, "srsrc": 1, "soffset": 128}
    else:   # gfx12: tbuffer_* live in VBUFFER
        buf = FORMATS["MUBUF"]
        op = next(int(k) for k, e in tables["MUBUF"].items() if e["name"] == "tbuffer_load_format_x")
        fields = {"op": op, "vdata": 1, "rsrc": 4, "soffset": 124}
    for i in range(128):
        size, text = sw.dis(buf.pack(format=i, **fields).to_bytes(buf.size, "little"))
        if size and "format:" in text:
            fmts[str(i)] = text.split("format:")[1].split(" ")[0]
        elif size:
            fmts[str(i)] = ""
    out = {"hwreg": hwreg, "sendmsg": msgs, "format": fmts}
    if "th" in FORMATS["FLAT"].fields:
        out["cpol"] = _cpol_names(sw, tables)
    return out


def _cpol_names(sw, tables: dict) -> dict:
    """gfx12 cache policy as LLVM prints it, per instruction kind: {"TH,SCOPE": "th:... scope:..."} (the
    TH name depends on the scope: TH_LOAD_LU becomes TH_LOAD_BYPASS at SCOPE_SYS)."""
    flat = FORMATS["FLAT"]
    ops = {e["name"]: int(k) for k, e in tables["GLOBAL"].items()}
    kinds = {"load": "global_load_b32", "store": "global_store_b32", "atomic": "global_atomic_add_u32"}
    out: dict[str, dict[str, str]] = {}
    for kind, name in kinds.items():
        names = out.setdefault(kind, {})
        for th in range(8):
            for scope in range(4):
                word = flat.pack(op=ops[name], seg=2, vdst=1, addr=2, data=3, saddr=124, th=th, scope=scope)
                size, text = sw.dis(word.to_bytes(12, "little"))
                if not size:
                    continue
                names[f"{th},{scope}"] = " ".join(w for w in text.split(" ") if w.startswith(("th:", "scope:")))
    return out


_IMM_STYLES = {"dec": str, "hex": hex, "imm": lambda v: str(v) if v <= 64 else hex(v)}


def _imm_style(sw, fmt_name: str, values: dict, pos: int) -> str:
    """How a plain 16-bit immediate prints: dec, hex or imm (decimal up to 64, else hex); '_opt' when
    LLVM leaves out a zero."""
    seen = {}
    for v in (0x12, 0x40, 0x41, 0xFFFF, 0xFFF0, 0):
        _, text = _dis_word(sw, fmt_name, dict(values, simm16=v))
        seen[v] = _token(text, pos)
    if any(tok and tok.startswith("gpr_idx(") for tok in seen.values()):
        return "gpr_idx"    # s_set_gpr_idx_mode's mask (sopp_imm.fmt_gpr_idx)
    if any(tok and tok[0].isalpha() for tok in seen.values()):
        return "symbolic"   # s_version's UC_VERSION_* names (sopp_imm.fmt_version)
    omit0 = seen[0] is None
    for name, f in _IMM_STYLES.items():
        if all(f(v) == tok for v, tok in seen.items() if v or not omit0):
            return name + ("_opt" if omit0 else "")
    raise SystemExit(f"gen_isa: unknown immediate printing {seen}")
