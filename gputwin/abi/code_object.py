"""Reading HSA code objects: ELF64 AMDGPU shared objects as clang/ld.lld/hipcc produce them (v4, v5, v6).

`CodeObject.parse(data)` checks the ELF header, reads program headers, sections, symbols, the dynamic
relocations and the NT_AMDGPU_METADATA note (msgpack), and describes every kernel: its descriptor, where
the descriptor and the code sit in the loaded image, and its metadata (arguments, segment sizes, ...).
Facts: LLVM AMDGPUUsage ("ELF Code Object", "Note Records", "Relocation Records", "Code Object V4/V5
Metadata") and the System V gABI for the ELF64 structures. Malformed input raises `CodeObjectError`.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field, replace
from functools import cached_property

import msgpack

from gputwin.abi import amdhsa
from gputwin.errors import KernelNotFound

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
ET_DYN = 3
# EI_ABIVERSION for ELFOSABI_AMDGPU_HSA -> code object version
ABI_VERSION_TO_COV = {2: 4, 3: 5, 4: 6}
PT_LOAD, PT_DYNAMIC, PT_NOTE = 1, 2, 4
SHT_SYMTAB, SHT_RELA, SHT_NOTE, SHT_NOBITS, SHT_DYNSYM = 2, 4, 7, 8, 11
NT_AMDGPU_METADATA = 32
MAX_IMAGE_SIZE = 1 << 30   # a sanity bound: a corrupt p_vaddr/p_memsz must not allocate the world
MAX_KERNARG_SIZE = 1 << 20  # far above what toolchains emit (CUDA allows 32 KiB of parameters): a corrupt
                            # .kernarg_segment_size must not size a launch's allocation
MAX_WORKGROUP_SIZE = 1024   # .max_flat_workgroup_size on every AMDGPU target

EF_AMDGPU_MACH = 0x0FF
EF_AMDGPU_FEATURE_XNACK_V4 = 0x300
EF_AMDGPU_FEATURE_SRAMECC_V4 = 0xC00
# e_flags & EF_AMDGPU_MACH -> processor (values as clang-19 writes them for each -mcpu)
EF_AMDGPU_MACH_NAMES = {
    0x2C: "gfx900", 0x2F: "gfx906", 0x30: "gfx908", 0x3F: "gfx90a", 0x40: "gfx940", 0x4B: "gfx941",
    0x4C: "gfx942", 0x33: "gfx1010", 0x36: "gfx1030", 0x41: "gfx1100", 0x46: "gfx1101", 0x47: "gfx1102",
    0x44: "gfx1103", 0x43: "gfx1150", 0x4A: "gfx1151", 0x48: "gfx1200", 0x4E: "gfx1201",
    0x51: "gfx9-generic", 0x52: "gfx10-1-generic", 0x53: "gfx10-3-generic", 0x54: "gfx11-generic",
    0x59: "gfx12-generic",
}
EF_AMDGPU_GENERIC_VERSION_OFFSET = 24   # code object v6 generic targets carry their version in e_flags[31:24]
# generic processor -> the processors its code runs on (AMDGPUUsage "Generic processors")
GENERIC_MEMBERS = {
    "gfx9-generic": ("gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"),
    "gfx10-1-generic": ("gfx1010", "gfx1011", "gfx1012", "gfx1013"),
    "gfx10-3-generic": ("gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"),
    "gfx11-generic": ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152"),
    "gfx12-generic": ("gfx1200", "gfx1201"),
}
FEATURE_SETTING = {0: None, 1: "any", 2: "off", 3: "on"}   # xnack / sramecc fields (v4+)

R_AMDGPU_NONE, R_AMDGPU_ABS32_LO, R_AMDGPU_ABS32_HI, R_AMDGPU_ABS64 = 0, 1, 2, 3
R_AMDGPU_ABS32, R_AMDGPU_RELATIVE64 = 6, 13
_RELOC_WIDTH = {R_AMDGPU_ABS32_LO: 4, R_AMDGPU_ABS32_HI: 4, R_AMDGPU_ABS64: 8, R_AMDGPU_ABS32: 4,
                R_AMDGPU_RELATIVE64: 8}

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_PHDR = struct.Struct("<IIQQQQQQ")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")


class CodeObjectError(ValueError):
    """The bytes are not a code object this loader can use; the message says what is wrong and where."""


@dataclass(frozen=True)
class Segment:
    vaddr: int
    memsz: int
    offset: int
    filesz: int
    flags: int     # PF_X=1, PF_W=2, PF_R=4


@dataclass(frozen=True)
class Section:
    name: str
    type: int
    addr: int
    offset: int
    size: int
    link: int
    entsize: int


@dataclass(frozen=True)
class Symbol:
    name: str
    value: int
    size: int
    type: int      # STT_OBJECT=1, STT_FUNC=2, STT_AMDGPU_HSA_KERNEL=10 (old objects)
    bind: int
    shndx: int     # 0 = undefined


@dataclass(frozen=True)
class Relocation:
    offset: int    # vaddr of the patched field
    type: int
    symbol: Symbol | None
    addend: int


@dataclass(frozen=True)
class KernelArg:
    """One entry of a kernel's `.args` metadata (explicit or hidden)."""
    offset: int
    size: int
    value_kind: str
    name: str = ""
    type_name: str = ""
    address_space: str = ""
    is_const: bool = False
    pointee_align: int = 0

    @property
    def hidden(self) -> bool:
        return self.value_kind.startswith("hidden_")


