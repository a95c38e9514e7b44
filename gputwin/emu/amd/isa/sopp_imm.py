"""The 16-bit immediates LLVM prints symbolically: s_waitcnt, s_delay_alu, s_waitcnt_depctr, hwreg(...),
sendmsg(...), gpr_idx(...) -- formatting and parsing, gfx11 field layouts (RDNA3 ISA guide, SOPP/SOPK chapters)."""
from __future__ import annotations

import re

# s_waitcnt (gfx11): vmcnt [15:10], lgkmcnt [9:4], expcnt [2:0].
WAITCNT = (("vmcnt", 10, 6), ("expcnt", 0, 3), ("lgkmcnt", 4, 6))
# s_delay_alu: instid0 [3:0], instskip [6:4], instid1 [10:7].
DELAY_IDS = ("NO_DEP", "VALU_DEP_1", "VALU_DEP_2", "VALU_DEP_3", "VALU_DEP_4", "TRANS32_DEP_1", "TRANS32_DEP_2",
             "TRANS32_DEP_3", "FMA_ACCUM_CYCLE_1", "SALU_CYCLE_1", "SALU_CYCLE_2", "SALU_CYCLE_3")
DELAY_SKIPS = ("SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4")
DELAY = (("instid0", 0, 4, DELAY_IDS), ("instskip", 4, 3, DELAY_SKIPS), ("instid1", 7, 4, DELAY_IDS))
# s_waitcnt_depctr (gfx11) fields in LLVM's print order: (name, shift, width); default = all ones.
DEPCTR = (("depctr_hold_cnt", 7, 1), ("depctr_sa_sdst", 0, 1), ("depctr_va_vdst", 12, 4),
          ("depctr_va_sdst", 9, 3), ("depctr_va_ssrc", 8, 1), ("depctr_va_vcc", 1, 1), ("depctr_vm_vsrc", 2, 3))
_DEPCTR_MASK = sum(((1 << w) - 1) << s for _, s, w in DEPCTR)


def fmt_waitcnt(v: int) -> str:
    fields = [(n, v >> s & ((1 << w) - 1), (1 << w) - 1) for n, s, w in WAITCNT]
    shown = [f"{n}({x})" for n, x, mx in fields if x != mx] or [f"{n}({x})" for n, x, _ in fields]
    return " ".join(shown)


def fmt_delay_alu(v: int) -> str:
    parts = []
    for name, shift, width, names in DELAY:
        x = v >> shift & ((1 << width) - 1)
        if x:
            bad = "/* invalid " + name.rstrip("01") + " value */"
            parts.append(f"{name}({names[x] if x < len(names) else bad})")
    return " | ".join(parts) if parts else str(v)


def fmt_depctr(v: int) -> str:
    if v & ~_DEPCTR_MASK & 0xFFFF:
        return hex(v)
    fields = [(n, v >> s & ((1 << w) - 1), (1 << w) - 1) for n, s, w in DEPCTR]
    nondefault = any(x != mx for _, x, mx in fields)
    return " ".join(f"{n}({x})" for n, x, mx in fields if x != mx or not nondefault)


def fmt_hwreg(v: int, names: dict[int, str]) -> str:
    ident, offset, size = v & 63, v >> 6 & 31, (v >> 11 & 31) + 1
    head = names.get(ident, str(ident))
    return f"hwreg({head})" if offset == 0 and size == 32 else f"hwreg({head}, {offset}, {size})"


def _named(text: str, ident: int) -> bool:
    return not text.startswith(f"sendmsg({ident},")


def fmt_sendmsg(v: int, texts: dict[int, str]) -> str:
    """A named message id (low byte) prints by name whatever the high bits hold; others as numbers."""
    low = v & 0xFF
    if _named(texts[low], low):
        return texts[low]
    return texts[v] if v < 256 else str(v)


# ds_swizzle_b32 offset (SIDefines.h Swizzle): QUAD_PERM when [15:8] == 0x80; else if bit 15 is clear,
# a bitmask permutation and = [4:0], or = [9:5], xor = [14:10] with shorthand forms.
def fmt_swizzle(v: int) -> str:
    if v & 0xFF00 == 0x8000:
        return "swizzle(QUAD_PERM," + ",".join(str(v >> (2 * i) & 3) for i in range(4)) + ")"
    if v & 0x8000:
        return str(v)
    and_, or_, xor = v & 31, v >> 5 & 31, v >> 10 & 31
    if and_ == 31 and or_ == 0 and bin(xor).count("1") == 1:
        return f"swizzle(SWAP,{xor})"
    if and_ == 31 and or_ == 0 and xor > 0 and (xor + 1) & xor == 0:
        return f"swizzle(REVERSE,{xor + 1})"
    group = 31 - and_ + 1
    if group > 1 and group & (group - 1) == 0 and or_ < group and xor == 0:
        return f"swizzle(BROADCAST,{group},{or_})"
    p0, p1 = or_ ^ xor, ((31 & and_) | or_) ^ xor
    chars = "".join("1" if p0 & m and p1 & m else "0" if not p0 & m and not p1 & m else "p" if p1 & m else "i"
                    for m in (16, 8, 4, 2, 1))
    return f'swizzle(BITMASK_PERM,"{chars}")'


