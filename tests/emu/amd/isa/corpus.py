"""Random instruction words for every table entry (registers, constants, literals, modifiers, DPP), used
by the differential tests against LLVM and by the round-trip property tests."""
from __future__ import annotations

import random

from gputwin.emu.amd.isa import image
from gputwin.emu.amd.isa.image_formats import FORMATS as IMAGE_FORMATS, VADDR_FIELDS
from gputwin.emu.amd.isa.pixel import DSDIR, EXP, VINTERP
from gputwin.emu.amd.isa.rdna3_formats import FORMATS
from gputwin.emu.amd.isa.table import OpInfo, load

DPP16_CTRLS = (list(range(0x100)) + list(range(0x101, 0x110)) + list(range(0x111, 0x120))
               + list(range(0x121, 0x130)) + [0x140, 0x141] + list(range(0x150, 0x170)))
SPECIALS = [106, 107, 124, 125, 126, 127, 235, 236, 237, 238, 253] + list(range(108, 124))


def _sgpr(rng: random.Random, count: int, special: bool = True) -> int:
    align = 1 if count == 1 else 2 if count == 2 else 4
    if special and rng.random() < 0.15:
        if count == 1:
            return rng.choice([106, 107, 124, 125, 126, 127] + list(range(108, 124)))
        if count == 2:
            return rng.choice([106, 126] + list(range(108, 124, 2)))
        return 108 + rng.randrange(0, 16 - count + 1, align)
    return rng.randrange(0, 106 - count + 1, align)


def _src(rng: random.Random, allowed: str, count: int, fmt: str) -> tuple[int, int | None]:
    kinds = [k for k in allowed if k != "l" or fmt not in ()]
    k = rng.choice(kinds) if kinds else "v"
    if k == "v":
        return 256 + rng.randrange(0, 256 - count + 1), None
    if k == "w":   # 16-bit operands of e32 forms reach only v0..v127
        return 256 + rng.randrange(0, 128), None
    if k == "s":
        v = _sgpr(rng, count)
        return (rng.choice([235, 236, 237, 238, 253]) if count == 1 and rng.random() < 0.05 else v), None
    if k == "c":
        return rng.choice(list(range(128, 209)) + list(range(240, 249))), None
    return 255, rng.choice([rng.getrandbits(32), rng.getrandbits(16), rng.randrange(100), 0x3F800000, 0x3C00])


