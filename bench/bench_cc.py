"""`gputwin cc` build times: the device library's first build for a target (cold cache), then a kernel
build with the library cached, for OpenCL C and HIP; and the printf decode rate of the driver.

Prints one figure per line (`cc <what> <arch> ms=..`, `printf_decode records_per_s=..`). Uses a private
temporary cache directory, never ~/.cache/gputwin. Needs clang-19, ld.lld-19 and llvm-objcopy-19.
"""
from __future__ import annotations

import os
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

CL = "__kernel void k(__global float *o) { size_t i = get_global_id(0); o[i] = sqrt(o[i]); barrier(1); }\n"
HIP = "#include <hip/hip_runtime.h>\n__global__ void k(float *o) { o[threadIdx.x] = sqrtf(o[blockIdx.x]); }\n"


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    os.environ["GPUTWIN_CACHE_DIR"] = tempfile.mkdtemp(prefix="gputwin-bench-")
    from gputwin import cc
    from gputwin.abi.printf import PrintfFormats, decode
    for arch in ("gfx1100", "gfx942"):
        print(f"cc opencl_cold_devlib {arch} ms={timed(lambda: cc.compile_source(CL, 'opencl', arch)):.0f}")
        print(f"cc opencl_warm {arch} ms={timed(lambda: cc.compile_source(CL, 'opencl', arch)):.0f}")
        print(f"cc hip_warm {arch} ms={timed(lambda: cc.compile_source(HIP, 'hip', arch)):.0f}")
    table = PrintfFormats.from_metadata({"amdhsa.printf": ["1:3:4:4:8:id %d of %d: %ld\\n"]})
    n = 20000
    body = b"".join(struct.pack("<Iiiq", 1, i, n, i * 3) for i in range(n))
    buf = struct.pack("<II", len(body), len(body) + 8) + body
    ms = timed(lambda: decode(table, buf))
    print(f"printf_decode records_per_s={n / ms * 1000:.0f}")


if __name__ == "__main__":
    main()
