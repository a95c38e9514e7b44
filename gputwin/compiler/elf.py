"""Link the AMDGPU backend's relocatable object into a loadable HSA code object (ELF64 ET_DYN).

Decision (docs/compiler.md): we link in Python rather than teach the loader relocatable objects, so
the driver only ever sees what ld.lld -shared makes and what real ROCm loads. The layout follows lld:
a read-only PT_LOAD (headers, .note, .dynsym, .hash, .dynstr, .rodata with the kernel descriptors),
an executable PT_LOAD (.text) and a writable PT_LOAD (.dynamic), each at a virtual address congruent to
its file offset modulo the 4 KiB page, plus PT_PHDR, PT_DYNAMIC and PT_NOTE. The NT_AMDGPU_METADATA
note the backend wrote is kept byte for byte. PC-relative relocations (the descriptor's
kernel_code_entry_byte_offset is an R_AMDGPU_REL64) are resolved here; absolute ones would need a
load-time relocation and are refused by name.
Facts: ELF-64 object file format; LLVM AMDGPUUsage "ELF Code Object" (relocation numbers and meaning).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
SHDR = struct.Struct("<IIQQQQIIQQ")
PHDR = struct.Struct("<IIQQQQQQ")
SYM = struct.Struct("<IBBHQQ")
RELA = struct.Struct("<QQq")
DYN = struct.Struct("<qQ")

ET_REL, ET_DYN, EM_AMDGPU = 1, 3, 224
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_HASH, SHT_DYNAMIC, SHT_NOTE, SHT_NOBITS, SHT_DYNSYM = \
    1, 2, 3, 4, 5, 6, 7, 8, 11
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 1, 2, 4
PT_LOAD, PT_DYNAMIC, PT_NOTE, PT_PHDR = 1, 2, 4, 6
PF_X, PF_W, PF_R = 1, 2, 4
DT_NULL, DT_HASH, DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT = 0, 4, 5, 6, 10, 11
SHN_UNDEF, SHN_ABS = 0, 0xFFF1
STB_LOCAL = 0
PAGE = 0x1000
R_AMDGPU = {0: "NONE", 1: "ABS32_LO", 2: "ABS32_HI", 3: "ABS64", 4: "REL32", 5: "REL64", 6: "ABS32",
            7: "GOTPCREL", 8: "GOTPCREL32_LO", 9: "GOTPCREL32_HI", 10: "REL32_LO", 11: "REL32_HI",
            13: "RELATIVE64", 14: "REL16"}


class LinkError(ValueError):
    """The object cannot be turned into a code object (names the section, symbol or relocation)."""


@dataclass
class Section:
    name: str
    type: int
    flags: int
    data: bytes
    size: int
    link: int
    info: int
    align: int
    entsize: int
    addr: int = 0
    offset: int = 0


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a if a > 1 else x


def _strtab(names: list[str]) -> tuple[bytes, dict[str, int]]:
    out, pos = bytearray(b"\0"), {"": 0}
    for n in names:
        if n not in pos:
            pos[n] = len(out)
            out += n.encode() + b"\0"
    return bytes(out), pos


def _read(obj: bytes):
    if obj[:4] != b"\x7fELF" or obj[4] != 2:
        raise LinkError("not an ELF64 object")
    hdr = EHDR.unpack_from(obj)
    ident, etype, machine, _, _, _, shoff, flags, _, _, _, shentsize, shnum, shstrndx = hdr
    if etype != ET_REL or machine != EM_AMDGPU:
        raise LinkError(f"expected an AMDGPU relocatable object, got e_type={etype} e_machine={machine}")
    raw = [SHDR.unpack_from(obj, shoff + i * shentsize) for i in range(shnum)]
    names = obj[raw[shstrndx][4]:raw[shstrndx][4] + raw[shstrndx][5]]
    secs = []
    for (nm, typ, fl, _, off, size, link, info, align, ent) in raw:
        name = names[nm:names.index(b"\0", nm)].decode()
        data = b"" if typ == SHT_NOBITS else obj[off:off + size]
        secs.append(Section(name, typ, fl, data, size, link, info, max(align, 1), ent))
    return ident, flags, secs


def _symbols(secs: list[Section]):
    symtab = next((s for s in secs if s.type == SHT_SYMTAB), None)
    if symtab is None:
        raise LinkError("object has no .symtab")
    strs = secs[symtab.link].data
    out = []
    for i in range(len(symtab.data) // SYM.size):
        nm, info, other, shndx, value, size = SYM.unpack_from(symtab.data, i * SYM.size)
        out.append([strs[nm:strs.index(b"\0", nm)].decode(), info, other, shndx, value, size])
    return out


def link(obj: bytes) -> bytes:
    """The loadable code object (what `ld.lld -shared` would make) for one relocatable object."""
    ident, eflags, secs = _read(obj)
    syms = _symbols(secs)
    alloc = [i for i, s in enumerate(secs) if s.flags & SHF_ALLOC and s.size]
    notes = [i for i in alloc if secs[i].type == SHT_NOTE]
    ro = [i for i in alloc if i not in notes and not secs[i].flags & (SHF_WRITE | SHF_EXECINSTR)]
    rx = [i for i in alloc if secs[i].flags & SHF_EXECINSTR]
    rw = [i for i in alloc if secs[i].flags & SHF_WRITE and not secs[i].flags & SHF_EXECINSTR]

    exported = [s for s in syms if s[1] >> 4 != STB_LOCAL and s[3] != SHN_UNDEF]
    undefined = [s[0] for s in syms[1:] if s[3] == SHN_UNDEF and s[0]]
    if undefined:
        raise LinkError(f"undefined symbols: {', '.join(undefined)}")
    dynstr, dynpos = _strtab([s[0] for s in exported])
    n_dyn = len(exported) + 1
    hash_ = struct.pack(f"<{2 + 1 + n_dyn}I", 1, n_dyn, 1 if exported else 0,
                        0, *[(k + 1 if k + 1 < n_dyn else 0) for k in range(1, n_dyn)])
    new = list(secs)     # synthetic sections are appended; indices of the originals stay valid
    def add(name, typ, flags, data, align, entsize=0, link=0, info=0, size=None) -> int:
        new.append(Section(name, typ, flags, data, len(data) if size is None else size, link, info, align, entsize))
        return len(new) - 1
    i_dynsym = add(".dynsym", SHT_DYNSYM, SHF_ALLOC, b"", 8, SYM.size, info=1)
    i_hash = add(".hash", SHT_HASH, SHF_ALLOC, hash_, 4, 4, link=i_dynsym)
    i_dynstr = add(".dynstr", SHT_STRTAB, SHF_ALLOC, dynstr, 1)
    new[i_dynsym].link = i_dynstr
    new[i_dynsym].size = n_dyn * SYM.size
    i_dynamic = add(".dynamic", SHT_DYNAMIC, SHF_ALLOC | SHF_WRITE, b"", 8, DYN.size, link=i_dynstr,
                    size=6 * DYN.size)

    segments = [[i for i in notes] + [i_dynsym, i_hash, i_dynstr] + ro, rx, rw + [i_dynamic]]
    n_ph = 3 + 3
    pos = EHDR.size + n_ph * PHDR.size
    va = pos
    loads = []
    for k, seg in enumerate(segments):
        if not seg:
            continue
        if k:   # a new page-aligned segment: keep va congruent to the file offset
            pos = _align(pos, max(new[i].align for i in seg))
            va = _align(va, PAGE) + pos % PAGE
        start_off, start_va = (0, 0) if k == 0 else (pos, va)
        for i in seg:
            s = new[i]
            pad = _align(pos, s.align) - pos
            pos, va = pos + pad, va + pad
            s.offset, s.addr = pos, va
            va += s.size
            if s.type != SHT_NOBITS:
                pos += s.size
        flags = (PF_R, PF_R | PF_X, PF_R | PF_W)[k]
        loads.append((start_off, start_va, pos - start_off, va - start_va, flags))

    # symbols: section-relative -> virtual addresses
    for s in syms:
        if s[3] not in (SHN_UNDEF, SHN_ABS) and s[3] < len(secs):
            s[4] += new[s[3]].addr
    _relocate(secs, new, syms)

    # output sections: allocated ones in address order, then .symtab/.strtab/.shstrtab
    keep = sorted((i for i in range(len(new)) if new[i].flags & SHF_ALLOC and new[i].size),
                  key=lambda i: new[i].addr)
    remap = {old: k + 1 for k, old in enumerate(keep)}
    dynsym = bytearray(SYM.size)
    for s in exported:
        shndx = s[3] if s[3] == SHN_ABS else remap[s[3]]
        dynsym += SYM.pack(dynpos[s[0]], s[1], s[2], shndx, s[4], s[5])

    new[i_dynsym].data = bytes(dynsym)
    dyn = b"".join(DYN.pack(t, v) for t, v in ((DT_SYMTAB, new[i_dynsym].addr), (DT_SYMENT, SYM.size),
                                                (DT_STRTAB, new[i_dynstr].addr), (DT_STRSZ, len(dynstr)),
                                                (DT_HASH, new[i_hash].addr), (DT_NULL, 0)))
    new[i_dynamic].data = dyn

    order = sorted(range(len(syms)), key=lambda j: (syms[j][1] >> 4 != STB_LOCAL, j))
    strtab, strpos = _strtab([syms[j][0] for j in order])
    symtab = bytearray()
    for j in order:
        nm, info, other, shndx, value, size = syms[j]
        shndx = shndx if shndx in (SHN_UNDEF, SHN_ABS) else remap.get(shndx, SHN_ABS)
        symtab += SYM.pack(strpos[nm], info, other, shndx, value, size)
    n_local = sum(1 for j in order if syms[j][1] >> 4 == STB_LOCAL)
    out_secs = [new[i] for i in keep]
    for s in out_secs:
        s.link = remap.get(s.link, 0) if s.link else 0
    tail = [Section(".symtab", SHT_SYMTAB, 0, bytes(symtab), len(symtab), len(out_secs) + 2, n_local, 8, SYM.size),
            Section(".strtab", SHT_STRTAB, 0, strtab, len(strtab), 0, 0, 1, 0)]
    shstr, shpos = _strtab([s.name for s in out_secs + tail] + [".shstrtab"])
    tail.append(Section(".shstrtab", SHT_STRTAB, 0, shstr, len(shstr), 0, 0, 1, 0))
    for s in tail:
        pos = _align(pos, s.align)
        s.offset, pos = pos, pos + s.size
    shoff = _align(pos, 8)
    all_secs = out_secs + tail

    image = bytearray(shoff + (len(all_secs) + 1) * SHDR.size)
    for s in all_secs:
        if s.type != SHT_NOBITS:
            image[s.offset:s.offset + len(s.data)] = s.data
    ph = [(PT_PHDR, PF_R, EHDR.size, EHDR.size, n_ph * PHDR.size, n_ph * PHDR.size, 8)]
    ph += [(PT_LOAD, fl, off, v, fsz, msz, PAGE) for off, v, fsz, msz, fl in loads]
    d = new[i_dynamic]
    ph.append((PT_DYNAMIC, PF_R | PF_W, d.offset, d.addr, d.size, d.size, 8))
    if notes:
        n0, n1 = new[notes[0]], new[notes[-1]]
        ph.append((PT_NOTE, PF_R, n0.offset, n0.addr, n1.offset + n1.size - n0.offset,
                   n1.offset + n1.size - n0.offset, 4))
    ph += [(0, 0, 0, 0, 0, 0, 0)] * (n_ph - len(ph))     # PT_NULL fills unused slots
    for k, p in enumerate(ph):
        PHDR.pack_into(image, EHDR.size + k * PHDR.size, p[0], p[1], p[2], p[3], p[3], p[4], p[5], p[6])
    for k, s in enumerate(all_secs):
        SHDR.pack_into(image, shoff + (k + 1) * SHDR.size, shpos[s.name], s.type, s.flags, s.addr, s.offset,
                       s.size, s.link, s.info, s.align, s.entsize)
    EHDR.pack_into(image, 0, ident, ET_DYN, EM_AMDGPU, 1, 0, EHDR.size, shoff, eflags, EHDR.size,
                   PHDR.size, n_ph, SHDR.size, len(all_secs) + 1, len(all_secs))
    return bytes(image)


def _relocate(secs: list[Section], new: list[Section], syms) -> None:
    for rs in (s for s in secs if s.type == SHT_RELA):
        target = new[rs.info]
        if not target.flags & SHF_ALLOC:
            continue   # relocations of non-loaded (debug) sections do not matter at run time
        data = bytearray(target.data)
        for k in range(len(rs.data) // RELA.size):
            off, info, addend = RELA.unpack_from(rs.data, k * RELA.size)
            rtype, sym = info & 0xFFFFFFFF, syms[info >> 32]
            name = R_AMDGPU.get(rtype, str(rtype))
            value = sym[4] + addend - (target.addr + off)
            if name == "REL64":
                struct.pack_into("<q", data, off, value)
            elif name in ("REL32", "REL32_LO"):
                if name == "REL32" and not -(1 << 31) <= value < (1 << 31):
                    raise LinkError(f"R_AMDGPU_REL32 to {sym[0]} out of range in {target.name}")
                struct.pack_into("<I", data, off, value & 0xFFFFFFFF)
            elif name == "REL32_HI":
                struct.pack_into("<I", data, off, (value >> 32) & 0xFFFFFFFF)
            elif name != "NONE":
                raise LinkError(f"relocation R_AMDGPU_{name} against {sym[0]!r} in {target.name} needs a "
                                f"load-time fixup; gputwin's linker resolves only PC-relative ones")
        target.data = bytes(data)


# processors whose code objects say "xnack any" / "sramecc any" in e_flags when built for any setting
_XNACK_ANY, _SRAMECC_ANY = 0x100, 0x400
_SRAMECC_ARCHS = ("gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942")


def relocatable_object(code: bytes, arch: str, labels: dict[str, int], abi_version: int = 3) -> bytes:
    """An ELF64 relocatable object holding `code` in .text and `labels` as local symbols, laid out as
    llvm-mc -filetype=obj writes one for amdgcn-amd-amdhsa (.strtab, .text, .symtab; ABI version 3 is
    code object v5; e_flags: the processor plus the xnack/sramecc "any" bits where the processor has them)."""
    from gputwin.abi.code_object import EF_AMDGPU_MACH_NAMES, ELFOSABI_AMDGPU_HSA
    mach = {name: value for value, name in EF_AMDGPU_MACH_NAMES.items()}.get(arch)
    if mach is None:
        raise LinkError(f"no EF_AMDGPU_MACH value known for {arch}")
    eflags = mach | (_XNACK_ANY if arch.startswith("gfx9") or arch.startswith("gfx101") else 0) | \
        (_SRAMECC_ANY if arch in _SRAMECC_ARCHS else 0)
    names = sorted(labels, key=lambda n: (labels[n], n))
    strtab, pos = _strtab([".strtab", ".text", ".symtab", *names])
    text_off = EHDR.size
    symtab = SYM.pack(0, 0, 0, 0, 0, 0) + b"".join(SYM.pack(pos[n], STB_LOCAL, 0, 2, labels[n], 0) for n in names)
    sym_off = _align(text_off + len(code), 8)
    str_off = sym_off + len(symtab)
    shoff = _align(str_off + len(strtab), 8)
    out = bytearray(shoff + 4 * SHDR.size)
    out[text_off:text_off + len(code)] = code
    out[sym_off:sym_off + len(symtab)] = symtab
    out[str_off:str_off + len(strtab)] = strtab
    shdrs = [(0, 0, 0, 0, 0, 0, 0, 0, 0), (pos[".strtab"], SHT_STRTAB, 0, str_off, len(strtab), 0, 0, 1, 0),
             (pos[".text"], SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text_off, len(code), 0, 0, 4, 0),
             (pos[".symtab"], SHT_SYMTAB, 0, sym_off, len(symtab), 1, len(names) + 1, 8, SYM.size)]
    for k, (name, typ, flags, off, size, link, info, align, entsize) in enumerate(shdrs):
        SHDR.pack_into(out, shoff + k * SHDR.size, name, typ, flags, 0, off, size, link, info, align, entsize)
    ident = b"\x7fELF" + bytes([2, 1, 1, ELFOSABI_AMDGPU_HSA, abi_version]) + bytes(7)
    EHDR.pack_into(out, 0, ident, ET_REL, EM_AMDGPU, 1, 0, 0, shoff, eflags, EHDR.size, 0, 0, SHDR.size, 4, 1)
    return bytes(out)
