"""Assembling image instructions (gfx11 MIMG, gfx12 VIMAGE/VSAMPLE) with llvm-mc-19's checks:

    image_sample v[4:7], [v1, v2], s[8:15], s[12:15] dmask:0xf dim:SQ_RSRC_IMG_2D a16

VDATA must have the dwords DMASK, D16 and TFE ask for (image.data_dwords), the address the dwords of
the opcode's variant for DIM and A16 (a plain range, or on gfx11 8 VGPRs where 5-7 are needed; a
bracketed list is NSA: one VGPR per address, the last taking the rest when there are more than the
format has fields); `dim:` is required (`dim:2D` or `dim:SQ_RSRC_IMG_2D`); atomics take DMASK 0x1, 0x3
or 0xf, gather4 one bit, MSAA loads an MSAA dim. Errors are asm_mods.Fail (line column attached by
asm.py)."""
from __future__ import annotations

from . import image, sopp_imm
from .asm_mods import Fail, cache_policy
from .asm_operands import OperandError, parse_operand
from .image_formats import DIMS
from .inst import Inst, Operand
from .table import Table

_FLAGS = {"MIMG": ("unorm", "glc", "slc", "dlc", "r128", "a16", "tfe", "lwe", "d16"),
          "VIMAGE": ("r128", "a16", "tfe", "d16"),
          "VSAMPLE": ("unorm", "r128", "a16", "tfe", "lwe", "d16")}


class _CpolInfo:
    """What asm_mods.cache_policy needs of an instruction: its name and base mnemonic."""

    def __init__(self, name: str):
        self.name = self.op = name


def _split_operands(rest: str, col: int) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    from .asm import split_top
    pieces = [(t.strip(), c + len(t) - len(t.lstrip())) for t, c in split_top(rest, ",", col)]
    last, lcol = pieces[-1]
    words = [(w, c) for w, c in split_top(last, " ", lcol) if w]
    if not words:
        raise Fail("missing operand", lcol)
    return pieces[:-1] + [words[0]], words[1:]


def _vgprs(tok: str, col: int) -> list[Operand]:
    """An address: one VGPR range, or a bracketed list of them."""
    inner = tok[1:-1] if tok.startswith("[") and tok.endswith("]") else None
    out = []
    for t in (inner.split(",") if inner is not None else [tok]):
        p = _reg(t.strip(), col)
        if p.kind != "vgpr":
            raise Fail("expected a VGPR address", col)
        out.append(p)
    return out


def _reg(tok: str, col: int) -> Operand:
    try:
        p = parse_operand(tok)
    except OperandError as e:
        raise Fail(str(e), col + e.offset) from None
    if p.kind not in ("vgpr", "sgpr") or p.neg or p.abs or p.half:
        raise Fail(f"expected a register, got {tok!r}", col)
    return Operand(p.kind, p.index, p.count)


def parse(arch: str, table: Table, cands: list[image.ImageOp], rest: str, col: int) -> Inst:
    """One image instruction's operands and modifiers (after the mnemonic) -> Inst."""
    op0 = cands[0]
    ops, words = _split_operands(rest, col)
    want = 4 if op0.sampler else 3
    if len(ops) != want:
        raise Fail(f"{op0.name} takes {want} operands", ops[-1][1] if ops else col)
    vdata = _reg(*ops[0])
    addrs = _vgprs(*ops[1])
    srsrc = _reg(*ops[2])
    if vdata.kind != "vgpr":
        raise Fail("expected VDATA VGPRs", ops[0][1])
    if srsrc.kind != "sgpr" or srsrc.count != (4 if op0.bvh else 8):
        raise Fail(f"expected {4 if op0.bvh else 8} SGPRs", ops[2][1])
    operands = {"vdata": vdata, "srsrc": srsrc}
    if op0.sampler:
        ssamp = _reg(*ops[3])
        if ssamp.kind != "sgpr" or ssamp.count != 4:
            raise Fail("expected 4 SGPRs", ops[3][1])
        operands["ssamp"] = ssamp
    enc = op0.enc
    mods = _modifiers(words, enc, op0, col)
    gfx12 = enc != "MIMG"
    nsa = len(addrs) > 1 or gfx12
    if gfx12 and len(addrs) == 1 and addrs[0].count > 1 and not op0.bvh:
        raise Fail("gfx12 addresses are single VGPRs", ops[1][1])
    op = next((c for c in cands if c.nsa == nsa), None)
    if op is None:
        raise Fail(f"{op0.name} has no such address form", ops[1][1])
    extra = {k: int(v) for k, v in mods.items() if k in ("dim", "dmask", "unorm", "r128", "a16", "d16", "tfe", "lwe")}
    _check(op, vdata, addrs, mods, ops)
    for i, a in enumerate(addrs):
        operands[f"vaddr{i}"] = a
    kw = {}
    if enc == "MIMG":
        extra["nsa"] = int(nsa)
        kw = {n: bool(mods.get(n)) for n in ("glc", "slc", "dlc")}
    else:
        th, scope = mods.get("th"), mods.get("scope")
        extra["th"], extra["scope"] = cache_policy(table, _CpolInfo(op.name), th and th[0], scope and scope[0],
                                                   (th or scope or (None, col))[1])
    return Inst(op.name, enc, op.opcode, 12 if nsa else 8, operands, extra=extra, **kw)


