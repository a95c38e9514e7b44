"""Image instructions (gfx11 MIMG, gfx12 VIMAGE/VSAMPLE): bytes <-> Inst <-> LLVM's text.

No compute kernel uses them and the emulator does not run them (it raises IllegalInstruction naming
them); the assembler and disassembler handle them exactly as llvm-mc-19 does (docs/isa.md, "Image
instructions"). The per-opcode facts come from tables/<arch>_image.json (tools/gen_isa_image.py).

How LLVM sizes the operands, reproduced here: the word decodes as the opcode's default variant (`vd0`
VDATA dwords, address layout `va0`), whose registers must fit below v256. Then VDATA is re-sized to
what DMASK asks (4 for gather4 / MSAA loads), halved (rounding up) for D16, plus one for TFE, and the
address to the opcode's size for DIM and A16 (`addr`); when no variant has both sizes, or the wider
register would run past v255, LLVM keeps the default variant (and a variant may be wider than asked:
gfx11 atomics asked for 4 VDATA dwords get 5). Plain (non-NSA) MIMG has one address
range; NSA forms one VGPR per address, the last field taking the rest as a range (partial NSA).

Inst: `encoding` MIMG / VIMAGE / VSAMPLE, `operands` vdata, vaddr0.. (one per printed address
operand), srsrc, ssamp; `glc/slc/dlc` (gfx11), `extra`: dim dmask unorm r128 a16 d16 tfe lwe nsa (gfx11)
th scope (gfx12), and `rest`: bits LLVM ignores (kept so that encoding is exact).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from .image_formats import DIMS, FORMATS, VADDR_FIELDS, format_of
from .inst import Inst, Operand
from .table import format_facts, load

ENCODINGS = ("MIMG", "VIMAGE", "VSAMPLE")
_FLAGS = ("unorm", "r128", "a16", "d16", "tfe", "lwe")


class ImageError(Exception):
    """An image word LLVM does not decode, or text it does not assemble (the callers wrap it)."""


@dataclass(frozen=True)
class ImageOp:
    name: str
    enc: str              # MIMG / VIMAGE / VSAMPLE
    nsa: bool             # this entry's address form (always True on gfx12)
    opcode: int
    sampler: bool
    bvh: bool
    gather: bool          # 4 result dwords whatever DMASK says
    d16: bool
    vd0: int
    va0: tuple[int, ...]
    va0_zero: tuple[int, ...]  # gfx12 VIMAGE: the default's layout when the other address fields are 0
    addr: tuple[int, ...]  # per DIM*2+A16: address dwords (0: no variant)
    vd_map: dict          # VDATA dwords asked for -> the re-sized variant's (gfx11 atomics: 4 -> 5)
    bvh_layout: tuple[tuple[int, ...], ...]
    reject: int
    need: int
    asm_data: int         # bit DMASK*4+D16*2+TFE: the assembler has a variant for it

    @property
    def kind(self) -> str:
        """The cache-policy names it uses (gfx12)."""
        return "atomic" if "atomic" in self.name else "store" if "store" in self.name else "load"


@functools.cache
def _doc(arch: str) -> dict:
    return format_facts(arch, "image", {"encodings": {}})


@functools.cache
def ops(arch: str) -> dict[str, dict[int, ImageOp]]:
    """variant (MIMG, MIMG_NSA, VIMAGE, VSAMPLE) -> opcode -> ImageOp."""
    doc = _doc(arch)
    out: dict[str, dict[int, ImageOp]] = {}
    for key, entries in doc["encodings"].items():
        enc = key.removesuffix("_NSA")
        nsa = enc != "MIMG" or key.endswith("_NSA")
        out[key] = {int(op): ImageOp(e["name"], enc, nsa, int(op), e["sampler"], e["bvh"], e["gather"], e["d16"],
                                     e["vd0"], tuple(e["va0"]), tuple(e.get("va0_zero", ())), tuple(e["addr"]), {int(k): v for k, v in e["vd_map"].items()},
                                     tuple(tuple(x) for x in e.get("bvh_layout", ())), e["reject"], e["need"],
                                     e.get("asm_data", 0))
                    for op, e in entries.items()}
    return out


@functools.cache
def by_name(arch: str) -> dict[str, list[ImageOp]]:
    """Mnemonic as written (canonical or an alias LLVM takes, the table's `aliases`) -> entries."""
    out: dict[str, list[ImageOp]] = {}
    for entries in ops(arch).values():
        for op in entries.values():
            out.setdefault(op.name, []).append(op)
    for alias, canon in _doc(arch).get("aliases", {}).items():
        out.setdefault(alias, out[canon])
    return out


def data_dwords(gather: bool, dmask: int, d16: bool, tfe: bool) -> int:
    """VDATA dwords LLVM asks for: one per DMASK bit (4 for gather4/MSAA), halved for D16, +1 for TFE."""
    n = 4 if gather else max(bin(dmask & 15).count("1"), 1)
    if d16:
        n = (n + 1) // 2
    return n + int(tfe)


def nsa_layout(enc: str, dwords: int) -> tuple[int, ...]:
    """Address operands of an NSA form: one VGPR each; past the fields, the last takes the rest."""
    n = VADDR_FIELDS[enc]
    return (1,) * dwords if dwords <= n else (1,) * (n - 1) + (dwords - n + 1,)


def addr_dwords(op: ImageOp, dim: int, a16: bool) -> int:
    """Address dwords of the variant for DIM/A16 (plain MIMG rounds 13+ up to 16); 0 if none exists."""
    return op.addr[dim * 2 + int(a16)] if op.addr else 0


def default_layout(op: ImageOp, vaddr: tuple[int, ...]) -> tuple[int, ...]:
    """The address layout of the variant the word decodes as first (gfx12 VIMAGE: one address when the
    other address fields are 0)."""
    return op.va0_zero if op.va0_zero and not any(vaddr[1:]) else op.va0


def sizes(op: ImageOp, vdata: int, vaddr: tuple[int, ...], dmask: int, dim: int, a16: bool, d16: bool,
          tfe: bool) -> tuple[int, tuple[int, ...]]:
    """(VDATA dwords, address layout) LLVM prints for these fields (module docstring)."""
    if op.bvh:
        return op.vd0, op.bvh_layout[int(a16)]
    va0 = default_layout(op, vaddr)
    want, va = data_dwords(op.gather, dmask, d16, tfe), addr_dwords(op, dim, a16)
    vd = op.vd_map.get(want)
    if not va or vd is None or (want, va) == (op.vd0, sum(va0)) or vd != op.vd0 and vdata + vd > 256:
        return op.vd0, va0
    layout = nsa_layout(op.enc, va) if op.nsa else (va,)
    if va != sum(va0) and (not op.nsa or va > sum(va0)):
        # LLVM widens the default's last address register (plain: the only one; partial NSA: the last
        # field); a single VGPR has no wider form there
        k = len(va0) - 1 if op.nsa else 0
        if layout[k] == 1 or vaddr[k] + layout[k] > 256:
            return op.vd0, va0
    return vd, layout


def _reg(kind: str, index: int, count: int) -> Operand:
    return Operand(kind, index, count)


def _sgpr(field: str, value: int, count: int, scaled: bool) -> Operand:
    from .decode import _sgpr_ok   # one rule for SGPR tuples (aligned, inside one register group)
    index = value * 4 if scaled else value
    if index == 124:   # LLVM's disassembler prints NULL there (its assembler does not take it)
        return _reg("sgpr", 124, 1)
    if not _sgpr_ok(index, count):
        raise ImageError(f"{field}: SGPR {index} is out of range or misaligned for {count} registers")
    return _reg("sgpr", index, count)


def decode(arch: str, b: bytes) -> Inst:
    """One image instruction at the start of `b`; ImageError if LLVM would not decode it."""
    family = load(arch).family
    d0 = int.from_bytes(b[:4], "little")
    fmt = format_of(family, d0)
    if fmt is None:
        raise ImageError(f"no image format matches word {d0:#010x}")
    nsa = fmt.name != "MIMG" or bool(d0 & 1)
    size = 12 if nsa else 8
    if len(b) < size:
        raise ImageError(f"truncated {fmt.name} instruction")
    w = int.from_bytes(b[:size], "little")
    key = fmt.name + ("_NSA" if fmt.name == "MIMG" and nsa else "")
    op = ops(arch).get(key, {}).get(fmt.get(w, "op"))
    if op is None:
        raise ImageError(f"no {fmt.name} instruction with opcode {fmt.get(w, 'op')}")
    if w & op.reject:
        raise ImageError(f"{op.name} with reserved or unsupported bits {w & op.reject:#x} set")
    if w & op.need != op.need:
        raise ImageError(f"{op.name} without bits {op.need & ~w:#x} it needs")
    f = {name: fmt.get(w, name) for name in fmt.fields if name.startswith("vaddr") or name in
         ("vdata", "dim", "dmask") + _FLAGS}
    nfields = VADDR_FIELDS[fmt.name] if nsa else 1
    vaddr = tuple(f[f"vaddr{i}"] for i in range(nfields))
    # the default variant's registers must exist (LLVM decodes it first)
    default = op.bvh_layout[f.get("a16", 0)] if op.bvh else default_layout(op, vaddr)
    if f["vdata"] + op.vd0 > 256 or any(v + n > 256 for v, n in zip(vaddr, default)):
        raise ImageError(f"{op.name}: a register range runs past v255")
    vd, layout = sizes(op, f["vdata"], vaddr, f["dmask"], f["dim"], bool(f.get("a16")), bool(f.get("d16")),
                       bool(f.get("tfe")))
    operands = {"vdata": _reg("vgpr", f["vdata"], vd)}
    for i, n in enumerate(layout):
        operands[f"vaddr{i}"] = _reg("vgpr", vaddr[i], n)
    rsrc_n = 4 if op.bvh else 8
    if fmt.name == "MIMG":
        operands["srsrc"] = _sgpr("srsrc", fmt.get(w, "srsrc"), rsrc_n, True)
        if op.sampler:
            operands["ssamp"] = _sgpr("ssamp", fmt.get(w, "ssamp"), 4, True)
    else:
        operands["srsrc"] = _sgpr("rsrc", fmt.get(w, "rsrc"), rsrc_n, False)
        if op.sampler:
            operands["ssamp"] = _sgpr("samp", fmt.get(w, "samp"), 4, False)
    extra = {k: v for k, v in f.items() if not k.startswith("vaddr") and k != "vdata"}
    used = {"op", "vdata", "dim", "dmask", "srsrc", "rsrc", "nsa", "glc", "slc", "dlc", "th", "scope", *_FLAGS,
            *(("ssamp", "samp") if op.sampler else ())} | {f"vaddr{i}" for i in range(len(layout))}
    keep = fmt.fields_mask(*(set(fmt.fields) & used)) | fmt.ident_mask()
    rest = w & ~keep & ((1 << (8 * size)) - 1)
    if rest:
        extra["rest"] = rest
    kw = {}
    if fmt.name == "MIMG":
        extra["nsa"] = int(nsa)
        kw = {"glc": bool(fmt.get(w, "glc")), "slc": bool(fmt.get(w, "slc")), "dlc": bool(fmt.get(w, "dlc"))}
    else:
        extra["th"], extra["scope"] = fmt.get(w, "th"), fmt.get(w, "scope")
    return Inst(op.name, fmt.name, op.opcode, size, operands, extra=extra, **kw)


def info(arch: str, inst: Inst) -> ImageOp:
    key = inst.encoding + ("_NSA" if inst.encoding == "MIMG" and inst.extra.get("nsa") else "")
    return ops(arch)[key][inst.opcode]


def encode(arch: str, inst: Inst) -> bytes:
    op = info(arch, inst)
    fmt = FORMATS[inst.encoding]
    x = inst.extra
    vals = {"op": inst.opcode, "vdata": inst.operands["vdata"].index, "dim": x.get("dim", 0),
            "dmask": x.get("dmask", 0)}
    for name in _FLAGS:
        if name in fmt.fields:
            vals[name] = x.get(name, 0)
    i = 0
    while f"vaddr{i}" in inst.operands:
        vals[f"vaddr{i}"] = inst.operands[f"vaddr{i}"].index
        i += 1
    rs = inst.operands["srsrc"].index
    if inst.encoding == "MIMG":
        vals.update(nsa=x.get("nsa", 0), srsrc=rs // 4, glc=int(inst.glc), slc=int(inst.slc), dlc=int(inst.dlc))
        if "ssamp" in inst.operands:
            vals["ssamp"] = inst.operands["ssamp"].index // 4
    else:
        vals.update(rsrc=rs, th=x.get("th", 0), scope=x.get("scope", 0))
        if "ssamp" in inst.operands:
            vals["samp"] = inst.operands["ssamp"].index
    word = fmt.pack(**vals) | op.need | x.get("rest", 0)
    return word.to_bytes(inst.size, "little")


def text(arch: str, inst: Inst, cpol_text) -> str:
    """LLVM's text; `cpol_text(kind, th, scope)` gives gfx12's th:/scope: words."""
    from .disasm import reg_text
    op = info(arch, inst)
    x = inst.extra
    ops_ = inst.operands
    addrs = [reg_text(ops_[f"vaddr{i}"]) for i in range(VADDR_FIELDS[op.enc]) if f"vaddr{i}" in ops_]
    parts = [reg_text(ops_["vdata"]), addrs[0] if len(addrs) == 1 else "[" + ", ".join(addrs) + "]",
             reg_text(ops_["srsrc"])]
    if "ssamp" in ops_:
        parts.append(reg_text(ops_["ssamp"]))
    # gfx11 NSA sampler forms print two spaces after the mnemonic (LLVM's asm string has a leading space)
    out = inst.op + ("  " if op.enc == "MIMG" and op.nsa and op.sampler else " ") + ", ".join(parts)
    mods = []
    if not op.bvh:
        if x.get("dmask"):
            mods.append(f"dmask:{x['dmask']:#x}")
        mods.append(f"dim:SQ_RSRC_IMG_{DIMS[x.get('dim', 0)]}")
        if x.get("unorm"):
            mods.append("unorm")
    if op.enc == "MIMG":
        mods += [n for n in ("glc", "slc", "dlc") if getattr(inst, n)]
    else:
        t = cpol_text(op.kind, x.get("th", 0), x.get("scope", 0))
        if t:
            mods.append(t)
    for name in ("r128", "a16", "tfe", "lwe", "d16"):
        if x.get(name) and not (op.bvh and name == "r128"):
            mods.append(name)
    return out + "".join(" " + m for m in mods)
