"""The coverage gate (issue 12, docs/conformance.md "Corpus"): fixtures/amd/corpus/ holds corpus.cl and
corpus.hip compiled by clang-19 at -O0..-O3 for gfx1100 and gfx1201 (wave32 and wave64) and gfx942
(fixtures/amd/corpus/build.sh).
1. Every instruction of every corpus code object is modelled: decoded with gputwin's decoder and built
   by program.build_handler(strict=True), the rule `gputwin conformance` counts by
   (conformance.code_object_gaps). A failure lists object, mnemonic, reason and count.
2. Every kernel of every object runs (standalone.load_kernel) and matches its numpy reference
   (tests/emu/amd/corpus_refs.py) bit for bit."""
from __future__ import annotations

import functools
import pathlib
import zlib

import numpy as np
import pytest

from gputwin.emu.amd.conformance import code_object_gaps
from gputwin.emu.amd.standalone import Arena, load_kernel
from tests.emu.amd import corpus_refs as refs

CORPUS = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "amd" / "corpus"
OBJECTS = sorted(p.name for p in CORPUS.glob("*.hsaco"))
ARCHES = {"gfx1100": "gfx1100", "gfx1100w64": "gfx1100", "gfx1201": "gfx1201", "gfx1201w64": "gfx1201",
          "gfx942": "gfx942"}

# Instructions the corpus contains that the emulator does not model, each with why it is allowed:
# {(target, mnemonic): reason}. Only unknowable hardware behaviour belongs here. The gate fails on an
# entry that no longer occurs, so the list cannot go stale.
ALLOWED_GAPS: dict[tuple[str, str], str] = {}



def _target(obj: str) -> str:
    return obj.split(".")[1]


@functools.cache
def _gaps(obj: str) -> dict:
    return code_object_gaps((CORPUS / obj).read_bytes(), ARCHES[_target(obj)])


def test_corpus_is_complete_and_modest():
    want = sorted(f"{lang}.{t}.O{o}.hsaco" for lang in ("cl", "hip") for t in ARCHES for o in range(4))
    assert OBJECTS == want, f"expected {{cl,hip}} x {len(ARCHES)} targets x O0..O3, found {OBJECTS}"
    total = sum((CORPUS / o).stat().st_size for o in OBJECTS)
    assert total < 2_000_000, f"corpus code objects total {total} bytes"


@pytest.mark.parametrize("obj", OBJECTS)
def test_every_instruction_is_modelled(obj):
    target = _target(obj)
    gaps = _gaps(obj)
    unexplained = {k: n for k, n in gaps.items() if (target, k[0]) not in ALLOWED_GAPS}
    assert not unexplained, f"{obj}: unmodelled instructions:\n" + "\n".join(
        f"  {m} x{n}: {why}" for (m, why), n in sorted(unexplained.items()))


def test_allowed_gaps_still_occur():
    seen = {(_target(o), m) for o in OBJECTS if any(t == _target(o) for t, _ in ALLOWED_GAPS) for m, _ in _gaps(o)}
    stale = set(ALLOWED_GAPS) - seen
    assert not stale, f"ALLOWED_GAPS entries no longer in the corpus: {sorted(stale)}"


CASES = [(o, k) for o in OBJECTS for k in (refs.CL if o.startswith("cl.") else refs.HIP)]


@pytest.mark.parametrize("obj,name", [pytest.param(o, k, id=f"{o[:-6]}-{k}")
                                      for o, k in CASES])
def test_kernel_matches_numpy(obj, name):
    spec = (refs.CL if obj.startswith("cl.") else refs.HIP)[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))     # same inputs for every object of a kernel
    inp, out0 = spec.inputs(rng), spec.out_init()
    assert inp.size == out0.size == refs.WORDS
    arena = Arena()
    k = load_kernel(arena, (CORPUS / obj).read_bytes(), name)
    block = (32 if k.info.wave32 else 64) if spec.one_wave else refs.N
    out_va, in_va = arena.alloc(4 * refs.WORDS, out0), arena.alloc(4 * refs.WORDS, inp)
    k(out_va, in_va, refs.N, grid=(1, 1, 1), block=(block, 1, 1))
    spec.check(inp, arena.array(out_va, np.uint32, refs.WORDS))
