"""Running PTX kernels without a driver: for tests, fixtures and benchmarks.

    mem = AddressSpace(); arena = Arena(mem)
    mod = load_module(open("fixtures/nv/sm_80/elementwise.ptx").read())
    y = arena.alloc(4 * n, data=y_host); x = arena.alloc(4 * n, data=x_host)
    counters = launch(mem, mod, "saxpy", [y, x, 2.0, n], grid=(n // 256,), block=(256,))

Arguments are packed per the kernel's .param list (ints for pointers and integers, floats for floats).
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.amd.standalone import Arena
from gputwin.emu.nv.ptx import types as T
from gputwin.emu.nv.ptx.executor import run_kernel


def pack_params(kernel, args) -> bytes:
    if len(args) != len(kernel.params):
        raise ValueError(f"{kernel.name} takes {len(kernel.params)} arguments, got {len(args)}")
    buf = bytearray(kernel.params_size)
    for p, a in zip(kernel.params, args):
        if isinstance(a, (bytes, bytearray)):
            raw = bytes(a)
        elif T.kind(p.ptx_type) == "f":
            raw = np.array(a, T.dtype(p.ptx_type)).tobytes()
        else:
            raw = (int(a) & ((1 << (8 * p.size)) - 1)).to_bytes(p.size, "little")
        buf[p.offset:p.offset + len(raw)] = raw
    return bytes(buf)


def launch(mem, mod, name, args, *, grid=(1,), block=(1,), dynamic_shared_bytes=0, arch="sm_90"):
    k = mod.kernels[name]
    return run_kernel(mem, mod, name, grid=tuple(grid), block=tuple(block), params=pack_params(k, args),
                      dynamic_shared_bytes=dynamic_shared_bytes, arch=arch)


__all__ = ["Arena", "pack_params", "launch"]
