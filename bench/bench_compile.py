"""Compile time per kernel and target: cold (empty cache), warm from disk, warm from memory (an equal
kernel built again: renders the IR to find the key), and the same Kernel object again.

Prints one line per kernel and target (`compile <kernel> <target> cold_ms=.. disk_ms=.. memory_ms=..
same_object_ms=..`), then the cache counters. Uses a private temporary cache directory, never
~/.cache/gputwin.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def kernels():
    from gputwin.compiler import ir
    from tests.compiler import kernels as ks
    from tests.compiler.helpers import elementwise
    return [elementwise("add", [ir.float32] * 2, ir.float32, lambda x, y: x + y),
            elementwise("gelu_tanh", [ir.float32], ir.float32,
                        lambda x: 0.5 * x * (1.0 + ir.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))),
            elementwise("pow", [ir.float32] * 2, ir.float32, ir.pow),
            ks.row_sum(), ks.matmul(batched=True), ks.shared_reverse(), ks.fused_chain()]


def main() -> None:
    os.environ["GPUTWIN_CACHE_DIR"] = tempfile.mkdtemp(prefix="gputwin-bench-")
    from gputwin.compiler import TARGETS, cache, compile_kernel
    compile_kernel(kernels()[0], "cpu")          # initialise LLVM outside the measurements
    cache.clear_memory()
    total_cold = 0.0
    for idx, kern in enumerate(kernels()):
        for target in TARGETS:
            times = []
            for mode in ("cold", "disk", "memory", "object"):
                if mode == "disk":
                    cache.clear_memory()
                k = kern if mode in ("cold", "object") else kernels()[idx]     # disk/memory: a fresh, equal Kernel
                t0 = time.perf_counter()
                compile_kernel(k, target)
                times.append((time.perf_counter() - t0) * 1e3)
            total_cold += times[0]
            for mode, ms in zip(("cold", "disk", "memory", "same_object"), times):
                print(f"compile {kern.name} {target} {mode}_ms {ms:.4g}")
    s = cache.stats
    lookups = s["compiles"] + s["disk_hits"] + s["memory_hits"]
    print(f"compile_total_cold_s {total_cold / 1e3:.2f}")
    print(f"cache_hit_rate {(s['disk_hits'] + s['memory_hits']) / lookups:.3f}")
    for what in ("compiles", "disk_hits", "memory_hits"):
        print(f"cache_{what} {s[what]}")


if __name__ == "__main__":
    main()
