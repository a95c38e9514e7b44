"""The AMDGPU printf buffer protocol: format strings from the code-object metadata, records from the buffer.

Facts (LLVM AMDGPUUsage "Code Object V3+ Metadata" amdhsa.printf; AMDGPUPrintfRuntimeBinding.cpp for
OpenCL, AMDGPUEmitPrintf.cpp for HIP's -mprintf-kind=buffered; ROCm-Device-Libs __printf_alloc):
- The kernel's hidden_printf_buffer argument points at the buffer: a uint32 write offset, a uint32 size
  of the whole buffer, then records from byte 8, each reserved atomically by __printf_alloc.
- OpenCL: metadata strings "ID:N:S1:...:SN:FORMAT" (FORMAT with \\n, \\a ... and \\72 for ':' spelled out); a
  record is the uint32 ID followed by the N arguments, argument k taking Sk bytes (constant %s strings
  copied in, NUL-padded to 4 bytes; float arguments as float, vectors as their elements).
- HIP (buffered): metadata strings "0:0:HASH,FORMAT" (HASH the low 64 bits of FORMAT's MD5, hex); a
  record is a control dword (bit 0: stderr, bit 1: constant format, bits 2-31: record size in bytes),
  the uint64 HASH (or, for a format computed at run time, the string itself NUL-padded to 8 bytes), then
  the arguments: 8 bytes each (integers zero-extended, floats as double), strings inline padded to 8.
The host formats each record with C printf rules (OpenCL's vector conversions %vNhlf included).
"""
from __future__ import annotations

import os
import re
import struct
import sys
from dataclasses import dataclass, field

import numpy as np

HEADER_BYTES = 8
MAX_FIELD = 1 << 16   # widths and precisions beyond this are refused (C has no limit; a host must)
BUFFER_ENV = "GPUTWIN_PRINTF_BUFFER"
BUFFER_DEFAULT = 1 << 20   # bytes of printf records between two synchronizes
_CONVERSION = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?(?P<vec>v(?:16|2|3|4|8))?"
                         r"(?P<len>hh|hl|h|ll|l|z|j|t|L)?(?P<conv>[diouxXeEfFgGaAcsp%n])")
_INT_BITS = {"hh": 8, "h": 16, "hl": 32, "l": 64, "ll": 64, "z": 64, "j": 64, "t": 64}
_FLOATS = {2: "<e", 4: "<f", 8: "<d"}


class PrintfError(ValueError):
    """A printf buffer or metadata entry that does not follow the protocol; says what and where."""


@dataclass
class PrintfFormats:
    """The amdhsa.printf table of one code object."""
    opencl: dict[int, tuple[tuple[int, ...], str]] = field(default_factory=dict)   # ID -> (arg sizes, format)
    hip: dict[int, str] = field(default_factory=dict)                              # MD5 low 64 -> format

    @classmethod
    def from_metadata(cls, md: dict) -> PrintfFormats:
        table = cls()
        for entry in md.get("amdhsa.printf", []) or []:
            text = str(entry)
            head, _, rest = text.partition(",")
            parts = head.split(":")
            if len(parts) == 3 and parts[:2] == ["0", "0"] and rest:   # HIP: 0:0:HASH,FORMAT
                try:
                    table.hip[int(parts[2], 16)] = rest
                except ValueError:
                    raise PrintfError(f"amdhsa.printf entry {text!r}: {parts[2]!r} is not a hex hash") from None
                continue
            fields = text.split(":", 2)
            try:
                ident, count = int(fields[0]), int(fields[1])
                pieces = fields[2].split(":", count) if count else ["", fields[2]]
                sizes = tuple(int(s) for s in pieces[:count]) if count else ()
                fmt = pieces[count] if count else fields[2]
            except (ValueError, IndexError):
                raise PrintfError(f"amdhsa.printf entry {text!r} is neither ID:N:SIZES:FORMAT nor 0:0:HASH,FORMAT") \
                    from None
            table.opencl[ident] = (sizes, _unescape(fmt))
        return table

    def __bool__(self) -> bool:
        return bool(self.opencl or self.hip)


_ESCAPED = re.compile(r"\\([abfnrv]|72)")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "v": "\v", "72": ":"}


