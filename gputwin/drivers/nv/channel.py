"""One GPFIFO channel of the NV driver: its GPFIFO ring and USERD (in one host allocation the GPU reaches
through UVM), a pushbuffer ring, and the doorbell (the work-submit token written to the usermode region)."""
from __future__ import annotations

import ctypes
import time

import numpy as np

from gputwin.abi import nv_methods as m
from gputwin.abi.nv_classes import NVC361_NOTIFY_CHANNEL_PENDING
from gputwin.errors import GpuHang

GPFIFO_ENTRIES = 1024
PUSHBUF_BYTES = 1 << 20


class Channel:
    def __init__(self, name: str, ring, pushbuf, usermode, token: int, wait_idle, watchdog_s):
        self.name, self.ring, self.pushbuf, self.usermode, self.token = name, ring, pushbuf, usermode, token
        self.gpfifo = np.ctypeslib.as_array((ctypes.c_uint32 * (2 * GPFIFO_ENTRIES)).from_address(ring.host_addr))
        self.userd = np.ctypeslib.as_array((ctypes.c_uint32 * (m.USERD_SIZE // 4)).from_address(
            ring.host_addr + 8 * GPFIFO_ENTRIES))
        self.pb = np.ctypeslib.as_array((ctypes.c_uint32 * (PUSHBUF_BYTES // 4)).from_address(pushbuf.host_addr))
        self.put, self.pb_pos = 0, 0
        self._wait_idle, self._watchdog_s = wait_idle, watchdog_s

    def push(self, dwords: list[int]) -> None:
        n = len(dwords)
        if n * 4 > PUSHBUF_BYTES:
            raise ValueError(f"{self.name}: a submission of {n} dwords does not fit the pushbuffer")
        if self.pb_pos + n > PUSHBUF_BYTES // 4:        # wrap: everything queued before must be done
            self._wait_idle()
            self.pb_pos = 0
        deadline = None                                 # set only when the ring is full (rare)
        while (self.put + 1) % GPFIFO_ENTRIES == int(self.userd[m.USERD_GP_GET // 4]):   # ring full
            if deadline is None:
                deadline = time.monotonic() + self._watchdog_s()
            elif time.monotonic() > deadline:
                raise GpuHang(f"{self.name}: GPFIFO full and GP_GET not moving")
            self._wait_idle()
        self.pb[self.pb_pos:self.pb_pos + n] = dwords
        e0, e1 = m.gp_entry(self.pushbuf.va + 4 * self.pb_pos, n)
        self.gpfifo[2 * self.put:2 * self.put + 2] = (e0, e1)
        self.pb_pos += n
        self.put = (self.put + 1) % GPFIFO_ENTRIES
        self.userd[m.USERD_GP_PUT // 4] = self.put
        self.usermode.write32(NVC361_NOTIFY_CHANNEL_PENDING, self.token)
