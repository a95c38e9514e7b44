"""PTX emulator throughput: warp-instructions per second on a naive 256x256 f32 matmul (nvcc -ptx
fixture, best of five; wall and process CPU time), the shared-memory tiled matmul and a divergent loop
(collatz), and the first launch of a freshly parsed module of a few hundred PTX lines (best of three
modules never seen before). One figure per line: `name value unit`.

    python bench/bench_ptx.py
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from gputwin.emu.memory import AddressSpace
from gputwin.emu.nv.ptx import load_module, module
from gputwin.emu.nv.ptx.standalone import Arena, launch

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "nv" / "sm_80"


def matmul(n=256, kernel="matmul_naive"):
    mod = load_module((FIX / "matmul.ptx").read_text())
    ar = Arena(AddressSpace())
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    pa, pb, pc = ar.alloc(A.nbytes, A), ar.alloc(B.nbytes, B), ar.alloc(4 * n * n)
    t, cpu = time.perf_counter(), time.process_time()
    c = launch(ar.mem, mod, kernel, [pa, pb, pc, n], grid=(n // 16, n // 16), block=(16, 16))
    return c, time.perf_counter() - t, time.process_time() - cpu


def collatz(n=32768):
    """A divergent kernel: data-dependent trip counts, about 40% of lanes busy per warp instruction."""
    mod = load_module((FIX / "loops.ptx").read_text())
    ar = Arena(AddressSpace())
    x = np.random.default_rng(0).integers(1, 1000, n).astype(np.uint32)
    px, ps = ar.alloc(4 * n, x), ar.alloc(4 * n)
    cpu = time.process_time()
    c = launch(ar.mem, mod, "collatz", [px, ps, n], grid=(n // 256,), block=(256,))
    return c, time.process_time() - cpu


def first_launch():
    """Parse, plan, bind and run reduce.ptx (4 kernels, ~375 lines) never seen before in this process."""
    text = (FIX / "reduce.ptx").read_text() + "\n// " + str(time.time_ns())   # a module not yet cached
    lines = text.count("\n")
    module._CACHE.clear()
    ar = Arena(AddressSpace())
    n = 256
    x = np.arange(n, dtype=np.float32)
    px, po = ar.alloc(4 * n, x), ar.alloc(4)
    t, cpu = time.perf_counter(), time.process_time()
    mod = load_module(text)
    launch(ar.mem, mod, "reduce_shared", [px, po, n], grid=(1,), block=(256,))
    return lines, time.perf_counter() - t, time.process_time() - cpu


def main():
    runs = [matmul() for _ in range(5)]                 # best of five: the machine is shared and noisy
    c, dt, cpu = min(runs, key=lambda r: r[1])
    cpu = min(r[2] for r in runs)
    # the shared development machine's load inflates wall time; process CPU time is the steadier figure
    print(f"ptx_matmul256_warp_insts_per_s {c.warp_insts / dt / 1e6:.2f} M/s (wall)")
    print(f"ptx_matmul256_warp_insts_per_cpu_s {c.warp_insts / cpu / 1e6:.2f} M/s (process CPU time)")
    print(f"ptx_matmul256_seconds {dt:.2f} s")
    print(f"ptx_matmul256_warp_insts {c.warp_insts}")
    runs = [matmul(kernel="matmul_tiled") for _ in range(3)]
    c, cpu = runs[0][0], min(r[2] for r in runs)
    print(f"ptx_matmul256_tiled_warp_insts_per_cpu_s {c.warp_insts / cpu / 1e6:.2f} M/s (shared-memory tiles)")
    runs = [collatz() for _ in range(3)]
    c, cpu = runs[0][0], min(r[1] for r in runs)
    print(f"ptx_collatz32k_warp_insts_per_cpu_s {c.warp_insts / cpu / 1e6:.2f} M/s (divergent loops)")
    runs = [first_launch() for _ in range(3)]          # each a new module (the cache is cleared)
    lines, dt, cpu = runs[0][0], min(r[1] for r in runs), min(r[2] for r in runs)
    print(f"ptx_first_launch_ms {dt * 1e3:.1f} ms (wall, {lines} PTX lines)")
    print(f"ptx_first_launch_cpu_ms {cpu * 1e3:.1f} ms (process CPU time)")


if __name__ == "__main__":
    main()
