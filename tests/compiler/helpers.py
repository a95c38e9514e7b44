"""Launch helpers for compiler tests: run a kernel on a device or on the RDNA3 emulator directly.

`run(kern, args, grid, on=...)`: args are numpy arrays (buffers, copied in and back out) and Python
numbers (scalars) in the kernel's parameter order; returns the arrays as they are after the launch.
`on="cpu"` uses gputwin.drivers.cpu; `on="gfx1100"` (etc.) loads the linked code object with the
team's code-object reader and runs it with gputwin.emu.amd.dispatch.run_dispatch, laying out the
kernel arguments as the metadata says (the driver does the same through KFD); `on=<opened device>` goes
through the public device API. The default (`on=None`) is the device under test when the session names
one explicitly (`--dev` / $DEV, set by conftest.py: `pytest --dev MOCKNV tests/compiler` runs the op and
kernel tests through the NV driver), else the CPU device.
"""
from __future__ import annotations

import numpy as np

from gputwin.compiler import compile_kernel, load_kernel

_CPU = None
DEVICE_UNDER_TEST = None     # an opened device (conftest.py), or None: the CPU device


def cpu_device():
    global _CPU
    if _CPU is None:
        from gputwin.drivers.cpu import CPUDevice
        _CPU = CPUDevice()
    return _CPU


def run(kern, args, grid, on=None) -> list[np.ndarray]:
    arrays = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    if on is None:
        on = DEVICE_UNDER_TEST or "cpu"
    if not isinstance(on, str) or on == "cpu":
        dev = cpu_device() if on == "cpu" else on
        prg = load_kernel(dev, kern)
        bufs = []
        for a in arrays:
            if isinstance(a, np.ndarray):
                b = dev.alloc(max(a.nbytes, 1))
                dev.copyin(b, a)
                bufs.append(b)
            else:
                bufs.append(a)
        prg(*bufs, grid=grid, block=kern.local_size)
        dev.synchronize()
        for a, b in zip(arrays, bufs):
            if isinstance(a, np.ndarray):
                dev.copyout(a, b)
        return [a for a in arrays if isinstance(a, np.ndarray)]
    return _run_emulated(kern, arrays, grid, on)


def _run_emulated(kern, arrays, grid, arch):
    from gputwin.abi.code_object import CodeObject
    from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
    from gputwin.emu.memory import AddressSpace
    co = CodeObject.parse(compile_kernel(kern, arch))
    ki = co.kernels[kern.name]
    mem = AddressSpace()
    code, base = 0x10000000, 0x20000000
    mem.map(code, (co.image_size + 0xFFF) & ~0xFFF)
    mem.write(code, co.relocated_image(code))
    kernargs = bytearray(max(ki.kernarg_size, 8))
    vas = []
    for k, (arg, md) in enumerate(zip(arrays, ki.explicit_args)):
        if isinstance(arg, np.ndarray):
            va = base + k * 0x1000000
            mem.map(va, max((arg.nbytes + 0xFFF) & ~0xFFF, 0x1000))
            mem.write(va, arg.tobytes())
            kernargs[md.offset:md.offset + 8] = va.to_bytes(8, "little")
            vas.append(va)
        else:
            dt = {4: np.int32, 8: np.int64}[md.size] if isinstance(arg, int) else np.float32
            kernargs[md.offset:md.offset + md.size] = np.array([arg], dt).tobytes()
            vas.append(None)
    ka = 0x1F000000
    mem.map(ka, 0x1000)
    mem.write(ka, bytes(kernargs))
    user = [ka & 0xFFFFFFFF, ka >> 32] + [0] * max(ki.user_sgpr_count - 2, 0)
    run_dispatch(mem, Dispatch(code_address=code + ki.entry_offset, grid=tuple(grid), block=kern.local_size,
                               wave64=not ki.wave32, user_sgprs=user, rsrc1=ki.rsrc1, rsrc2=ki.rsrc2,
                               rsrc3=ki.rsrc3, lds_bytes=ki.group_segment_size), arch=arch)
    out = []
    for a, va in zip(arrays, vas):
        if isinstance(a, np.ndarray):
            out.append(np.frombuffer(mem.read(va, a.nbytes), dtype=a.dtype).reshape(a.shape).copy())
    return out


def elementwise(name, dtypes_in, dtype_out, fn, local=64):
    """A kernel out[i] = fn(in0[i], in1[i], ...) for i < n."""
    from gputwin.compiler import ir
    k = ir.KernelBuilder(name, local_size=(local, 1, 1))
    ins = [k.buffer(f"x{j}", dt) for j, dt in enumerate(dtypes_in)]
    out = k.buffer("out", dtype_out)
    n = k.scalar("n", ir.int32)
    i = k.global_id(0)
    with k.if_(i < n):
        out[i] = fn(*[b[i] for b in ins])
    return k.build()


def run_elementwise(kern, inputs, out_dtype, on=None):
    n, local = len(inputs[0]), kern.local_size[0]
    out = np.zeros(n, dtype=out_dtype)
    res = run(kern, list(inputs) + [out, n], grid=((n + local - 1) // local, 1, 1), on=on)
    return res[-1]


def bits(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" or a.dtype.name == "bfloat16" else a
