"""A small reader for NVIDIA cubins (ELF64, e_machine EM_CUDA 190): what a driver needs to launch a kernel.

Facts (public: NVIDIA's cuobjdump -elf output names, and the EIATTR tables of open cubin parsers; checked
against CUDA 13 ptxas output for sm_80 and sm_90 in tests/abi/test_cubin.py):
- e_flags bits 15:8 hold the SM version (0x5a = sm_90); older toolchains kept it in bits 7:0.
- `.nv.info` (global) and `.nv.info.<kernel>` hold EIATTR records: u8 format, u8 attribute, u16 value (NVAL,
  BVAL, HVAL) or size (SVAL, followed by that many bytes). Records used here:
  EIATTR_REGCOUNT 0x2f (global; SVAL u32 symbol index, u32 registers), EIATTR_FRAME_SIZE 0x11,
  EIATTR_MIN_STACK_SIZE 0x12 (global; u32 symbol, u32 bytes), EIATTR_KPARAM_INFO 0x17 (SVAL 12 bytes: u32
  index, u16 ordinal, u16 offset, u32 bits: log-alignment 7:0, space 11:8, cbank 16:12, is-not-cbank 17, size
  31:18), EIATTR_PARAM_CBANK 0x0a (SVAL u32 symbol of .nv.constant0.<kernel>, u16 offset, u16 size),
  EIATTR_CBANK_PARAM_SIZE 0x19 (HVAL), EIATTR_NUM_BARRIERS 0x4c (BVAL; absent: none), EIATTR_MAX_THREADS 0x05
  (SVAL x, y, z), EIATTR_EXIT_INSTR_OFFSETS 0x1c.
- `.text.<kernel>`: the kernel's SASS; `.nv.shared.<kernel>` (NOBITS): its static shared memory, on sm_90 with
  CUDA 12+ including the 1 KiB the hardware reserves per CTA; `.nv.constant0.<kernel>`: constant bank 0 image,
  the parameters at the PARAM_CBANK offset; `.rela.text.<kernel>`: relocations the loader must apply.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

EM_CUDA = 190
SHT_NOBITS = 8
EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 1, 2, 3, 4
EIATTR_MAX_THREADS = 0x05
EIATTR_PARAM_CBANK = 0x0A
EIATTR_FRAME_SIZE = 0x11
EIATTR_MIN_STACK_SIZE = 0x12
EIATTR_KPARAM_INFO = 0x17
EIATTR_CBANK_PARAM_SIZE = 0x19
EIATTR_MAXREG_COUNT = 0x1B
EIATTR_EXIT_INSTR_OFFSETS = 0x1C
EIATTR_REGCOUNT = 0x2F
EIATTR_NUM_BARRIERS = 0x4C


class CubinError(ValueError):
    """A file that is not a cubin this reader understands; the message names what is wrong."""


@dataclass(frozen=True)
class KParam:
    ordinal: int
    offset: int          # within the parameter block (add the PARAM_CBANK offset for constant bank 0)
    size: int
    log_alignment: int


@dataclass
class CubinKernel:
    name: str
    params: tuple[KParam, ...] = ()
    params_size: int = 0              # EIATTR_CBANK_PARAM_SIZE
    param_cbank_offset: int = 0       # where the parameters start in constant bank 0
    registers: int = 0
    barriers: int = 0
    shared_bytes: int = 0             # static, as the .nv.shared section gives it
    frame_bytes: int = 0
    min_stack_bytes: int = 0
    max_threads: tuple[int, int, int] | None = None
    text_offset: int = 0              # file offset of .text.<kernel>
    text_size: int = 0
    constant0: bytes = b""            # the .nv.constant0.<kernel> image (parameters zero)
    relocations: int = 0              # entries in .rela.text.<kernel>
    exit_offsets: tuple[int, ...] = ()


@dataclass
class Cubin:
    arch: str
    kernels: dict[str, CubinKernel] = field(default_factory=dict)
    image: bytes = b""


@dataclass(frozen=True)
class _Section:
    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int


def _u(fmt: str, data: bytes, off: int, what: str):
    try:
        if off > len(data):
            raise struct.error(what)
        return struct.unpack_from(fmt, data, off)
    except struct.error:
        raise CubinError(f"truncated cubin: {what} at offset {off:#x} runs past the end ({len(data)} bytes)") from None


def _sections(elf: bytes) -> list[_Section]:
    if elf[:4] != b"\x7fELF" or len(elf) < 64 or elf[4] != 2 or elf[5] != 1:
        raise CubinError("not a little-endian ELF64 file")
    machine, = _u("<H", elf, 0x12, "e_machine")
    if machine != EM_CUDA:
        raise CubinError(f"ELF machine {machine}, not EM_CUDA ({EM_CUDA})")
    shoff, = _u("<Q", elf, 0x28, "e_shoff")
    shentsize, shnum, shstrndx = _u("<HHH", elf, 0x3A, "section header fields")
    if shentsize != 64 or not 0 <= shstrndx < shnum:
        raise CubinError(f"bad section header table (entsize {shentsize}, {shnum} sections, names in {shstrndx})")
    raw = [_u("<IIQQQQIIQQ", elf, shoff + i * 64, f"section header {i}") for i in range(shnum)]
    names_off, names_size = raw[shstrndx][4], raw[shstrndx][5]
    out = []
    for i, (name, typ, flags, _addr, off, size, link, info, _align, entsize) in enumerate(raw):
        if name >= names_size:
            raise CubinError(f"section {i}: name offset {name} outside .shstrtab")
        end = elf.find(b"\0", names_off + name)
        if typ != SHT_NOBITS and off + size > len(elf):
            raise CubinError(f"section {i} ({elf[names_off + name:end].decode(errors='replace')}) runs past the end")
        out.append(_Section(elf[names_off + name:end].decode(errors="replace"), typ, flags, off, size, link, info, entsize))
    return out


def eiattr_records(info: bytes) -> list[tuple[int, int, int | bytes]]:
    """(format, attribute, value-or-data) for each record of an .nv.info section."""
    out, i = [], 0
    while i < len(info):
        fmt, attr, val = _u("<BBH", info, i, "EIATTR record")
        if fmt == EIFMT_SVAL:
            if i + 4 + val > len(info):
                raise CubinError(f"EIATTR {attr:#x} at {i:#x}: {val} bytes run past the section")
            out.append((fmt, attr, info[i + 4:i + 4 + val]))
            i += 4 + val
        elif fmt in (EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL):
            out.append((fmt, attr, val))
            i += 4
        else:
            raise CubinError(f"EIATTR record at {i:#x}: unknown format {fmt}")
    return out


def _fields(fmt: str, data, attr: int, variable: bool = False) -> tuple:
    """An SVAL record's fields; `variable`: a list of `fmt` items. A size that does not fit is a CubinError."""
    size = struct.calcsize(fmt)
    if not isinstance(data, bytes) or (len(data) % size if variable else len(data) != size):
        got = f"{len(data)} bytes" if isinstance(data, bytes) else "a value, not data"
        raise CubinError(f"EIATTR {attr:#x}: {got}, expected {'a multiple of ' if variable else ''}{size}")
    return struct.unpack(f"<{len(data) // size * fmt[1:] if variable else fmt[1:]}", data)


