"""LLVM 19 as the oracle for the ISA tests: loads tools/llvm_oracle.py (shared with the table generator)
and what a test does when LLVM is absent (tests/oracles.py: skip, or fail under GPUTWIN_REQUIRE_ORACLES=1)."""
from __future__ import annotations

import importlib.util
import pathlib

from tests.oracles import missing


_PATH = pathlib.Path(__file__).resolve().parents[4] / "tools" / "llvm_oracle.py"
_spec = importlib.util.spec_from_file_location("llvm_oracle", _PATH)
llvm_oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(llvm_oracle)


def require_llvm():
    """(Disassembler, mc), else skip or fail (tests/oracles.py): the in-process disassembler filters candidates, llvm-mc judges."""
    if not llvm_oracle.have_llvm_mc() or llvm_oracle.find_libllvm() is None:
        missing(["llvm-mc-19", "libLLVM-19"], "as the reference for encodings")
    return llvm_oracle.Disassembler("gfx1100"), llvm_oracle.mc


def encoding_bytes(line: str) -> bytes:
    """The bytes of an llvm-mc `; encoding: [0x..,...]` comment."""
    inner = line.split("encoding: [", 1)[1].split("]", 1)[0]
    return bytes(int(x, 16) for x in inner.split(","))