@dataclass
class KernelInfo:
    name: str
    symbol: str
    kd_offset: int                               # vaddr of the kernel descriptor in the image
    entry_offset: int                            # vaddr of the first instruction
    descriptor: amdhsa.kernel_descriptor_t
    metadata: dict = field(repr=False)
    args: list[KernelArg] = field(repr=False)

    @property
    def explicit_args(self) -> list[KernelArg]:
        return [a for a in self.args if not a.hidden]

    @property
    def kernarg_size(self) -> int:
        return int(self.metadata.get(".kernarg_segment_size", self.descriptor.kernarg_size))

    @property
    def kernarg_align(self) -> int:
        return int(self.metadata.get(".kernarg_segment_align", 16))

    @property
    def group_segment_size(self) -> int:
        return self.descriptor.group_segment_fixed_size

    @property
    def private_segment_size(self) -> int:
        return self.descriptor.private_segment_fixed_size

    @property
    def wavefront_size(self) -> int:
        return int(self.metadata.get(".wavefront_size", 32 if self.wave32 else 64))

    @property
    def wave32(self) -> bool:
        return bool(amdhsa.KERNEL_CODE_PROPERTY_ENABLE_WAVEFRONT_SIZE32.get(self.descriptor.kernel_code_properties))

    @property
    def rsrc1(self) -> int:
        return self.descriptor.compute_pgm_rsrc1

    @property
    def rsrc2(self) -> int:
        return self.descriptor.compute_pgm_rsrc2

    @property
    def rsrc3(self) -> int:
        return self.descriptor.compute_pgm_rsrc3

    @property
    def user_sgpr_count(self) -> int:
        return amdhsa.COMPUTE_PGM_RSRC2_USER_SGPR_COUNT.get(self.rsrc2)

    def signature(self) -> str:
        """The kernel as a C-like prototype, for error messages."""
        def typ(a: KernelArg) -> str:   # HIP metadata carries no type names: say what the ABI says
            if a.type_name:
                return a.type_name
            return {"global_buffer": "void*", "dynamic_shared_pointer": "__local void*"}.get(
                a.value_kind, f"<{a.size}-byte {a.value_kind}>")
        params = [f"{typ(a)} {a.name or f'arg{i}'}" for i, a in enumerate(self.explicit_args)]
        return f"{self.name}({', '.join(params)})"