def _modifiers(words, enc: str, op: image.ImageOp, col: int) -> dict:
    out: dict = {}
    flags = _FLAGS[enc]
    for w, c in words:
        name, _, val = w.partition(":")
        if name in out or name[2:] in out and name.startswith("no"):
            raise Fail(f"duplicate modifier {name!r}", c)
        if name == "dmask" and val:
            try:
                out["dmask"] = sopp_imm.parse_int(val)
            except sopp_imm.ImmError as e:
                raise Fail(str(e), c) from None
            if not 0 <= out["dmask"] < 16:
                raise Fail("dmask out of range", c)
        elif name == "dim" and val and not op.bvh:
            key = val.removeprefix("SQ_RSRC_IMG_")
            if key not in DIMS:
                raise Fail("invalid dim value", c)
            out["dim"] = DIMS.index(key)
        elif name in ("th", "scope") and val and enc != "MIMG":
            out[name] = (val, c)
        elif name == "noa16" and not val:
            out["a16"] = False
        elif name in flags and not val and (not op.bvh or name == "a16"):
            out[name] = True
        else:
            raise Fail(f"invalid operand for instruction: {w!r}", c)
    if "dim" not in out and not op.bvh:
        raise Fail("missing dim operand", col)
    if out.get("d16") and not op.d16:
        raise Fail(f"{op.name} has no d16", col)
    return out


def _check(op: image.ImageOp, vdata: Operand, addrs: list[Operand], mods: dict, ops) -> None:
    """LLVM's size and DMASK checks (AMDGPUAsmParser::validateMIMG*)."""
    col = ops[1][1]
    a16 = bool(mods.get("a16"))
    if op.bvh:
        layout = tuple(a.count for a in addrs)
        if layout != op.bvh_layout[int(a16)]:
            raise Fail("image address size does not match a16", col)
        if vdata.count != op.vd0:
            raise Fail("invalid operand for instruction", ops[0][1])
        return
    dmask, dim = mods.get("dmask", 0), mods["dim"]
    if "msaa" in op.name and DIMS[dim] not in ("2D_MSAA", "2D_MSAA_ARRAY"):
        raise Fail("invalid dim; must be MSAA type", col)
    vd = image.data_dwords(op.gather, dmask, bool(mods.get("d16")), bool(mods.get("tfe")))
    if vdata.count != vd:
        raise Fail("image data size does not match dmask, d16 and tfe", ops[0][1])
    if not op.asm_data >> (dmask * 4 + 2 * bool(mods.get("d16")) + bool(mods.get("tfe"))) & 1:
        raise Fail("invalid operand for instruction", ops[0][1])
    want = image.addr_dwords(op, dim, a16)
    if not want:
        raise Fail("image address size does not match dim and a16", col)
    if op.nsa:
        layout = tuple(a.count for a in addrs)
        if layout != image.nsa_layout(op.enc, want):
            raise Fail("image address size does not match dim and a16", col)
    elif not (addrs[0].count == want or addrs[0].count == 8 and 5 <= want <= 7):
        raise Fail("image address size does not match dim and a16", col)
    if "atomic" in op.name and dmask not in (1, 3, 15):
        raise Fail("invalid atomic image dmask", col)
    if op.gather and dmask not in (1, 2, 4, 8):
        raise Fail("invalid image_gather dmask: only one bit must be set", col)
