"""The trailing modifiers of an assembly line (clamp, omod, op_sel, neg_lo/hi, offsets, cache bits,
MUBUF/MTBUF flags and format, DPP16/DPP8 controls), checked against what the table entry has."""
from __future__ import annotations

import re

from . import sopp_imm
from .inst import Dpp, Inst, Operand
from .table import OpInfo, Table


class Fail(Exception):
    """A bad line at column `col` (asm.py turns it into an AsmError with the line number)."""

    def __init__(self, message: str, col: int):
        super().__init__(message)
        self.col = col


DPP_CTRL = {"row_shl": 0x100, "row_shr": 0x110, "row_ror": 0x120, "row_share": 0x150, "row_xmask": 0x160}
SRC_INDEX = {"src0": 0, "src1": 1, "src2": 2}


# gfx12 th:TH_<KIND>_<NAME> spellings llvm-mc-19 assembles besides the ones it prints (probed: LOAD_WB,
# LOAD_NT_WB, STORE_LU and STORE_WB are refused; BYPASS only with SCOPE_SYS).
TH_VALUES = {
    "load": {"RT": 0, "NT": 1, "HT": 2, "LU": 3, "BYPASS": 3, "NT_RT": 4, "RT_NT": 5, "NT_HT": 6},
    "store": {"RT": 0, "NT": 1, "HT": 2, "RT_WB": 3, "BYPASS": 3, "NT_RT": 4, "RT_NT": 5, "NT_HT": 6, "NT_WB": 7},
    "atomic": {"RT": 0, "RETURN": 1, "RT_RETURN": 1, "NT": 2, "NT_RETURN": 3, "CASCADE_RT": 4, "CASCADE_NT": 6},
}
SCOPES = {"SCOPE_CU": 0, "SCOPE_SE": 1, "SCOPE_DEV": 2, "SCOPE_SYS": 3}
# gfx12 fp8/bf8 dot4: the DPP forms take src2 from a VGPR only (probed with llvm-mc-19)
_DPP_VGPR_SRC2 = frozenset({"v_dot4_f32_fp8_fp8", "v_dot4_f32_fp8_bf8", "v_dot4_f32_bf8_fp8", "v_dot4_f32_bf8_bf8"})


def cache_policy(table: Table, info: OpInfo, th: str | None, scope: str | None, col: int,
                 returning: bool | None = None) -> tuple[int, int]:
    """gfx12 th:/scope: values -> (TH, SCOPE). First as the text LLVM prints (TH names depend on the scope;
    several TH values print alike: take the smallest whose RETURN bit, TH bit 0, matches the atomic's form,
    as LLVM does), else by name (TH_VALUES). The defaults TH_*_RT and SCOPE_CU may be written."""
    kind = "atomic" if "atomic" in info.op else "store" if "store" in info.op else "load"
    th = None if th in (f"TH_{kind.upper()}_RT", "TH_DEFAULT") else th
    scope = None if scope == "SCOPE_CU" else scope
    text = " ".join(t for t in (th and f"th:{th}", scope and f"scope:{scope}") if t)
    keys = sorted((tuple(int(x) for x in k.split(",")) for k, t in table.cpol[kind].items() if t == text))
    if not keys and th is not None and th.startswith(f"TH_{kind.upper()}_") and (scope is None or scope in SCOPES):
        name = th.removeprefix(f"TH_{kind.upper()}_")
        sc = SCOPES.get(scope, 0)
        if name in TH_VALUES[kind] and (name != "BYPASS" or sc == 3):
            keys = [(TH_VALUES[kind][name], sc)]
    if returning is not None:
        keys = [k for k in keys if k[0] & 1 == returning]
    # LLVM prints TH values without a name as hex, which its parser refuses; TH 3 at SCOPE_SYS it takes only
    # written as TH_*_BYPASS (TH_BYPASS's value: not an atomic's NT_RETURN, a store's RT_WB, a load's LU);
    # SMEM has no NT_RT, RT_NT, NT_HT (TH 4-6)
    bypass = (th or "").endswith("_BYPASS") and kind != "atomic"
    keys = [k for k in keys if "0x" not in text and (k != (3, 3) or bypass)
            and not (getattr(info, "enc", "") == "SMEM" and 4 <= k[0] <= 6)]
    if not keys:
        raise Fail(f"cache policy {text!r} does not fit {info.name}", col)
    return keys[0]


