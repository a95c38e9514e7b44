"""Kernel-argument segments: explicit arguments typed by the metadata, hidden ones filled as ROCm does.

The layout is entirely the code object's: every argument has `.offset`, `.size` and `.value_kind` in the
NT_AMDGPU_METADATA note. Hidden arguments take the values the ROCm runtime (CLR `rocvirtual.cpp`) writes
for a launch of `grid` workgroups of `block` work-items (AMDGPUUsage "Code Object V5 Metadata"):
block counts are whole workgroups (global // local), remainders the size of a partial group (0 here:
this API launches whole workgroups), grid dims the launch's dimensionality, dynamic LDS the bytes of the
`__local` arguments (`LocalMemory`) plus the launch's dynamic shared memory, the printf buffer the
driver allocated (gputwin.abi.printf). Pointers ROCm fills only for features gputwin does not provide
(hostcall, heap, device enqueue, multigrid) are written as 0, like ROCm does when the feature is absent;
a kernel that dereferences one faults at a small address, which names the problem.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, replace

import numpy as np

from gputwin.abi.code_object import KernelArg, KernelInfo

_FLOAT_TYPES = {"half": ("e", 2), "float": ("f", 4), "double": ("d", 8), "_Float16": ("e", 2), "__fp16": ("e", 2)}
_INT_TYPES = {"char": True, "uchar": False, "short": True, "ushort": False, "int": True, "uint": False,
              "long": True, "ulong": False, "bool": False, "size_t": False, "unsigned char": False,
              "unsigned short": False, "unsigned int": False, "unsigned long": False, "signed char": True,
              "long long": True, "unsigned long long": False, "int8_t": True, "uint8_t": False,
              "int16_t": True, "uint16_t": False, "int32_t": True, "uint32_t": False, "int64_t": True,
              "uint64_t": False}
_FLOAT_FMT = {2: "e", 4: "f", 8: "d"}

# hidden kinds written as zero: features absent here (ROCm leaves them zero when it has no such object)
_ZERO_KINDS = {"hidden_none", "hidden_hostcall_buffer", "hidden_default_queue",
               "hidden_completion_action", "hidden_multigrid_sync_arg", "hidden_heap_v1", "hidden_queue_ptr"}


@dataclass(frozen=True)
class LocalMemory:
    """The value of an OpenCL `__local T *` parameter (value_kind dynamic_shared_pointer): `nbytes` of LDS
    for each workgroup, placed after the kernel's static LDS; the kernarg holds its LDS address."""
    nbytes: int


@dataclass(frozen=True)
class LaunchInfo:
    """What the hidden arguments describe: workgroups, work-items per group, and process facts."""
    grid: tuple[int, int, int]          # workgroups
    block: tuple[int, int, int]         # work-items per workgroup
    dims: int = 3                       # what get_work_dim() returns
    dynamic_lds: int = 0                # HIP-style dynamic shared memory, after any __local arguments
    private_base: int = 0               # flat apertures, for gfx8-era hidden_private_base/shared_base
    shared_base: int = 0
    printf_buffer: int = 0              # GPU address of the printf buffer (0: none, printf prints nothing)


def _elem(t: str) -> tuple[str, int] | None:
    """Scalar element of an OpenCL/HIP vector type name such as 'float4', or None."""
    base = t.rstrip("0123456789")
    n = t[len(base):]
    if base in _FLOAT_TYPES or base in _INT_TYPES:
        return base, int(n) if n else 1
    return None


def arg_label(index: int, arg: KernelArg) -> str:
    """How messages name explicit argument `index`: its position and its name (`arg2` when it has none,
    as HIP's metadata gives none), never a byte offset."""
    return f"argument {index} ({arg.name or f'arg{index}'})"


def _pack_value(index: int, arg: KernelArg, value, sig: str) -> bytes:
    """The bytes of one by_value argument, typed by its `.type_name` (or by size when there is none)."""
    t = arg.type_name.strip().removeprefix("const ").strip()
    what = arg_label(index, arg)
    if isinstance(value, (bytes, bytearray, memoryview)):
        if len(value) != arg.size:
            raise TypeError(f"{what} wants {arg.size} bytes, got {len(value)}; {sig}")
        return bytes(value)
    if isinstance(value, np.ndarray):
        if value.nbytes != arg.size:
            raise TypeError(f"{what} wants {arg.size} bytes, got an array of "
                            f"{value.nbytes}; {sig}")
        return value.tobytes()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} ({t or 'by_value'}) cannot take "
                        f"{type(value).__name__}; {sig}")
    el = _elem(t)
    if el is not None and el[1] != 1:
        raise TypeError(f"{what} is a vector {t}: pass bytes or a numpy array; {sig}")
    base = el[0] if el else None
    if base in _FLOAT_TYPES or (base is None and isinstance(value, float)):
        fmt = _FLOAT_TYPES[base][0] if base else _FLOAT_FMT.get(arg.size)
        if fmt is None or struct.calcsize(fmt) != arg.size:
            raise TypeError(f"{what}: no {arg.size}-byte float; {sig}")
        return np.array(value, dtype="<" + fmt).tobytes()
    if isinstance(value, float):
        raise TypeError(f"{what} is {t}: got float {value!r}; {sig}")
    signed = _INT_TYPES.get(base, value < 0)
    bits = 8 * arg.size
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not lo <= value <= hi:
        raise TypeError(f"{what} ({t or f'{bits}-bit int'}) out of range: {value}; {sig}")
    return (value & ((1 << bits) - 1)).to_bytes(arg.size, "little")


