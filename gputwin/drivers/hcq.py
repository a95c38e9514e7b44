"""HCQ: the hardware-command-queue runtime shared by the AMD driver now and the NVIDIA driver later.

A device owns memory (`Buffer`), one `TimelineSignal` and two kinds of queues: a compute queue and a copy
queue. Queues are *built* on the host as lists of packet dwords (`wait`, `exec`, `copy`, `signal`) and then
`submit`ted: the packets go into a ring in GPU-visible memory and a doorbell store through
`Mapping.write64` tells the hardware. Every submission waits for the timeline value of the previous one and
signals the next, so compute and copy work run in program order while the host only ever waits on one
number. The subclass supplies the hardware: memory allocation, packet encodings, sleeping on interrupts,
and how a fault or a hang is reported.
"""
from __future__ import annotations

import ctypes
import os
import time

import numpy as np

from gputwin.errors import DeviceLost, GpuHang  # noqa: F401 (DeviceLost: drivers' and users' import)


def round_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def watchdog_s() -> float:
    """How long a wait may last before the GPU is declared hung (GPUTWIN_WATCHDOG_S, default 300 s: the
    emulators' default too, generous so that a slow shared machine never turns correct work into a hang)."""
    return float(os.environ.get("GPUTWIN_WATCHDOG_S", "300"))




class Buffer:
    """GPU memory: `va` is its GPU virtual address; `host_addr` its CPU mapping, or None. `read`/`write` reach
    it from the host either way: through the CPU mapping, or (no CPU pointer, as over USB) through the device's
    `_host_read`/`_host_write` (a BAR or a DMA window)."""

    def __init__(self, device: HCQDevice, va: int, size: int, host_addr: int | None = None, meta=None):
        self.device, self.va, self.size, self.host_addr, self.meta = device, va, size, host_addr, meta
        self.freed = False

    def host_view(self) -> np.ndarray:
        """uint8 array over the CPU mapping (host-visible buffers only)."""
        if self.host_addr is None:
            raise ValueError(f"buffer at {self.va:#x} is not mapped for the CPU")
        return np.ctypeslib.as_array((ctypes.c_uint8 * self.size).from_address(self.host_addr))

    def write(self, offset: int, data) -> None:
        if self.host_addr is not None:
            src = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
            self.host_view()[offset:offset + src.size] = src
        else:
            self.device._host_write(self, offset, data)

    def read(self, offset: int, size: int) -> np.ndarray:
        """size bytes at offset (uint8)."""
        if self.host_addr is not None:
            return self.host_view()[offset:offset + size]
        return self.device._host_read(self, offset, size)

    def __repr__(self) -> str:
        return f"Buffer(va={self.va:#x}, size={self.size:#x}, device={self.device.name})"


class SlotRing:
    """Per-launch data (kernargs, QMDs) handed out front to back from one host-visible buffer; a piece that
    does not fit first lets the device drain (everything before it is done) and starts again at 0."""

    def __init__(self, buf: Buffer, drain):
        self.buf, self.drain, self.used = buf, drain, 0

    def take(self, size: int) -> int:
        if self.used + size > self.buf.size:
            self.drain()
            self.used = 0
        off = self.used
        self.used += size
        return off


class TimelineSignal:
    """A monotonically increasing 64-bit value in host-reachable GPU memory, written by the GPU's queues."""

    def __init__(self, buf: Buffer, offset: int = 0):
        self.buf, self.va, self.offset = buf, buf.va + offset, offset
        self._cell = ctypes.c_uint64.from_address(buf.host_addr + offset) if buf.host_addr is not None else None

    @property
    def value(self) -> int:
        if self._cell is not None:
            return self._cell.value
        return int(self.buf.read(self.offset, 8).view("<u8")[0])

    @value.setter
    def value(self, v: int) -> None:
        if self._cell is not None:
            self._cell.value = v
        else:
            self.buf.write(self.offset, int(v).to_bytes(8, "little"))


