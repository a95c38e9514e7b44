"""Evidence for the conformance report (conformance.py): which table entries occur in the committed
clang code objects that the tests run, and which are named by an emulator test.

Both are read from the repository checkout (fixtures/, tests/); outside one they find nothing, and the
report says so.
"""
from __future__ import annotations

import functools
import pathlib
import re

from gputwin.emu.amd.isa.decode import decoder

ROOT = pathlib.Path(__file__).resolve().parents[3]

# Committed code objects per report arch -> the test that runs their kernels and checks them bit for bit.
# A pattern may match objects of several archs (fixtures/drivers holds gfx1201 and gfx942 builds too):
# each object counts only for the arch its ELF header names (gfx11-generic objects run on gfx1100;
# gfx1200 shares gfx1201's objects, see OBJECT_ARCH).
CORPUS = "tests/emu/amd/test_corpus.py"     # the coverage-gate corpus (docs/conformance.md "Corpus")
FP8 = "tests/emu/amd/test_gfx12_fp8.py"      # the 8-bit float conversion builtins (fixtures/amd/fp8/)
FIXTURES = {
    "gfx1100": (("fixtures/amd/cl/*.hsaco", "tests/emu/amd/test_standalone.py"),
                ("fixtures/drivers/*.hsaco", "tests/drivers/amd/test_device.py"),
                ("fixtures/amd/corpus/*.gfx1100*.hsaco", CORPUS)),
    "gfx1201": (("fixtures/amd/cl/gfx1201/*.hsaco", "tests/emu/amd/test_gfx12_standalone.py"),
                ("fixtures/amd/corpus/*.gfx1201.*.hsaco", CORPUS), ("fixtures/amd/fp8/*.gfx1201.hsaco", FP8)),
    "gfx1200": (("fixtures/amd/cl/gfx1201/*.hsaco", "tests/emu/amd/test_gfx12_standalone.py"),
                ("fixtures/amd/fp8/*.gfx1201.hsaco", FP8)),
    "gfx942": (("fixtures/amd/cl/gfx942/*.hsaco", "tests/emu/amd/test_gfx942_kernels.py"),
               ("fixtures/amd/corpus/*.gfx942.*.hsaco", CORPUS), ("fixtures/amd/fp8/*.gfx942.hsaco", FP8)),
}
OBJECT_ARCH = {"gfx1200": "gfx1201"}   # report arch -> the processor its fixture objects are built for
HARDWARE_FIXTURES = 0      # results recorded on real GPUs: none exist yet (docs/conformance.md)

# Emulator tests that execute instructions (tests/emu/amd/isa/ only checks encodings and text).
UNIT_TEST_DIRS = ("tests/emu",)
UNIT_TEST_SKIP = ("tests/emu/amd/isa/", "tests/emu/amd/test_conformance.py")
# A test file counts for an arch when it names it; a file naming none of these runs gfx1100 (the default).
ARCH_MARKERS = {"gfx942": ("gfx942",), "gfx1201": ("gfx1200", "gfx1201", "gfx12"),
                "gfx1200": ("gfx1200", "gfx1201", "gfx12")}
_WORD = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_SUFFIX = re.compile(r"_(e32|e64|dpp|sdwa|vop3)$")


def table_key(inst):
    """(table encoding, opcode) of a decoded instruction, as the table files it."""
    return ("VOP3" if inst.encoding == "VOP3SD" else inst.encoding), inst.opcode


def _kernel_code(co, image: bytes):
    """(code bytes, wave64) per kernel of a parsed code object."""
    sizes = {s.name: s.size for s in co.symbols if s.type == 2}   # STT_FUNC
    for name, k in co.kernels.items():
        seg = next((s for s in co.segments if s.vaddr <= k.entry_offset < s.vaddr + s.filesz), None)
        if seg is None:
            continue
        size = sizes.get(name) or seg.vaddr + seg.filesz - k.entry_offset
        start = seg.offset + k.entry_offset - seg.vaddr
        yield image[start:start + size], not k.wave32


@functools.cache
def fixture_keys(arch: str) -> tuple[frozenset, tuple[str, ...], tuple[str, ...]]:
    """(table keys seen, fixture files read, problems) for `arch`: every kernel of each committed code
    object decoded with gputwin's decoder. VOPD halves are keyed ("VOPDX"/"VOPDY", opcode)."""
    from gputwin.abi.code_object import CodeObject
    keys, files, problems = set(), [], []
    for pattern, runner in FIXTURES.get(arch, ()):
        if not (ROOT / runner).is_file():
            problems.append(f"{pattern}: its test {runner} is missing, not counted")
            continue
        for path in sorted(ROOT.glob(pattern)):
            image = path.read_bytes()
            try:
                co = CodeObject.parse(image)
            except ValueError as e:
                problems.append(f"{path.name}: {e}")
                continue
            if not co.runs_on(OBJECT_ARCH.get(arch, arch)):
                continue                      # another arch's object: counted there
            files.append(str(path.relative_to(ROOT)))
            for code, wave64 in _kernel_code(co, image):
                dec, off = decoder(arch, wave64), 0
                while off < len(code):
                    try:
                        inst = dec.decode(code, off)
                    except Exception as e:   # noqa: BLE001 - padding or data after the code: note it, go on
                        problems.append(f"{path.name}+{off:#x}: {e}")
                        off += 4
                        continue
                    if inst.encoding == "VOPD":
                        keys.update((("VOPDX", inst.vopd[0].opcode), ("VOPDY", inst.vopd[1].opcode)))
                    else:
                        keys.add(table_key(inst))
                    off += inst.size
    return frozenset(keys), tuple(files), tuple(problems)


def strip_suffix(name: str) -> str:
    """The mnemonic without its encoding suffix (v_add_f32_e32 -> v_add_f32)."""
    return _SUFFIX.sub("", name)


def _names(text: str) -> set[str]:
    words = set(_WORD.findall(text))
    return words | {strip_suffix(w) for w in words}


@functools.cache
def unit_test_names(arch: str) -> tuple[frozenset, tuple[str, ...]]:
    """(mnemonics named, test files read) by the emulator tests that run on `arch`."""
    markers = ARCH_MARKERS.get(arch, ())
    others = {m for a, ms in ARCH_MARKERS.items() if a != arch for m in ms} - set(markers)
    names, files = set(), []
    for d in UNIT_TEST_DIRS:
        for path in sorted((ROOT / d).rglob("test_*.py")):
            rel = str(path.relative_to(ROOT))
            if rel.startswith(UNIT_TEST_SKIP):
                continue
            text = path.read_text(errors="replace")
            mine = any(m in text for m in markers) if markers else not any(m in text for m in others) \
                or arch in text
            if mine:
                names |= _names(text)
                files.append(rel)
    return frozenset(names), tuple(files)
