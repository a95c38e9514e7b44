"""RDNA3 emulator throughput: one figure per line (python bench/bench_emu.py).

wave-instructions/s and lane-ops/s on (a) a 1M-element f32 add, (b) a naive 256x256 f32 matmul with one
work-item per output, (c) an LDS tree reduction, (d) a divergent loop: Collatz steps of 1..64K (2048
waves, as many as the matmul) and of 1..4K (128 waves), every lane with its own trip count, and a divergent
float loop (Mandelbrot escape times of a 64x64 grid, at most 1024 iterations: 128 waves); (e) scratch
stores and loads of 64K lanes in emulator memory and in a driver-style backing (the hardware's swizzled
layout); and the first-dispatch latency of a never-seen kernel (decode + handler build included), in this process and in
a fresh one. Kernels are the committed fixtures in fixtures/amd/cl/. The divergent loop runs on the native tier
(docs/emulator-jit.md) once its loop is hot: the untimed first call compiles it.
"""
from __future__ import annotations

import pathlib
import subprocess
import sys
import time

import numpy as np

from gputwin.emu.amd import program
from gputwin.emu.amd.standalone import Arena, load_kernel

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "amd" / "cl"


def _kernel(arena, obj, name):
    return load_kernel(arena, (FIXTURES / obj).read_bytes(), name)