def _kparam(data) -> KParam:
    _index, ordinal, offset, bits = _fields("<IHHI", data, EIATTR_KPARAM_INFO)
    return KParam(ordinal, offset, bits >> 18, bits & 0xFF)


def _value(data, attr: int) -> int:
    if not isinstance(data, int):
        raise CubinError(f"EIATTR {attr:#x}: {len(data)} bytes of data where a value belongs")
    return data


def read_cubin(elf: bytes) -> Cubin:
    secs = _sections(elf)
    e_flags, = _u("<I", elf, 0x30, "e_flags")
    sm = (e_flags >> 8) & 0xFF or e_flags & 0xFF
    cubin = Cubin(arch=f"sm_{sm}", image=bytes(elf))
    symtab = next((s for s in secs if s.type == 2), None)
    if symtab is None:
        raise CubinError("no .symtab")
    if not 0 <= symtab.link < len(secs):
        raise CubinError(f".symtab links string table {symtab.link}, outside the {len(secs)} sections")
    strtab = secs[symtab.link]

    def symbol_name(index: int) -> str:
        name, = _u("<I", elf, symtab.offset + 24 * index, f"symbol {index}")
        start = strtab.offset + name
        return elf[start:elf.find(b"\0", start)].decode(errors="replace")

    by_name = {s.name: s for s in secs}
    for s in secs:
        if s.name.startswith(".text."):
            name = s.name[len(".text."):]
            k = cubin.kernels[name] = CubinKernel(name, text_offset=s.offset, text_size=s.size)
            if (sh := by_name.get(f".nv.shared.{name}")) is not None:
                k.shared_bytes = sh.size
            if (c0 := by_name.get(f".nv.constant0.{name}")) is not None:
                k.constant0 = bytes(elf[c0.offset:c0.offset + c0.size])
            if (rel := by_name.get(f".rela.text.{name}")) is not None and rel.entsize:
                k.relocations = rel.size // rel.entsize
    per_symbol = {}      # global .nv.info records are keyed by the function's symbol index
    if (glob := by_name.get(".nv.info")) is not None:
        for _fmt, attr, data in eiattr_records(elf[glob.offset:glob.offset + glob.size]):
            if attr in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE, EIATTR_MIN_STACK_SIZE):
                sym, value = _fields("<II", data, attr)
                per_symbol.setdefault(symbol_name(sym), {})[attr] = value
    for name, k in cubin.kernels.items():
        attrs = per_symbol.get(name, {})
        k.registers = attrs.get(EIATTR_REGCOUNT, 0)
        k.frame_bytes = attrs.get(EIATTR_FRAME_SIZE, 0)
        k.min_stack_bytes = attrs.get(EIATTR_MIN_STACK_SIZE, 0)
        info = by_name.get(f".nv.info.{name}")
        if info is None:
            continue
        params = []
        for _fmt, attr, data in eiattr_records(elf[info.offset:info.offset + info.size]):
            if attr == EIATTR_KPARAM_INFO:
                params.append(_kparam(data))
            elif attr == EIATTR_PARAM_CBANK:
                _sym, k.param_cbank_offset, _size = _fields("<IHH", data, attr)
            elif attr == EIATTR_CBANK_PARAM_SIZE:
                k.params_size = _value(data, attr)
            elif attr == EIATTR_NUM_BARRIERS:
                k.barriers = _value(data, attr)
            elif attr == EIATTR_MAX_THREADS:
                k.max_threads = _fields("<III", data, attr)
            elif attr == EIATTR_EXIT_INSTR_OFFSETS:
                k.exit_offsets = _fields("<I", data, attr, variable=True)
        k.params = tuple(sorted(params, key=lambda p: p.ordinal))
    return cubin
