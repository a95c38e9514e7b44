"""GPU virtual address spaces: every emulated memory access goes through here.

An `AddressSpace` maps GPU virtual address ranges onto host memory (numpy byte arrays, possibly wrapping
host memory at a raw address). Accesses are bounds- and permission-checked; a bad address raises
`gputwin.errors.MemoryFault` and never touches host memory outside a mapping.

Vector accesses (`load`/`store`) take an array of addresses, one per active lane, and move `nbytes` at
each; they are vectorised with numpy, with a fast path when every lane hits the same region.
"""
from __future__ import annotations

import bisect
import ctypes
from dataclasses import dataclass

import numpy as np

from gputwin import sanitizer_config
from gputwin.errors import MemoryFault


@dataclass
class Region:
    base: int
    data: np.ndarray  # uint8, contiguous
    writable: bool = True
    name: str = ""
    extent: int | None = None          # bytes the allocation asked for (the rest is page padding); None: all
    shadow: np.ndarray | None = None   # initcheck: bool per byte, True once written; None: not tracked
    queue_shadow: dict | None = None   # racecheck across queues: op ids per byte (sanitizer/queues.py)

    @property
    def end(self) -> int:
        return self.base + self.data.size

    @property
    def alloc_end(self) -> int:
        """End of what was allocated: accesses past it stay in the page, but are a bug (memcheck)."""
        return self.base + (self.data.size if self.extent is None else self.extent)


def host_bytes(address: int, size: int) -> np.ndarray:
    """A writable uint8 array over host memory at `address` (which the caller keeps alive)."""
    return np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(address))


