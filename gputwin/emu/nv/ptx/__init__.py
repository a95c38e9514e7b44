"""The PTX emulator: NVIDIA's documented ISA, run bit-exact and warp-vectorised (docs/ptx-emulator.md).

    from gputwin.emu.nv.ptx import load_module, run_kernel, PtxError
    mod = load_module(ptx_text)                       # parse + plan once (cached by text)
    k = mod.kernels["name"]                           # k.params, k.params_size, k.static_shared_bytes
    counters = run_kernel(mem, mod, "name", grid=(gx, gy, gz), block=(bx, by, bz), params=b"...",
                          dynamic_shared_bytes=0, arch="sm_90")   # -> Counters(warp_insts, lane_ops, warps)

`mem` is a gputwin.emu.memory.AddressSpace; `params` the raw parameter bytes laid out per k.params.
"""
from gputwin.emu.nv.ptx.errors import PtxError
from gputwin.emu.nv.ptx.executor import Counters, run_kernel
from gputwin.emu.nv.ptx.module import KernelInfo, Module, Param, load_module

__all__ = ["load_module", "run_kernel", "PtxError", "Counters", "Param", "Module", "KernelInfo"]
