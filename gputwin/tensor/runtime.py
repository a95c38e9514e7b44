"""Devices as the Tensor library sees them: one opened device per DEV spec, its memory, its programs.

A DeviceContext wraps a device from `gputwin.open_device` and only uses the public device API
(alloc / copyin / copyout / load / program call / synchronize). It keeps a per-device program cache
(repr(KernelSpec) -> Program, on top of the compiler's IR-keyed cache), reuses freed buffers of the same
size (the device API has no free), and records per-kernel launch counts and wall time.
"""
from __future__ import annotations

import os
import time
import weakref
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from gputwin import device as devmod
from gputwin.tensor import lower, matmul_kernel
from gputwin.tensor.spec import KernelSpec


def _lowering(spec):
    """The module that turns this kind of spec into a kernel and its launch shape."""
    return matmul_kernel if isinstance(spec, matmul_kernel.MatmulSpec) else lower


@dataclass
class KernelStats:
    launches: int = 0
    seconds: float = 0.0


@dataclass
class Stats:
    kernels: dict[str, KernelStats] = field(default_factory=lambda: defaultdict(KernelStats))
    programs_built: int = 0     # specs seen for the first time on this device (lowered + loaded)
    program_hits: int = 0       # launches that reused a loaded program
    compile_seconds: float = 0.0
    copy_seconds: float = 0.0


class Storage:
    """A device buffer owned by tensors; returned to its context's pool when the last user drops it."""
    __slots__ = ("ctx", "buf", "nbytes", "cap")

    def __init__(self, ctx: "DeviceContext", buf, nbytes: int, cap: int):
        self.ctx, self.buf, self.nbytes, self.cap = ctx, buf, nbytes, cap

    def __del__(self):
        ctx = getattr(self, "ctx", None)
        if ctx is not None:
            ctx._pool[self.cap].append(self.buf)


class DeviceContext:
    def __init__(self, spec: str, dev):
        self.spec, self.dev = spec, dev
        self.programs: dict[str, object] = {}
        self.stats = Stats()
        self._pool: dict[int, list] = defaultdict(list)
        # tensors whose unrealized expressions read storages, by id (a WeakSet would compare Tensors with
        # their elementwise ==)
        self.pending: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

    def flush_readers(self, storage: "Storage", but=()) -> None:
        """Compute every pending tensor that reads `storage` (except those in `but`: what the write
        itself reads), before it is written in place."""
        for t in list(self.pending.values()):
            if not t.is_view and all(t is not b for b in but) and any(b is storage for b in t._bufs):
                t.realize()

    def __repr__(self) -> str:
        return f"DeviceContext({self.spec})"

    # memory -----------------------------------------------------------------------------------------
    def alloc(self, nbytes: int) -> Storage:
        size = max(nbytes, 1)
        size = (size + 255) & ~255  # round up so freed buffers are reusable across nearby sizes
        pool = self._pool.get(size)
        buf = pool.pop() if pool else self.dev.alloc(size)
        return Storage(self, buf, nbytes, size)

    def upload(self, arr: np.ndarray) -> Storage:
        arr = np.ascontiguousarray(arr)
        st = self.alloc(arr.nbytes)
        if arr.nbytes:
            t0 = time.perf_counter()
            self.dev.copyin(st.buf, arr.view(np.uint8).reshape(-1))
            self.stats.copy_seconds += time.perf_counter() - t0
        return st

    def download(self, st: Storage, offset: int, nbytes: int) -> np.ndarray:
        out = np.empty(nbytes, np.uint8)
        if nbytes:
            t0 = time.perf_counter()
            self.dev.synchronize()
            self.dev.copyout(out, st.buf, offset)
            self.stats.copy_seconds += time.perf_counter() - t0
        return out

    # kernels ----------------------------------------------------------------------------------------
    def program(self, spec: KernelSpec):
        # Keyed by repr, not ==: 0.0 == -0.0 and nan != nan, but their kernels differ / are the same.
        key = repr(spec)
        prg = self.programs.get(key)
        if prg is None:
            from gputwin.compiler import load_kernel
            t0 = time.perf_counter()
            prg = self.programs[key] = load_kernel(self.dev, _lowering(spec).build(spec))
            self.stats.compile_seconds += time.perf_counter() - t0
            self.stats.programs_built += 1
        else:
            self.stats.program_hits += 1
        return prg

    def run(self, spec: KernelSpec, inputs: tuple[Storage, ...], out: Storage) -> None:
        prg = self.program(spec)
        grid, block = _lowering(spec).launch_dims(spec)
        t0 = time.perf_counter()
        prg(out.buf, *(s.buf for s in inputs), grid=grid, block=block)
        self.dev.synchronize()
        ks = self.stats.kernels[spec.name]
        ks.launches += 1
        ks.seconds += time.perf_counter() - t0


_CONTEXTS: dict[str, DeviceContext] = {}


def default_spec() -> str:
    return os.environ.get("DEV") or devmod.DEFAULT_SPEC


def get_context(spec=None) -> DeviceContext:
    """The context for a DEV spec (one target, opened on first use), or for a device object that
    `gputwin.open_device` returned (wrapped once)."""
    if isinstance(spec, DeviceContext):
        return spec
    if spec is not None and not isinstance(spec, str):
        if not all(hasattr(spec, a) for a in ("alloc", "copyin", "copyout", "load", "synchronize")):
            raise TypeError(f"device must be a DEV spec string or an opened device, got {spec!r}")
        key = f"id:{id(spec)}"
        if key not in _CONTEXTS:
            _CONTEXTS[key] = DeviceContext(getattr(spec, "name", key), spec)
        return _CONTEXTS[key]
    targets = devmod.parse_spec(spec if spec is not None else default_spec())
    if len(targets) != 1:
        raise ValueError(f"a tensor lives on one device, got {len(targets)} in {spec!r}")
    key = targets[0].spec
    ctx = _CONTEXTS.get(key)
    if ctx is None:
        ctx = _CONTEXTS[key] = DeviceContext(key, devmod.open_targets(targets)[0])
    return ctx