def random_word(info: OpInfo, rng: random.Random) -> bytes:
    """A random encoding of this table entry, meant to be valid: registers in range and aligned,
    source kinds the entry accepts, modifiers it has."""
    fmt = info.fmt
    vals: dict[str, int] = {}
    lit: int | None = None
    if info.enc == "VOPD":
        raise ValueError("VOPD words come from random_vopd")
    if info.fmt.name == "FLAT":
        vals["seg"] = {"FLAT": 0, "SCRATCH": 1, "GLOBAL": 2}[info.enc]
    vals["op"] = info.opcode
    glc = False
    mods = dict(info.mods)
    for name, mask in mods.items():
        if name in fmt.fields and name != "op_sel_hi_default":
            vals[name] = rng.getrandbits(8) & mask if rng.random() < 0.5 else 0
    if "glc" in vals:
        glc = bool(vals["glc"])
    slots = info.rtn_slots if glc and info.rtn_slots else info.slots
    for s in slots:
        if s.field.startswith("=") or s.field not in fmt.fields:
            if s.kind == "lit":
                lit = rng.getrandbits(32) if rng.random() < 0.7 else rng.randrange(65)
            continue
        if s.kind in ("src", "ssrc", "src16"):
            v, l = _src(rng, s.allowed or "v", s.count, fmt.name)
            if s.kind == "src16" and v >= 256:
                v = 256 + rng.randrange(256)
            if v == 255:
                if lit is None:
                    lit = l
            vals[s.field] = v
        elif s.kind in ("v", "v16"):
            top = 128 if s.allowed == "w" else 256
            vals[s.field] = rng.randrange(0, top - s.count + 1)
        elif s.kind == "s":
            scale = {"sbase": 2, "srsrc": 4}.get(s.field, 1)
            if scale > 1:   # sbase of s_buffer_load is a 4-aligned quad: an even field value
                step = 2 if s.field == "sbase" and s.count == 4 else 1
                vals[s.field] = rng.randrange(0, 106 // scale - 2, step)
            else:
                vals[s.field] = _sgpr(rng, s.count, special=False)
        elif s.field in fmt.fields:
            vals[s.field] = rng.getrandbits(fmt.fields[s.field][1])
    # Offsets and other plain fields.
    for name in ("offset", "offset0", "offset1", "simm16", "format"):
        if name in fmt.fields and name not in vals and (info.slots or fmt.name in ("SOPP", "SOPK")):
            width = fmt.fields[name][1]
            vals[name] = rng.getrandbits(width) if rng.random() < 0.7 else 0
    if fmt.name == "FLAT":
        if info.enc != "FLAT" and rng.random() < 0.3:
            vals["saddr"] = 124
        if info.enc == "FLAT":
            vals["offset"] &= 0xFFF
            vals.pop("saddr", None)
            vals["saddr"] = 124
    if fmt.name in ("MUBUF", "MTBUF") and info.slots and rng.random() < 0.3:
        vals["soffset"] = rng.choice([124, 128, 129, 140] if fmt.fields["soffset"][1] == 8 else [124])
    if fmt.name == "SMEM" and info.slots and rng.random() < 0.4:
        vals["soffset"] = 124
    dpp = None
    if info.dpp and lit is None and rng.random() < 0.3 and fmt.name != "VOP3P":
        kind = rng.choice(info.dpp)
        src0 = vals.get("src0", 256)
        src0_slot = next(sl for sl in info.slots if sl.field == "src0")
        top = 128 if "w" in src0_slot.allowed else 256
        vreg = src0 - 256 if 256 <= src0 < 256 + top else rng.randrange(top)
        if kind == "dpp16":
            negabs = rng.getrandbits(4) & mods.get("dpp_negabs", 0) if fmt.name in ("VOP1", "VOP2", "VOPC") else 0
            d = (vreg | rng.choice(DPP16_CTRLS) << 8 | rng.getrandbits(2) << 18 | negabs << 20
                 | rng.getrandbits(4) << 24 | rng.getrandbits(4) << 28)
            vals["src0"] = 250
        else:
            d = vreg | rng.getrandbits(24) << 8
            vals["src0"] = rng.choice([233, 234])
        dpp = d
        for sl in info.slots:   # gfx11 VOP3 DPP: src1 is a VGPR
            if sl.field == "src1" and "v" in sl.allowed and fmt.name in ("VOP3", "VOP3SD"):
                vals["src1"] = 256 + rng.randrange(256)
    word = fmt.pack(**vals).to_bytes(fmt.size, "little")
    if dpp is not None:
        word += dpp.to_bytes(4, "little")
    elif lit is not None:
        word += lit.to_bytes(4, "little")
    return word


def random_vopd(arch: str, rng: random.Random) -> bytes:
    t = load(arch)
    fmt = FORMATS["VOPD"]
    x = rng.choice(list(t.by_enc["VOPDX"].values()))
    y = rng.choice(list(t.by_enc["VOPDY"].values()))
    lit = rng.getrandbits(32) if x.literal or y.literal else None
    vals = {"opx": x.opcode, "opy": y.opcode}
    # Operands of the two halves must use different VGPR banks (reg % 4) and VDSTs of opposite parity.
    banks = rng.sample(range(4), 2)
    bank1 = rng.sample(range(4), 2)
    vals["vdstx"] = rng.randrange(0, 256)
    vals["vdsty"] = rng.randrange(0, 128)
    for half, info, src0, src1, b0, b1 in (("x", x, "srcx0", "vsrcx1", banks[0], bank1[0]),
                                           ("y", y, "srcy0", "vsrcy1", banks[1], bank1[1])):
        kinds = "vvvsc" + ("" if lit is not None and False else "l")
        k = rng.choice(kinds)
        if k == "v":
            vals[src0] = 256 + rng.randrange(0, 64) * 4 + b0
        elif k == "s":
            vals[src0] = rng.randrange(0, 106)
        elif k == "c":
            vals[src0] = rng.choice(list(range(128, 209)) + list(range(240, 249)))
        else:
            vals[src0] = 255
            lit = lit if lit is not None else rng.getrandbits(32)
        if any(s.field == src1 for s in info.slots):
            vals[src1] = rng.randrange(0, 64) * 4 + b1
    word = fmt.pack(**vals).to_bytes(8, "little")
    return word + (lit.to_bytes(4, "little") if lit is not None else b"")


def corpus(arch: str = "gfx1100", per_op: int = 12, seed: int = 1) -> list[bytes]:
    rng = random.Random(seed)
    t = load(arch)
    words = []
    for enc, ops in sorted(t.by_enc.items()):
        if enc.startswith("VOPD"):
            continue
        for _, info in sorted(ops.items()):
            for _ in range(per_op):
                words.append(random_word(info, rng))
    words += [random_vopd(arch, rng) for _ in range(per_op * 40)]
    return words


def _image_word(rng: random.Random, op: image.ImageOp) -> bytes:
    fmt = IMAGE_FORMATS[op.enc]
    v = {"op": op.opcode, "dim": rng.randrange(8), "dmask": rng.choice((1, 3, 7, 15, rng.randrange(16))),
         "vdata": rng.choice((rng.randrange(256), rng.randrange(240, 256)))}
    for name in ("unorm", "r128", "a16", "d16", "tfe", "lwe", "glc", "slc", "dlc"):
        if name in fmt.fields and rng.random() < 0.25:
            v[name] = 1
    nfields = VADDR_FIELDS[op.enc] if op.nsa else 1
    for i in range(nfields):
        v[f"vaddr{i}"] = rng.choice((rng.randrange(256), rng.randrange(248, 256), 0))
    if op.enc == "MIMG":
        v.update(nsa=int(op.nsa), srsrc=rng.randrange(27), ssamp=rng.randrange(27) if op.sampler else 0)
    else:
        v.update(rsrc=rng.randrange(0, 104, 4), th=rng.randrange(8), scope=rng.randrange(4))
        if op.enc == "VSAMPLE" and op.sampler:
            v["samp"] = rng.randrange(0, 104, 4)
        for i in range(len(op.va0), nfields):   # gfx12 refuses address fields past the default variant's
            v[f"vaddr{i}"] = 0
    word = fmt.pack(**v) | op.need
    if rng.random() < 0.1:   # a stray bit (not in the format's identifier): LLVM ignores some, refuses others
        word |= 1 << rng.choice([b for b in range(96 if op.nsa else 64) if not 26 <= b < 32])
    return word.to_bytes(12 if op.nsa else 8, "little")


def image_corpus(arch: str, per_op: int = 24) -> list[bytes]:
    """Image words (MIMG / VIMAGE / VSAMPLE) for every opcode: random DIM, DMASK, flags, NSA, registers
    near v255 (LLVM's fall-back to the default variant), stray bits."""
    rng = random.Random(20251202)
    return [_image_word(rng, op) for entries in image.ops(arch).values() for op in entries.values()
            for _ in range(per_op)]


def pixel_corpus(seed: int = 7) -> list[bytes]:
    """EXP, LDSDIR/VDSDIR and VINTERP words: every field random, some stray bits."""
    rng = random.Random(seed)
    out = []
    for _ in range(600):
        src = [rng.choice((rng.randrange(256), 0)) for _ in range(4)]
        out.append(EXP.pack(en=rng.randrange(16), tgt=rng.choice((rng.randrange(64), rng.randrange(23))),
                            done=rng.randrange(2), row=rng.randrange(2), **{f"src{i}": s for i, s in enumerate(src)}))
        out.append(DSDIR.pack(vdst=rng.randrange(256), attrchan=rng.randrange(4), attr=rng.randrange(64),
                              waitvdst=rng.randrange(16), op=rng.randrange(4), waitvsrc=rng.randrange(2)))
        out.append(VINTERP.pack(vdst=rng.randrange(256), waitexp=rng.randrange(8), op_sel=rng.choice((0, rng.randrange(16))),
                                clamp=rng.randrange(2), op=rng.choice((rng.randrange(8), rng.randrange(128))),
                                **{f"src{i}": rng.choice((256 + rng.randrange(256), rng.randrange(512)))
                                   for i in range(3)}, neg=rng.randrange(8)))
    words = []
    for w in out:
        size = 4 if w >> 24 == 0xCE else 8
        if rng.random() < 0.15:   # a stray bit outside the identifier
            w |= 1 << rng.choice([b for b in range(8 * size) if b < 24 or size == 8 and b >= 32])
        words.append(w.to_bytes(size, "little"))
    return words