def _is_count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _check_ranges(name: str, md: dict, descriptor_kernarg_size: int, kernarg_size: int) -> None:
    """The metadata values a launch is sized from must be ones hardware and runtime can honour."""
    for what, size in ((".kernarg_segment_size", kernarg_size), ("the descriptor's kernarg_size",
                                                                 descriptor_kernarg_size)):
        if size > MAX_KERNARG_SIZE:
            raise CodeObjectError(f"kernel {name}: {what} of {size} bytes exceeds {MAX_KERNARG_SIZE}")
    align = md.get(".kernarg_segment_align", 16)
    if align & (align - 1) or not 0 < align <= 4096:
        raise CodeObjectError(f"kernel {name}: .kernarg_segment_align {align} is not a power of two up to 4096")
    if md.get(".wavefront_size", 32) not in (32, 64):
        raise CodeObjectError(f"kernel {name}: .wavefront_size {md['.wavefront_size']} is neither 32 nor 64")
    if not 0 < md.get(".max_flat_workgroup_size", 1) <= MAX_WORKGROUP_SIZE:
        raise CodeObjectError(f"kernel {name}: .max_flat_workgroup_size {md['.max_flat_workgroup_size']} is not "
                              f"1..{MAX_WORKGROUP_SIZE}")


class _Reader:
    """Bounds-checked access to the file bytes; every out-of-range read is a CodeObjectError."""

    def __init__(self, data: bytes):
        self.data = data

    def unpack(self, st: struct.Struct, offset: int, what: str):
        if offset < 0 or offset + st.size > len(self.data):
            raise CodeObjectError(f"{what} at file offset {offset:#x} lies outside the {len(self.data)}-byte file")
        return st.unpack_from(self.data, offset)

    def slice(self, offset: int, size: int, what: str) -> bytes:
        if offset < 0 or size < 0 or offset + size > len(self.data):
            raise CodeObjectError(f"{what} [{offset:#x}, +{size:#x}) lies outside the {len(self.data)}-byte file")
        return self.data[offset:offset + size]

    @staticmethod
    def cstr(blob: bytes, offset: int, what: str) -> str:
        if not 0 <= offset < len(blob):
            raise CodeObjectError(f"{what}: string offset {offset:#x} outside its string table")
        end = blob.find(b"\0", offset)
        return blob[offset:end if end >= 0 else len(blob)].decode("utf-8", "replace")


OFFLOAD_BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"   # clang-offload-bundler's uncompressed format
COMPRESSED_BUNDLE_MAGIC = b"CCOB"                     # its compressed format (clang --offload-compress)


def bundle_targets(data: bytes) -> list[str]:
    """The entry IDs of a clang offload bundle (hipcc's default output): magic, uint64 entry count, then
    per entry uint64 offset, uint64 size, uint64 ID length and the ID (clang ClangOffloadBundler.cpp)."""
    pos, ids = len(OFFLOAD_BUNDLE_MAGIC) + 8, []
    (count,) = struct.unpack_from("<Q", data, len(OFFLOAD_BUNDLE_MAGIC))
    for _ in range(min(count, 64)):
        _off, _size, n = struct.unpack_from("<QQQ", data, pos)
        ids.append(data[pos + 24:pos + 24 + n].decode("ascii", "replace"))
        pos += 24 + n
    return ids


def _bundle_error(data: bytes) -> CodeObjectError:
    """What to do with an offload bundle: unbundle the device code object for the wanted GPU."""
    if data.startswith(COMPRESSED_BUNDLE_MAGIC):
        targets, example = [], "hipv4-amdgcn-amd-amdhsa--gfx1100"
    else:
        try:
            targets = [t for t in bundle_targets(data) if "amdgcn" in t]
        except struct.error:
            targets = []
        example = targets[0] if targets else "hipv4-amdgcn-amd-amdhsa--gfx1100"
    held = f" (it holds {', '.join(targets)})" if targets else ""
    return CodeObjectError(
        f"this is a clang offload bundle{held}, not a code object: hipcc and clang -x hip bundle device code "
        f"by default. Extract one GPU's code object with `clang-offload-bundler-19 --unbundle --type=o "
        f"--targets={example} --input=FILE --output=FILE.hsaco`, or build with --cuda-device-only "
        f"--no-gpu-bundle-output (gputwin cc does)")


