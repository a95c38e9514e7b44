"""What the driver needs from a PTX module to launch one of its kernels: the entry's parameter list (laid out
as the PTX ABI does: each parameter at its natural / .align alignment) and its static shared memory.

This reads only the `.entry` header and `.shared` declarations; the module itself is handed to the GPU
(or, on a real GPU, to the PTX compiler) unchanged.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

_SIZES = {"u8": 1, "s8": 1, "b8": 1, "u16": 2, "s16": 2, "b16": 2, "f16": 2, "bf16": 2, "u32": 4, "s32": 4, "b32": 4,
          "f32": 4, "u64": 8, "s64": 8, "b64": 8, "f64": 8}
_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$%][\w$]*)\s*\((.*?)\)", re.S)
# `.ptr [.space] [.align N]` (LLVM's pointer parameters) describes the pointee: it leaves the layout alone
_PARAM = re.compile(r"\.param\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+"
                    r"(?:\.ptr\s+(?:\.(?:global|shared|const|local)\s+)?(?:\.align\s+\d+\s+)?)?"
                    r"([A-Za-z_$%][\w$]*)\s*(?:\[\s*(\d+)\s*\])?")
_SHARED = re.compile(r"\.shared\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+([A-Za-z_$%][\w$]*)\s*((?:\[\s*\d+\s*\])*)\s*;")
_FUNC = re.compile(r"\.func\b")


class PtxSignatureError(ValueError):
    pass


@dataclass(frozen=True)
class PtxParam:
    name: str
    ptx_type: str
    size: int
    align: int
    offset: int
    array: bool

    def pack(self, value, device) -> bytes:
        t = self.ptx_type
        if self.array:
            data = bytes(memoryview(value).cast("B")) if not isinstance(value, np.ndarray) else value.tobytes()
            if len(data) != self.size:
                raise TypeError(f"{self.name}: wants exactly {self.size} bytes")
            return data
        if t in ("u64", "b64", "s64") and hasattr(value, "va"):
            return device._pointer_of(value).to_bytes(8, "little")
        if t[0] == "f" or t == "bf16":
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise TypeError(f"{self.name}: wants a number for .{t}")
            if t == "bf16":
                raise TypeError(f"{self.name}: .bf16 parameters are not supported")
            return np.array(value, {"f16": np.float16, "f32": np.float32, "f64": np.float64}[t]).tobytes()
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{self.name}: wants an integer (or a buffer for a 64-bit pointer) for .{t}")
        # PTX types carry width, not C signedness (nvcc declares a `signed char` parameter .u8), so .u/.b
        # parameters take any integer of that width; .s parameters only signed values
        bits = 8 * self.size
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1 if t[0] == "s" else (1 << bits) - 1
        if not lo <= int(value) <= hi:
            raise TypeError(f"{self.name}: {value} does not fit .{t}")
        return (int(value) & ((1 << bits) - 1)).to_bytes(self.size, "little")


@dataclass(frozen=True)
class PtxKernel:
    name: str
    params: tuple[PtxParam, ...]
    params_size: int
    static_shared: int

    def signature(self) -> str:
        args = ", ".join(f".{p.ptx_type} {p.name}" + (f"[{p.size}]" if p.array else "") for p in self.params)
        return f"{self.name}({args})"

    def pack(self, args: tuple, device) -> bytes:
        if len(args) != len(self.params):
            raise TypeError(f"{self.signature()} takes {len(self.params)} arguments, got {len(args)}")
        out = bytearray(self.params_size)
        for p, value in zip(self.params, args):
            try:
                out[p.offset:p.offset + p.size] = p.pack(value, device)
            except TypeError as e:
                raise TypeError(f"{self.signature()}: {e}") from None
        return bytes(out)


def _body(text: str, start: int) -> str:
    """The brace-balanced body that follows position `start`."""
    open_at = text.find("{", start)
    depth, i = 0, open_at
    while 0 <= i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[open_at:i + 1]
        i += 1
    return text[open_at:]


def kernels(text: str) -> dict[str, PtxKernel]:
    """Entries of a module. A kernel's static shared memory counts the module-scope .shared variables its
    body names (nvcc puts a kernel's __shared__ arrays at module scope) or that any .func of the module
    names (calls are not followed: a shared variable used only by a device function counts for every kernel)."""
    shared = []
    for align, t, name, dims in _SHARED.findall(text):
        n = _SIZES.get(t)
        if n is None:
            raise PtxSignatureError(f".shared {name} of type .{t}")
        for d in re.findall(r"\d+", dims):
            n *= int(d)
        shared.append((name, n, int(align or _SIZES[t])))
    funcs = "".join(_body(text, m.end()) for m in _FUNC.finditer(text))
    out = {}
    for m in _ENTRY.finditer(text):
        name, plist = m.group(1), m.group(2)
        params, off = [], 0
        for align, t, pname, count in _PARAM.findall(plist):
            if t not in _SIZES:
                raise PtxSignatureError(f"{name}: parameter {pname} has type .{t}")
            size = _SIZES[t] * (int(count) if count else 1)
            a = int(align or _SIZES[t])
            off = (off + a - 1) // a * a
            params.append(PtxParam(pname, t, size, a, off, bool(count)))
            off += size
        body = _body(text, m.end()) + funcs
        static = 0
        for var, n, a in shared:
            if re.search(rf"(?<![\w$]){re.escape(var)}(?![\w$])", body):
                static = (static + a - 1) // a * a + n
        out[name] = PtxKernel(name, tuple(params), off, static)
    return out