class HWQueue:
    """Packets under construction. Subclasses encode; `submit` hands them to the device's ring."""

    def __init__(self):
        self.cmds: list[int] = []

    def q(self, *dwords: int) -> HWQueue:
        self.cmds.extend(int(d) & 0xFFFFFFFF for d in dwords)
        return self

    def wait(self, signal: TimelineSignal, value: int) -> HWQueue:
        raise NotImplementedError

    def signal(self, signal: TimelineSignal, value: int) -> HWQueue:
        raise NotImplementedError

    def submit(self, device: HCQDevice) -> HWQueue:
        raise NotImplementedError

    def announce_observed(self, signal: TimelineSignal, value: int) -> HWQueue:
        """Put a marker first that tells gputwin's emulated engines the host saw `signal` at `value` or more
        (racecheck across queues; only a device with `announces_host_waits` asks for it)."""
        raise NotImplementedError


class HWComputeQueue(HWQueue):
    def exec(self, program: Program, kernargs_va: int, grid: tuple[int, int, int],
             block: tuple[int, int, int], lds: int = 0) -> HWComputeQueue:
        """Launch `program`; `lds` is the dynamic shared memory per workgroup beyond its static amount."""
        raise NotImplementedError


class HWCopyQueue(HWQueue):
    def copy(self, dst_va: int, src_va: int, size: int) -> HWCopyQueue:
        raise NotImplementedError


def _is_int(v) -> bool:
    """An integer argument: Python or numpy, not a bool (True is no byte count)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _bytes_view(data, what: str) -> memoryview:
    """A flat byte view of a bytes-like host buffer; anything else is the caller's TypeError, named."""
    try:
        return memoryview(data).cast("B")
    except TypeError as e:
        raise TypeError(f"{what} needs a C-contiguous bytes-like object or ndarray, got {type(data).__name__}: {e}") from None


def _dims(v, what: str) -> tuple[tuple[int, int, int], int]:
    """(x, y, z) and how many were given, from an int or a 1..3-tuple of positive ints."""
    try:
        t = (v,) if isinstance(v, (int, np.integer)) else tuple(v)
    except TypeError:
        raise ValueError(f"{what} must be 1 to 3 positive integers, got {v!r}") from None
    if not 1 <= len(t) <= 3 or not all(_is_int(x) and x > 0 for x in t):
        raise ValueError(f"{what} must be 1 to 3 positive integers, got {v!r}")
    return tuple(int(x) for x in t) + (1,) * (3 - len(t)), len(t)


class Program:
    """A loaded kernel: `prg(*args, grid=(workgroups), block=(work-items))` enqueues one launch.
    `lds=N` asks for N bytes of dynamic shared memory per workgroup (HIP's sharedMemBytes)."""

    def __init__(self, device: HCQDevice, name: str):
        self.device, self.name = device, name

    def __call__(self, *args, grid=(1, 1, 1), block=(1, 1, 1), lds: int = 0, wait: bool = False):
        grid3, ng = _dims(grid, "grid")
        block3, nb = _dims(block, "block")
        if not _is_int(lds) or lds < 0:
            raise ValueError(f"lds must be a byte count >= 0, got {lds!r}")
        self.device._launch(self, args, grid3, block3, max(ng, nb), int(lds))
        if wait:
            self.device.synchronize()