def _unescape(fmt: str) -> str:
    """OpenCL's metadata spells some characters as escapes: \\a \\b \\f \\n \\r \\v, and ':' (the field
    separator) as \\72; tabs and backslashes stay as they are (what clang-19 writes)."""
    return _ESCAPED.sub(lambda m: _ESCAPES[m.group(1)], fmt)


def decode(formats: PrintfFormats, buffer: bytes) -> tuple[list[tuple[int, str]], int]:
    """The messages in a printf buffer, in the order they were reserved, as (stream, text) with stream 1
    for stdout and 2 for stderr; and how many bytes of records did not fit (reserved past the end)."""
    if len(buffer) < HEADER_BYTES:
        raise PrintfError(f"a printf buffer of {len(buffer)} bytes has no header")
    offset, size = struct.unpack_from("<II", buffer)
    end = min(HEADER_BYTES + offset, size, len(buffer))
    pos, out = HEADER_BYTES, []
    while pos + 4 <= end:
        word = struct.unpack_from("<I", buffer, pos)[0]
        if word == 0:   # a reservation that did not fit: nothing was written from here on
            break
        if formats.hip:
            length = word >> 2
            if length < 4 or pos + length > end:
                raise PrintfError(f"printf record at buffer offset {pos}: size {length} runs past the data")
            out.append((2 if word & 1 else 1, _hip_record(formats, buffer[pos:pos + length], word, pos)))
            pos += length
        else:
            if word not in formats.opencl:
                raise PrintfError(f"printf record at buffer offset {pos} names format {word}, which the code "
                                  f"object's amdhsa.printf does not have")
            sizes, fmt = formats.opencl[word]
            args, p = [], pos + 4
            for s in sizes:
                args.append(buffer[p:p + s])
                p += s
            if p > end:
                raise PrintfError(f"printf record at buffer offset {pos} runs past the data")
            out.append((1, render(fmt, _OpenCLArgs(args))))
            pos = p
    lost = max(0, HEADER_BYTES + offset - size)
    return out, lost


def buffer_size() -> int:
    """The printf buffer a launch gets: $GPUTWIN_PRINTF_BUFFER bytes, default 1 MiB."""
    text = os.environ.get(BUFFER_ENV, "")
    try:
        size = int(text, 0) if text else BUFFER_DEFAULT
    except ValueError:
        size = -1
    if not HEADER_BYTES < size < 1 << 32:
        raise ValueError(f"{BUFFER_ENV}={text!r}: want a byte count above {HEADER_BYTES} and below 2^32")
    return size


def empty_buffer(size: int) -> bytes:
    """A fresh buffer's header: nothing written yet, `size` bytes in all."""
    return struct.pack("<II", 0, size)


def print_buffer(formats: PrintfFormats, buffer: bytes, who: str) -> None:
    """Print the messages of a printf buffer (stdout, or stderr where a record asks), then a warning on
    stderr for records that did not fit, naming `who` (the device) and the variable that sizes the buffer."""
    messages, lost = decode(formats, buffer)
    for stream, text in messages:
        (sys.stderr if stream == 2 else sys.stdout).write(text)
    sys.stdout.flush()
    if lost:
        print(f"gputwin: {who}: {lost} bytes of printf output did not fit the {struct.unpack_from('<I', buffer, 4)[0]}"
              f"-byte printf buffer and were lost; raise {BUFFER_ENV}", file=sys.stderr)


def _hip_record(formats: PrintfFormats, record: bytes, control: int, where: int) -> str:
    p = 4
    if control & 2:
        key = struct.unpack_from("<Q", record, p)[0]
        p += 8
        if key not in formats.hip:
            raise PrintfError(f"printf record at buffer offset {where} names format hash {key:#x}, which the "
                              "code object's amdhsa.printf does not have")
        fmt = formats.hip[key]
    else:
        fmt, p = _inline_string(record, p)
    return render(fmt, _HipArgs(record, p))


def _inline_string(data: bytes, p: int) -> tuple[str, int]:
    nul = data.find(b"\0", p)
    if nul < 0:
        raise PrintfError("printf record: a string without its terminating NUL")
    return data[p:nul].decode("utf-8", "replace"), p + ((nul + 1 - p + 7) & ~7)


