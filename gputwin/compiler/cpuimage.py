"""The CPU device's program image: a host relocatable object plus the kernel's calling facts.

Layout: magic b"GTCPUIMG", u32 header length, msgpack header {name, params: [[name, dtype, kind]],
local_size, cpu, features}, then the ELF object llvmlite emitted for the host. GPU images carry their
argument layout in their own metadata (the AMDGPU note, PTX .param lists); this header is the CPU's.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import msgpack

MAGIC = b"GTCPUIMG"


@dataclass(frozen=True)
class CPUImage:
    name: str
    params: list          # [(name, dtype name, "buffer" | "scalar")]
    local_size: tuple
    cpu: str
    features: str
    obj: bytes


def pack(img: CPUImage) -> bytes:
    head = msgpack.packb({"name": img.name, "params": [list(p) for p in img.params],
                          "local_size": list(img.local_size), "cpu": img.cpu, "features": img.features})
    return MAGIC + struct.pack("<I", len(head)) + head + img.obj


def unpack(data: bytes) -> CPUImage:
    if not isinstance(data, (bytes, bytearray, memoryview)) or bytes(data[:8]) != MAGIC:
        raise ValueError("not a gputwin CPU image (compile the kernel for target 'cpu')")
    data = bytes(data)
    (n,) = struct.unpack_from("<I", data, 8)
    try:
        h = msgpack.unpackb(data[12:12 + n])
        return CPUImage(h["name"], [tuple(p) for p in h["params"]], tuple(h["local_size"]), h["cpu"],
                        h["features"], data[12 + n:])
    except (ValueError, KeyError, TypeError, msgpack.exceptions.ExtraData) as e:
        raise ValueError(f"corrupt gputwin CPU image header: {e}") from None