class AddressSpace:
    def __init__(self, name: str = "gpu"):
        self.name = name
        self._bases: list[int] = []
        self._regions: list[Region] = []
        self.queue_races = None    # racecheck across queues (sanitizer.queues.QueueRaces), set by the GPU

    # --- mapping -------------------------------------------------------------------------------
    def map(self, va: int, size: int, backing=None, *, writable: bool = True, name: str = "",
            extent: int | None = None, undefined: bool = False, shadow: np.ndarray | None = None) -> np.ndarray:
        """Map [va, va+size). backing: None (fresh zeroed memory), an int host address, or a uint8 array.
        extent: the bytes of it the allocation asked for (memcheck); undefined: its contents mean nothing
        until written (device memory no CPU maps): initcheck, when on, tracks which bytes were written;
        shadow: instead, initcheck's record (bool per byte) that the memory itself keeps across mappings (an
        emulated board's VRAM)."""
        if size <= 0 or va < 0 or va + size >= 1 << 64:   # ends stay representable as uint64
            raise ValueError(f"bad mapping va={va:#x} size={size:#x} (it must end below 2**64)")
        if backing is None:
            data = np.zeros(size, np.uint8)
        elif isinstance(backing, int):
            data = host_bytes(backing, size)
        else:
            data = np.asarray(backing).reshape(-1).view(np.uint8)
            if data.size < size:
                raise ValueError(f"backing of {data.size} bytes is smaller than the mapping ({size})")
            data = data[:size]
        if shadow is None and undefined and "initcheck" in sanitizer_config.checkers():
            shadow = np.zeros(size, bool)
        i = bisect.bisect_right(self._bases, va)
        if (i > 0 and self._regions[i - 1].end > va) or (i < len(self._bases) and self._bases[i] < va + size):
            raise ValueError(f"mapping va={va:#x} size={size:#x} overlaps an existing mapping")
        self._bases.insert(i, va)
        self._regions.insert(i, Region(va, data, writable, name, extent, shadow))
        return data

    def unmap(self, va: int) -> None:
        i = bisect.bisect_left(self._bases, va)
        if i == len(self._bases) or self._bases[i] != va:
            raise ValueError(f"no mapping starts at {va:#x}")
        del self._bases[i], self._regions[i]

    def regions(self) -> list[Region]:
        return list(self._regions)

    def find(self, va: int) -> Region | None:
        i = bisect.bisect_right(self._bases, va) - 1
        if i >= 0 and va < self._regions[i].end:
            return self._regions[i]
        return None

    # --- scalar (contiguous) access ------------------------------------------------------------
    def view(self, va: int, size: int, *, write: bool = False) -> np.ndarray:
        """A uint8 view of [va, va+size), which must lie inside one mapping."""
        r = self.find(va)
        if r is None or va + size > r.end:
            bad = va if r is None else r.end
            raise MemoryFault(f"{self.name}: access to unmapped address", address=bad, write=write)
        if write and not r.writable:
            raise MemoryFault(f"{self.name}: write to read-only mapping", address=va, write=True)
        if write and r.shadow is not None:   # engines (copies, fills, CP writes) initialise what they write
            r.shadow[va - r.base: va - r.base + size] = True
        return r.data[va - r.base: va - r.base + size]

    def read(self, va: int, size: int) -> bytes:
        return self.view(va, size).tobytes()

    def write(self, va: int, data) -> None:
        src = np.frombuffer(bytes(data), np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
        self.view(va, src.size, write=True)[:] = src

    def read_u32(self, va: int) -> int:
        return int(self.view(va, 4).view(np.uint32)[0]) if va % 4 == 0 else int.from_bytes(self.read(va, 4), "little")

    def read_u64(self, va: int) -> int:
        return int.from_bytes(self.read(va, 8), "little")

    def write_u32(self, va: int, value: int) -> None:
        self.write(va, (value & 0xFFFFFFFF).to_bytes(4, "little"))

    def write_u64(self, va: int, value: int) -> None:
        self.write(va, (value & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little"))

    # --- vector (per-lane) access --------------------------------------------------------------
    def _locate(self, addrs: np.ndarray, nbytes: int, write: bool):
        """Region index per address and offset within it; raises MemoryFault on the first bad lane."""
        addrs = np.asarray(addrs, dtype=np.uint64).reshape(-1)
        if addrs.size == 0:
            return addrs, None, addrs.astype(np.int64)
        lo, hi = int(addrs.min()), int(addrs.max())
        r = self.find(lo)
        if r is not None and hi + nbytes <= r.end:  # fast path: one region holds every lane
            if write and not r.writable:
                raise MemoryFault(f"{self.name}: write to read-only mapping", address=lo, write=True)
            return addrs, r, (addrs - np.uint64(r.base)).astype(np.int64)
        bases = np.array(self._bases, dtype=np.uint64)
        idx = np.searchsorted(bases, addrs, side="right").astype(np.int64) - 1
        ends = np.array([reg.end for reg in self._regions] + [0], dtype=np.uint64)
        # addr + nbytes would wrap past 2**64; ends - addrs cannot (addrs >= base where idx >= 0)
        ok = (idx >= 0) & (addrs < ends[idx]) & (ends[idx] - addrs >= np.uint64(nbytes))
        if write:
            ok &= np.array([reg.writable for reg in self._regions] + [False])[idx]
        if not ok.all():
            bad = int(addrs[np.argmin(ok)])
            raise MemoryFault(f"{self.name}: {'write' if write else 'read'} of {nbytes} bytes at unmapped address",
                              address=bad, write=write)
        return addrs, idx, (addrs - bases[idx]).astype(np.int64)

    def load(self, addrs: np.ndarray, nbytes: int) -> np.ndarray:
        """Bytes at each address: uint8 array shaped addrs.shape + (nbytes,)."""
        shape = np.shape(addrs)
        addrs, where, offs = self._locate(addrs, nbytes, False)
        out = np.empty((addrs.size, nbytes), np.uint8)
        span = np.arange(nbytes, dtype=np.int64)
        if isinstance(where, Region):
            out[:] = where.data[offs[:, None] + span]
        elif where is not None:
            for ri in np.unique(where):
                sel = where == ri
                out[sel] = self._regions[ri].data[offs[sel][:, None] + span]
        return out.reshape(shape + (nbytes,))

    def store(self, addrs: np.ndarray, data: np.ndarray) -> None:
        """Write data[..., nbytes] (uint8) at each address; later lanes win where addresses repeat."""
        data = np.asarray(data, np.uint8)
        nbytes = data.shape[-1]
        addrs, where, offs = self._locate(addrs, nbytes, True)
        data = data.reshape(-1, nbytes)
        span = np.arange(nbytes, dtype=np.int64)
        if isinstance(where, Region):
            where.data[offs[:, None] + span] = data
            if where.shadow is not None:
                where.shadow[offs[:, None] + span] = True
        elif where is not None:
            for ri in np.unique(where):
                sel = where == ri
                r = self._regions[ri]
                r.data[offs[sel][:, None] + span] = data[sel]
                if r.shadow is not None:
                    r.shadow[offs[sel][:, None] + span] = True

    def load_u32(self, addrs: np.ndarray, ndwords: int = 1) -> np.ndarray:
        """Dwords at each address: uint32 array shaped addrs.shape + (ndwords,)."""
        return self.load(addrs, 4 * ndwords).view(np.uint32)

    def store_u32(self, addrs: np.ndarray, values: np.ndarray) -> None:
        values = np.ascontiguousarray(values, dtype=np.uint32)
        if values.ndim == np.ndim(addrs):
            values = values[..., None]
        self.store(addrs, values.view(np.uint8))
