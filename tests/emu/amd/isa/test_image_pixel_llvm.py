"""Image instructions (gfx11 MIMG, gfx12 VIMAGE/VSAMPLE) and the pixel-shader formats (EXP, LDSDIR/
VDSDIR, VINTERP) against llvm-mc-19, both ways (both_ways.py), on random words of every opcode and field
(corpus.image_corpus / pixel_corpus: registers near v255 so that LLVM's fall-back to the default image
variant is hit, stray bits LLVM ignores or refuses); the image assembler's checks; the emulator refuses
images, exports and LDS-direct loads by name."""
from __future__ import annotations

import numpy as np
import pytest

from gputwin.emu.amd.isa import image
from gputwin.emu.amd.isa.asm import assembler
from gputwin.emu.amd.isa.decode import decoder
from gputwin.emu.amd.isa.disasm import inst_text
from gputwin.errors import IllegalInstruction

from . import both_ways
from .corpus import image_corpus, pixel_corpus
from .oracle import require_llvm

CASES = [(arch, kind) for kind in ("image", "pixel") for arch in ("gfx1100", "gfx1200")]


@pytest.fixture(scope="module", params=CASES, ids=[f"{a}-{k}" for a, k in CASES])
def split(request):
    """(arch, kind, {word: LLVM text} LLVM decodes cleanly, [words LLVM refuses])."""
    arch, kind = request.param
    words = image_corpus(arch) if kind == "image" else pixel_corpus()
    return (arch, kind, *both_ways.split(arch, words))


def test_corpus_reaches_every_opcode_and_format(split):
    arch, kind, good, bad = split
    insts = [decoder(arch).decode(w) for w in good]
    if kind == "pixel":
        assert {i.encoding for i in insts} == {"EXP", "VINTERP", "LDSDIR" if arch == "gfx1100" else "VDSDIR"}
        assert len(good) > 800 and len(bad) > 100
        return
    names = {i.op for i in insts}
    assert names >= {op.name for entries in image.ops(arch).values() for op in entries.values()} - {
        "image_bvh_intersect_ray", "image_bvh64_intersect_ray"}
    assert len(good) > 1000 and len(bad) > 100
    # some words print the default variant (the re-sized VDATA would run past v255)
    assert any(i.operands["vdata"].count != image.data_dwords(image.info(arch, i).gather, i.extra["dmask"],
                                                               i.extra.get("d16", 0), i.extra.get("tfe", 0))
               for i in insts if "bvh" not in i.op)


def test_disassembly_matches_llvm_mc_text_and_size_exactly(split):
    arch, _, good, _ = split
    bad = both_ways.disassembly_mismatches(arch, good)
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:20])


def test_words_llvm_refuses_are_refused(split):
    arch, _, _, bad = split
    accepted = both_ways.accepted_of(arch, bad)
    assert not accepted, f"{len(accepted)} accepted, e.g. {accepted[:10]}"


def test_assembly_matches_llvm_mc_bytes_and_text(split):
    """LLVM does not assemble all it prints (an image default variant whose VDATA does not fit DMASK,
    invalid_target_N exports): what it refuses is refused, the rest assembles to its bytes."""
    arch, kind, good, _ = split
    bad = both_ways.assembly_mismatches(arch, list(good.values()), 500 if kind == "image" else 300)
    assert not bad, f"{len(bad)} mismatches, e.g.\n" + "\n".join(bad[:20])


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


@pytest.mark.parametrize("text, encoding", [
    ("image_sample v[0:3], v[1:2], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_2D", "MIMG"),
    ("exp mrt0 v1, off, off, off done", "EXP"),
    ("lds_param_load v1, attr0.x wait_vdst:0", "LDSDIR")])
def test_emulator_refuses_images_exports_and_lds_direct_loads_naming_them(text, encoding):
    from tests.emu.amd.test_executor import execute
    with pytest.raises(IllegalInstruction, match=rf"{text.split()[0]} \({encoding}\) is not modelled"):
        execute(text + "\ns_endpgm", 1, np.zeros(1, np.uint32))