def parse_swizzle(text: str) -> int:
    t = text.strip()
    m = re.fullmatch(r"swizzle\(\s*([A-Z_]+)\s*((?:,\s*[^,()]+\s*)*)\)", t)
    if not m:
        return parse_int(t)
    mode = m.group(1)
    args = [a.strip() for a in m.group(2).split(",")[1:]]
    try:
        if mode == "QUAD_PERM" and len(args) == 4:
            lanes = [parse_int(a) for a in args]
            if all(0 <= x < 4 for x in lanes):
                return 0x8000 | sum(x << (2 * i) for i, x in enumerate(lanes))
        elif mode == "BITMASK_PERM" and len(args) == 1 and re.fullmatch(r'"[01pi]{5}"', args[0]):
            and_ = or_ = xor = 0
            for ch, bit in zip(args[0][1:-1], (16, 8, 4, 2, 1)):
                and_ |= bit if ch in "pi" else 0
                or_ |= bit if ch == "1" else 0
                xor |= bit if ch == "i" else 0
            return and_ | or_ << 5 | xor << 10
        elif mode == "BROADCAST" and len(args) == 2:
            group, lane = parse_int(args[0]), parse_int(args[1])
            if 2 <= group <= 32 and group & (group - 1) == 0 and 0 <= lane < group:
                return (32 - group) | lane << 5
        elif mode == "SWAP" and len(args) == 1:
            x = parse_int(args[0])
            if 1 <= x < 32:
                return 31 | x << 10
        elif mode == "REVERSE" and len(args) == 1:
            x = parse_int(args[0])
            if 2 <= x <= 32 and x & (x - 1) == 0:
                return 31 | (x - 1) << 10
    except ImmError:
        pass
    raise ImmError(f"bad swizzle {t!r}")


# s_version: code [7:0] (named for some generations) and flag bits [15:13]; bits [12:8] must be zero.
VERSION_NAMES = {0: "UC_VERSION_GFX7", 4: "UC_VERSION_GFX10", 6: "UC_VERSION_GFX11", 9: "UC_VERSION_GFX12"}
VERSION_FLAGS = ((13, "UC_VERSION_W64_BIT"), (14, "UC_VERSION_W32_BIT"), (15, "UC_VERSION_MDP_BIT"))


def fmt_version(v: int) -> str:
    if v & 0x1F00:
        return hex(v)
    expr = VERSION_NAMES.get(v & 0xFF, str(v & 0xFF))
    for bit, name in VERSION_FLAGS:
        if v >> bit & 1:
            expr = f"({expr})|{name}" if "|" in expr else f"{expr}|{name}"
    return expr


def parse_version(text: str) -> int:
    t = text.replace("(", " ").replace(")", " ")
    v = 0
    names = {n: c for c, n in VERSION_NAMES.items()} | {n: 1 << b for b, n in VERSION_FLAGS}
    for part in t.split("|"):
        p = part.strip()
        v |= names[p] if p in names else parse_int(p)
    if not 0 <= v <= 0xFFFF:
        raise ImmError(f"s_version value {text.strip()!r} out of range")
    return v


class ImmError(ValueError):
    pass


_CALL = re.compile(r"\s*([A-Za-z_0-9]+)\s*\(\s*([^()]*?)\s*\)\s*")


def _calls(text: str, sep: str) -> list[tuple[str, str]]:
    out = []
    for part in (text.split("|") if sep == "|" else re.findall(r"[A-Za-z_0-9]+\s*\([^()]*\)", text)):
        m = _CALL.fullmatch(part)
        if not m:
            raise ImmError(f"cannot parse {part.strip()!r}")
        out.append((m.group(1), m.group(2)))
    return out


def parse_int(text: str) -> int:
    t = text.strip()
    neg = t.startswith("-")
    t = t[1:] if neg else t
    try:
        v = int(t, 16) if t.lower().startswith("0x") else int(t, 2) if t.lower().startswith("0b") else int(t, 10)
    except ValueError:
        raise ImmError(f"expected an integer, got {text.strip()!r}") from None
    return -v if neg else v