def trailing(table: Table, info: OpInfo, operands, modmap, kw, neg, abs_, opsel, extra, col) -> Inst:
    """The modifiers after the operands (clamp, omod, op_sel, offsets, cache bits, DPP...) into an Inst."""
    enc, mods = info.enc, info.mods
    left = dict(modmap)

    def take(name):
        return left.pop(name, (None, col))

    def flag(name, allowed=True):
        v, c = take(name)
        if v is None:
            return False
        if v != "" or not allowed:
            raise Fail(f"modifier {name!r} not allowed here", c)
        return True

    def intval(name, lo, hi, default=0):
        v, c = take(name)
        if v is None:
            return default
        try:
            x = sopp_imm.parse_int(v)
        except sopp_imm.ImmError as e:
            raise Fail(str(e), c) from None
        if not lo <= x <= hi:
            raise Fail(f"{name} out of range", c)
        return x

    def cachepol():
        th, c = take("th")
        scope, c2 = take("scope")
        returning = "vdst" in operands if info.rtn_slots else None   # FLAT atomics: TH bit 0 = the form
        extra["th"], extra["scope"] = cache_policy(table, info, th, scope, c if th else c2, returning)

    gfx12 = table.family == "rdna4"

    def bits(name, n, loose=False):
        """[0,1,...]: n values (VOP3P: LLVM takes 1 to 4, the rest read as 0 up to the source count)."""
        v, c = take(name)
        if v is None:
            return None
        m = re.fullmatch(r"\[([01](?:,[01])*)\]", v)
        k = len(m.group(1).split(",")) if m else 0
        if not m or (not 1 <= k <= 4 if loose else k != n):
            raise Fail(f"{name} needs {n} values", c)
        return [x == "1" for x in m.group(1).split(",")]

    nsrc = sum(1 for s in info.slots if s.role in SRC_INDEX and s.kind != "imp")
    if enc == "VOP3" and mods.get("byte_sel"):   # gfx12 fp8/bf8 conversions: byte_sel:N sets OPSEL bits
        v, c = take("byte_sel")
        if v is not None:
            want = sopp_imm.parse_int(v) if re.fullmatch(r"\d+", v) else -1
            for bit, share in sorted(enumerate(mods["byte_sel"]), key=lambda e: -e[1]):
                if share and want >= share:
                    opsel[bit], want = True, want - share
            if want:
                raise Fail(f"bad byte_sel:{v}", c)
    if enc == "VOP3":
        sel = bits("op_sel", mods.get("op_sel_n", 0)) if mods.get("op_sel") and not mods.get("byte_sel") else None
        if sel:
            for bit, pos in enumerate(mods["op_sel_pos"]):
                if pos >= 0:
                    opsel[bit] = sel[pos]
        if sel and (sel[0] or sel[1]) and info.op in ("v_dot2_f16_f16", "v_dot2_bf16_bf16") and \
                table.family in ("rdna3", "rdna4"):   # packed sources: no halves to pick (LLVM's validateOpSel)
            raise Fail("invalid op_sel operand", modmap["op_sel"][1])
        kw.update(clamp=flag("clamp", bool(mods.get("clamp"))), abs=tuple(abs_), neg=tuple(neg), op_sel=tuple(opsel))
    if enc in ("VOP3", "VOP3SD"):
        kw.setdefault("clamp", flag("clamp", bool(mods.get("clamp"))))
        kw["neg"] = tuple(neg)
        v, c = take("mul")
        if v is not None:
            if v not in ("2", "4") or not mods.get("omod"):
                raise Fail("bad output modifier", c)
            kw["omod"] = 1 if v == "2" else 2
        v, c = take("div")
        if v is not None:
            if v != "2" or not mods.get("omod"):
                raise Fail("bad output modifier", c)
            kw["omod"] = 3
    elif enc == "VOP3P":
        n = 3 if "wmma" in info.op else nsrc
        default_hi = bool(mods.get("op_sel_hi_default", 1))
        sel = bits("op_sel", n, True) if mods.get("op_sel") and not mods.get("index_key") else None
        if mods.get("index_key"):   # gfx12 v_swmmac_*: index_key:N sets OPSEL bits
            v, c = take("index_key")
            if v is not None:
                want = sopp_imm.parse_int(v) if re.fullmatch(r"\d+", v) else -1
                sel = [False] * 3
                for bit, share in sorted(enumerate(mods["index_key"]), key=lambda e: -e[1]):
                    if share and want >= share:
                        sel[bit], want = True, want - share
                if want:
                    raise Fail(f"bad index_key:{v}", c)
        hi = bits("op_sel_hi", n, True) if mods.get("op_sel_hi") else None
        nl = bits("neg_lo", n, True) if mods.get("neg") and not mods.get("mix") else None
        nh = bits("neg_hi", n, True) if mods.get("neg_hi") and not mods.get("mix") else None

        def pad(v, d):   # values left out read as 0; past the source count LLVM ignores them (the default)
            v = v or []
            return tuple((v[i] if i < len(v) else False) if i < n else d for i in range(3))
        kw.update(op_sel=pad(sel, False) + (False,), op_sel_hi=pad(hi, default_hi) if hi else (default_hi,) * 3,
                  clamp=flag("clamp", bool(mods.get("clamp"))))
        if mods.get("mix"):
            kw.update(neg=tuple(neg), neg_hi=tuple(abs_))
        else:
            kw.update(neg=pad(nl, False), neg_hi=pad(nh, False))
    elif enc in ("VOP1", "VOP2", "VOPC"):
        kw.update(neg=tuple(neg), abs=tuple(abs_))
        if any(opsel):
            kw["op_sel"] = tuple(opsel)
    elif enc == "SMEM":
        bits = 24 if gfx12 else 21
        so = operands.get("soffset")
        if so is not None and so.kind == "imm":
            operands["soffset"] = Operand("sgpr", 124)
            kw["offset"] = so.value
            if "offset" in left:
                raise Fail("two offsets", left["offset"][1])
            extra["smem_form"] = 1   # written as an immediate: llvm-mc prints it so, 0x0 included
        elif "offset" in left:
            kw["offset"] = intval("offset", -(1 << bits - 1), (1 << bits - 1) - 1)
            extra["smem_form"] = 2   # an SGPR (or null) and offset:, printed so even when 0
        elif gfx12 and so is not None:
            extra["smem_form"] = 2   # gfx12 has no SGPR-only form: `null` is `null offset:0x0`
        if gfx12:
            cachepol()
        else:
            kw.update(glc=flag("glc"), dlc=flag("dlc"))
        if kw.get("offset", 0) and not -(1 << bits - 1) <= kw["offset"] < 1 << bits - 1:
            raise Fail("offset out of range", col)
    elif enc in ("FLAT", "GLOBAL", "SCRATCH"):
        lo, hi = (-(1 << 23), (1 << 23) - 1) if gfx12 else (0, 4095) if enc == "FLAT" else (-4096, 4095)
        kw["offset"] = intval("offset", lo, hi)
        if gfx12:
            cachepol()
        else:
            kw.update(glc=flag("glc"), slc=flag("slc"), dlc=flag("dlc"))
        if enc == "GLOBAL" and "vaddr" in operands:
            want = 1 if "saddr" in operands else 2
            if operands["vaddr"].count != want:
                raise Fail(f"vaddr must be {want} VGPR(s) {'with' if want == 1 else 'without'} saddr", col)
        if enc == "SCRATCH":
            extra["sve"] = int("vaddr" in operands)
    elif enc == "DS":
        if "2addr" in info.op:
            o0, o1 = intval("offset0", 0, 255), intval("offset1", 0, 255)
        else:
            v, c = take("offset")
            if v is None:
                off = 0
            else:
                try:
                    off = (sopp_imm.parse_swizzle(v) if info.op == "ds_swizzle_b32" else sopp_imm.parse_int(v))
                except sopp_imm.ImmError as e:
                    raise Fail(str(e), c) from None
                if not 0 <= off <= 0xFFFF:
                    raise Fail("offset out of range", c)
            o0, o1 = off & 0xFF, off >> 8
        gds = flag("gds", bool(mods.get("gds")) or bool(info.need))
        if info.need and not gds:   # the GWS ops, ds_ordered_count, ds_*_gs_reg_rtn: `gds` is required
            raise Fail(f"{info.name} needs gds", col)
        kw.update(offset0=o0, offset1=o1, offset=o1 << 8 | o0, gds=gds)
    elif enc in ("MUBUF", "MTBUF"):
        if enc == "MTBUF" or info.op.startswith("tbuffer"):
            v, c = take("format")
            extra["format"] = 1 if v is None else buf_format(table, v, c)
        elif gfx12:
            extra["format"] = 1
        extra["idxen"], extra["offen"] = int(flag("idxen")), int(flag("offen"))
        kw["offset"] = intval("offset", -(1 << 23), (1 << 23) - 1) if gfx12 else intval("offset", 0, 4095)
        if gfx12:
            cachepol()
        else:
            kw.update(glc=flag("glc"), slc=flag("slc"), dlc=flag("dlc"))
        extra["tfe"] = int(flag("tfe"))
        if extra["tfe"] and "store" in info.op and table.family != "cdna3":
            raise Fail("TFE modifier has no meaning for store instructions", col)
        va = operands.get("vaddr")
        need = extra["idxen"] + extra["offen"]
        if (va.count if va else 0) != need:
            raise Fail(f"vaddr must be {need} VGPR(s) for idxen/offen" if need else "vaddr must be off", col)
        for s in info.slots:   # TFE adds a status dword to the data registers
            o = operands.get(s.role)
            if s.role in ("vdst", "vdata") and o is not None:
                if o.count != s.count + extra["tfe"]:
                    raise Fail(f"{s.role} needs {s.count + extra['tfe']} registers", col)
                operands[s.role] = Operand(o.kind, o.index, s.count)
    dpp = parse_dpp(info, left, col, legacy_bound_ctrl=table.family == "cdna3")
    if dpp is not None:
        src0, src1 = operands.get("src0"), operands.get("src1")
        if src0 is not None and src0.kind != "vgpr":   # the DPP word has room for a VGPR only
            raise Fail("DPP src0 must be a VGPR", col)
        if any(o.kind == "literal" for o in operands.values()):
            raise Fail("DPP takes no literal", col)
        # VOP3P DPP, and gfx11 VOP3 DPP, read src1 from a VGPR only (gfx12 VOP3 DPP also takes an SGPR or constant)
        if src1 is not None and src1.kind != "vgpr" and (enc == "VOP3P" or enc in ("VOP3", "VOP3SD") and not gfx12):
            raise Fail("DPP src1 must be a VGPR here", col)
        src2 = operands.get("src2")
        if src2 is not None and src2.kind != "vgpr" and info.op in _DPP_VGPR_SRC2:
            raise Fail("DPP src2 must be a VGPR here", col)
        kw["dpp"] = dpp
    if left:
        name, (v, c) = next(iter(left.items()))
        raise Fail(f"modifier {name!r} not valid for {info.name}", c)
    if extra:
        kw["extra"] = extra
    if enc in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD") and dpp is None and (any(neg) or any(abs_)) and \
            enc in ("VOP1", "VOP2", "VOPC"):
        raise Fail("source modifiers need the e64 or DPP form", col)
    return Inst(info.op, enc, info.opcode, 0, operands, **kw)

