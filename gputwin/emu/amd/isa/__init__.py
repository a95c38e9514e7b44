"""AMD instruction set: per-architecture tables, decoder, assembler and disassembler (docs/isa.md).

    decode(data, arch="gfx1100", offset=0) -> Inst      decode_all(data, arch) -> [(offset, Inst)]
    assemble(text, arch="gfx1100") -> bytes             disassemble(data, arch) -> [LLVM text per inst]
    encode(inst, arch) -> bytes                         inst_text(inst, arch) -> LLVM text

The decoder loads with the package (the emulator needs it); the assembler, disassembler and encoder load
on first use, so a process that only runs kernels does not pay for them.
"""
import importlib

from .decode import decode, decode_all
from .inst import Dpp, Inst, Operand

_LAZY = {"AsmError": ".asm", "assemble": ".asm", "disassemble": ".disasm", "inst_text": ".disasm",
         "encode": ".encode"}

__all__ = ["decode", "decode_all", "assemble", "disassemble", "encode", "inst_text", "AsmError", "Inst",
           "Operand", "Dpp"]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
