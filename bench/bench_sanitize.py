"""What the sanitizers cost: one figure per line (python bench/bench_sanitize.py [DEV]: every workload on its
default device, or the workloads of DEV's vendor on DEV, e.g. MOCKUSBAMD for the AM driver over the emulated
USB bridge).

The same dispatches through the whole MOCKAMD and MOCKNV stacks (driver buffers filled with copyin, so
initcheck tracks them) with GPUTWIN_SANITIZE off, `memcheck` and `all`: MOCKAMD a 1M-element f32 add, a
naive 128x128 f32 matmul, an LDS tree reduction of 256K items (barriers: racecheck and synccheck at work);
MOCKNV (PTX) a 1M-element saxpy, the naive 128x128 matmul, a shared-memory reduction of 256K items. Best of 5 runs
after a warm-up each, in CPU time of this process (the emulator runs on one core; on a shared machine
wall time mostly measures the neighbours); the ratios are against off (goal: memcheck within 2x, all
within 4x).
"""
from __future__ import annotations

import os
import pathlib
import sys
import time

import numpy as np

import gputwin

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "amd" / "cl"
PTX = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "nv" / "sm_90"
MODES = ("off", "memcheck", "all")


def _filled(dev, array):
    buf = dev.alloc(array.nbytes)
    dev.copyin(buf, array)
    return buf


def _add(dev, n=1 << 20):
    k = dev.load((FIXTURES / "basic.hsaco").read_bytes(), "add_f32")
    a, b = (_filled(dev, np.random.rand(n).astype(np.float32)) for _ in range(2))
    out = _filled(dev, np.zeros(n, np.float32))
    return lambda: k(out, a, b, n, grid=(n // 256, 1, 1), block=(256, 1, 1))


def _matmul(dev, n=128):
    k = dev.load((FIXTURES / "lds.hsaco").read_bytes(), "matmul_naive")
    a, b = (_filled(dev, np.random.rand(n, n).astype(np.float32)) for _ in range(2))
    c = _filled(dev, np.zeros((n, n), np.float32))
    return lambda: k(c, a, b, n, grid=(n // 16, n // 16, 1), block=(16, 16, 1))


def _reduce(dev, n=1 << 18):
    k = dev.load((FIXTURES / "lds.hsaco").read_bytes(), "reduce_sum")
    x = _filled(dev, np.random.randint(0, 1000, n).astype(np.uint32))
    p = _filled(dev, np.zeros(n // 256, np.uint32))
    return lambda: k(p, x, grid=(n // 256, 1, 1), block=(256, 1, 1))


def _nv_saxpy(dev, n=1 << 20):
    k = dev.load((PTX / "elementwise.ptx").read_text(), "saxpy")
    y, x = (_filled(dev, np.random.rand(n).astype(np.float32)) for _ in range(2))
    return lambda: k(y, x, np.float32(2.0), n, grid=(n // 256, 1, 1), block=(256, 1, 1))


def _nv_matmul(dev, n=128):
    k = dev.load((PTX / "matmul.ptx").read_text(), "matmul_naive")
    a, b = (_filled(dev, np.random.rand(n, n).astype(np.float32)) for _ in range(2))
    c = _filled(dev, np.zeros((n, n), np.float32))
    return lambda: k(a, b, c, n, grid=(n // 16, n // 16, 1), block=(16, 16, 1))


def _nv_reduce(dev, n=1 << 18):
    k = dev.load((PTX / "reduce.ptx").read_text(), "reduce_shared")
    x = _filled(dev, np.random.rand(n).astype(np.float32))
    out = _filled(dev, np.zeros(n // 256, np.float32))
    return lambda: k(x, out, n, grid=(n // 256, 1, 1), block=(256, 1, 1))


WORKLOADS = (("MOCKAMD", "add 1M f32", _add), ("MOCKAMD", "matmul 128 naive", _matmul),
             ("MOCKAMD", "lds reduce 256K", _reduce), ("MOCKNV", "saxpy 1M f32", _nv_saxpy),
             ("MOCKNV", "matmul 128 naive", _nv_matmul), ("MOCKNV", "shared reduce 256K", _nv_reduce))


def _time(dev, launch, repeat=5) -> float:
    launch()
    dev.synchronize()                    # warm: decode and handler build are not what is measured
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        launch()
        dev.synchronize()
        best = min(best, time.process_time() - t)
    return best


def main(spec: str | None = None):
    saved = os.environ.get("GPUTWIN_SANITIZE")
    try:
        for default, name, make in WORKLOADS:
            if spec is not None and ("NV" in spec.upper()) != (default == "MOCKNV"):
                continue
            times, label = {}, f"{spec or default} {name}"
            for mode in MODES:
                os.environ["GPUTWIN_SANITIZE"] = "" if mode == "off" else mode
                with gputwin.open_device(spec or default) as dev:
                    times[mode] = _time(dev, make(dev))
                print(f"{label}, sanitize {mode}: {times[mode] * 1e3:.1f} ms")
            for mode in MODES[1:]:
                print(f"{label}, sanitize {mode} / off: {times[mode] / times['off']:.2f}x")
    finally:
        if saved is None:
            os.environ.pop("GPUTWIN_SANITIZE", None)
        else:
            os.environ["GPUTWIN_SANITIZE"] = saved


if __name__ == "__main__":
    main(*sys.argv[1:2])
