"""Run test_standalone-style end-to-end checks through the whole stack: an Arena and kernel calls backed
by a MOCKAMD device (driver allocations + copyin/copyout, PM4 dispatches) instead of bare emulator memory."""
from __future__ import annotations

import functools

import numpy as np

import gputwin


@functools.cache
def device(spec: str):
    """One device per spec for the whole test session."""
    return gputwin.open_device(spec)


class DeviceArena:
    """The Arena calls the end-to-end tests make, on device buffers."""

    def __init__(self, dev):
        self.dev = dev

    def alloc(self, nbytes: int, data=None):
        """A buffer holding `data`, else zeros like the standalone Arena's (device memory is undefined until
        written: GPUTWIN_SANITIZE=initcheck would rightly flag a kernel reading it)."""
        buf = self.dev.alloc(max(int(nbytes), 4))
        self.dev.copyin(buf, np.ascontiguousarray(data) if data is not None else np.zeros(buf.size, np.uint8))
        return buf

    def array(self, buf, dtype, count: int) -> np.ndarray:
        out = np.empty(count, dtype)
        self.dev.copyout(out, buf)
        return out


class DeviceKernel:
    def __init__(self, dev, prg):
        self.dev, self.prg = dev, prg

    def __call__(self, *args, grid=(1, 1, 1), block=(1, 1, 1)):
        self.prg(*args, grid=grid, block=block)
        self.dev.synchronize()


def device_kernel(spec: str, image: bytes, name: str):
    dev = device(spec)
    return DeviceArena(dev), DeviceKernel(dev, dev.load(image, name))