def parse_waitcnt(text: str) -> int:
    if re.fullmatch(r"\s*-?(0x[0-9a-fA-F]+|\d+)\s*", text):
        return parse_int(text) & 0xFFFF
    v = 0xFFFF & ~0x8   # fields not named stay at their maximum; bit 3 is unused
    fields = {n: (s, w) for n, s, w in WAITCNT}
    for name, arg in _calls(text, " "):
        if name not in fields:
            raise ImmError(f"unknown s_waitcnt counter {name!r}")
        s, w = fields[name]
        x = parse_int(arg)
        if not 0 <= x < 1 << w:
            raise ImmError(f"{name}({x}) is out of range")
        v = (v & ~(((1 << w) - 1) << s)) | x << s
    return v


def parse_delay_alu(text: str) -> int:
    if re.fullmatch(r"\s*(0x[0-9a-fA-F]+|\d+)\s*", text):
        return parse_int(text)
    v = 0
    fields = {n: (s, names) for n, s, _, names in DELAY}
    for name, arg in _calls(text, "|"):
        if name not in fields or arg not in fields[name][1]:
            raise ImmError(f"bad s_delay_alu field {name}({arg})")
        v |= fields[name][1].index(arg) << fields[name][0]
    return v


def parse_depctr(text: str) -> int:
    if re.fullmatch(r"\s*(0x[0-9a-fA-F]+|\d+)\s*", text):
        return parse_int(text)
    v = _DEPCTR_MASK
    fields = {n: (s, w) for n, s, w in DEPCTR}
    for name, arg in _calls(text, " "):
        if name not in fields:
            raise ImmError(f"unknown depctr field {name!r}")
        s, w = fields[name]
        x = parse_int(arg)
        if not 0 <= x < 1 << w:
            raise ImmError(f"{name}({x}) is out of range")
        v = (v & ~(((1 << w) - 1) << s)) | x << s
    return v


def parse_hwreg(text: str, names: dict[int, str]) -> int:
    m = re.fullmatch(r"\s*hwreg\(\s*([^(),]+?)\s*(?:,\s*([^,()]+?)\s*,\s*([^,()]+?)\s*)?\)\s*", text)
    if not m:
        return parse_int(text) & 0xFFFF
    by_name = {n: i for i, n in names.items()}
    ident = by_name[m.group(1)] if m.group(1) in by_name else parse_int(m.group(1))
    offset = parse_int(m.group(2)) if m.group(2) else 0
    size = parse_int(m.group(3)) if m.group(3) else 32
    if not (0 <= ident < 64 and 0 <= offset < 32 and 1 <= size <= 32):
        raise ImmError(f"hwreg field out of range in {text.strip()!r}")
    return ident | offset << 6 | (size - 1) << 11


def parse_sendmsg(text: str, texts: dict[int, str]) -> int:
    t = re.sub(r"\s+", " ", text.strip()).replace("( ", "(").replace(" )", ")")
    by_text = {v: i for i, v in texts.items()}
    if t in by_text:
        return by_text[t]
    m = re.fullmatch(r"sendmsg\(([^(),]+)(?:, ?([^(),]+))?(?:, ?([^(),]+))?\)", t)
    if m:
        names = {v[len("sendmsg("):-1]: i for i, v in texts.items() if "," not in v}
        ident = names[m.group(1)] if m.group(1) in names else parse_int(m.group(1))
        if m.group(2) and parse_int(m.group(2)) or m.group(3) and parse_int(m.group(3)) or not 0 <= ident < 256:
            raise ImmError(f"sendmsg operation/stream not supported on gfx11: {t!r}")
        return ident
    return parse_int(t) & 0xFFFF


# GFX9 VGPR indexing mode mask (s_set_gpr_idx_on / s_set_gpr_idx_mode): bit i enables indexing of operand i.
GPR_IDX = ("SRC0", "SRC1", "SRC2", "DST")


def fmt_gpr_idx(v: int) -> str:
    """LLVM names a mask that fits in 4 bits, in bit order; anything wider prints in hex."""
    if v >= 16:
        return hex(v)
    return "gpr_idx(" + ",".join(n for i, n in enumerate(GPR_IDX) if v >> i & 1) + ")"


def parse_gpr_idx(text: str) -> int:
    """gpr_idx(SRC0,DST) in any order, each name once, or an integer 0..15 (LLVM's assembler range)."""
    t = text.strip()
    m = re.fullmatch(r"gpr_idx\s*\((.*)\)", t)
    if m is None:
        v = parse_int(t)
        if not 0 <= v < 16:
            raise ImmError(f"gpr_idx mask {t!r} out of range 0..15")
        return v
    v = 0
    for part in (p.strip() for p in m.group(1).split(",")) if m.group(1).strip() else ():
        if part not in GPR_IDX or v >> GPR_IDX.index(part) & 1:
            raise ImmError(f"bad gpr_idx operand {part!r}")
        v |= 1 << GPR_IDX.index(part)
    return v