def buf_format(table: Table, v: str, col: int) -> int:
    """format:[BUF_FMT_...], format:[BUF_DATA_FORMAT_..., BUF_NUM_FORMAT_...] (either order, either left out:
    8 and UNORM by default) or a number -> the unified format (LLVM's rules, probed with llvm-mc-19)."""
    names = {t[1:-1]: i for i, t in table.buf_format.items() if t.startswith("[")}
    names["BUF_FMT_8_UNORM"] = 1   # the default format, which LLVM never prints
    if not v.startswith("["):
        try:
            f = sopp_imm.parse_int(v)
        except sopp_imm.ImmError:
            raise Fail(f"unknown format {v!r}", col) from None
        if not 0 <= f < 128:
            raise Fail("format out of range", col)
        return f
    if v[1:-1] in names:   # as printed (gfx942 prints the [dfmt,nfmt] pair itself)
        return names[v[1:-1]]
    parts = [x.strip() for x in v.strip("[]").split(",")]
    dfmt = nfmt = None
    for x in parts:
        if x.startswith("BUF_DATA_FORMAT_") and dfmt is None:
            dfmt = x.removeprefix("BUF_DATA_FORMAT_")
        elif x.startswith("BUF_NUM_FORMAT_") and nfmt is None:
            nfmt = x.removeprefix("BUF_NUM_FORMAT_")
        else:
            raise Fail(f"unknown format {v!r}", col)
    name = "BUF_FMT_INVALID" if dfmt == "INVALID" else f"BUF_FMT_{dfmt or '8'}_{nfmt or 'UNORM'}"
    if name not in names:
        raise Fail("unsupported format", col)
    return names[name]


