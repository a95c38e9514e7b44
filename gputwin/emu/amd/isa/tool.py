"""The `gputwin asm` / `gputwin disasm` commands' work, in llvm-mc's own output format so results can be
compared with llvm-mc-19 line by line."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import TextIO

from gputwin.errors import IllegalInstruction

from .asm import AsmError, assembler
from .decode import decoder
from .disasm import printer
from .inst import Inst

_BYTE = re.compile(r"0x[0-9a-fA-F]{1,2}|\d+")


def encoding_comment(code: bytes) -> str:
    return "; encoding: [" + ",".join(f"{b:#04x}" for b in code) + "]"


def show_encoding_line(text: str, code: bytes) -> str:
    """One line as llvm-mc -show-encoding prints it (comment at column 40 after the tab)."""
    return "\t" + text + " " * max(40 - len(text), 1) + encoding_comment(code)


def as_written(inst: Inst, written: Inst) -> Inst:
    """The decoded instruction with the spellings llvm-mc -show-encoding keeps from its input though the bytes
    are alike: an SMEM offset written as 0x0 or offset:0x0, a memory SADDR written as null (with the 32-bit
    VADDR that goes with it)."""
    if "smem_form" in written.extra:
        inst = replace(inst, extra={**inst.extra, "smem_form": written.extra["smem_form"]})
    sa = written.operands.get("saddr")
    if sa is not None and sa.index == 124 and "saddr" not in inst.operands:
        ops = {**inst.operands, "saddr": sa}
        if "vaddr" in written.operands:
            ops["vaddr"] = written.operands["vaddr"]
        inst = replace(inst, operands=ops)
    return inst


def _report(errors: list[AsmError], source: str, filename: str, err: TextIO) -> None:
    lines = source.splitlines()
    for e in sorted(errors, key=lambda e: (e.line, e.column)):
        print(f"{filename}:{e.line}:{e.column}: error: {e.message}\n{lines[e.line - 1]}\n{' ' * (e.column - 1)}^",
              file=err)


def asm_object(source: str, arch: str, err: TextIO, wave64: bool = False,
               filename: str = "<stdin>") -> bytes | None:
    """The code as llvm-mc -filetype=obj writes it (an ELF relocatable object with .text and the labels),
    or None after reporting errors."""
    from gputwin.compiler.elf import relocatable_object
    errors: list[AsmError] = []
    labels: dict[str, int] = {}
    items = assembler(arch, wave64).assemble_items(source, errors, labels)
    _report(errors, source, filename, err)
    return None if errors else relocatable_object(b"".join(code for _, _, code, _ in items), arch, labels)


def asm(source: str, arch: str, out: TextIO, err: TextIO, wave64: bool = False, filename: str = "<stdin>") -> int:
    """Assemble; print each instruction as `<canonical asm> ; encoding: [...]`. Exit status 1 on errors
    (each reported as <file>:line:column: error: ..., the file being `filename`), like llvm-mc."""
    a = assembler(arch, wave64)
    pr = printer(arch, wave64, asm_style=True)   # the arch's printer (gfx942/gfx12 print memory ops their way)
    errors: list[AsmError] = []
    items = a.assemble_items(source, errors)
    _report(errors, source, filename, err)
    print("\t.text", file=out)
    for _, _, code, written in items:
        if written is not None and written.encoding in ("MIMG", "VIMAGE", "VSAMPLE"):
            # llvm-mc prints image operands as parsed, also words its own disassembler refuses (a default
            # variant running past v255) or prints otherwise (8 VGPRs written where 5-7 are needed)
            print(show_encoding_line(pr.text(written), code), file=out)
            continue
        off = 0
        while off < len(code):
            try:
                inst = decoder(arch, wave64).decode(code, off)
                if off == 0 and written is not None:
                    inst = as_written(inst, written)
                text = pr.text(inst)
            except IllegalInstruction:   # .long data that is no instruction
                inst, text = None, f".long {int.from_bytes(code[off:off + 4], 'little'):#010x}"
            size = inst.size if inst else 4
            print(show_encoding_line(text, code[off:off + size]), file=out)
            off += size
    return 1 if errors else 0


def _disasm_blob(code: bytes, arch: str, base: int, out: TextIO, err: TextIO, show_encoding: bool,
                 where: str, wave64: bool) -> int:
    dec, pr = decoder(arch, wave64), printer(arch, wave64)
    status, off = 0, 0
    while off < len(code):
        try:
            inst = dec.decode(code, off)
            text = pr.text(inst)
        except IllegalInstruction as e:
            word = int.from_bytes(code[off:off + 4].ljust(4, b"\0"), "little")
            print(f"{where}: error: {e.reason.split(' at offset')[0]} at offset {base + off:#x}", file=err)
            print(f"\t.long {word:#010x}", file=out)
            status, off = 1, off + 4
            continue
        chunk = code[off:off + inst.size]
        print(show_encoding_line(text, chunk) if show_encoding else "\t" + text, file=out)
        off += inst.size
    return status


def disasm(source: str, arch: str, out: TextIO, err: TextIO, show_encoding: bool = False,
           wave64: bool = False, filename: str = "<stdin>") -> int:
    """Input: lines of bytes as llvm-mc -disassemble reads them (0x01,0x05 0x00 ...; '#' or ';' comments).
    Undecodable words print as `.long 0x...` with an error naming the offset; exit status 1 then."""
    print("\t.text", file=out)
    status, base = 0, 0
    for n, line in enumerate(source.splitlines(), 1):
        body = re.split(r"[#;]", line, maxsplit=1)[0]
        tokens = [t for t in re.split(r"[\s,\[\]]+", body) if t]
        bad = next((t for t in tokens if not _BYTE.fullmatch(t) or int(t, 0) > 255), None)
        if bad is not None:
            print(f"{filename}:{n}: error: {bad!r} is not a byte", file=err)
            status = 1
            continue
        code = bytes(int(t, 0) for t in tokens)
        status |= _disasm_blob(code, arch, base, out, err, show_encoding, f"{filename}:{n}", wave64)
        base += len(code)
    return status


def disasm_elf(image: bytes, arch: str | None, out: TextIO, err: TextIO, show_encoding: bool = False) -> int:
    """Every kernel of an HSA code object: a `name:` label, then its instructions (wave32 or wave64 as
    the kernel descriptor says). `arch` None: the processor the ELF header names, as llvm-objdump does
    (a generic target's code decodes as its first member's)."""
    from gputwin.abi.code_object import GENERIC_MEMBERS, CodeObject

    co = CodeObject.parse(image)
    arch = arch or GENERIC_MEMBERS.get(co.arch, (co.arch,))[0]
    sizes = {s.name: s.size for s in co.symbols if s.type == 2}   # STT_FUNC
    status = 0
    print("\t.text", file=out)
    for name, k in co.kernels.items():
        seg = next((s for s in co.segments if s.vaddr <= k.entry_offset < s.vaddr + s.filesz), None)
        if seg is None:
            print(f"{name}: entry {k.entry_offset:#x} is outside the loaded segments", file=err)
            status = 1
            continue
        size = sizes.get(name) or seg.vaddr + seg.filesz - k.entry_offset
        start = seg.offset + k.entry_offset - seg.vaddr
        print(f"{name}:", file=out)
        status |= _disasm_blob(image[start:start + size], arch, k.entry_offset, out, err, show_encoding, name,
                               not k.wave32)
    return status
