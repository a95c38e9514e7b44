"""AMD instruction set: per-architecture tables, decoder, assembler and disassembler (docs/isa.md).

    decode(data, arch="gfx1100", offset=0) -> Inst      decode_all(data, arch) -> [(offset, Inst)]
    assemble(text, arch="gfx1100") -> bytes             disassemble(data, arch) -> [LLVM text per inst]
    encode(inst, arch) -> bytes                         inst_text(inst, arch) -> LLVM text
"""
from .asm import AsmError, assemble
from .decode import decode, decode_all
from .disasm import disassemble, inst_text
from .encode import encode
from .inst import Dpp, Inst, Operand

__all__ = ["decode", "decode_all", "assemble", "disassemble", "encode", "inst_text", "AsmError", "Inst",
           "Operand", "Dpp"]
