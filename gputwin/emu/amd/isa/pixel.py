"""Formats only pixel shaders use: EXP (`exp` gfx11 / `export` gfx12), LDSDIR (gfx11 lds_param_load /
lds_direct_load) and VDSDIR (gfx12 ds_param_load / ds_direct_load), VINTERP (v_interp_p10_f32 ...).

bytes <-> Inst <-> LLVM's text, as llvm-mc-19 does them; per-arch facts (names, export targets, bits LLVM
refuses) from tables/<arch>_pixel.json (tools/gen_isa_pixel.py). The emulator runs VINTERP (valu/interp.py)
and refuses EXP and the LDS-direct loads (IllegalInstruction naming them). Field layouts from the RDNA3/
RDNA4 ISA guides and LLVM's EXPe_Row, LDSDIRe/VDSDIRe and VINTERPe, checked by
tests/emu/amd/isa/test_image_pixel_llvm.py.

Inst: EXP: `op` the mnemonic, operands src0..src3 (one VGPR each, absent where EN's bit is clear: `off`),
extra tgt/en/done/row. LDSDIR/VDSDIR: operands vdst, extra attr/attrchan/wait_vdst/wait_vsrc.
VINTERP: operands vdst, src0..src2; neg, op_sel [src0 src1 src2 dst], clamp, extra wait_exp.
Bits LLVM ignores are kept in extra["rest"] so that encoding is exact.
"""
from __future__ import annotations

import functools
import re

from .inst import Inst, Operand
from .rdna3_formats import Format
from .table import format_facts


EXP = Format("EXP", 8, (26, 6, 0b111110), {"en": (0, 4), "tgt": (4, 6), "done": (11, 1), "row": (13, 1),
                                         "src0": (32, 8), "src1": (40, 8), "src2": (48, 8), "src3": (56, 8)})
DSDIR = Format("DSDIR", 4, (24, 8, 0xCE), {"vdst": (0, 8), "attrchan": (8, 2), "attr": (10, 6), "waitvdst": (16, 4),
                                         "op": (20, 2), "waitvsrc": (23, 1)})
VINTERP = Format("VINTERP", 8, (24, 8, 0xCD), {"vdst": (0, 8), "waitexp": (8, 3), "op_sel": (11, 4), "clamp": (15, 1),
                                             "op": (16, 7), "src0": (32, 9), "src1": (41, 9), "src2": (50, 9),
                                             "neg": (61, 3)})
ENCODINGS = ("EXP", "LDSDIR", "VDSDIR", "VINTERP")
_CHANNELS = "xyzw"
# Non-VGPR VINTERP sources llvm-mc-19 prints without its "Invalid register" note: null, src_shared_base..
# src_pops_exiting_wave_id, src_vccz, src_execz, src_scc (probed)
_LLVM_PLAIN = frozenset({124, 235, 236, 237, 238, 239, 251, 252, 253})


class PixelError(Exception):
    """A word LLVM does not decode, or text it does not assemble (the callers wrap it)."""

    def __init__(self, message: str, col: int = 0):
        super().__init__(message)
        self.col = col


@functools.cache
def facts(arch: str) -> dict:
    return format_facts(arch, "pixel", {})


def format_of(d0: int) -> Format | None:
    for fmt in (EXP, DSDIR, VINTERP):
        lo, width, value = fmt.ident
        if d0 >> lo & ((1 << width) - 1) == value:
            return fmt
    return None


def _vgpr(v: int) -> Operand:
    return Operand("vgpr", v, 1)


