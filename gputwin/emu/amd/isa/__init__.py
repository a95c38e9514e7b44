"""AMD instruction set: per-architecture tables, decoder, assembler and disassembler."""