def parse_dpp(info: OpInfo, left: dict, col: int, legacy_bound_ctrl: bool = False) -> Dpp | None:
    """DPP16 / DPP8 controls (popped from `left`), or None."""
    def pop(name):
        return left.pop(name, (None, col))

    v, c = pop("dpp8")
    if v is not None:
        m = re.fullmatch(r"\[([0-7](?:,[0-7]){7})\]", v)
        if not m or "dpp8" not in info.dpp:
            raise Fail("bad dpp8 selector", c)
        fi, fc = pop("fi")
        return Dpp("dpp8", sel=tuple(int(x) for x in m.group(1).split(",")), fi=fi == "1")
    ctrl = None
    v, c = pop("quad_perm")
    if v is not None:
        m = re.fullmatch(r"\[([0-3]),([0-3]),([0-3]),([0-3])\]", v)
        if not m:
            raise Fail("bad quad_perm", c)
        ctrl = sum(int(x) << (2 * i) for i, x in enumerate(m.groups()))
    for name, base in DPP_CTRL.items():
        v, c = pop(name)
        if v is not None:
            if ctrl is not None:
                raise Fail("two DPP controls", c)
            try:
                n = sopp_imm.parse_int(v)
            except sopp_imm.ImmError as e:
                raise Fail(str(e), c) from None
            lo = 0 if name in ("row_share", "row_xmask") else 1
            if not lo <= n <= 15:
                raise Fail(f"{name} out of range", c)
            ctrl = base + n
    for name, code in (("row_mirror", 0x140), ("row_half_mirror", 0x141)):
        v, c = pop(name)
        if v is not None:
            if v != "" or ctrl is not None:
                raise Fail(f"bad {name}", c)
            ctrl = code
    if ctrl is None:
        return None
    if "dpp16" not in info.dpp:
        raise Fail("no DPP16 form", col)
    masks = {}
    for name in ("row_mask", "bank_mask"):
        v, c = pop(name)
        try:
            masks[name] = 0xF if v is None else sopp_imm.parse_int(v)
        except sopp_imm.ImmError as e:
            raise Fail(str(e), c) from None
        if not 0 <= masks[name] <= 15:
            raise Fail(f"{name} out of range", c)
    bc, bcc = pop("bound_ctrl")
    if bc not in (None, "0", "1"):
        raise Fail("bound_ctrl takes 0 or 1", bcc)
    fi, fic = pop("fi")
    if fi not in (None, "0", "1"):
        raise Fail("fi takes 0 or 1", fic)
    # gfx11/gfx12 LLVM takes bound_ctrl:N as the bit's value; gfx9 LLVM sets the bit for either spelling.
    return Dpp("dpp16", ctrl=ctrl, row_mask=masks["row_mask"], bank_mask=masks["bank_mask"],
               bound_ctrl=bc is not None if legacy_bound_ctrl else bc == "1", fi=fi == "1")
