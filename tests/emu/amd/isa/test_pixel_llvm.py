"""EXP, LDSDIR (gfx11) / VDSDIR (gfx12) and VINTERP against llvm-mc-19, both directions: random words of
each format (every field, stray bits) that LLVM decodes must decode to LLVM's size and text and encode
back to themselves; words LLVM refuses must be refused; LLVM's text must assemble to LLVM's bytes and
`gputwin asm` must print llvm-mc's line. The emulator refuses EXP and the LDS-direct loads by name."""
from __future__ import annotations

import io
import random
import re

import numpy as np
import pytest

from gputwin.emu.amd.isa.asm import assembler
from gputwin.emu.amd.isa.decode import decoder
from gputwin.emu.amd.isa.disasm import inst_text
from gputwin.emu.amd.isa.encode import encoder
from gputwin.emu.amd.isa.pixel import DSDIR, EXP, VINTERP
from gputwin.emu.amd.isa.tool import asm as tool_asm
from gputwin.errors import IllegalInstruction

from .oracle import encoding_bytes, llvm_oracle, require_llvm

ARCHES = ("gfx1100", "gfx1200")


def _corpus(seed: int) -> list[bytes]:
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


@pytest.fixture(scope="module", params=ARCHES)
def split(request):
    require_llvm()
    arch = request.param
    dis = llvm_oracle.Disassembler(arch)
    good, bad = {}, []
    for w in _corpus(7):
        size, text = dis.dis(w + bytes(8))
        if size == len(w) and "/*" not in text:
            good[w] = text
        elif not size:
            bad.append(w)
    return arch, good, bad


def test_corpus_has_every_format(split):
    arch, good, bad = split
    encs = {decoder(arch).decode(w).encoding for w in good}
    assert encs == {"EXP", "VINTERP", "LDSDIR" if arch == "gfx1100" else "VDSDIR"}
    assert len(good) > 800 and len(bad) > 100


def test_disassembly_matches_llvm_mc_exactly(split):
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
        if inst_text(inst, arch) != text or inst.size != len(w) or enc.encode(inst) != w:
            bad.append(f"{w.hex()}: llvm {text!r} ours {inst_text(inst, arch)!r} re-encoded {enc.encode(inst).hex()}")
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:20])


def test_words_llvm_refuses_are_refused(split):
    arch, _, bad = split
    accepted = []
    for w in bad:
        try:
            accepted.append(f"{w.hex()}: {inst_text(decoder(arch).decode(w), arch)}")
        except IllegalInstruction:
            pass
    assert not accepted, f"{len(accepted)} accepted, e.g. {accepted[:10]}"


def test_assembly_matches_llvm_mc_bytes_and_text(split):
    arch, good, _ = split
    _, mc = require_llvm()
    texts = sorted(set(good.values()))
    out, err = mc(texts, arch, disassemble=False)
    failed = {int(m.group(1)) for m in re.finditer(r"<stdin>:(\d+):\d+: error", err)}
    kept = [t for i, t in enumerate(texts, 1) if i not in failed]
    assert len(kept) == len(out) and len(kept) > 300   # LLVM refuses the invalid_target_N it prints
    a = assembler(arch)
    bad = []
    for text, line in zip(kept, out):
        try:
            got = a.assemble(text)
        except ValueError as e:
            got = str(e).encode()
        if got != encoding_bytes(line):
            bad.append(f"{text}: llvm {encoding_bytes(line).hex()} ours {got!r}")
    for i in sorted(failed):
        try:
            bad.append(f"{texts[i - 1]}: llvm refuses, ours {a.assemble(texts[i - 1]).hex()}")
        except ValueError:
            pass
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:20])
    buf = io.StringIO()
    assert tool_asm("\n".join(kept), arch, buf, io.StringIO()) == 0
    assert buf.getvalue().splitlines()[1:] == out


@pytest.mark.parametrize("text, encoding", [("exp mrt0 v1, off, off, off done", "EXP"),
                                            ("lds_param_load v1, attr0.x wait_vdst:0", "LDSDIR")])
def test_emulator_refuses_exports_and_lds_direct_loads_naming_them(text, encoding):
    from tests.emu.amd.test_executor import execute
    with pytest.raises(IllegalInstruction, match=rf"{text.split()[0]} \({encoding}\) is not modelled"):
        execute(text + "\ns_endpgm", 1, np.zeros(1, np.uint32))
