"""Test helpers that turn a real code object (fixtures/drivers) into one with other code or metadata.

with_code: hand-assembled instructions at a kernel's entry, keeping its descriptor (registers, kernarg
layout, LDS size) as clang wrote it. with_metadata: the NT_AMDGPU_METADATA note re-encoded after a change
and appended as the .note section (the reader falls back on the section table without a PT_NOTE)."""
from __future__ import annotations

import struct

import msgpack

from gputwin.abi.code_object import CodeObject

PT_NOTE = 4


def with_code(blob: bytes, kernel: str, code: bytes) -> bytes:
    """`blob` with `code` written at `kernel`'s first instruction (it must fit before the next kernel)."""
    co = CodeObject.parse(blob)
    entry = co.kernels[kernel].entry_offset
    seg = next(s for s in co.segments if s.vaddr <= entry < s.vaddr + s.filesz)
    end = min([k.entry_offset for k in co.kernels.values() if k.entry_offset > entry] + [seg.vaddr + seg.filesz])
    assert len(code) <= end - entry, f"{len(code)} bytes of code do not fit the {end - entry} of {kernel}"
    out = bytearray(blob)
    off = seg.offset + entry - seg.vaddr
    out[off:off + len(code)] = code
    return bytes(out)


def with_metadata(blob: bytes, edit) -> bytes:
    """`blob` with its metadata note replaced by edit(metadata), re-packed into a note section at the end."""
    co = CodeObject.parse(blob)
    note = next(s for s in co.sections if s.name == ".note")
    namesz, descsz, _ = struct.unpack_from("<III", blob, note.offset)
    desc_off = note.offset + 12 + ((namesz + 3) & ~3)
    md = msgpack.unpackb(blob[desc_off:desc_off + descsz], raw=False)
    edit(md)
    packed = msgpack.packb(md)
    record = struct.pack("<III", 7, len(packed), 32) + b"AMDGPU\0\0" + packed + bytes(-len(packed) % 4)
    out = bytearray(blob)
    # drop the PT_NOTE header (type 4 -> PT_NULL) so the section table is what the reader falls back on
    phoff, phnum = struct.unpack_from("<Q", blob, 32)[0], struct.unpack_from("<H", blob, 56)[0]
    for i in range(phnum):
        if struct.unpack_from("<I", blob, phoff + 56 * i)[0] == PT_NOTE:
            struct.pack_into("<I", out, phoff + 56 * i, 0)
    shoff = struct.unpack_from("<Q", blob, 40)[0]
    index = co.sections.index(note)
    struct.pack_into("<QQ", out, shoff + 64 * index + 24, len(out), len(record))   # sh_offset, sh_size
    return bytes(out + record)


def kernel_metadata(md: dict, name: str) -> dict:
    """The `amdhsa.kernels` entry of kernel `name`."""
    return next(k for k in md["amdhsa.kernels"] if k[".name"] == name)
