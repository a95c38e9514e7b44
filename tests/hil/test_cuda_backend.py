"""The CUDA-driver-API recorder backend without a GPU: every cuda-bindings call it makes is handed to the real
cuda-bindings (which converts and type-checks the arguments before it looks for libcuda, so a wrong argument
type is a TypeError here), while results come from a stand-in; no call reaches a driver."""
import ctypes.util

import numpy as np
import pytest

from gputwin.hil import inputs
from gputwin.hil.nv_programs import PROGRAMS
from gputwin.hil.runners import CudaRunner

bindings = pytest.importorskip("cuda.bindings.driver", reason="needs cuda-bindings (pip install 'gputwin[cuda]')")
if ctypes.util.find_library("cuda"):
    pytest.skip("libcuda is installed: the stand-in would let real driver calls run with dummy handles",
                allow_module_level=True)


class CheckedDriver:
    """cuda.bindings.driver with each cu* call type-checked by the real binding and answered by `results`."""

    def __init__(self, real):
        self.real, self.calls = real, []
        self.results = {"cuInit": [(0,)], "cuDeviceGet": [(0, real.CUdevice(0))],
                        "cuDeviceGetAttribute": [(0, 9), (0, 0)], "cuDevicePrimaryCtxRetain": [(0, real.CUcontext())],
                        "cuModuleLoadData": [(0, real.CUmodule())], "cuModuleGetFunction": [(0, real.CUfunction())],
                        "cuMemAlloc": [(0, real.CUdeviceptr(0x1000 * (i + 1))) for i in range(8)]}

    def __getattr__(self, name):
        attr = getattr(self.real, name)
        if not name.startswith("cu"):
            return attr

        def call(*args):
            self.calls.append((name, args))
            if name == "cuLaunchKernel":     # read the parameter block while the caller still holds it
                params = ctypes.cast(args[9], ctypes.POINTER(ctypes.c_void_p))
                self.launch_params = [ctypes.c_uint64.from_address(params[i]).value for i in range(4)] + \
                    [ctypes.c_uint32.from_address(params[4]).value]
            try:
                attr(*args)
            except TypeError:
                raise
            except Exception:       # the driver library is absent: the arguments were converted, nothing ran
                pass
            queue = self.results.get(name)
            return queue.pop(0) if queue else (0,)
        return call


@pytest.fixture
def checked(monkeypatch):
    import cuda.bindings
    fake = CheckedDriver(bindings)
    monkeypatch.setattr(cuda.bindings, "driver", fake)
    return fake


def test_cuda_runner_calls_type_check_against_cuda_bindings(checked):
    runner = CudaRunner(0)
    assert (runner.arch, runner.name) == ("sm_90", "CUDA:0")
    program = next(p for p in PROGRAMS if p.op == "fma.rn.f32")
    ins = inputs.make("f32", 3, 1, 512)
    out = runner.run(program, ins)
    runner.close()
    assert out.dtype == np.uint32 and len(out) == 512
    names = [n for n, _ in checked.calls]
    assert names[:4] == ["cuInit", "cuDeviceGet", "cuDeviceGetAttribute", "cuDeviceGetAttribute"]
    assert names.count("cuMemAlloc") == 4 and names.count("cuMemcpyHtoD") == 3 and names.count("cuMemFree") == 4
    launch = dict(checked.calls)["cuLaunchKernel"]
    assert launch[1:7] == (2, 1, 1, 256, 1, 1)                     # 512 lanes in blocks of 256
    assert checked.launch_params == [0x1000, 0x2000, 0x3000, 0x4000, 512]   # out, in0..in2 pointers, then n
    assert dict(checked.calls)["cuModuleLoadData"][0].endswith(b"}\n\0")


def test_cuda_runner_reports_a_failing_call_by_name(checked):
    checked.results["cuInit"] = [(bindings.CUresult.CUDA_ERROR_NO_DEVICE,)]
    with pytest.raises(RuntimeError, match="cuInit failed: CUresult 100"):
        CudaRunner(0)

