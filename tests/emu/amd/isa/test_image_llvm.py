"""Image instructions (gfx11 MIMG, gfx12 VIMAGE/VSAMPLE) against llvm-mc-19, both directions.

Random words for every image opcode (random DIM, DMASK, A16/D16/TFE/LWE and cache bits, NSA, registers up
to v255 so that LLVM's fall-back to the default variant is hit, and stray bits LLVM ignores or refuses):
- every word LLVM decodes must decode to LLVM's size, print LLVM's text exactly and encode back to itself;
- every word LLVM refuses must be refused (IllegalInstruction) by the strict decoder;
- LLVM's text of those words must assemble to LLVM's bytes, and `gputwin asm` prints llvm-mc's line.
The emulator does not run image instructions: it raises IllegalInstruction naming them."""
from __future__ import annotations

import io
import random
import re

import numpy as np
import pytest

from gputwin.emu.amd.isa import image
from gputwin.emu.amd.isa.asm import assembler
from gputwin.emu.amd.isa.decode import decoder
from gputwin.emu.amd.isa.disasm import inst_text
from gputwin.emu.amd.isa.encode import encoder
from gputwin.emu.amd.isa.image_formats import FORMATS, VADDR_FIELDS
from gputwin.emu.amd.isa.tool import asm as tool_asm
from gputwin.errors import IllegalInstruction

from .oracle import encoding_bytes, llvm_oracle, require_llvm

ARCHES = ("gfx1100", "gfx1200")
PER_OP = 24


def _word(rng: random.Random, op: image.ImageOp) -> bytes:
    fmt = FORMATS[op.enc]
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


def _corpus(arch: str) -> list[bytes]:
    rng = random.Random(20251202)
    return [_word(rng, op) for entries in image.ops(arch).values() for op in entries.values()
            for _ in range(PER_OP)]


@pytest.fixture(scope="module", params=ARCHES)
def split(request):
    """(arch, {word: LLVM text} LLVM decodes cleanly, [words LLVM refuses])."""
    require_llvm()
    arch = request.param
    dis = llvm_oracle.Disassembler(arch)
    good, bad = {}, []
    for w in _corpus(arch):
        size, text = dis.dis(w + bytes(8))
        if size == len(w) and "/*" not in text and "Warning" not in text:
            good[w] = text
        elif not size:
            bad.append(w)
    return arch, good, bad


def test_corpus_reaches_every_image_opcode_and_the_fall_back(split):
    arch, good, bad = split
    names = {inst_text(decoder(arch).decode(w), arch).split()[0] for w in good}
    assert names >= {op.name for entries in image.ops(arch).values() for op in entries.values()} - {
        "image_bvh_intersect_ray", "image_bvh64_intersect_ray"}
    assert len(good) > 1000 and len(bad) > 100
    # some words print the default variant (the re-sized VDATA would run past v255)
    dec = decoder(arch)
    assert any(dec.decode(w).operands["vdata"].count != image.data_dwords(
        image.info(arch, dec.decode(w)).gather, dec.decode(w).extra["dmask"], dec.decode(w).extra.get("d16", 0),
        dec.decode(w).extra.get("tfe", 0)) for w in good if "bvh" not in good[w])


def test_disassembly_matches_llvm_mc_text_and_size_exactly(split):
    arch, good, _ = split
    _, mc = require_llvm()
    words = list(good)
    out, err = mc([",".join(f"{b:#04x}" for b in w) for w in words], arch, disassemble=True)
    want = [ln.split(";")[0].strip() for ln in out]
    assert len(want) == len(words), err[:500]
    dec, enc = decoder(arch), encoder(arch)
    bad = []
    for w, text in zip(words, want):
        inst = dec.decode(w)
        got = inst_text(inst, arch)
        if got != text or inst.size != len(w) or enc.encode(inst) != w:
            bad.append(f"{w.hex()}: llvm {text!r} ours {got!r} ({inst.size} bytes, re-encoded "
                       f"{enc.encode(inst).hex()})")
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:20])


def test_words_llvm_refuses_are_refused(split):
    arch, _, bad = split
    accepted = []
    for w in bad:
        try:
            decoder(arch).decode(w)
            accepted.append(w.hex())
        except IllegalInstruction:
            pass
    assert not accepted, f"{len(accepted)} accepted, e.g. {accepted[:10]}"


def test_assembly_matches_llvm_mc_bytes_and_text(split):
    """LLVM does not assemble all it prints (a default variant whose VDATA does not fit DMASK): what it
    refuses we refuse, what it assembles we assemble to its bytes and print as it does."""
    arch, good, _ = split
    _, mc = require_llvm()
    texts = sorted(set(good.values()))
    out, err = mc(texts, arch, disassemble=False)
    failed = {int(m.group(1)) for m in re.finditer(r"<stdin>:(\d+):\d+: error", err)}
    kept = [t for i, t in enumerate(texts, 1) if i not in failed]
    assert len(kept) == len(out) and len(kept) > 500 and len(failed) > 50
    a = assembler(arch)
    bad = []
    for text, line in zip(kept, out):
        want = encoding_bytes(line)
        try:
            got = a.assemble(text)
        except ValueError as e:
            got = str(e).encode()
        if got != want:
            bad.append(f"{text}: llvm {want.hex()} ours {got.hex() if isinstance(got, bytes) else got}")
    for i in sorted(failed):
        try:
            bad.append(f"{texts[i - 1]}: llvm refuses, ours {a.assemble(texts[i - 1]).hex()}")
        except ValueError:
            pass
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:20])
    buf = io.StringIO()
    assert tool_asm("\n".join(kept[:400]), arch, buf, io.StringIO()) == 0
    assert buf.getvalue().splitlines()[1:] == out[:400] or \
        [ln.strip() for ln in buf.getvalue().splitlines()[1:]] == [ln.strip() for ln in out[:400]]


BAD_LINES = [   # each refused by llvm-mc-19 too (checked below)
    "image_load v[0:1], v1, s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_1D",             # data size vs dmask
    "image_load v0, v[1:2], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_1D",             # address size vs dim
    "image_load v0, v1, s[0:7] dmask:0x1",                                      # dim is required
    "image_atomic_add v[0:2], v1, s[0:7] dmask:0x7 dim:SQ_RSRC_IMG_1D",       # atomic dmask
    "image_gather4 v[0:3], v1, s[0:7], s[8:11] dmask:0x3 dim:SQ_RSRC_IMG_1D",  # gather4: one dmask bit
    "image_atomic_add v0, v1, s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_1D d16",       # no d16
    "image_load v0, v1, s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_9D",                 # no such dim
]


def test_bad_lines_are_refused_like_llvm_mc():
    _, mc = require_llvm()
    out, err = mc(BAD_LINES, "gfx1100", disassemble=False)
    assert out == [] and err.count("error:") == len(BAD_LINES)
    a = assembler("gfx1100")
    for line in BAD_LINES:
        with pytest.raises(ValueError, match="line 1"):
            a.assemble(line)


def test_emulator_refuses_image_instructions_naming_them():
    from tests.emu.amd.test_executor import execute
    with pytest.raises(IllegalInstruction, match=r"image_sample \(MIMG\) is not modelled"):
        execute("image_sample v[0:3], v[1:2], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_2D\ns_endpgm", 1,
                np.zeros(1, np.uint32))