def decode(arch: str, b: bytes, strict: bool = True, src=None) -> Inst:
    """The instruction at the start of `b`. VINTERP sources: VGPRs only when strict (LLVM's register
    class); otherwise `src(field, ptype)` decodes any source the hardware reads (decode.Decoder)."""
    d0 = int.from_bytes(b[:4], "little")
    fmt = format_of(d0)
    f = facts(arch)
    if fmt is None or not f:
        raise PixelError(f"no encoding format matches word {d0:#010x}")
    if len(b) < fmt.size:
        raise PixelError(f"truncated {fmt.name} instruction")
    w = int.from_bytes(b[:fmt.size], "little")
    g = {name: fmt.get(w, name) for name in fmt.fields}
    if fmt is EXP:
        ops = {f"src{i}": _vgpr(g[f"src{i}"]) for i in range(4) if g["en"] >> i & 1}
        used = {"en", "tgt", "done", "row"} | set(ops)
        extra = {"tgt": g["tgt"], "en": g["en"], "done": g["done"], "row": g["row"]}
        return _inst(fmt, w, used, f["exp"]["mnemonic"], "EXP", 0, ops, extra)
    if fmt is DSDIR:
        e = f["dsdir"].get(str(g["op"]))
        if e is None:
            raise PixelError(f"no LDS-direct instruction with opcode {g['op']}")
        if w & e["reject"]:
            raise PixelError(f"{e['name']} with reserved bits {w & e['reject']:#x} set")
        used = {"vdst", "op", "waitvdst", "waitvsrc"} | ({"attr", "attrchan"} if e["param"] else set())
        extra = {"wait_vdst": g["waitvdst"], "wait_vsrc": g["waitvsrc"]}
        if e["param"]:
            extra.update(attr=g["attr"], attrchan=g["attrchan"])
        enc = "VDSDIR" if "wait_vm_vsrc" in e["waits"] else "LDSDIR"
        return _inst(fmt, w, used, e["name"], enc, g["op"], {"vdst": _vgpr(g["vdst"])}, extra)
    v = f["vinterp"]
    opcode = g["op"] & ((1 << v["op_bits"]) - 1)
    e = v["ops"].get(str(opcode))
    if e is None:
        raise PixelError(f"no VINTERP instruction with opcode {opcode}")
    if w & e["reject"]:
        raise PixelError(f"{e['name']} with reserved or unsupported bits {w & e['reject']:#x} set")
    ops = {"vdst": _vgpr(g["vdst"])}
    f16 = "_f16_" in e["name"]
    for i, ptype in enumerate(("f16" if f16 else "b32", "b32", "f16" if f16 and "p10" in e["name"] else "b32")):
        val = g[f"src{i}"]
        if val >= 256:
            ops[f"src{i}"] = _vgpr(val - 256)
        elif (strict and val not in _LLVM_PLAIN) or src is None:
            raise PixelError(f"{e['name']} src{i}: source encoding {val} is not a VGPR (LLVM's register class)")
        else:
            ops[f"src{i}"] = src(f"src{i}", val, ptype)
    # gfx12 reads 5 of the opcode's 7 bits; the others go to rest
    vinterp = Format("VINTERP", 8, VINTERP.ident, {**VINTERP.fields, "op": (16, v["op_bits"])})
    return _inst(vinterp, w, set(vinterp.fields), e["name"], "VINTERP", opcode,
                 ops, {"wait_exp": g["waitexp"]}, clamp=bool(g["clamp"]),
                 neg=tuple(bool(g["neg"] >> i & 1) for i in range(3)),
                 op_sel=tuple(bool(g["op_sel"] >> i & 1) for i in range(4)))


def _inst(fmt: Format, w: int, used: set, name: str, enc: str, opcode: int, ops: dict, extra: dict, **kw) -> Inst:
    """The Inst, with the word's bits outside the used fields (which LLVM ignores) in extra["rest"]."""
    keep = fmt.fields_mask(*used) | fmt.ident_mask()
    rest = w & ~keep & ((1 << 8 * fmt.size) - 1)
    if rest:
        extra["rest"] = rest
    return Inst(name, enc, opcode, fmt.size, ops, extra=extra, **kw)


def encode(arch: str, inst: Inst) -> bytes:
    x = inst.extra
    ops = inst.operands
    if inst.encoding == "EXP":
        vals = {"en": x.get("en", 0), "tgt": x["tgt"], "done": x.get("done", 0), "row": x.get("row", 0)}
        vals.update({f"src{i}": ops[f"src{i}"].index for i in range(4) if f"src{i}" in ops})
        fmt = EXP
    elif inst.encoding in ("LDSDIR", "VDSDIR"):
        vals = {"vdst": ops["vdst"].index, "op": inst.opcode, "waitvdst": x.get("wait_vdst", 0),
                "waitvsrc": x.get("wait_vsrc", 0), "attr": x.get("attr", 0), "attrchan": x.get("attrchan", 0)}
        fmt = DSDIR
    else:
        vals = {"vdst": ops["vdst"].index, "op": inst.opcode, "waitexp": x.get("wait_exp", 0),
                "clamp": int(inst.clamp), "neg": sum(int(b) << i for i, b in enumerate(inst.neg)),
                "op_sel": sum(int(b) << i for i, b in enumerate(inst.op_sel))}
        vals.update({f"src{i}": (256 + ops[f"src{i}"].index if ops[f"src{i}"].kind == "vgpr"
                                 else ops[f"src{i}"].index) for i in range(3)})
        fmt = VINTERP
    return (fmt.pack(**vals) | x.get("rest", 0)).to_bytes(fmt.size, "little")


