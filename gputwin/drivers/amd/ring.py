"""A user-mode queue's ring: packets are copied into GPU-visible memory, then the write pointer is published
in memory and rung on the doorbell (a 64-bit store through `write64`, so a mock sees it). `Ring` keeps the ring
in host-mapped memory (KFD); the AM driver's rings sit in VRAM behind a BAR (drivers/amd/am/queues.py)."""
from __future__ import annotations

import ctypes
import time
from typing import Callable

import numpy as np

from gputwin.drivers.kernel import Mapping
from gputwin.errors import GpuHang


class RingBase:
    """`unit` is what the pointers count: 4 (dwords) for PM4 queues, 1 (bytes) for SDMA queues.
    `contiguous`: packets must not wrap around the end (SDMA); the tail is then filled with NOP dwords (0).
    Subclasses say where the ring and its pointers live: `_store` dwords, `_read_rptr`, `_write_wptr`."""

    def __init__(self, name: str, ring_size: int, doorbell, doorbell_offset: int, unit: int, contiguous: bool,
                 stall: Callable[[float], None], timeout_s: Callable[[], float]):
        self.name, self.size_dw, self.unit, self.contiguous = name, ring_size // 4, unit, contiguous
        self.doorbell, self.doorbell_offset = doorbell, doorbell_offset   # .write64(offset, value)
        self.stall, self.timeout_s = stall, timeout_s
        self.put = 0   # in dwords since creation; the pointers the hardware sees are put * 4 // unit

    def _store(self, pos: int, data: np.ndarray) -> None:
        raise NotImplementedError

    def _read_rptr(self) -> int:
        raise NotImplementedError

    def _write_wptr(self, value: int) -> None:
        raise NotImplementedError

    def _free_dw(self) -> int:
        return self.size_dw - (self.put - self._read_rptr() * self.unit // 4)

    def _reserve(self, n: int) -> None:
        deadline = time.monotonic() + self.timeout_s()
        while self._free_dw() < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise GpuHang(f"{self.name}: ring full, the read pointer stopped at {self._read_rptr()}")
            self.stall(min(left, 0.01))

    def push(self, cmds: list[int]) -> None:
        n = len(cmds)
        if n == 0:
            return
        if n > self.size_dw // 2:
            raise ValueError(f"{self.name}: {n} dwords of packets do not fit half the ring ({self.size_dw // 2})")
        data = np.asarray(cmds, dtype=np.uint32)
        pos = self.put % self.size_dw
        if self.contiguous and pos + n > self.size_dw:   # pad to the end of the ring with NOPs
            pad = self.size_dw - pos
            self._reserve(pad + n)
            self._store(pos, np.zeros(pad, np.uint32))
            self.put += pad
            pos = 0
        else:
            self._reserve(n)
        first = min(n, self.size_dw - pos)
        self._store(pos, data[:first])
        if first < n:
            self._store(0, data[first:])
        self.put += n
        value = self.put * 4 // self.unit
        self._write_wptr(value)
        self.doorbell.write64(self.doorbell_offset, value)


class Ring(RingBase):
    """A ring and its pointers in host-visible memory (KFD's GTT): plain stores, read pointer at rptr_addr."""

    def __init__(self, name: str, ring_addr: int, ring_size: int, rptr_addr: int, wptr_addr: int,
                 doorbell: Mapping, doorbell_offset: int, unit: int, contiguous: bool,
                 stall: Callable[[float], None], timeout_s: Callable[[], float]):
        super().__init__(name, ring_size, doorbell, doorbell_offset, unit, contiguous, stall, timeout_s)
        self.words = np.ctypeslib.as_array((ctypes.c_uint32 * self.size_dw).from_address(ring_addr))
        self.rptr = ctypes.c_uint64.from_address(rptr_addr)
        self.wptr = ctypes.c_uint64.from_address(wptr_addr)

    def _store(self, pos: int, data: np.ndarray) -> None:
        self.words[pos:pos + len(data)] = data

    def _read_rptr(self) -> int:
        return self.rptr.value

    def _write_wptr(self, value: int) -> None:
        self.wptr.value = value
