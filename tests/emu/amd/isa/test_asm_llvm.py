"""Differential test of the assembler against llvm-mc-19 -show-encoding: LLVM's own text for a corpus of
over 20,000 generated instructions (every gfx1100 entry, random operands, modifiers, DPP, literals) must
assemble to exactly LLVM's bytes and print back exactly as llvm-mc prints it."""
from __future__ import annotations

import re

import pytest

from gputwin.emu.amd.isa.asm import assembler
from gputwin.emu.amd.isa.decode import decode
from gputwin.emu.amd.isa.disasm import printer

from .corpus import corpus
from .oracle import encoding_bytes, llvm_oracle, require_llvm

CHUNK = 6000


PER_OP = {"gfx1100": 16, "gfx1200": 8}   # RDNA4 gets a smaller corpus to keep the suite fast


@pytest.fixture(scope="module", params=sorted(PER_OP))
def arch(request):
    return request.param


@pytest.fixture(scope="module")
def llvm_pairs(arch):
    """(LLVM disassembly text, llvm-mc's canonical text, llvm-mc's bytes) for the corpus; the few texts
    llvm-mc itself cannot re-assemble are left out (they are listed in its stderr)."""
    _, mc = require_llvm()
    dis = llvm_oracle.Disassembler(arch)
    texts = []
    for w in corpus(arch, per_op=PER_OP[arch], seed=11):
        size, text = dis.dis(w)
        if size == len(w) and "/*" not in text and "Warning" not in text:
            texts.append(text)
    pairs = []
    for start in range(0, len(texts), CHUNK):
        chunk = texts[start:start + CHUNK]
        out, err = mc(chunk, arch, disassemble=False)
        failed = {int(m.group(1)) for m in re.finditer(r"<stdin>:(\d+):\d+: error", err)}
        kept = [t for i, t in enumerate(chunk, 1) if i not in failed]
        assert len(kept) == len(out)
        pairs += [(t, ln.split(";")[0].strip(), encoding_bytes(ln)) for t, ln in zip(kept, out)]
    return pairs


def test_corpus_is_large(arch, llvm_pairs):
    assert len(llvm_pairs) >= (20000 if arch == "gfx1100" else 10000)
    assert len({decode(b, arch).encoding for _, _, b in llvm_pairs}) >= (19 if arch == "gfx1100" else 18)


def test_assembly_matches_llvm_mc_bytes_exactly(arch, llvm_pairs):
    asm = assembler(arch)
    bad = []
    for text, _, want in llvm_pairs:
        try:
            got = asm.assemble(text)
        except ValueError as e:
            got = str(e).encode()
        if got != want:
            bad.append(f"{text!r}: llvm {want.hex()} ours {got.hex() if len(got) <= 16 else got!r}")
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:20])


def test_printed_assembly_matches_llvm_mc_show_encoding_text(arch, llvm_pairs):
    pr = printer(arch, asm_style=True)
    bad = [f"llvm {want!r} ours {pr.text(decode(b, arch))!r}" for _, want, b in llvm_pairs
           if pr.text(decode(b, arch)) != want]
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:20])


def test_wave64_assembly_matches_llvm_mc(arch, llvm_pairs):
    """Wave64 (-mattr=+wavefrontsize64): lane masks as SGPR pairs / vcc, WMMA with 4-VGPR accumulators."""
    dis, mc = require_llvm()
    dis64 = llvm_oracle.Disassembler(arch, wave64=True)
    texts = []
    for _, _, b in llvm_pairs:
        if decode(b, arch).encoding in ("VOP2", "VOPC", "VOP3", "VOP3SD", "VOP3P", "GLOBAL"):
            size, text = dis64.dis(b)
            if size == len(b) and "/*" not in text and "Warning" not in text:
                texts.append(text)
    texts = texts[:CHUNK]
    out, err = mc(texts, arch, disassemble=False, wave64=True)
    failed = {int(m.group(1)) for m in re.finditer(r"<stdin>:(\d+):\d+: error", err)}
    kept = [t for i, t in enumerate(texts, 1) if i not in failed]
    assert len(kept) == len(out) and len(kept) > 3000
    asm = assembler(arch, wave64=True)
    pr = printer(arch, asm_style=True, wave64=True)
    bad = []
    for text, line in zip(kept, out):
        want = encoding_bytes(line)
        got = asm.assemble(text)
        if got != want or pr.text(decode(got, arch, wave64=True)) != line.split(";")[0].strip():
            bad.append(f"{text!r}: llvm {want.hex()} ours {got.hex()}")
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:20])
    assert sum(" vcc," in t or t.endswith(" vcc") for t in kept) > 50