def text(arch: str, inst: Inst) -> str:
    from .disasm import reg_text
    x, ops = inst.extra, inst.operands
    if inst.encoding == "EXP":
        tgt = facts(arch)["exp"]["targets"].get(str(x["tgt"]), f"invalid_target_{x['tgt']}")
        srcs = ", ".join(reg_text(ops[f"src{i}"]) if f"src{i}" in ops else "off" for i in range(4))
        return f"{inst.op} {tgt} {srcs}" + " done" * x.get("done", 0) + " row_en" * x.get("row", 0)
    if inst.encoding in ("LDSDIR", "VDSDIR"):
        out = f"{inst.op} {reg_text(ops['vdst'])}"
        if "attr" in x:
            out += f", attr{x['attr']}.{_CHANNELS[x['attrchan']]}"
        e = facts(arch)["dsdir"][str(inst.opcode)]
        vals = {"wait_vdst": x.get("wait_vdst", 0), "wait_va_vdst": x.get("wait_vdst", 0),
                "wait_vm_vsrc": x.get("wait_vsrc", 0)}
        return out + "".join(f" {w}:{vals[w]}" for w in e["waits"])
    srcs = [("-" if inst.neg[i] else "") + reg_text(ops[f"src{i}"]) for i in range(3)]
    out = f"{inst.op} {reg_text(ops['vdst'])}, " + ", ".join(srcs) + " clamp" * inst.clamp
    if any(inst.op_sel):
        out += " op_sel:[" + ",".join("1" if b else "0" for b in inst.op_sel) + "]"
    return out + f" wait_exp:{x.get('wait_exp', 0)}"


@functools.cache
def mnemonics(arch: str) -> dict[str, tuple[str, int]]:
    """Mnemonic as written -> (encoding, opcode)."""
    f = facts(arch)
    if not f:
        return {}
    out = {m: ("EXP", 0) for m in f["exp"]["spellings"]}
    for op, e in f["dsdir"].items():
        out[e["name"]] = ("VDSDIR" if "wait_vm_vsrc" in e["waits"] else "LDSDIR", int(op))
    for op, e in f["vinterp"]["ops"].items():
        out[e["name"]] = ("VINTERP", int(op))
    return out


_WORD = re.compile(r"([a-z_]+)(?::(\S+))?$")


