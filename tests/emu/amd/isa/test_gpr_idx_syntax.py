"""gfx942 VGPR indexing instructions (s_set_gpr_idx_on/off/idx/mode) in `gputwin asm` / `gputwin disasm`
against llvm-mc-19 -mcpu=gfx942: the same lines and encodings, the same words decoded, the same
sources refused."""
from __future__ import annotations

import io
import random

import pytest

from gputwin.emu.amd.isa import tool

from .oracle import require_llvm

ARCH = "gfx942"
SOURCES = ["s_set_gpr_idx_on s2, gpr_idx(SRC0)", "s_set_gpr_idx_on s2, gpr_idx()", "s_set_gpr_idx_on s2, 15",
           "s_set_gpr_idx_on m0, gpr_idx(DST,SRC1)", "s_set_gpr_idx_on 5, gpr_idx(SRC2, SRC0)",
           "s_set_gpr_idx_on vcc_hi, 0", "s_set_gpr_idx_on s101, gpr_idx(SRC0,SRC1,SRC2,DST)",
           "s_set_gpr_idx_mode gpr_idx(SRC0,DST)", "s_set_gpr_idx_mode 6", "s_set_gpr_idx_mode gpr_idx()",
           "s_set_gpr_idx_idx s3", "s_set_gpr_idx_off"]
BAD = ["s_set_gpr_idx_on s2, 16", "s_set_gpr_idx_on s2, gpr_idx(SRC0,SRC0)", "s_set_gpr_idx_on s2, gpr_idx(SRC3)",
       "s_set_gpr_idx_mode gpr_idx(DST,DST)", "s_set_gpr_idx_on v2, gpr_idx(SRC0)"]


def test_assembly_matches_llvm_mc():
    _, mc = require_llvm()
    want, err = mc(SOURCES, ARCH, disassemble=False)
    assert not err.strip(), err
    out, gerr = io.StringIO(), io.StringIO()
    assert tool.asm("\n".join(SOURCES) + "\n", ARCH, out, gerr) == 0, gerr.getvalue()
    got = [ln for ln in out.getvalue().splitlines() if ln.strip() and ln.strip() != ".text"]
    assert got == want


@pytest.mark.parametrize("line", BAD)
def test_both_refuse_bad_masks(line):
    _, mc = require_llvm()
    _, err = mc([line], ARCH, disassemble=False)
    assert "error" in err
    assert tool.asm(line + "\n", ARCH, io.StringIO(), io.StringIO()) != 0


def test_disassembly_matches_llvm_mc_for_every_mask_and_random_sources():
    """Every SSRC1 byte (the mask; LLVM names values below 16) with SGPR / M0 / constant sources, and
    s_set_gpr_idx_mode immediates."""
    _, mc = require_llvm()
    rng = random.Random(17)
    words = [bytes([rng.choice([0, 2, 17, 101, 106, 124, 128, 193, 240]), m, 0x11, 0xBF]) for m in range(256)]
    words += [bytes([m & 0xFF, m >> 8, 0x9D, 0xBF]) for m in list(range(20)) + [0xFF, 0x1234, 0xFFFF]]
    lines = [",".join(f"{b:#04x}" for b in w) for w in words]
    want, err = mc(lines, ARCH, disassemble=True)
    assert len(want) == len(words), err
    out, gerr = io.StringIO(), io.StringIO()
    assert tool.disasm("\n".join(lines) + "\n", ARCH, out, gerr, show_encoding=True) == 0, gerr.getvalue()
    got = [ln for ln in out.getvalue().splitlines() if ln.strip() and ln.strip() != ".text"]
    assert got == want