def _hidden_value(arg: KernelArg, launch: LaunchInfo) -> int:
    kind = arg.value_kind
    axis = "xyz".find(kind[-1]) if kind[-2:] in ("_x", "_y", "_z") else -1
    if kind.startswith("hidden_block_count_"):
        return launch.grid[axis]
    if kind.startswith("hidden_group_size_"):
        return launch.block[axis]
    if kind.startswith("hidden_remainder_") or kind.startswith("hidden_global_offset_"):
        return 0
    if kind == "hidden_grid_dims":
        return launch.dims
    if kind == "hidden_dynamic_lds_size":
        return launch.dynamic_lds
    if kind == "hidden_private_base":
        return launch.private_base >> 32
    if kind == "hidden_shared_base":
        return launch.shared_base >> 32
    if kind == "hidden_printf_buffer":
        return launch.printf_buffer
    if kind in _ZERO_KINDS:
        return 0
    raise NotImplementedError(f"hidden kernel argument kind {kind!r} is not modelled")


def lds_layout(kernel: KernelInfo, args: tuple, launch: LaunchInfo) -> tuple[dict[int, int], int]:
    """LDS addresses of the `__local` arguments (by argument index) and the dynamic LDS bytes in all.

    As the ROCm runtime lays them out: from the end of the static group segment, each aligned to its
    `.pointee_align`, in argument order; HIP-style dynamic shared memory comes last."""
    addr = kernel.group_segment_size
    offsets = {}
    for i, (a, v) in enumerate(zip(kernel.explicit_args, args)):
        if a.value_kind == "dynamic_shared_pointer" and isinstance(v, LocalMemory):
            align = max(a.pointee_align, 1)
            addr = (addr + align - 1) // align * align
            offsets[i] = addr
            addr += v.nbytes
    return offsets, addr - kernel.group_segment_size + launch.dynamic_lds


EXPLICIT_KINDS = ("dynamic_shared_pointer", "global_buffer", "by_value")


def unsupported_kinds(kernel: KernelInfo) -> list[str]:
    """The argument kinds of `kernel` build_kernargs cannot lay out (checked at load, so a code object
    with one is refused there rather than at its first launch)."""
    bad = [a.value_kind for a in kernel.explicit_args if a.value_kind not in EXPLICIT_KINDS]
    probe = LaunchInfo((1, 1, 1), (1, 1, 1))
    for a in kernel.args:
        if a.hidden:
            try:
                _hidden_value(a, probe)
            except NotImplementedError:
                bad.append(a.value_kind)
    return bad


def build_kernargs(kernel: KernelInfo, args: tuple, launch: LaunchInfo, pointer_of) -> bytearray:
    """The kernarg segment for `kernel` called with `args`.

    `pointer_of(value)` returns the GPU address a pointer argument stands for, or raises TypeError.
    Wrong argument counts or types raise TypeError naming the kernel's signature.
    """
    sig = kernel.signature()
    explicit = kernel.explicit_args
    if len(args) != len(explicit):
        raise TypeError(f"{kernel.name} takes {len(explicit)} arguments, got {len(args)}: {sig}")
    out = bytearray(kernel.kernarg_size)
    for a in kernel.args:
        if a.offset + a.size > len(out):
            raise ValueError(f"{kernel.name}: argument at {a.offset}+{a.size} exceeds kernarg size {len(out)}")
    local, dynamic_lds = lds_layout(kernel, args, launch)
    launch = replace(launch, dynamic_lds=dynamic_lds)
    for i, (a, v) in enumerate(zip(explicit, args)):
        if a.value_kind == "dynamic_shared_pointer":
            if not isinstance(v, LocalMemory) or v.nbytes < 0:
                raise TypeError(f"{arg_label(i, a)} ({a.type_name or 'local pointer'}) wants "
                                f"LocalMemory(nbytes), got {v!r}; {sig}")
            data = local[i].to_bytes(8, "little")[:a.size]
        elif a.value_kind == "global_buffer":
            try:
                va = pointer_of(v)
            except TypeError as e:
                raise TypeError(f"{arg_label(i, a)} ({a.type_name or 'pointer'}): {e}; {sig}") from None
            data = va.to_bytes(8, "little")[:a.size]
        elif a.value_kind == "by_value":
            data = _pack_value(i, a, v, sig)
        else:
            raise NotImplementedError(f"{kernel.name}: argument kind {a.value_kind!r} is not supported")
        out[a.offset:a.offset + a.size] = data
    for a in kernel.args:
        if a.hidden:
            value = _hidden_value(a, launch)
            out[a.offset:a.offset + a.size] = (value & ((1 << (8 * a.size)) - 1)).to_bytes(a.size, "little")
    return out