def parse(arch: str, mnemonic: str, rest: str, col: int) -> Inst:
    """One line's operands (after the mnemonic) -> Inst; PixelError names the column."""
    from .asm import split_top
    enc, opcode = mnemonics(arch)[mnemonic]
    f = facts(arch)
    pieces = [(t.strip(), c + len(t) - len(t.lstrip())) for t, c in split_top(rest, ",", col)]
    tail = [(w, c) for w, c in split_top(pieces[-1][0], " ", pieces[-1][1]) if w] if pieces[-1][0] else []
    if not tail:
        raise PixelError("missing operand", col)
    pieces[-1] = tail[0]
    words = tail[1:]
    if enc == "EXP":
        first = [(w, c) for w, c in split_top(pieces[0][0], " ", pieces[0][1]) if w]
        if len(first) != 2 or len(pieces) != 4:
            raise PixelError("expected a target and four sources", col)
        names = {v: int(k) for k, v in f["exp"]["targets"].items()}
        if first[0][0] not in names:
            raise PixelError("invalid exp target", first[0][1])
        srcs = [first[1]] + pieces[1:]
        ops, en = {}, 0
        for i, (t, c) in enumerate(srcs):
            if t != "off":
                ops[f"src{i}"] = _reg(t, c)
                en |= 1 << i
        mods = _flags(words, ("done", "row_en"))
        extra = {"tgt": names[first[0][0]], "en": en, "done": int("done" in mods), "row": int("row_en" in mods)}
        return Inst(f["exp"]["mnemonic"], "EXP", 0, 8, ops, extra=extra)
    if enc in ("LDSDIR", "VDSDIR"):
        e = f["dsdir"][str(opcode)]
        if len(pieces) != (2 if e["param"] else 1):
            raise PixelError(f"{mnemonic} takes {2 if e['param'] else 1} operands", pieces[-1][1])
        extra: dict = {}
        if e["param"]:
            m = re.fullmatch(r"attr(\d+)\.([xyzw])", pieces[1][0])
            if not m:
                raise PixelError("expected attrN.x/y/z/w", pieces[1][1])
            if int(m[1]) > 32:   # llvm-mc-19 takes attr0..attr32 though the field has 6 bits
                raise PixelError("out of bounds interpolation attribute number", pieces[1][1])
            extra.update(attr=int(m[1]), attrchan=_CHANNELS.index(m[2]))
        vals = _values(words, {w: (0, 15 if w != "wait_vm_vsrc" else 1) for w in e["waits"]})
        extra["wait_vdst"] = vals.get("wait_vdst", vals.get("wait_va_vdst", 0))
        extra["wait_vsrc"] = vals.get("wait_vm_vsrc", 0)
        return Inst(e["name"], enc, opcode, 4, {"vdst": _reg(*pieces[0])}, extra=extra)
    e = f["vinterp"]["ops"][str(opcode)]
    if len(pieces) != 4:
        raise PixelError(f"{mnemonic} takes 4 operands", pieces[-1][1])
    ops, neg = {"vdst": _reg(*pieces[0])}, []
    for i, (t, c) in enumerate(pieces[1:]):
        neg.append(t.startswith("-"))
        ops[f"src{i}"] = _reg(t.removeprefix("-"), c + neg[-1])
    order = ["clamp"] + (["op_sel"] if e["op_sel"] else []) + ["wait_exp"]
    vals = _values(words, {"wait_exp": (0, 7)}, order=order)
    op_sel = vals.get("op_sel", (False,) * 4)
    return Inst(e["name"], "VINTERP", opcode, 8, ops, clamp="clamp" in vals, neg=tuple(neg), op_sel=op_sel,
                extra={"wait_exp": vals.get("wait_exp", 0)})


def _reg(tok: str, col: int) -> Operand:
    m = re.fullmatch(r"v(\d+)|v\[(\d+):\2\]", tok)
    if not m or int(m[1] or m[2]) > 255:
        raise PixelError(f"expected a VGPR, got {tok!r}", col)
    return _vgpr(int(m[1] or m[2]))


def _flags(words, allowed) -> set:
    out = set()
    for w, c in words:
        if w not in allowed or w in out:
            raise PixelError(f"invalid operand {w!r}", c)
        out.add(w)
    return out


def _values(words, ranges: dict, order: list | None = None) -> dict:
    """name:value words (and bare clamp / op_sel:[...]), each once, in `order` when given (LLVM's)."""
    out: dict = {}
    last = -1
    for w, c in words:
        m = _WORD.match(w)
        name = m[1] if m else w.split(":")[0]
        if order is not None:
            if name not in order or order.index(name) <= last:
                raise PixelError(f"invalid operand {w!r}", c)
            last = order.index(name)
        if name in out:
            raise PixelError(f"duplicate {name}", c)
        if name == "clamp" and w == "clamp":
            out[name] = True
        elif name == "op_sel":
            m2 = re.fullmatch(r"op_sel:\[([01]),([01]),([01]),([01])\]", w)
            if not m2:
                raise PixelError("op_sel needs 4 values", c)
            out[name] = tuple(x == "1" for x in m2.groups())
        elif name in ranges and m and m[2] is not None and m[2].isdigit():
            lo, hi = ranges[name]
            if not lo <= int(m[2]) <= hi:
                raise PixelError(f"{name} out of range", c)
            out[name] = int(m[2])
        else:
            raise PixelError(f"invalid operand {w!r}", c)
    return out
