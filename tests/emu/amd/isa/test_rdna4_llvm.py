"""RDNA4 against llvm-mc-19 -mcpu=gfx1201, both directions: generated words for every gfx12 table entry
(random registers, constants, literals, modifiers, DPP, cache policy) that LLVM decodes cleanly must
decode to LLVM's size and print text-exactly as it prints them; LLVM's text must assemble to LLVM's bytes.
gfx1201 runs on gfx1200's table (isa/table.py SAME_TABLE), so this also checks that the two agree."""
from __future__ import annotations

import collections
import re

import pytest

from gputwin.emu.amd.isa.asm import assembler
from gputwin.emu.amd.isa.decode import decode
from gputwin.emu.amd.isa.disasm import inst_text

from .corpus import corpus
from .oracle import encoding_bytes, llvm_oracle, require_llvm

ARCH = "gfx1201"
CHUNK = 6000
@pytest.fixture(scope="module")
def valid():
    """{bytes: in-process LLVM text} for corpus words LLVM decodes cleanly, cut to LLVM's size."""
    require_llvm()
    dis = llvm_oracle.Disassembler(ARCH)
    out = {}
    for w in corpus(ARCH, per_op=3, seed=12):
        size, text = dis.dis(w + bytes(8))
        if size and "/*" not in text and "Warning" not in text:
            out.setdefault((w + bytes(8))[:size], text)
    return out


def test_corpus_covers_every_gfx12_format(valid):
    assert len(valid) >= 3000
    encs = collections.Counter(decode(w, ARCH).encoding for w in valid)
    for enc in ("SOP1", "SOP2", "SOPK", "SOPC", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD",
                "VOP3P", "VOPD", "DS", "FLAT", "GLOBAL", "SCRATCH", "MUBUF"):
        assert encs[enc] > 0, enc
    insts = [decode(w, ARCH) for w in valid]
    assert sum(1 for i in insts if i.dpp is not None) > 200
    assert sum(1 for i in insts if i.extra.get("th") or i.extra.get("scope")) > 200   # gfx12 cache policy


def test_gfx1201_disassembly_matches_llvm_mc_text_exactly(valid):
    _, mc = require_llvm()
    words = list(valid)
    bad = []
    for start in range(0, len(words), CHUNK):
        chunk = words[start:start + CHUNK]
        out, err = mc([",".join(f"{b:#04x}" for b in w) for w in chunk], ARCH, disassemble=True)
        want = [ln.split(";")[0].strip() for ln in out]
        assert len(want) == len(chunk), f"llvm-mc rejected corpus words: {err[:500]}"
        for w, text in zip(chunk, want):
            inst = decode(w, ARCH)
            got = inst_text(inst, ARCH)
            if got != text or inst.size != len(w):
                bad.append(f"{w.hex()}: llvm {text!r} ours {got!r} ({inst.size} bytes)")
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:20])


def test_gfx1201_assembly_matches_llvm_mc_bytes_exactly(valid):
    _, mc = require_llvm()
    texts = list(valid.values())
    asm = assembler(ARCH)
    bad, checked = [], 0
    for start in range(0, len(texts), CHUNK):
        chunk = texts[start:start + CHUNK]
        out, err = mc(chunk, ARCH, disassemble=False)
        failed = {int(m.group(1)) for m in re.finditer(r"<stdin>:(\d+):\d+: error", err)}
        kept = [t for i, t in enumerate(chunk, 1) if i not in failed]
        assert len(kept) == len(out)
        for text, line in zip(kept, out):
            want = encoding_bytes(line)
            try:
                got = asm.assemble(text)
            except ValueError as e:
                got = str(e).encode()
            checked += 1
            if got != want:
                bad.append(f"{text!r}: llvm {want.hex()} ours {got.hex() if len(got) <= 16 else got!r}")
    assert checked >= 2500
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:20])