_NESTED = re.compile(r"(\d+)")


def source_name(symbol: str) -> str | None:
    """The C++ name of an Itanium-mangled function symbol without its parameters (`_Z5saxpyPfS_fi` ->
    `saxpy`, `_ZN2ns4scanEPi` -> `ns::scan`), or None for a symbol that is not mangled that way."""
    if not symbol.startswith("_Z"):
        return None
    pos, nested, parts = 2, symbol.startswith("_ZN"), []
    if nested:
        pos = 3
        while pos < len(symbol) and symbol[pos] in "rVKR":   # cv- and ref-qualifiers of member functions
            pos += 1
    while pos < len(symbol):
        m = _NESTED.match(symbol, pos)
        if not m:
            break
        n = int(m.group(1))
        parts.append(symbol[m.end():m.end() + n])
        pos = m.end() + n
        if not nested:
            break
    return "::".join(parts) or None


# Itanium C++ ABI builtin type codes (section 5.1.5) -> the OpenCL/C spellings kernargs.py understands
_BUILTIN_TYPES = {"v": "void", "b": "bool", "c": "char", "a": "signed char", "h": "uchar", "s": "short",
                  "t": "ushort", "i": "int", "j": "uint", "l": "long", "m": "ulong", "x": "long long",
                  "y": "unsigned long long", "f": "float", "d": "double", "Dh": "half", "DF16_": "_Float16"}


def _mangled_type(sym: str, pos: int, subs: list[str]) -> tuple[str, int]:
    """One <type> of an Itanium mangled name at `pos`: (spelling, end). Raises ValueError for the parts
    this small reader does not know (templates, nested names, function types)."""
    for code in ("DF16_", "Dh"):
        if sym.startswith(code, pos):
            return _BUILTIN_TYPES[code], pos + len(code)
    c = sym[pos:pos + 1]
    if c in _BUILTIN_TYPES:
        return _BUILTIN_TYPES[c], pos + 1
    if c in ("P", "R", "K", "V", "r"):
        inner, end = _mangled_type(sym, pos + 1, subs)
        text = {"P": f"{inner}*", "R": f"{inner}&", "K": f"const {inner}", "V": f"volatile {inner}",
                "r": f"{inner} restrict"}[c]
        subs.append(text)
        return text, end
    if c == "S":
        m = re.compile(r"S([0-9A-Z]*)_").match(sym, pos)
        if not m:
            raise ValueError("unknown substitution")
        index = int(m.group(1), 36) + 1 if m.group(1) else 0
        return subs[index], m.end()
    if c == "D" and sym.startswith("Dv", pos):   # vector: Dv<count>_<element>
        m = re.compile(r"Dv(\d+)_").match(sym, pos)
        elem, end = _mangled_type(sym, m.end(), subs)
        text = f"{elem}{m.group(1)}"
        subs.append(text)
        return text, end
    m = _NESTED.match(sym, pos)
    if m:   # a class, struct or enum by its name
        n = int(m.group(1))
        text = sym[m.end():m.end() + n]
        subs.append(text)
        return text, m.end() + n
    raise ValueError(f"type code {c!r}")


def mangled_parameter_types(symbol: str) -> list[str] | None:
    """The parameter types of a plain (non-nested, non-template) mangled function name:
    `_Z5scalePffi` -> ['float*', 'float', 'int']; None where the name is not of that simple form. HIP
    kernels' metadata has no type names; this is where the types are then."""
    m = re.compile(r"_Z(\d+)").match(symbol)
    if not m:
        return None
    pos, subs, out = m.end() + int(m.group(1)), [], []
    try:
        while pos < len(symbol):
            text, pos = _mangled_type(symbol, pos, subs)
            out.append(text)
    except (ValueError, IndexError, AttributeError, RecursionError):   # not a form this reader knows
        return None
    if not out:   # a function's mangled name has at least one parameter type ('v' for none)
        return None
    return [] if out == ["void"] else out


