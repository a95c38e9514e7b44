"""The CPU device: the public device API (docs/contracts.md) over host memory and JIT-compiled kernels.

Programs are the compiler's CPU images (gputwin.compiler.cpuimage): a host object that llvmlite's
MCJIT links into this process. A launch runs every workgroup and work-item in order on the calling
thread, so it is synchronous and deterministic. Every buffer access in CPU code is bounds checked
by the compiler; a bad one stops the launch and surfaces here as MemoryFault, never a host crash, and
every loop iteration spends a budget derived from GPUTWIN_WATCHDOG_S, so a runaway launch is GpuHang.
"""
from __future__ import annotations

import ctypes

import numpy as np

from gputwin.drivers.hcq import watchdog_s
from gputwin.errors import GpuHang, KernelNotFound, MemoryFault, OutOfMemory

_SCALAR_NP = {"int32": np.int32, "int64": np.int64, "uint32": np.uint32, "float32": np.float32}
_ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4, "int64": 8, "uint8": 1, "uint32": 4,
             "int16": 2, "bool": 1}
_ALIGN = 64
ITERATIONS_PER_WATCHDOG_SECOND = 200_000_000   # a deterministic stand-in for wall time (see run)


class CPUBuffer:
    """Host memory the CPU device hands out; `.va` is its address in this process."""

    def __init__(self, device: CPUDevice, nbytes: int):
        self.device, self.size = device, nbytes
        self._raw = np.zeros(nbytes + _ALIGN, dtype=np.uint8)
        start = (-self._raw.ctypes.data) % _ALIGN
        self.view = self._raw[start:start + nbytes]
        self.va = self.view.ctypes.data

    def __repr__(self):
        return f"CPUBuffer(va={self.va:#x}, size={self.size})"


def _bytes_view(data) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    return np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)


class CPUProgram:
    def __init__(self, device: CPUDevice, img):
        from gputwin.compiler.llvm import load_object
        self.device, self.name = device, img.name
        self.params, self.local_size = img.params, tuple(img.local_size)
        try:
            self._engine, addr = load_object(img.obj, img.name)
        except ValueError:
            raise ValueError(f"CPU image has no function {img.name!r}") from None
        self._fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32,
                                    ctypes.c_int32)(addr)

    def _argv(self, args) -> np.ndarray:
        if len(args) != len(self.params):
            raise TypeError(f"{self.name} takes {len(self.params)} arguments "
                            f"({', '.join(p[0] for p in self.params)}), got {len(args)}")
        argv = np.zeros(2 * len(args), dtype=np.uint64)
        for i, (arg, (pname, dt, kind)) in enumerate(zip(args, self.params)):
            if kind == "buffer":
                if not isinstance(arg, CPUBuffer) or arg.device is not self.device:
                    raise TypeError(f"{self.name}: argument {pname} must be a buffer of this CPU device, "
                                    f"got {arg!r}")
                argv[2 * i], argv[2 * i + 1] = arg.va, arg.size // _ITEMSIZE[dt]
                continue
            if isinstance(arg, bool) or not isinstance(arg, (int, float, np.integer, np.floating)):
                raise TypeError(f"{self.name}: argument {pname} must be a {dt} number, got {arg!r}")
            if dt != "float32" and not isinstance(arg, (int, np.integer)):
                raise TypeError(f"{self.name}: argument {pname} is {dt}, got the float {arg!r}")
            info = np.iinfo(_SCALAR_NP[dt]) if dt != "float32" else None
            if info is not None and not info.min <= int(arg) <= info.max:
                raise OverflowError(f"{self.name}: argument {pname}={arg} does not fit {dt}")
            raw = np.array([arg], dtype=_SCALAR_NP[dt]).view(np.uint8)
            argv[2 * i] = int.from_bytes(raw.tobytes(), "little")
        return argv

    def __call__(self, *args, grid=(1, 1, 1), block=None):
        grid = tuple(grid) + (1,) * (3 - len(tuple(grid)))
        block = self.local_size if block is None else tuple(block) + (1,) * (3 - len(tuple(block)))
        if block != self.local_size:
            raise ValueError(f"{self.name} was compiled for block={self.local_size}, launched with {block}")
        if any(not isinstance(g, (int, np.integer)) or g < 0 or g >= 1 << 31 for g in grid):
            raise ValueError(f"grid {grid} must be three non-negative int32 workgroup counts")
        argv = self._argv(args)
        # The watchdog is an iteration budget, not a timer: native code cannot be interrupted, and a
        # count makes "hung" the same verdict on every machine.
        seconds = watchdog_s()
        budget = int(seconds * ITERATIONS_PER_WATCHDOG_SECOND)
        fault = np.array([0, 0, 0, max(budget, 1)], dtype=np.uint64)
        self._fn(argv.ctypes.data, fault.ctypes.data, int(grid[0]), int(grid[1]), int(grid[2]))
        if fault[0] == 1:
            raise MemoryFault(f"CPU kernel {self.name} accessed memory outside its buffers",
                              address=int(fault[1]), write=bool(fault[2]))
        if fault[0] == 2:
            raise GpuHang(f"CPU kernel {self.name} ran past its watchdog: {budget} loop iterations "
                          f"(GPUTWIN_WATCHDOG_S={seconds:g})")


class CPUDevice:
    """`open_device("CPU")`: same API as the GPU devices; programs are compiled for target "cpu"."""
    arch = "cpu"
    name = "CPU"

    def __init__(self):
        self._buffers: list[CPUBuffer] = []

    def alloc(self, nbytes: int) -> CPUBuffer:
        if not isinstance(nbytes, (int, np.integer)) or nbytes < 0:
            raise ValueError(f"alloc needs a non-negative byte count, got {nbytes!r}")
        try:
            buf = CPUBuffer(self, int(nbytes))
        except (MemoryError, ValueError) as e:   # numpy: "Unable to allocate" / "array is too big"
            raise OutOfMemory(f"CPU: cannot allocate {nbytes} bytes of host memory ({e})", size=int(nbytes),
                              heap="host") from None
        self._buffers.append(buf)
        return buf

    def _check(self, buf, offset: int, n: int):
        if not isinstance(buf, CPUBuffer) or buf.device is not self:
            raise TypeError(f"{buf!r} is not a buffer of this CPU device")
        if offset < 0 or offset + n > buf.size:
            raise ValueError(f"{n} bytes at offset {offset} do not fit the {buf.size}-byte buffer")

    def copyin(self, buf: CPUBuffer, data, offset: int = 0) -> None:
        src = _bytes_view(data)
        self._check(buf, offset, src.size)
        buf.view[offset:offset + src.size] = src

    def copyout(self, out, buf: CPUBuffer, offset: int = 0) -> None:
        dst = _bytes_view(out)
        if isinstance(out, np.ndarray) and not np.shares_memory(dst, out):
            raise ValueError("copyout needs a contiguous, writable destination")
        self._check(buf, offset, dst.size)
        dst[:] = buf.view[offset:offset + dst.size]

    def load(self, image, name: str) -> CPUProgram:
        from gputwin.compiler.cpuimage import unpack
        from gputwin.compiler.llvm import host_cpu
        img = unpack(image)
        if img.name != name:
            raise KernelNotFound(name, [img.name], "the CPU image")
        if (img.cpu, img.features) != host_cpu():
            raise ValueError(f"CPU image was compiled for {img.cpu}, this host is {host_cpu()[0]}: recompile")
        return CPUProgram(self, img)

    def synchronize(self) -> None:
        """Launches and copies finish before they return; nothing is ever pending."""

    def close(self) -> None:
        self._buffers.clear()
