"""The kernel-less AM driver next to the KFD driver on the same emulated gfx1100: MOCKUSBAMD (AM driver ->
USB driver -> emulated ASM2464 -> emulated board) against MOCKAMD (KFD driver -> mock KFD -> emulated GPU).

Prints one figure per line, `name value unit`, the name ending in the device, then the ratios:
  kernels_s        wall time of a compute-bound kernel suite: saxpy over 1 Mi floats x 8, and the tensor
                   demo's kernels (matmul, GELU, softmax; second run, programs loaded)
  launches_per_s   empty-kernel launches (the per-launch driver + transport cost)
  copyin_MBps / copyout_MBps   16 MiB x 3 through the staging path (KFD: GTT; AM: the bridge SRAM + SDMA)
(launches and copies are bench_launch.py's measurements)
  ratio_kernels    MOCKUSBAMD / MOCKAMD kernel-suite time (goal: at most 1.5)
Usage: python bench/bench_am.py [SPEC ...]   (default MOCKAMD MOCKUSBAMD)"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402

from bench_launch import copy_mb_per_s, launches_per_s  # noqa: E402  (bench/ is the script's directory)
from gputwin.tensor import demo, get_context  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "drivers"
N = 1 << 20


def kernel_suite_s(dev, spec: str) -> float:
    prg = dev.load((FIXTURES / "kernels_gfx1100_v5.hsaco").read_bytes(), "saxpy")
    y, x = dev.alloc(4 * N), dev.alloc(4 * N)
    dev.copyin(y, np.zeros(N, np.float32))
    dev.copyin(x, np.ones(N, np.float32))
    ctx = get_context(spec)
    demo.run(ctx)                                   # compile and load once
    prg(y, x, 1.0, N, grid=N // 256, block=256)
    dev.synchronize()
    t = time.perf_counter()
    for _ in range(8):
        prg(y, x, 1.0, N, grid=N // 256, block=256)
    dev.synchronize()
    assert demo.run(ctx).ok
    out = np.empty(N, np.float32)
    dev.copyout(out, y)
    assert (out == 9.0).all()
    return time.perf_counter() - t


def main() -> None:
    specs = sys.argv[1:] or ["MOCKAMD", "MOCKUSBAMD"]
    suite = {}
    for spec in specs:
        dev = get_context(spec).dev   # the tensor context's device: the demo runs on the same one
        suite[spec] = kernel_suite_s(dev, spec)
        print(f"kernels_s_{spec} {suite[spec]:.3f} s")
        print(f"launches_per_s_{spec} {launches_per_s(dev):.0f} 1/s")
        cin, cout = copy_mb_per_s(dev)
        print(f"copyin_MBps_{spec} {cin:.1f} MB/s")
        print(f"copyout_MBps_{spec} {cout:.1f} MB/s")
    if "MOCKAMD" in suite and "MOCKUSBAMD" in suite:
        print(f"ratio_kernels {suite['MOCKUSBAMD'] / suite['MOCKAMD']:.2f} x")


if __name__ == "__main__":
    main()
