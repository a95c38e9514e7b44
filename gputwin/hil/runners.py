"""Where a conformance program runs: through gputwin's own driver (`--dev NV|MOCKNV|...`, the default) or, when
the RM driver cannot open the GPU, through NVIDIA's CUDA driver API (`--backend cuda`, `cuda-bindings`)."""
from __future__ import annotations

import numpy as np


class DriverRunner:
    """Runs each program through gputwin.open_device(spec): alloc, copy in, load (PTX; a real GPU compiles
    it to a cubin), launch, copy out."""

    def __init__(self, spec: str):
        import gputwin
        self.dev = gputwin.open_device(spec)
        self.arch, self.name = self.dev.arch, self.dev.name
        self.vendor = "nv" if self.name.startswith("NV") else "amd" if self.name.startswith("AMD") else None
        if self.vendor is None:
            self.close()
            raise NotImplementedError(f"hil: conformance programs exist for NVIDIA and AMD GPUs; {spec} opened "
                                      f"{self.name}")

    def run(self, program, ins: list[np.ndarray]) -> np.ndarray:
        n, dtype = len(ins[0]), program.dtype
        size = np.dtype(dtype).itemsize * n
        bufs = [self.dev.alloc(size) for _ in range(len(ins) + 1)]
        for b, a in zip(bufs[1:], ins):
            self.dev.copyin(b, a)
        args = bufs if self.vendor == "nv" else (bufs + [bufs[1]] * 3)[:4]   # AMD kernels take in0..in2 always
        self.dev.load(program.image(self.arch), program.kernel)(*args, n, grid=(-(-n // 256), 1, 1),
                                                                block=(256, 1, 1), wait=True)
        out = np.empty(n, dtype)
        self.dev.copyout(out, bufs[0])
        for b in bufs:
            self.dev.free(b)
        return out

    def close(self) -> None:
        self.dev.close()


class CudaRunner:
    """The same launches through the CUDA driver API (libcuda via cuda-bindings): the ground truth when
    gputwin's RM driver cannot open the GPU (e.g. an nvidia.ko of another version than 580.105.08)."""

    def __init__(self, index: int = 0):
        try:
            from cuda.bindings import driver as cu
        except ImportError as e:
            raise RuntimeError(f"--backend cuda needs NVIDIA's cuda-bindings: pip install 'gputwin[cuda]' ({e})") from None
        self.cu = cu
        self._ok(cu.cuInit(0), "cuInit")
        self.device = self._ok(cu.cuDeviceGet(index), "cuDeviceGet")
        major = self._ok(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                                 self.device), "cuDeviceGetAttribute")
        minor = self._ok(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                                 self.device), "cuDeviceGetAttribute")
        self.arch, self.name, self.vendor = f"sm_{major}{minor}", f"CUDA:{index}", "nv"
        self.ctx = self._ok(cu.cuDevicePrimaryCtxRetain(self.device), "cuDevicePrimaryCtxRetain")
        self._ok(cu.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")

    def _ok(self, result, what: str):
        err, *rest = result if isinstance(result, tuple) else (result,)
        if int(err) != 0:
            raise RuntimeError(f"{what} failed: CUresult {int(err)}")
        return rest[0] if len(rest) == 1 else tuple(rest)

    def run(self, program, ins: list[np.ndarray]) -> np.ndarray:
        cu, n, dtype = self.cu, len(ins[0]), program.dtype
        size = np.dtype(dtype).itemsize * n
        module = self._ok(cu.cuModuleLoadData(program.ptx(self.arch).encode() + b"\0"), "cuModuleLoadData")
        fn = self._ok(cu.cuModuleGetFunction(module, program.kernel.encode()), "cuModuleGetFunction")
        ptrs = [self._ok(cu.cuMemAlloc(size), "cuMemAlloc") for _ in range(len(ins) + 1)]
        for p, a in zip(ptrs[1:], ins):
            self._ok(cu.cuMemcpyHtoD(p, np.ascontiguousarray(a, dtype), size), "cuMemcpyHtoD")
        args = [np.array([int(p)], np.uint64) for p in ptrs] + [np.array([n], np.uint32)]
        argv = np.array([a.ctypes.data for a in args], np.uint64)
        self._ok(cu.cuLaunchKernel(fn, -(-n // 256), 1, 1, 256, 1, 1, 0, 0, argv.ctypes.data, 0), "cuLaunchKernel")
        self._ok(cu.cuCtxSynchronize(), "cuCtxSynchronize")
        out = np.empty(n, dtype)
        self._ok(cu.cuMemcpyDtoH(out, ptrs[0], size), "cuMemcpyDtoH")
        for p in ptrs:
            self._ok(cu.cuMemFree(p), "cuMemFree")
        self._ok(cu.cuModuleUnload(module), "cuModuleUnload")
        return out

    def close(self) -> None:
        self.cu.cuDevicePrimaryCtxRelease(self.device)


def open_runner(spec: str, backend: str):
    if backend == "driver":
        return DriverRunner(spec)
    if backend == "cuda":
        kind, _, index = spec.upper().partition(":")
        if kind != "NV":
            raise ValueError(f"--backend cuda records a real NVIDIA GPU (--dev NV or NV:<index>), not {spec}")
        return CudaRunner(int(index) if index.isdigit() else 0)
    raise ValueError(f"unknown backend {backend!r}: driver or cuda")