def _timed(fn, repeat=3):
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def bench_add(n=1 << 20):
    arena = Arena()
    k = _kernel(arena, "basic.hsaco", "add_f32")
    a, b = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    av, bv, ov = arena.alloc(4 * n, a), arena.alloc(4 * n, b), arena.alloc(4 * n)
    k(ov, av, bv, n, grid=(n // 256, 1, 1), block=(256, 1, 1))           # warm the decode cache
    t, c = _timed(lambda: k(ov, av, bv, n, grid=(n // 256, 1, 1), block=(256, 1, 1)))
    assert (arena.array(ov, np.float32, n) == a + b).all()
    return t, c


def bench_matmul(n=256):
    arena = Arena()
    k = _kernel(arena, "lds.hsaco", "matmul_naive")
    a, b = np.random.rand(n, n).astype(np.float32), np.random.rand(n, n).astype(np.float32)
    av, bv, cv = arena.alloc(4 * n * n, a), arena.alloc(4 * n * n, b), arena.alloc(4 * n * n)
    t, c = _timed(lambda: k(cv, av, bv, n, grid=(n // 16, n // 16, 1), block=(16, 16, 1)), repeat=1)
    return t, c


def bench_reduce(n=1 << 18):
    arena = Arena()
    k = _kernel(arena, "lds.hsaco", "reduce_sum")
    x = np.random.randint(0, 1000, n).astype(np.uint32)
    xv, pv = arena.alloc(4 * n, x), arena.alloc(4 * (n // 256))
    k(pv, xv, grid=(n // 256, 1, 1), block=(256, 1, 1))
    t, c = _timed(lambda: k(pv, xv, grid=(n // 256, 1, 1), block=(256, 1, 1)))
    assert (arena.array(pv, np.uint32, n // 256) == x.reshape(-1, 256).sum(axis=1)).all()
    return t, c


def bench_collatz(n):
    arena = Arena()
    k = _kernel(arena, "diverge.hsaco", "collatz_steps")
    out = arena.alloc(4 * n)
    k(out, 1, grid=(n // 256, 1, 1), block=(256, 1, 1))
    t, c = _timed(lambda: k(out, 1, grid=(n // 256, 1, 1), block=(256, 1, 1)))
    steps = arena.array(out, np.uint32, n)
    assert steps[:8].tolist() == [0, 1, 7, 2, 5, 8, 16, 3] and int(steps[27 - 1]) == 111
    return t, c


def bench_mandelbrot(width=64, max_iter=1024):
    """Escape times of a width x width grid: f32 mul/fma/add/compare in a loop each lane leaves on its own."""
    arena = Arena()
    k = _kernel(arena, "diverge.hsaco", "mandelbrot")
    n = width * width
    out = arena.alloc(4 * n)
    k(out, width, max_iter, grid=(n // 256, 1, 1), block=(256, 1, 1))
    t, c = _timed(lambda: k(out, width, max_iter, grid=(n // 256, 1, 1), block=(256, 1, 1)))
    iters = arena.array(out, np.uint32, n).reshape(width, width)
    assert iters[0, 0] == 1 and iters[width // 2, width // 3] == max_iter     # c = -2-1.5i escapes, c = -1 stays
    return t, c


SCRATCH_KERNEL = """
v_mov_b32 v1, v0
v_add_nc_u32 v2, 1, v0
v_add_nc_u32 v3, 2, v0
v_add_nc_u32 v4, 3, v0
""" + """
scratch_store_b128 off, v[1:4], off offset:16
scratch_store_b32 off, v1, off offset:36
scratch_load_b128 v[5:8], off, off offset:16
scratch_load_b32 v9, off, off offset:36
s_waitcnt vmcnt(0)
v_add_nc_u32 v1, v5, v9
""" * 8 + "s_endpgm\n"


def bench_scratch(backing: bool, n=1 << 16, per_lane=64):
    from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
    from gputwin.emu.amd.isa import assemble
    arena = Arena()
    base = arena.alloc(n * per_lane) if backing else None
    d = Dispatch(code_address=0, code=assemble(SCRATCH_KERNEL, "gfx1100"), grid=(n // 256, 1, 1), block=(256, 1, 1),
                 scratch_bytes_per_lane=per_lane, scratch_base=base)
    run_dispatch(arena.mem, d)
    return _timed(lambda: run_dispatch(arena.mem, d))


def first_dispatch_latency():
    arena = Arena()
    program._CACHE.clear()
    k = _kernel(arena, "basic.hsaco", "saxpy")
    x, y = arena.alloc(4 * 256), arena.alloc(4 * 256)
    t = time.perf_counter()
    k(y, x, 1.0, 256, grid=(1, 1, 1), block=(256, 1, 1))
    return time.perf_counter() - t


COLD = """
import time, sys
from gputwin.emu.amd.standalone import Arena, load_kernel
arena = Arena()
k = load_kernel(arena, open(sys.argv[1], "rb").read(), "saxpy")
x, y = arena.alloc(1024), arena.alloc(1024)
t = time.perf_counter()
k(y, x, 1.0, 256, grid=(1, 1, 1), block=(256, 1, 1))
print(time.perf_counter() - t)
"""


def cold_first_dispatch_latency():
    """The same in a fresh process: ISA tables and VALU modules load on the way (imports excluded)."""
    out = subprocess.run([sys.executable, "-c", COLD, str(FIXTURES / "basic.hsaco")], capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main():
    for label, fn in (("add 1M f32", bench_add), ("matmul 256 naive", bench_matmul), ("lds reduce 256K", bench_reduce),
                      ("divergent loop 64K", lambda: bench_collatz(1 << 16)),
                      ("divergent loop 4K", lambda: bench_collatz(1 << 12)),
                      ("divergent float loop 4K", bench_mandelbrot),
                      ("scratch 64K private", lambda: bench_scratch(False)),
                      ("scratch 64K backing", lambda: bench_scratch(True))):
        t, c = fn()
        print(f"{label}: {c.wave_insts / t / 1e6:.2f} M wave-insts/s")
        print(f"{label}: {c.lane_ops / t / 1e6:.1f} M lane-ops/s")
        print(f"{label}: {t * 1e3:.1f} ms")
    from gputwin.emu.amd.native import tier
    if tier.compile_seconds:
        print(f"native tier compile: {1e3 * sum(tier.compile_seconds) / len(tier.compile_seconds):.0f} ms per loop "
              f"region ({len(tier.compile_seconds)} compiled, outside the timed runs)")
    print(f"first dispatch latency: {first_dispatch_latency() * 1e3:.1f} ms")
    print(f"first dispatch latency, fresh process: {cold_first_dispatch_latency() * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
