"""The numpy surface's costlier ops on one device: sort (rank up to 2048, then bitonic), cumsum (float: a
sequential scan per row; int: chunked), integer-array gather, boolean-mask select and assignment, float
floor_divide (fmod in int64).

Each op runs once to compile, then is timed warm (best of 3). Prints one figure per line:
`name value unit`, the name ending in the device.
Usage: python bench/bench_numpy_surface.py [--dev SPEC]   (default $DEV, else MOCKAMD)
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import gputwin.tensor as gt


def best_of(fn, repeats: int = 3) -> float:
    fn()                     # compile and load
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dev", default=None)
    args = ap.parse_args()
    ctx = gt.get_context(args.dev)
    tag = ctx.spec.lower().replace(":", "_")
    rng = np.random.default_rng(0)
    for n in (1024, 4096):
        x = gt.Tensor(rng.standard_normal(n).astype(np.float32), device=ctx)
        print(f"sort_{n}_s_{tag} {best_of(lambda: x.sort().numpy()):.3f} s")
        print(f"cumsum_{n}_s_{tag} {best_of(lambda: x.cumsum().numpy()):.3f} s")
    n = 65536
    x = gt.Tensor(rng.standard_normal(n).astype(np.float32), device=ctx)
    print(f"sort_{n}_s_{tag} {best_of(lambda: x.sort().numpy(), repeats=1):.3f} s")
    i = gt.Tensor(rng.integers(-100, 100, n), device=ctx)
    print(f"int_cumsum_{n}_s_{tag} {best_of(lambda: i.cumsum().numpy()):.3f} s")
    idx = gt.Tensor(rng.integers(0, n, n), device=ctx)
    print(f"gather_{n}_s_{tag} {best_of(lambda: x[idx].numpy()):.3f} s")
    print(f"mask_select_{n}_s_{tag} {best_of(lambda: x[x > 0].numpy()):.3f} s")

    def assign():
        y = x.copy()
        y[y < 0] = 0
        y.numpy()
    print(f"mask_assign_{n}_s_{tag} {best_of(assign):.3f} s")
    print(f"floor_divide_{n}_s_{tag} {best_of(lambda: (x // 0.37).numpy()):.3f} s")


if __name__ == "__main__":
    main()
