"""Ring: packets land modulo the ring, pointers count the queue's unit, the doorbell gets the write pointer."""
import ctypes

import numpy as np
import pytest

from gputwin.drivers.amd.ring import Ring
from gputwin.errors import GpuHang


class Doorbell:
    def __init__(self):
        self.writes = []

    def write64(self, offset, value):
        self.writes.append((offset, value))


def make(unit, contiguous, size=64, consume=True):
    ring = (ctypes.c_uint32 * (size // 4))()
    ptrs = (ctypes.c_uint64 * 2)()
    bell = Doorbell()

    def stall(_):
        if consume:   # the "hardware" catches up with the write pointer
            ptrs[0] = ptrs[1]
    r = Ring("test", ctypes.addressof(ring), size, ctypes.addressof(ptrs), ctypes.addressof(ptrs) + 8, bell, 0x18,
             unit, contiguous, stall, lambda: 0.05)
    r.keep_alive = (ring, ptrs)   # the Ring holds raw addresses only
    return r, np.ctypeslib.as_array(ring), ptrs, bell


def test_pm4_ring_wraps_mid_packet_and_counts_dwords():
    r, words, ptrs, bell = make(unit=4, contiguous=False)
    r.push(list(range(1, 7)))                  # dwords 0..5
    r.push(list(range(100, 106)))              # 6..11
    ptrs[0] = 12
    r.push(list(range(200, 208)))              # 12..15 then wraps to 0..3
    assert list(words[12:]) == [200, 201, 202, 203] and list(words[:4]) == [204, 205, 206, 207]
    assert bell.writes == [(0x18, 6), (0x18, 12), (0x18, 20)] and ptrs[1] == 20


def test_sdma_ring_pads_the_tail_with_nops_and_counts_bytes():
    r, words, ptrs, bell = make(unit=1, contiguous=True)
    r.push([7] * 6)
    r.push([8] * 6)
    ptrs[0] = 48
    r.push([9] * 5)                            # does not fit before the end: NOPs, then from 0
    assert list(words[12:]) == [0, 0, 0, 0] and list(words[:5]) == [9] * 5
    assert bell.writes[-1] == (0x18, 4 * (16 + 5))


def test_full_ring_waits_for_the_read_pointer_then_hangs():
    r, words, ptrs, bell = make(unit=4, contiguous=False, consume=False)
    r.push([1] * 8)
    r.push([2] * 8)
    with pytest.raises(GpuHang, match="ring full"):
        r.push([3])
    r2, _, ptrs2, _ = make(unit=4, contiguous=False, consume=True)
    r2.push([1] * 8)
    r2.push([2] * 8)
    r2.push([3] * 8)                            # waited for the consumer, then went on
    assert ptrs2[1] == 24


def test_oversized_submission_is_refused():
    r, *_ = make(unit=4, contiguous=False)
    with pytest.raises(ValueError, match="half the ring"):
        r.push([0] * 9)
