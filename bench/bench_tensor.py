"""Tensor benchmark: the demo workload's cold and warm time and the compile-cache hit rate.

Cold: a fresh process with an empty compile cache (everything compiles). Warm: a second fresh process
sharing that cache directory (images come from disk), plus the demo repeated inside that process
(programs already loaded). Prints one figure per line: `name value unit`, the name ending in the device
(MOCKAMD and MOCKNV by default, so the two stacks' figures sit next to each other).
With --suite it also times the tensor test suite (pytest -n 2) twice over one fresh compile cache and
prints how many kernels the second run still had to compile (0: every image came from the cache).
Usage: python bench/bench_tensor.py [--dev SPEC ...] [--suite]   (default $DEV, else MOCKAMD and MOCKNV)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, time
t0 = time.perf_counter()
from gputwin.compiler import cache
from gputwin.tensor import demo, get_context
ctx = get_context({dev!r})
first = demo.run(ctx)
total = time.perf_counter() - t0
again = demo.run(ctx)
print(json.dumps(dict(total=total, first=first.seconds, again=again.seconds, ok=first.ok and again.ok,
                      stats=dict(cache.stats))))
"""


def child(dev: str, cache_dir: str) -> dict:
    env = dict(os.environ, GPUTWIN_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", CHILD.format(dev=dev)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def suite(dev: str, cache_dir: str) -> tuple[float, int]:
    """Wall time of one `pytest tests/tensor -n 2` run and the number of images it compiled."""
    env = dict(os.environ, GPUTWIN_CACHE_DIR=cache_dir)
    before = len(os.listdir(cache_dir))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "tests/tensor", "-q", "-n", "2", "--dev", dev], env=env,
                   check=True, capture_output=True, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return time.perf_counter() - t0, len(os.listdir(cache_dir)) - before


def figures(dev: str, with_suite: bool) -> bool:
    """Print one device's figures, each name ending in the device (demo_cold_process_s_mocknv_sm_80)."""
    tag = dev.lower().replace(":", "_")
    with tempfile.TemporaryDirectory() as cache_dir:
        cold = child(dev, cache_dir)
        warm = child(dev, cache_dir)
    s = warm["stats"]
    lookups = s.get("memory_hits", 0) + s.get("disk_hits", 0) + s.get("compiles", 0)
    print(f"demo_cold_process_s_{tag} {cold['total']:.3f} s")
    print(f"demo_cold_run_s_{tag} {cold['first']:.3f} s")
    print(f"demo_warm_process_s_{tag} {warm['total']:.3f} s")
    print(f"demo_warm_run_s_{tag} {warm['again']:.3f} s")
    print(f"compile_cache_hit_rate_warm_{tag} {(s.get('memory_hits', 0) + s.get('disk_hits', 0)) / max(lookups, 1):.3f}")
    print(f"compiles_cold_{tag} {cold['stats'].get('compiles', 0)} kernels")
    print(f"demo_matches_numpy_{tag} {int(cold['ok'] and warm['ok'])} bool")
    if with_suite:
        with tempfile.TemporaryDirectory() as cache_dir:
            cold_s, cold_n = suite(dev, cache_dir)
            warm_s, warm_n = suite(dev, cache_dir)
        print(f"suite_cold_n2_s_{tag} {cold_s:.1f} s")
        print(f"suite_warm_n2_s_{tag} {warm_s:.1f} s")
        print(f"suite_cold_compiles_{tag} {cold_n} kernels")
        print(f"suite_warm_compiles_{tag} {warm_n} kernels")
    return cold["ok"] and warm["ok"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dev", action="append", help="device spec, repeatable (default: $DEV, else MOCKAMD and MOCKNV)")
    p.add_argument("--suite", action="store_true", help="also time the tensor test suite with -n 2")
    args = p.parse_args()
    devs = args.dev or ([os.environ["DEV"]] if os.environ.get("DEV") else ["MOCKAMD", "MOCKNV"])
    ok = [figures(dev, args.suite) for dev in devs]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
