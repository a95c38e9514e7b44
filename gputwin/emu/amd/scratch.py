"""Where a lane's private (scratch) bytes live, and the byte offsets of an access to them.

Two homes, chosen per dispatch:
- no backing given (standalone runs, `scratch_base=None`): one emulator array, each lane's bytes
  contiguous: `(wave slot * lanes + lane) * per_lane + offset`. Nothing else can see it, so the layout is
  free; contiguous lanes keep every access a plain gather.
- the driver's backing (COMPUTE_DISPATCH_SCRATCH_BASE): the hardware's layout, so what a kernel spills is
  where a debugger or the driver would find it. Wave slot s starts at `base + s * wave_bytes` (wave_bytes
  = TMPRING_SIZE.WAVESIZE granules = per_lane * lanes); inside a slot flat scratch is swizzled with
  4-byte elements and an index stride of the wave size: byte b of lane L is at
  `(b // 4) * 4 * lanes + L * 4 + b % 4` (RDNA3/RDNA4 ISA "Scratch": swizzle(offset, threadID);
  LLVM AMDGPUUsage: the same private address in every lane touches adjacent dwords).

An access that stays inside one dword is contiguous in both layouts; a wider (or dword-straddling) one
in the swizzled layout is returned as one offset per dword (aligned) or per byte, shape (N, pieces),
which the access.py primitives accept. The common case, every lane of a full wave group at one aligned
offset (spills), skips the offsets: `read_uniform` / `write_uniform` move whole dword rows.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from gputwin.errors import MemoryFault


@dataclass
class Scratch:
    buf: np.ndarray        # uint8: the private array, or the bytes of the backing's mapping
    per_lane: int          # bytes each lane may address
    lanes: int             # wave size (the swizzle's index stride)
    first_wave: int        # global id of the wave in slot 0 (the batch's first wave)
    slots: int             # wave slots of the batch
    base: int = 0          # byte offset of slot 0 in buf
    swizzled: bool = False

    def locate(self, offs: np.ndarray, lane_ids: np.ndarray, nbytes: int, write: bool) -> np.ndarray:
        """Byte offsets in `buf` of an nbytes access at private offsets `offs` by the flat (wave, lane)
        ids `lane_ids`: shape (N,) when contiguous per lane, else (N, pieces)."""
        bad = (offs < 0) | (offs + nbytes > self.per_lane)
        if bad.any():
            raise MemoryFault(f"scratch access outside the {self.per_lane} private bytes per lane",
                              address=int(offs[np.argmax(bad)]), write=write)
        slot = lane_ids // self.lanes - self.first_wave
        lane = lane_ids % self.lanes
        if not self.swizzled:
            return self.base + (slot * self.lanes + lane) * self.per_lane + offs
        row = 4 * self.lanes                       # bytes between a lane's consecutive dwords
        start = self.base + slot * (self.lanes * self.per_lane) + lane * 4
        if nbytes <= 4 and not ((offs & 3) + nbytes > 4).any():
            return start + (offs >> 2) * row + (offs & 3)
        piece = 1 if (offs & 3).any() else 4
        o = offs[:, None] + np.arange(0, nbytes, piece)
        return start[:, None] + (o >> 2) * row + (o & 3)

    @cached_property
    def _dwords(self) -> np.ndarray | None:
        """uint32 view (slot, dword, lane) when swizzled, (slot, lane, dword) otherwise; None if unaligned."""
        nd = self.per_lane // 4
        if self.per_lane % 4 or self.base % 4 or self.buf.ctypes.data % 4 or not nd:
            return None
        words = np.frombuffer(self.buf, np.uint32, count=self.buf.size // 4)[self.base // 4:]
        shape = (self.slots, nd, self.lanes) if self.swizzled else (self.slots, self.lanes, nd)
        return words[:self.slots * nd * self.lanes].reshape(shape)

    def _rows(self, waves: np.ndarray, offset: int, ndw: int, write: bool):
        if self._dwords is None or offset & 3:
            return None
        if offset + 4 * ndw > self.per_lane:
            raise MemoryFault(f"scratch access outside the {self.per_lane} private bytes per lane", address=offset,
                              write=write)
        return waves - self.first_wave, offset >> 2

    def read_uniform(self, waves: np.ndarray, offset: int, ndw: int) -> list[np.ndarray] | None:
        """Dwords offset/4 .. + ndw of every lane of `waves` (global ids): ndw (n, lanes) arrays, or None
        when the fast path does not apply (unaligned)."""
        at = self._rows(waves, offset, ndw, False)
        if at is None:
            return None
        slot, k = at
        if self.swizzled:
            return [self._dwords[slot, k + i, :] for i in range(ndw)]
        return [self._dwords[slot, :, k + i] for i in range(ndw)]

    def write_uniform(self, waves: np.ndarray, offset: int, values: list[np.ndarray]) -> bool:
        """Store ndw (n, lanes) arrays at dword offset/4 of every lane of `waves`; False when unaligned."""
        at = self._rows(waves, offset, len(values), True)
        if at is None:
            return False
        slot, k = at
        for i, v in enumerate(values):
            if self.swizzled:
                self._dwords[slot, k + i, :] = v
            else:
                self._dwords[slot, :, k + i] = v
        return True
