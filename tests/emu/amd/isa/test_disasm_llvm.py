"""Differential test of the disassembler against llvm-mc-19 -disassemble: a generated corpus of over
20,000 instruction words covering every gfx1100 table entry (random registers, constants, literals,
modifiers, DPP16/DPP8, VOPD pairs) must print text-exactly as LLVM prints it."""
from __future__ import annotations

import collections

import pytest

from gputwin.emu.amd.isa.decode import decode
from gputwin.emu.amd.isa.disasm import disassemble, inst_text

from .corpus import corpus
from .oracle import llvm_oracle, require_llvm

CHUNK = 6000   # lines per llvm-mc process


# gfx1100 (RDNA3) gets the full corpus; gfx1200 (RDNA4) a smaller one to keep the suite fast.
PER_OP = {"gfx1100": 16, "gfx1200": 8}


@pytest.fixture(scope="module", params=sorted(PER_OP))
def arch(request):
    return request.param


@pytest.fixture(scope="module")
def valid_words(arch):
    """Corpus words that LLVM decodes cleanly (no invalid-operand comments), with LLVM's sizes."""
    require_llvm()
    dis = llvm_oracle.Disassembler(arch)
    words = []
    for w in corpus(arch, per_op=PER_OP[arch], seed=7):
        size, text = dis.dis(w)
        if size == len(w) and "/*" not in text and "Warning" not in text:
            words.append(w)
    return words


def test_corpus_is_large_and_covers_every_encoding(arch, valid_words):
    assert len(valid_words) >= (20000 if arch == "gfx1100" else 10000)
    encs = collections.Counter(decode(w, arch).encoding for w in valid_words)
    for enc in ("SOP1", "SOP2", "SOPK", "SOPC", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD",
                "VOP3P", "VOPD", "DS", "FLAT", "GLOBAL", "SCRATCH", "MUBUF") + (("MTBUF",) if arch == "gfx1100" else ()):
        assert encs[enc] > 0, enc
    assert sum(1 for w in valid_words if decode(w, arch).dpp is not None) > len(valid_words) // 20


def test_disassembly_matches_llvm_mc_text_exactly(arch, valid_words):
    _, mc = require_llvm()
    mismatches = []
    for start in range(0, len(valid_words), CHUNK):
        chunk = valid_words[start:start + CHUNK]
        lines = [",".join(f"{b:#04x}" for b in w) for w in chunk]
        out, err = mc(lines, arch, disassemble=True)
        want = [ln.split(";")[0].strip() for ln in out]
        assert len(want) == len(chunk), f"llvm-mc rejected corpus words: {err[:500]}"
        for w, text in zip(chunk, want):
            got = inst_text(decode(w, arch), arch)
            if got != text:
                mismatches.append(f"{w.hex()}: llvm {text!r} ours {got!r}")
    assert not mismatches, f"{len(mismatches)} mismatches, e.g.\n" + "\n".join(mismatches[:20])


def test_disassemble_whole_blob_equals_per_instruction_text(arch, valid_words):
    blob = b"".join(valid_words[:3000])
    assert disassemble(blob, arch) == [inst_text(decode(w, arch), arch) for w in valid_words[:3000]]


def test_wave64_lane_masks_match_llvm_mc(arch, valid_words):
    """Wave64: lane-mask operands print as SGPR pairs / vcc (llvm-mc -mattr=+wavefrontsize64)."""
    _, mc = require_llvm()
    dis64 = llvm_oracle.Disassembler(arch, wave64=True)
    words = []
    for w in valid_words:
        size, text = dis64.dis(w)
        if size == len(w) and "/*" not in text and "Warning" not in text:
            words.append(w)
    masked = [w for w in words if any(s.w64 for s in _slots(decode(w, arch), arch))]
    assert len(masked) > 500
    sample = (masked + words[::10])[:CHUNK]
    out, err = mc([",".join(f"{b:#04x}" for b in w) for w in sample], arch, disassemble=True, wave64=True)
    want = [ln.split(";")[0].strip() for ln in out]
    assert len(want) == len(sample), err[:500]
    got = [inst_text(decode(w, arch, wave64=True), arch, wave64=True) for w in sample]
    bad = [f"{w.hex()}: llvm {a!r} ours {b!r}" for w, a, b in zip(sample, want, got) if a != b]
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:20])
    assert sum("vcc" in t and "vcc_lo" not in t for t in got) > 150


def _slots(inst, arch):
    from gputwin.emu.amd.isa.disasm import printer
    if inst.encoding == "VOPD":
        return ()
    return printer(arch).info(inst).slots
