"""NV driver throughput on MOCKNV (or $DEV): empty-kernel launches per second and copy MB/s.

Each launch is the full driver path: parameters packed by the PTX signature, a QMD and constant buffer 0
written, compute-class methods pushed to the compute channel's pushbuffer and GPFIFO, a usermode doorbell
that runs the emulated front end and the PTX emulator, and the host-class semaphore release of the timeline.
Copies go through the copy channel (LAUNCH_DMA) and the staging buffers. Prints one figure per line:
`nv_launches_per_s`, `nv_copyin_mb_per_s`, `nv_copyout_mb_per_s`.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

import gputwin

PTX = Path(__file__).resolve().parents[1] / "fixtures" / "drivers" / "nv"


def launches_per_s(dev, n: int = 300) -> float:
    prg = dev.load((PTX / f"kernels_{dev.arch.replace('_', '')}.ptx").read_text(), "empty")
    prg(grid=1, block=32)
    dev.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        prg(grid=1, block=32)
    dev.synchronize()
    return n / (time.perf_counter() - t0)


def copy_mb_per_s(dev, nbytes: int = 16 << 20, reps: int = 3) -> tuple[float, float]:
    data = np.random.default_rng(0).integers(0, 256, nbytes, np.uint8)
    out = np.empty_like(data)
    buf = dev.alloc(nbytes)
    t0 = time.perf_counter()
    for _ in range(reps):
        dev.copyin(buf, data)
    dev.synchronize()
    t1 = time.perf_counter()
    for _ in range(reps):
        dev.copyout(out, buf)
    t2 = time.perf_counter()
    assert (out == data).all()
    mb = nbytes * reps / 1e6
    return mb / (t1 - t0), mb / (t2 - t1)


def main() -> None:
    with gputwin.open_device(os.environ.get("DEV", "MOCKNV")) as dev:
        print(f"nv_launches_per_s {launches_per_s(dev):.0f}")
        cin, cout = copy_mb_per_s(dev)
        print(f"nv_copyin_mb_per_s {cin:.0f}")
        print(f"nv_copyout_mb_per_s {cout:.0f}")


if __name__ == "__main__":
    main()
