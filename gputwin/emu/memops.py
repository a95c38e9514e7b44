"""Bulk memory operations of the emulated engines (AMD SDMA, NVIDIA copy class): copy and fill through a
GPU AddressSpace, where a range may cross from one mapping into the next."""
from __future__ import annotations

import numpy as np

from gputwin.emu.memory import AddressSpace


def _spans(mem: AddressSpace, va: int, size: int, write: bool):
    """(va, length) pieces of [va, va+size), each inside one mapping; MemoryFault where none is mapped."""
    while size:
        region = mem.find(va)
        n = size if region is None else min(size, region.end - va)
        yield va, mem.view(va, n, write=write)
        va, size = va + n, size - n


def copy(mem: AddressSpace, dst: int, src: int, size: int) -> None:
    """memmove of size bytes inside the GPU address space."""
    data = np.concatenate([v for _, v in _spans(mem, src, size, False)]) if size else None
    pos = 0
    for _, view in _spans(mem, dst, size, True):
        view[:] = data[pos:pos + view.size]
        pos += view.size


def fill(mem: AddressSpace, dst: int, pattern: bytes, size: int) -> None:
    """Repeat `pattern` over size bytes at dst (the last repetition truncated)."""
    pat = np.frombuffer(pattern, np.uint8)
    pos = 0
    for _, view in _spans(mem, dst, size, True):
        view[:] = np.resize(np.roll(pat, -(pos % pat.size)), view.size)
        pos += view.size