class _OpenCLArgs:
    """Arguments of an OpenCL record: one byte string per argument, sized by the metadata."""

    def __init__(self, args: list[bytes]):
        self.args = iter(args)

    def take(self, conv: str, length: str | None, count: int) -> list:
        try:
            raw = next(self.args)
        except StopIteration:
            raise PrintfError("printf record: fewer arguments than the format's conversions") from None
        if conv == "s":
            return [raw.split(b"\0", 1)[0].decode("utf-8", "replace")]
        n = 4 if count == 3 else count   # 3-element vectors occupy the space of 4
        width = len(raw) // n
        return [_value(raw[i * width:(i + 1) * width], conv) for i in range(count)]


class _HipArgs:
    """Arguments of a HIP record: 8 bytes each, strings inline."""

    def __init__(self, record: bytes, pos: int):
        self.record, self.pos = record, pos

    def take(self, conv: str, length: str | None, count: int) -> list:
        if conv == "s":
            text, self.pos = _inline_string(self.record, self.pos)
            return [text]
        raw = self.record[self.pos:self.pos + 8]
        if len(raw) < 8:
            raise PrintfError("printf record: fewer arguments than the format's conversions")
        self.pos += 8
        return [_value(raw, conv)]


def _value(raw: bytes, conv: str):
    if conv in "eEfFgGaA":
        if len(raw) not in _FLOATS:
            raise PrintfError(f"printf: a {len(raw)}-byte floating-point argument")
        return float(np.frombuffer(raw, _FLOATS[len(raw)])[0])
    return int.from_bytes(raw, "little")


def _integer(v: int, conv: str, length: str | None) -> int:
    bits = _INT_BITS.get(length or "", 32)   # int is 32 bits, long 64 (OpenCL C and HIP alike)
    v &= (1 << bits) - 1
    if conv in "di" and v >> (bits - 1):
        v -= 1 << bits
    return v


def _one(spec: re.Match, flags: str, value, width: int | None, prec: int | None) -> str:
    conv, length = spec["conv"], spec["len"]
    w = "" if width is None else str(width)
    pr = "" if prec is None else f".{prec}"
    if conv == "s":
        return f"%{flags}{w}{pr}s" % value
    if conv == "c":
        return f"%{flags}{w}c" % chr(value & 0xFF)
    if conv == "p":
        return f"%{flags}{w}s" % f"0x{value:x}"
    if conv in "aA":
        text = float(value).hex()
        return f"%{flags}{w}s" % (text.upper() if conv == "A" else text)
    if conv in "eEfFgG":
        return f"%{flags}{w}{pr}{conv}" % value
    v = _integer(value, conv, length)
    return f"%{flags}{w}{pr}{'d' if conv in 'iu' else conv}" % v


def render(fmt: str, args) -> str:
    """`fmt` with each conversion filled from `args` (an object whose take(conv, length, count) returns the
    values of the next argument), as C printf would print it."""
    out, pos = [], 0
    for m in _CONVERSION.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        conv, flags = m["conv"], m["flags"]
        if conv == "%":
            out.append("%")
            continue
        width = _star(args) if m["width"] == "*" else None if m["width"] is None else int(m["width"])
        if width is not None and width < 0:   # C: a negative * width means the - flag
            width, flags = -width, flags + "-"
        prec = _star(args) if m["prec"] == "*" else None if m["prec"] is None else int(m["prec"] or 0)
        if prec is not None and prec < 0:     # C: a negative * precision is as if none were given
            prec = None
        if max(width or 0, prec or 0) > MAX_FIELD:   # a GPU-chosen width must not exhaust host memory
            raise PrintfError(f"printf conversion {m.group(0)!r}: a field of {max(width or 0, prec or 0)} "
                              f"characters exceeds {MAX_FIELD}")
        count = int(m["vec"][1:]) if m["vec"] else 1
        values = args.take(conv, m["len"], count)
        if conv != "n":
            out.append(",".join(_one(m, flags, v, width, prec) for v in values))
    out.append(fmt[pos:])
    return "".join(out)


def _star(args) -> int:
    return _integer(args.take("d", None, 1)[0], "d", None)
