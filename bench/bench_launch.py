"""Driver throughput on MOCKAMD and MOCKNV (or the comma-separated devices in $DEV): empty-kernel
launches per second and copy MB/s.

Each launch is the full driver path. AMD: kernargs laid out from metadata, PM4 packets built and pushed
to the ring, a doorbell write that runs the emulated command processor and shader, a timeline signal;
copies through the SDMA queue and the staging buffers. NV: parameters packed by the PTX signature, a QMD
and constant buffer 0 written, compute-class methods pushed through the GPFIFO, a usermode doorbell that
runs the emulated front end and the PTX emulator, a host-class semaphore release; copies through the copy
channel (LAUNCH_DMA). Prints one figure per line: `launches_per_s`, `copyin_mb_per_s`,
`copyout_mb_per_s`, and the same with an `nv_` prefix for NV devices.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

import gputwin

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "drivers"


def empty_kernel(dev):
    """The fixtures' `empty` kernel in the device's own format: a gfx1100 code object, or PTX for NV."""
    if str(dev.arch).startswith("sm_"):
        return dev.load((FIXTURES / "nv" / f"kernels_{dev.arch.replace('_', '')}.ptx").read_text(), "empty")
    return dev.load((FIXTURES / "kernels_gfx1100_v5.hsaco").read_bytes(), "empty")


def launches_per_s(dev, n: int = 300) -> float:
    prg = empty_kernel(dev)
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
    for spec in os.environ.get("DEV", "MOCKAMD,MOCKNV").split(","):
        prefix = "nv_" if "NV" in spec.upper() else ""
        with gputwin.open_device(spec) as dev:
            print(f"{prefix}launches_per_s {launches_per_s(dev):.0f}")
            cin, cout = copy_mb_per_s(dev)
            print(f"{prefix}copyin_mb_per_s {cin:.0f}")
            print(f"{prefix}copyout_mb_per_s {cout:.0f}")


if __name__ == "__main__":
    main()
