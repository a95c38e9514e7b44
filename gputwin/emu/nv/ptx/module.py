"""A loaded PTX module: kernels with their parameter layout, module variables, per-kernel plans.

`load_module(text)` parses once and caches by text; each kernel's plan (gputwin.emu.nv.ptx.plan) is
built on first use and kept. Parameter layout follows the PTX/CUDA ABI: each `.param` at its natural
alignment (or its `.align`), in declaration order.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from gputwin.emu.nv.ptx import types as T
from gputwin.emu.nv.ptx.errors import PtxError
from gputwin.emu.nv.ptx.parser import Function, ParsedModule, VarDecl, parse


@dataclass(frozen=True)
class Param:
    name: str
    ptx_type: str
    size: int
    align: int
    offset: int


def _type_size(d: VarDecl) -> int:
    if d.type not in T.TYPES:
        raise PtxError(f"{d.name} has no known type (.{d.type})", line=d.line, token=d.name)
    return T.size(d.type)


def decl_size(d: VarDecl) -> int:
    n = _type_size(d) * d.vec
    return n * (d.count if d.count else 1)


def decl_align(d: VarDecl) -> int:
    return d.align or _type_size(d) * d.vec


def align_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


@dataclass
class KernelInfo:
    name: str
    fn: Function
    params: list[Param]
    params_size: int
    static_shared_bytes: int
    _plan: object = field(default=None, repr=False)
    _error: Exception | None = field(default=None, repr=False)


class Module:
    def __init__(self, text: str):
        self.text = text
        self.parsed: ParsedModule = parse(text)
        self.functions = self.parsed.functions
        self.globals = {d.name: d for d in self.parsed.globals}
        self.kernels: dict[str, KernelInfo] = {}
        for name, fn in self.functions.items():
            if fn.entry and not fn.declared_only:
                params, off = [], 0
                for p in fn.params:
                    a, n = decl_align(p), decl_size(p)
                    off = align_up(off, a)
                    params.append(Param(p.name, p.type, n, a, off))
                    off += n
                self.kernels[name] = KernelInfo(name, fn, params, off, 0)
        for k in self.kernels.values():
            try:
                k.static_shared_bytes = self.plan(k.name).shared_static
            except PtxError as e:           # an unmodelled instruction fails this kernel's launches only
                from gputwin.emu.nv.ptx.plan import build_plan
                k._error = e
                try:
                    k.static_shared_bytes = build_plan(self, k, check=False).shared_static
                except PtxError:
                    k.static_shared_bytes = 0

    def plan(self, name: str):
        from gputwin.emu.nv.ptx.plan import build_plan
        k = self.kernels.get(name)
        if k is None:
            raise KeyError(f"PTX module has no kernel {name!r} (has {sorted(self.kernels)})")
        if k._error is not None:
            raise k._error
        if k._plan is None:
            k._plan = build_plan(self, k)
        return k._plan


_CACHE: dict[str, Module] = {}


def load_module(ptx_text: str | bytes) -> Module:
    """Parse and plan a PTX module once; the same text returns the same Module."""
    if isinstance(ptx_text, (bytes, bytearray)):
        ptx_text = bytes(ptx_text).rstrip(b"\0").decode()
    key = hashlib.sha256(ptx_text.encode()).hexdigest()
    mod = _CACHE.get(key)
    if mod is None:
        mod = Module(ptx_text)
        if len(_CACHE) > 256:
            _CACHE.clear()
        _CACHE[key] = mod
    return mod


__all__ = ["Module", "KernelInfo", "Param", "load_module", "PtxError"]
