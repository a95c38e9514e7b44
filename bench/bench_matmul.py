"""Tiled matmul on the emulators: float32 (n, n) @ (n, n) for n = 1024 and 2048 on MOCKAMD (or the
devices in $DEV, comma-separated; sizes with --sizes).

Each figure is one matmul's launch-to-result time in this process, with the kernel already compiled
(compile time is not the emulator's speed), checked against numpy. The wall time depends on the load
of a shared machine; the process CPU time next to it (`_cpu_s`) much less. Prints one figure per line:
`matmul_1024_s_mockamd 2.31`, `matmul_1024_cpu_s_mockamd 2.05`, ...
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from gputwin.tensor import Tensor, get_context


def one(ctx, n: int) -> tuple[float, float]:
    rng = np.random.default_rng(n)
    a, b = (rng.integers(-4, 5, (n, n)).astype(np.float32) for _ in range(2))   # exact sums: check vs numpy
    ta, tb = Tensor(a, device=ctx), Tensor(b, device=ctx)
    compiled = ctx.stats.compile_seconds
    t0, c0 = time.perf_counter(), time.process_time()
    got = (ta @ tb).numpy()
    compile_s = ctx.stats.compile_seconds - compiled
    wall, cpu = time.perf_counter() - t0 - compile_s, time.process_time() - c0 - compile_s
    if not np.array_equal(got, a @ b):
        raise SystemExit(f"matmul {n}x{n} on {ctx.spec} differs from numpy")
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1024,2048")
    args = ap.parse_args()
    for spec in os.environ.get("DEV", "MOCKAMD").split(","):
        ctx = get_context(spec)
        tag = spec.lower().replace(":", "_")
        for n in (int(s) for s in args.sizes.split(",")):
            wall, cpu = one(ctx, n)
            print(f"matmul_{n}_s_{tag} {wall:.2f}", flush=True)
            print(f"matmul_{n}_cpu_s_{tag} {cpu:.2f}", flush=True)


if __name__ == "__main__":
    main()