class CodeObject:
    def __init__(self, data: bytes):
        self.data = bytes(data)
        if self.data.startswith(OFFLOAD_BUNDLE_MAGIC) or self.data.startswith(COMPRESSED_BUNDLE_MAGIC):
            raise _bundle_error(self.data)
        r = _Reader(self.data)
        (ident, e_type, e_machine, _ver, _entry, phoff, shoff, e_flags, _ehsize, phentsize, phnum,
         shentsize, shnum, shstrndx) = r.unpack(_EHDR, 0, "ELF header")
        if ident[:4] != b"\x7fELF":
            raise CodeObjectError("not an ELF file (bad magic)")
        if ident[4] != 2 or ident[5] != 1:
            raise CodeObjectError("not a little-endian ELF64 file")
        if e_machine != EM_AMDGPU:
            raise CodeObjectError(f"e_machine is {e_machine}, not EM_AMDGPU ({EM_AMDGPU})")
        if ident[7] != ELFOSABI_AMDGPU_HSA:
            raise CodeObjectError(f"OS ABI is {ident[7]}, not ELFOSABI_AMDGPU_HSA ({ELFOSABI_AMDGPU_HSA})")
        if ident[8] not in ABI_VERSION_TO_COV:
            raise CodeObjectError(f"ABI version {ident[8]} is not code object v4, v5 or v6")
        if e_type != ET_DYN:
            raise CodeObjectError(f"e_type is {e_type}: a code object must be linked (ET_DYN); run ld.lld -shared")
        self.version = ABI_VERSION_TO_COV[ident[8]]
        self.e_flags = e_flags
        mach = e_flags & EF_AMDGPU_MACH
        if mach not in EF_AMDGPU_MACH_NAMES:
            raise CodeObjectError(f"unknown processor EF_AMDGPU_MACH {mach:#x}")
        self.arch = EF_AMDGPU_MACH_NAMES[mach]
        self.generic_version = e_flags >> EF_AMDGPU_GENERIC_VERSION_OFFSET
        if self.arch.endswith("-generic") and not self.generic_version:
            raise CodeObjectError(f"{self.arch} code object without a generic version in e_flags")
        self.xnack = FEATURE_SETTING[(e_flags & EF_AMDGPU_FEATURE_XNACK_V4) >> 8]
        self.sramecc = FEATURE_SETTING[(e_flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10]

        if phnum and phentsize != _PHDR.size or shnum and shentsize != _SHDR.size:
            raise CodeObjectError("unexpected program/section header entry size")
        self.segments = []
        notes = []
        for i in range(phnum):
            p_type, p_flags, p_off, p_vaddr, _pa, p_filesz, p_memsz, _al = r.unpack(_PHDR, phoff + i * _PHDR.size,
                                                                                    f"program header {i}")
            if p_type == PT_LOAD:
                if p_filesz > p_memsz:
                    raise CodeObjectError(f"PT_LOAD {i}: file size {p_filesz:#x} exceeds memory size {p_memsz:#x}")
                r.slice(p_off, p_filesz, f"PT_LOAD {i} contents")
                self.segments.append(Segment(p_vaddr, p_memsz, p_off, p_filesz, p_flags))
            elif p_type == PT_NOTE:
                notes.append(r.slice(p_off, p_filesz, f"PT_NOTE {i}"))
        if not self.segments:
            raise CodeObjectError("no PT_LOAD segments: nothing to load")
        if self.image_size > MAX_IMAGE_SIZE:
            raise CodeObjectError(f"PT_LOAD segments span {self.image_size:#x} bytes, more than {MAX_IMAGE_SIZE:#x}")
        self.sections = self._read_sections(r, shoff, shnum, shstrndx)
        if not notes:
            notes = [r.slice(s.offset, s.size, f"section {s.name}") for s in self.sections if s.type == SHT_NOTE]
        tables = {i: self._read_symbols(r, sec) for i, sec in enumerate(self.sections)
                  if sec.type in (SHT_SYMTAB, SHT_DYNSYM)}
        self.dynsym = next((t for i, t in tables.items() if self.sections[i].type == SHT_DYNSYM), [])
        # .symtab (when not stripped) is a superset of .dynsym: it also names local data
        self.symbols = next((t for i, t in tables.items() if self.sections[i].type == SHT_SYMTAB), self.dynsym)
        self.relocations = self._read_relocations(r, tables)
        self.metadata = self._read_metadata(notes)
        self.kernels = {k.name: k for k in (self._kernel(md) for md in self.metadata.get("amdhsa.kernels", []))}

    def runs_on(self, arch: str) -> bool:
        """Whether this code runs on processor `arch` (its own, or a member of its generic family)."""
        return arch == self.arch or arch in GENERIC_MEMBERS.get(self.arch, ())

    def find_kernel(self, name: str) -> KernelInfo:
        """The kernel called `name`: its metadata name (for HIP the mangled symbol, `_Z5saxpyPfS_fi`), or
        its C++ name (`saxpy`, `ns::saxpy`) when exactly one kernel has it. Raises KernelNotFound."""
        if name in self.kernels:
            return self.kernels[name]
        matches = [k for k in self.kernels.values() if (src := source_name(k.name)) is not None
                   and (src == name or src.rsplit("::", 1)[-1] == name)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise KernelNotFound(name, list(self.kernels), detail=f"{name!r} is ambiguous: it names "
                                 f"{', '.join(sorted(k.name for k in matches))}; give the mangled name")
        raise KernelNotFound(name, list(self.kernels))

    def undefined_symbols(self) -> list[str]:
        """Names the code object uses but does not define (its dynamic symbol table's undefined entries)."""
        return sorted({s.name for s in self.dynsym if s.shndx == 0 and s.name})

    @classmethod
    def parse(cls, data: bytes) -> CodeObject:
        try:
            return cls(data)
        except CodeObjectError:
            raise
        except (struct.error, UnicodeDecodeError, KeyError, TypeError, ValueError, AttributeError) as e:
            raise CodeObjectError(f"malformed code object: {type(e).__name__}: {e}") from None

    # --- pieces --------------------------------------------------------------------------------------------
    def _read_sections(self, r: _Reader, shoff: int, shnum: int, shstrndx: int) -> list[Section]:
        raw = [r.unpack(_SHDR, shoff + i * _SHDR.size, f"section header {i}") for i in range(shnum)]
        names = b""
        if raw and shstrndx < len(raw):
            names = r.slice(raw[shstrndx][4], raw[shstrndx][5], "section name table")
        out = []
        for i, (name, typ, _flags, addr, off, size, link, _info, _align, entsize) in enumerate(raw):
            nm = r.cstr(names, name, f"section {i} name") if names and name else ""
            out.append(Section(nm, typ, addr, off, size if typ != SHT_NOBITS else 0, link, entsize))
        return out

    def _strtab(self, r: _Reader, index: int, what: str) -> bytes:
        if not 0 <= index < len(self.sections):
            raise CodeObjectError(f"{what}: link to string table {index} out of range")
        s = self.sections[index]
        return r.slice(s.offset, s.size, f"string table {s.name}")

    def _read_symbols(self, r: _Reader, sec: Section) -> list[Symbol]:
        strs = self._strtab(r, sec.link, sec.name)
        blob = r.slice(sec.offset, sec.size, f"symbol table {sec.name}")
        out = []
        for off in range(0, len(blob) - len(blob) % _SYM.size, _SYM.size):
            name, info, _other, shndx, value, size = _SYM.unpack_from(blob, off)
            out.append(Symbol(r.cstr(strs, name, "symbol name") if name else "", value, size, info & 0xF, info >> 4,
                              shndx))
        return out

    def _read_relocations(self, r: _Reader, tables: dict[int, list[Symbol]]) -> list[Relocation]:
        out = []
        for sec in (s for s in self.sections if s.type == SHT_RELA):
            if 0 <= sec.link < len(self.sections) and self.sections[sec.link].type == SHT_SYMTAB:
                continue   # static relocations (ld --emit-relocs) are the linker's business, not the loader's
            syms = tables.get(sec.link, [])
            blob = r.slice(sec.offset, sec.size, f"relocation section {sec.name}")
            for off in range(0, len(blob) - len(blob) % _RELA.size, _RELA.size):
                r_offset, info, addend = _RELA.unpack_from(blob, off)
                sym_i, typ = info >> 32, info & 0xFFFFFFFF
                if typ not in _RELOC_WIDTH and typ != R_AMDGPU_NONE:
                    raise CodeObjectError(f"{sec.name}: unsupported relocation type {typ} at {r_offset:#x}")
                if sym_i >= max(len(syms), 1):
                    raise CodeObjectError(f"{sec.name}: relocation at {r_offset:#x} names symbol {sym_i} of {len(syms)}")
                out.append(Relocation(r_offset, typ, syms[sym_i] if sym_i else None, addend))
        return out

    @staticmethod
    def _read_metadata(notes: list[bytes]) -> dict:
        found = []
        for blob in notes:
            off = 0
            while off + 12 <= len(blob):
                namesz, descsz, ntype = struct.unpack_from("<III", blob, off)
                name_off = off + 12
                desc_off = name_off + ((namesz + 3) & ~3)
                end = desc_off + ((descsz + 3) & ~3)
                if desc_off + descsz > len(blob):
                    raise CodeObjectError("note record runs past the end of its note segment")
                name = blob[name_off:name_off + namesz].rstrip(b"\0")
                if name == b"AMDGPU" and ntype == NT_AMDGPU_METADATA:
                    try:
                        md = msgpack.unpackb(blob[desc_off:desc_off + descsz], raw=False, strict_map_key=False)
                    except Exception as e:   # msgpack raises several unrelated classes for bad input
                        raise CodeObjectError(f"NT_AMDGPU_METADATA is not valid msgpack: {e}") from None
                    if not isinstance(md, dict):
                        raise CodeObjectError("NT_AMDGPU_METADATA is not a msgpack map")
                    found.append(md)
                off = end
        if not found:
            raise CodeObjectError("no NT_AMDGPU_METADATA note (code object v2/v3 or not an HSA code object)")
        if len(found) > 1:   # ld.lld concatenates the notes of every object it links: which one is meant?
            raise CodeObjectError(f"{len(found)} NT_AMDGPU_METADATA notes: an object with its own metadata note "
                                  "(a device library compiled as a code object) was linked in; strip its .note")
        return found[0]

    @cached_property
    def _symbols_by_name(self) -> dict[str, Symbol]:
        return {s.name: s for s in self.symbols if s.name}

    def _kernel(self, md: dict) -> KernelInfo:
        if not isinstance(md, dict) or ".name" not in md or ".symbol" not in md:
            raise CodeObjectError("kernel metadata without .name/.symbol")
        name, symname = str(md[".name"]), str(md[".symbol"])
        for key in (".kernarg_segment_size", ".kernarg_segment_align", ".wavefront_size",
                    ".max_flat_workgroup_size", ".group_segment_fixed_size", ".private_segment_fixed_size"):
            if not _is_count(md.get(key, 0)):
                raise CodeObjectError(f"kernel {name}: metadata {key} is {md[key]!r}, not a byte count")
        sym = self._symbols_by_name.get(symname)
        if sym is None or sym.shndx == 0:
            raise CodeObjectError(f"kernel {name}: descriptor symbol {symname} is not defined")
        kd_bytes = self.read_vaddr(sym.value, 64, f"kernel descriptor {symname}")
        desc = amdhsa.kernel_descriptor_t.from_buffer_copy(kd_bytes)
        entry = sym.value + desc.kernel_code_entry_byte_offset
        self.read_vaddr(entry, 4, f"kernel {name} entry")
        kernarg_size = md.get(".kernarg_segment_size", desc.kernarg_size)
        _check_ranges(name, md, desc.kernarg_size, kernarg_size)
        args = []
        raw_args = md.get(".args", []) or []
        if not isinstance(raw_args, list):
            raise CodeObjectError(f"kernel {name}: .args is a {type(raw_args).__name__}, not a list")
        for i, a in enumerate(raw_args):
            if not isinstance(a, dict) or ".offset" not in a or ".size" not in a or ".value_kind" not in a:
                raise CodeObjectError(f"kernel {name}: argument {i} lacks .offset/.size/.value_kind")
            offset, size = a[".offset"], a[".size"]
            if not (_is_count(offset) and _is_count(size)) or offset + size > kernarg_size:
                raise CodeObjectError(f"kernel {name}: argument {i} (.offset {offset!r}, .size {size!r}) does not "
                                      f"lie inside the {kernarg_size}-byte kernarg segment")
            args.append(KernelArg(offset, size, str(a[".value_kind"]), str(a.get(".name", "")),
                                  str(a.get(".type_name", "")), str(a.get(".address_space", "")),
                                  bool(a.get(".is_const", False)), int(a.get(".pointee_align", 0))))
        explicit = [i for i, a in enumerate(args) if not a.hidden]
        types = mangled_parameter_types(name) if not any(args[i].type_name for i in explicit) else None
        if types is not None and len(types) == len(explicit):   # HIP: the types the metadata leaves out
            for i, t in zip(explicit, types):
                args[i] = replace(args[i], type_name=t)
        return KernelInfo(name, symname, sym.value, entry, desc, md, args)

    # --- the loadable image --------------------------------------------------------------------------------
    @cached_property
    def image_size(self) -> int:
        """Bytes from vaddr 0 to the end of the last PT_LOAD segment, rounded up to a 4 KiB page."""
        return (max(s.vaddr + s.memsz for s in self.segments) + 0xFFF) & ~0xFFF

    @cached_property
    def image(self) -> bytes:
        """The PT_LOAD segments laid out by vaddr (gaps and .bss zeroed), before relocation."""
        img = bytearray(self.image_size)
        for s in self.segments:
            img[s.vaddr:s.vaddr + s.filesz] = self.data[s.offset:s.offset + s.filesz]
        return bytes(img)

    def read_vaddr(self, vaddr: int, size: int, what: str = "data") -> bytes:
        for s in self.segments:
            if s.vaddr <= vaddr and vaddr + size <= s.vaddr + s.memsz:
                return self.image[vaddr:vaddr + size]
        raise CodeObjectError(f"{what} at vaddr {vaddr:#x} (+{size}) is not inside a PT_LOAD segment")

    def relocated_image(self, base: int) -> bytes:
        """The image as it must look when loaded at GPU address `base`, with dynamic relocations applied."""
        img = bytearray(self.image)
        for rel in self.relocations:
            if rel.type == R_AMDGPU_NONE:
                continue
            if rel.type == R_AMDGPU_RELATIVE64:
                value = base + rel.addend
            else:
                if rel.symbol is None or rel.symbol.shndx == 0:
                    what = rel.symbol.name if rel.symbol else "<none>"
                    raise CodeObjectError(f"relocation at {rel.offset:#x} refers to undefined symbol {what}")
                value = base + rel.symbol.value + rel.addend
                if rel.type == R_AMDGPU_ABS32_HI:
                    value >>= 32
            width = _RELOC_WIDTH[rel.type]
            self.read_vaddr(rel.offset, width, "relocation target")
            img[rel.offset:rel.offset + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
        return bytes(img)