class HCQDevice:
    """The public device API (docs/contracts.md) on top of the subclass's queues and memory."""
    name: str = "HCQ"
    arch: str = ""
    staging_size = 2 << 20      # bytes per staging half; copies larger than this are chunked
    announces_host_waits = False   # the sanitizers' racecheck is on: submissions say what the host saw

    def __init__(self):
        self._observed = 0          # the highest timeline value the host has waited for
        self._announced: dict[type, int] = {}   # per kind of queue, the value its marker last said
        self._lost: BaseException | None = None
        self._closed = False
        self.timeline_signal = self._new_signal()
        self.timeline_value = 1    # the value the next submission will signal
        self.timeline_signal.value = 0
        self._staging = [self._alloc(self.staging_size, host=True) for _ in range(2)]
        self._staging_done = [0, 0]  # timeline value after which each staging half is free again
        self._staging_next = 0

    # --- to be provided by the driver ---------------------------------------------------------------
    def _alloc(self, size: int, host: bool = False) -> Buffer:
        raise NotImplementedError

    def _free(self, buf: Buffer) -> None:
        raise NotImplementedError

    def _host_read(self, buf: Buffer, offset: int, size: int) -> np.ndarray:
        """Bytes of a buffer without a CPU mapping (drivers whose buffers all have one never get here)."""
        raise NotImplementedError

    def _host_write(self, buf: Buffer, offset: int, data) -> None:
        raise NotImplementedError

    def _new_signal(self) -> TimelineSignal:
        raise NotImplementedError

    def _compute_queue(self) -> HWComputeQueue:
        raise NotImplementedError

    def _copy_queue(self) -> HWCopyQueue:
        raise NotImplementedError

    def _sleep(self, timeout_s: float) -> None:
        """Block up to timeout_s for the GPU to raise an interrupt; raise GpuFault/GpuHang it reports."""
        raise NotImplementedError

    def _launch(self, program: Program, args: tuple, grid, block, dims: int, lds: int) -> None:
        raise NotImplementedError

    def _release(self) -> None:
        """Tear down queues and memory (close)."""

    # --- the timeline ----------------------------------------------------------------------------------
    def _check(self) -> None:
        if self._closed:
            raise DeviceLost(f"{self.name} is closed")
        if self._lost is not None:
            raise DeviceLost(f"{self.name} is unusable after an earlier error ({self._lost}); open a fresh device")

    def _next_value(self) -> tuple[int, int]:
        """(value to wait for, value to signal) for the next submission, in program order."""
        v = self.timeline_value
        self.timeline_value += 1
        return v - 1, v

    def _wait_value(self, value: int) -> None:
        """Poll, then sleep on the device's interrupts, until the timeline reaches `value`. The GPU is hung
        when the timeline does not move for GPUTWIN_WATCHDOG_S seconds."""
        self._check()
        seen, deadline = self.timeline_signal.value, time.monotonic() + watchdog_s()
        try:
            while (now := self.timeline_signal.value) < value:
                if now != seen:
                    seen, deadline = now, time.monotonic() + watchdog_s()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise GpuHang(f"{self.name}: timeline signal stuck at {now}, waiting for {value}, for more "
                                  f"than GPUTWIN_WATCHDOG_S={watchdog_s():g} s")
                self._sleep(min(left, 0.1))
        except Exception as e:
            self._lost = e
            raise
        self._observed = max(self._observed, value)   # what the wait guarantees; what it read is timing

    def synchronize(self) -> None:
        self._wait_value(self.timeline_value - 1)

    def _enqueue(self, build) -> int:
        """Submit `build(wait, signal)`, the queue for the next timeline step; returns the value it signals.
        A build that fails gives its value back: nothing was submitted, nothing will ever signal it."""
        wait, sig = self._next_value()
        try:
            queue = build(wait, sig)
        except BaseException:
            self.timeline_value -= 1
            raise
        self._submit(queue)
        return sig

    def _submit(self, queue: HWQueue) -> None:
        """Hand a built queue to the hardware. A failure here leaves a timeline value that will never be
        signalled, so the device is lost."""
        kind = type(queue)
        if self.announces_host_waits and self._announced.get(kind, 0) < self._observed:
            queue.announce_observed(self.timeline_signal, self._observed)
            self._announced[kind] = self._observed
        try:
            queue.submit(self)
        except Exception as e:
            self._lost = e
            raise

    # --- memory ---------------------------------------------------------------------------------------
    def alloc(self, nbytes: int) -> Buffer:
        self._check()
        if not _is_int(nbytes) or nbytes <= 0:
            raise ValueError(f"alloc wants a positive byte count, got {nbytes!r}")
        return self._alloc(int(nbytes))

    def free(self, buf: Buffer) -> None:
        """Release a buffer once the work queued before has finished with it."""
        self._range(buf, 0, 0, "free")
        self.synchronize()
        buf.freed = True
        self._free(buf)

    def _pointer_of(self, value) -> int:
        """The GPU address a buffer argument passes to a kernel; TypeError for anything else."""
        if not isinstance(value, Buffer):
            raise TypeError(f"wants a buffer of {self.name}, got {type(value).__name__}")
        if value.device is not self:
            raise TypeError(f"the buffer belongs to {value.device.name}, not {self.name}")
        if value.freed:
            raise TypeError(f"the buffer at {value.va:#x} was freed")
        return value.va

    def _range(self, buf: Buffer, offset: int, size: int, what: str) -> None:
        """Check every argument of a buffer access before any state changes (a timeline value taken and
        never signalled would lose the device)."""
        if not isinstance(buf, Buffer) or buf.device is not self:
            raise TypeError(f"{what}: {buf!r} is not a buffer of {self.name}")
        if buf.freed:
            raise ValueError(f"{what}: {buf!r} was freed")
        if not _is_int(offset):
            raise TypeError(f"{what}: the offset must be an integer byte count, got {offset!r}")
        if offset < 0 or offset + size > buf.size:
            raise ValueError(f"{what}: {size} bytes at offset {offset} do not fit a buffer of {buf.size} bytes")

    def _staging_half(self) -> tuple[Buffer, int]:
        i = self._staging_next
        self._staging_next ^= 1
        self._wait_value(self._staging_done[i])
        return self._staging[i], i

    def copyin(self, buf: Buffer, data, offset: int = 0) -> None:
        """Copy host bytes (bytes-like or ndarray) into `buf` at `offset`, through the copy engine."""
        self._check()
        src = np.frombuffer(_bytes_view(data, "copyin"), np.uint8) if not isinstance(data, np.ndarray) \
            else np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        self._range(buf, offset, src.size, "copyin")
        offset = int(offset)
        for pos in range(0, src.size, self.staging_size):
            n = min(self.staging_size, src.size - pos)
            stage, i = self._staging_half()
            stage.write(0, src[pos:pos + n])
            dst = buf.va + offset + pos
            self._staging_done[i] = self._enqueue(lambda wait, sig: self._copy_queue().wait(
                self.timeline_signal, wait).copy(dst, stage.va, n).signal(self.timeline_signal, sig))

    def copyout(self, out, buf: Buffer, offset: int = 0) -> None:
        """Copy len(out) bytes of `buf` from `offset` into the writable host buffer `out`."""
        self._check()
        if isinstance(out, np.ndarray) and not out.flags.c_contiguous:
            raise ValueError("copyout needs a contiguous array")
        dst = out.reshape(-1).view(np.uint8) if isinstance(out, np.ndarray) else \
            np.frombuffer(_bytes_view(out, "copyout"), np.uint8)
        if not dst.flags.writeable:
            raise TypeError(f"copyout needs a writable destination, got a read-only {type(out).__name__}")
        self._range(buf, offset, dst.size, "copyout")
        offset = int(offset)
        for pos in range(0, dst.size, self.staging_size):
            n = min(self.staging_size, dst.size - pos)
            stage, i = self._staging_half()
            src = buf.va + offset + pos
            sig = self._staging_done[i] = self._enqueue(lambda wait, sig: self._copy_queue().wait(
                self.timeline_signal, wait).copy(stage.va, src, n).signal(self.timeline_signal, sig))
            self._wait_value(sig)
            dst[pos:pos + n] = stage.read(0, n)

    def close(self) -> None:
        if self._closed:
            return
        try:
            if self._lost is None:
                self.synchronize()
        finally:
            self._closed = True
            self._release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

