"""Which device library defines a symbol a code object (or a kernel being linked) needs but lacks.

Kernels built without device libraries (`-nogpulib`) call library functions by name: OpenCL built-ins by
their Itanium-mangled overloads (`_Z3sinf`), ROCm's internal libraries by prefix (`__ocml_`, `__ockl_`).
gputwin's own device library (gputwin/cc/devlib, linked by `gputwin cc`) covers the work-item functions,
barriers, atomics, printf and the math LLVM expands itself; the rest lives in ROCm's device libraries
(the rocm-device-libs bitcode: ocml for math, ockl for runtime helpers, opencl for OpenCL's built-ins).
Facts: ROCm-Device-Libs' library split (ocml/ockl/opencl/hip), clang's OpenCL built-in declarations.
"""
from __future__ import annotations

import re

GPUTWIN_DEVLIB = "gputwin's device library (gputwin cc links it)"
_ROCM = "ROCm's device libraries (rocm-device-libs bitcode"
# OpenCL math with no exact AMDGPU expansion: ROCm implements them in ocml; native_* are gputwin's
_OCML_MATH = {"sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
              "pow", "powr", "pown", "rootn", "cbrt", "hypot", "fmod", "remainder", "remquo", "erf", "erfc",
              "tgamma", "lgamma", "lgamma_r", "expm1", "log1p", "logb", "ilogb", "ldexp", "frexp", "modf", "sincos",
              "sinpi", "cospi", "tanpi", "asinpi", "acospi", "atanpi", "atan2pi", "exp10", "nextafter", "nan",
              "fract", "maxmag", "minmag", "divide", "recip"}
# ... of which gputwin's library (gtmath.h) has the float and double forms (OpenCL's overloads, HIP's sinf, sin ...)
_GTMATH = {"sin", "cos", "tan", "sincos", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
           "atanh", "pow", "pown", "powr", "rootn", "cbrt", "hypot", "exp10", "expm1", "log1p", "erf", "erfc", "fmod",
           "remainder", "remquo", "lgamma", "lgamma_r", "tgamma", "sinpi", "cospi", "tanpi", "asinpi", "acospi", "atanpi",
           "atan2pi"}
_ITANIUM_NAME = re.compile(r"_Z(\d+)")


def base_name(symbol: str) -> str:
    """`_Z3sinf` -> `sin`, `sin(float)` (a linker's demangled spelling) -> `sin`, `__ocml_sin_f32` unchanged."""
    m = _ITANIUM_NAME.match(symbol)
    if m:
        n = int(m.group(1))
        return symbol[m.end():m.end() + n]
    return symbol.split("(", 1)[0].strip()


def provider(symbol: str) -> str:
    """A sentence naming the library that defines `symbol`, and what to do about it."""
    name = base_name(symbol)
    if name.startswith("__ocml_"):
        return f"{_ROCM}, ocml.bc): link it, or use a function gputwin's library has (docs/cc.md)"
    if name.startswith("__ockl_printf") or name.startswith("__ockl_hostcall"):
        return ("ROCm's hostcall printf (ockl.bc), which needs a host thread serving the GPU: build HIP with "
                "-mprintf-kind=buffered (gputwin cc does) so printf writes the printf buffer instead")
    if name.startswith("__ockl_") or name.startswith("__oclc_"):
        return f"{_ROCM}, ockl.bc / oclc_*.bc): link them with clang -Xclang -mlink-builtin-bitcode"
    if name.startswith("native_") or name.startswith("half_"):
        return f"{_ROCM}, opencl.bc); gputwin's library has native_* for float only"
    math = name if name in _OCML_MATH else name[:-1] if name.endswith("f") and name[:-1] in _OCML_MATH else None
    if math in _GTMATH:
        return f"{GPUTWIN_DEVLIB}: build with `gputwin cc`"
    if math is not None:
        return f"{_ROCM}, ocml.bc via opencl.bc)"
    if name.startswith("convert_") or name.startswith("vload") or name.startswith("vstore"):
        return f"{GPUTWIN_DEVLIB}: build with `gputwin cc`"
    if name in ("get_global_id", "get_local_id", "get_group_id", "get_local_size", "get_num_groups",
                "get_global_size", "get_work_dim", "barrier", "__printf_alloc"):
        return f"{GPUTWIN_DEVLIB} or ROCm's opencl.bc: build with `gputwin cc`, which links it"
    return "no device library gputwin knows of: define it in the kernel's source"
