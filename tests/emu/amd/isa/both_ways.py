"""Checking a corpus of words against llvm-mc-19 both ways (shared by the image and pixel-format tests):
words LLVM decodes print and size exactly and re-encode to themselves, words it refuses are refused, its
text assembles to its bytes (what it refuses to assemble is refused) and `gputwin asm` prints its lines."""
from __future__ import annotations

import io
import re

from gputwin.emu.amd.isa.asm import assembler
from gputwin.emu.amd.isa.decode import decoder
from gputwin.emu.amd.isa.disasm import inst_text
from gputwin.emu.amd.isa.encode import encoder
from gputwin.emu.amd.isa.tool import asm as tool_asm
from gputwin.errors import IllegalInstruction

from .oracle import encoding_bytes, llvm_oracle, require_llvm


def split(arch: str, words) -> tuple[dict[bytes, str], list[bytes]]:
    """({word: LLVM's text} for the words LLVM decodes cleanly, [words it refuses])."""
    require_llvm()
    dis = llvm_oracle.Disassembler(arch)
    good, bad = {}, []
    for w in words:
        size, text = dis.dis(w + bytes(8))
        if size == len(w) and "/*" not in text and "Warning" not in text:
            good[w] = text
        elif not size:
            bad.append(w)
    return good, bad


def disassembly_mismatches(arch: str, good: dict[bytes, str]) -> list[str]:
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
            bad.append(f"{w.hex()}: llvm {text!r} ours {got!r} ({inst.size} bytes, re-encoded {enc.encode(inst).hex()})")
    return bad


def accepted_of(arch: str, refused: list[bytes]) -> list[str]:
    """The words LLVM refuses that the strict decoder accepts."""
    out = []
    for w in refused:
        try:
            out.append(f"{w.hex()}: {inst_text(decoder(arch).decode(w), arch)}")
        except IllegalInstruction:
            pass
    return out


def assembly_mismatches(arch: str, texts: list[str], min_kept: int) -> list[str]:
    """LLVM does not assemble all it prints: what it refuses must be refused, what it assembles must give
    its bytes, and `gputwin asm` must print its lines."""
    _, mc = require_llvm()
    texts = sorted(set(texts))
    out, err = mc(texts, arch, disassemble=False)
    failed = {int(m.group(1)) for m in re.finditer(r"<stdin>:(\d+):\d+: error", err)}
    kept = [t for i, t in enumerate(texts, 1) if i not in failed]
    assert len(kept) == len(out) and len(kept) > min_kept
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
    buf = io.StringIO()
    assert tool_asm("\n".join(kept), arch, buf, io.StringIO()) == 0
    printed = buf.getvalue().splitlines()[1:]
    bad += [f"printed {got!r}, llvm-mc {want!r}" for got, want in zip(printed, out) if got != want]
    return bad
