"""Lowering: a KernelSpec becomes a kernel in the compiler's IR (gputwin.compiler.ir).

One work-item per output element (`global_id(0)`); its multi-index comes from the flat id by division
by constant extents (shapes are baked in, so LLVM turns these into multiplies). A reduction loops over
the reduced dims in row-major order with nested `k.range`s, so the accumulation order is fixed on every
target. Parameters: the output buffer first, then the input buffers in spec order.
"""
from __future__ import annotations

import math

import numpy as np

from gputwin.compiler import ir
from gputwin.tensor import kernel_math as km
from gputwin.tensor.spec import Const, Gather, Index, KernelSpec, Load, Node

LOCAL_SIZE = 64


def multi_index(flat, shape: tuple[int, ...]) -> list:
    """Row-major multi-index (int32) of a flat id over `shape`; size-1 dims are the constant 0.
    The math is unsigned so that division by a constant extent needs no sign fix-ups."""
    u = flat.cast(ir.uint32)
    idx, inner, total = [], 1, math.prod(shape)
    for s in reversed(shape):
        if s == 1:
            idx.append(0)
        else:
            q = u if inner == 1 else u // inner
            idx.append((q if inner * s == total else q % s).cast(ir.int32))
        inner *= s
    return list(reversed(idx))


class Emitter:
    """Emits a spec expression's IR at the multi-index `idx` (a list of IR values or Python ints)."""

    def __init__(self, k: ir.KernelBuilder, bufs: list, idx: list):
        self.k, self.bufs, self.idx = k, bufs, idx

    def address(self, view):
        """The element offset of the current iteration point in `view` (an int or an int32 value)."""
        addr = view.offset
        for i, st in zip(self.idx, view.strides):
            if st and not isinstance(i, int):
                addr = addr + i * st
        return addr

    def load(self, ld: Load):
        dt = ir.dtype(ld.dtype)
        addr = self.address(ld.view)
        if ld.mask is None:
            return self.bufs[ld.arg][addr]
        valid = None
        for i, (lo, hi), size in zip(self.idx, ld.mask, ld.view.shape):
            conds = []
            if isinstance(i, int):
                if not lo <= i < hi:
                    return ir.const(ld.fill, dt)
                continue
            if lo > 0:
                conds.append(i >= lo)
            if hi < size:
                conds.append(i < hi)
            for c in conds:
                valid = c if valid is None else valid & c
        if valid is None:
            return self.bufs[ld.arg][addr]
        safe = ir.where(valid, addr, 0) if not isinstance(addr, int) else addr
        return ir.where(valid, self.bufs[ld.arg][safe], ir.const(ld.fill, dt))

    def emit(self, node: Node):
        if isinstance(node, Load):
            return self.load(node)
        if isinstance(node, Const):
            return ir.const(node.value, ir.dtype(node.dtype))
        if isinstance(node, Index):
            addr, dt = self.address(node.view), ir.dtype(node.dtype)
            return ir.const(addr, dt) if isinstance(addr, int) else addr.cast(dt)
        if isinstance(node, Gather):
            return self.bufs[node.arg][self.emit(node.index)]
        srcs = [self.emit(s) for s in node.srcs]
        if node.op == "cast":
            return srcs[0].cast(ir.dtype(node.dtype))
        if node.op in _COMPOSITE and srcs[0].dtype in (ir.float16, ir.bfloat16):
            # composites compute in float32 and round once, like the transcendental primitives
            return _OPS[node.op](*(s.cast(ir.float32) for s in srcs)).cast(srcs[0].dtype)
        return _OPS[node.op](*srcs)


def _sigmoid(x):
    # 1 / (1 + exp(-x)) without overflow: e = exp(-|x|) <= 1, and e / (1 + e) for negative x
    e = ir.exp(-abs(x))
    return ir.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _gelu(x):
    # tanh approximation (GPT-2, jax.nn.gelu(approximate=True)): 0.5 x (1 + tanh(z)) == x * sigmoid(2z),
    # which has no cancellation and no overflow for negative x
    z = (x + (x * x * x) * 0.044715) * 0.7978845608028654
    return x * _sigmoid(z * 2.0)


def _float_or_int(float_fn, int_fn):
    return lambda a, b: float_fn(a, b) if a.dtype.is_float else int_fn(a, b)


_COMPOSITE = ("sigmoid", "gelu", "floor", "ceil", "trunc", "rint", "floordiv", "mod", "fmod")
_OPS = {
    "neg": lambda x: -x, "abs": abs, "not": lambda x: ~x, "exp": ir.exp, "log": ir.log, "sqrt": ir.sqrt,
    "sin": ir.sin, "cos": ir.cos, "tanh": ir.tanh, "sigmoid": _sigmoid, "gelu": _gelu,
    "relu": lambda x: ir.maximum(x, 0),
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "pow": _float_or_int(ir.pow, km.int_power), "max": ir.maximum, "min": ir.minimum,
    "eq": lambda a, b: a.eq(b), "ne": lambda a, b: a.ne(b), "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "where": ir.where,
    "xor": lambda a, b: a ^ b, "shl": km.left_shift, "shr": km.right_shift,
    "floordiv": _float_or_int(km.floor_divide, lambda a, b: a // b),
    "mod": _float_or_int(km.remainder, lambda a, b: a % b),
    "fmod": _float_or_int(km.fmod, km.int_fmod),
    "floor": km.floor, "ceil": km.ceil, "trunc": km.trunc, "rint": km.rint,
    "isnan": km.isnan, "isinf": km.isinf, "isfinite": km.isfinite, "sortkey": km.sort_key,
    "lerp": km.lerp, "lerpfloor": km.lerp_floor,
}


def _lowest(dt: ir.DType):
    return -np.inf if dt.is_float else (0 if dt.kind in "ub" else -(1 << (dt.bits - 1)))


def _highest(dt: ir.DType):
    return np.inf if dt.is_float else (1 if dt.kind == "b" else (1 << (dt.bits - (dt.kind != "u"))) - 1)


def _nested(k, rshape, body, idx=()):
    """for j0 in range(rshape[0]): for j1 ...: body(j) -- row-major order."""
    if len(idx) == len(rshape):
        body(list(idx))
        return
    with k.range(rshape[len(idx)]) as j:
        _nested(k, rshape, body, idx + (j,))


def _reduce(k, spec: KernelSpec, em: Emitter, oidx: list, out=None, gid=None):
    acc_dt = ir.dtype(spec.acc_dtype)
    op = spec.reduce
    if op in ("argmax", "argmin"):
        best = k.var(acc_dt, _lowest(acc_dt) if op == "argmax" else _highest(acc_dt), "best")
        where_ = k.var(ir.int64, 0, "where")
        flat = k.var(ir.int64, 0, "flat")

        def body(j):
            em.idx = oidx + j
            x, b = em.emit(spec.expr).cast(acc_dt), best.get()
            better = (x > b) if op == "argmax" else (x < b)
            if acc_dt.is_float:  # the first NaN wins, as numpy's argmax/argmin
                better = better | (x.ne(x) & b.eq(b))
            n = flat.get()
            best.set(ir.where(better, x, b))
            where_.set(ir.where(better, n, where_.get()))
            flat.set(n + 1)
        _nested(k, spec.rshape, body)
        return where_.get()
    # -0.0 is the float sum's exact identity (-0.0 + x == x for every x, -0.0 included), as numpy's
    # reductions that start from the first element; an empty sum is +0.0, as numpy's
    zero = -0.0 if acc_dt.is_float and math.prod(spec.rshape) else 0
    init = {"sum": zero, "prod": 1, "max": _lowest(acc_dt), "min": _highest(acc_dt)}[op]
    acc = k.var(acc_dt, init)
    fn = {"sum": lambda a, x: a + x, "prod": lambda a, x: a * x, "max": ir.maximum, "min": ir.minimum}[op]

    def body(j):
        em.idx = oidx + j
        acc.set(fn(acc.get(), em.emit(spec.expr).cast(acc_dt)))
        if spec.scan:  # one work-item per row stores every prefix (numpy's accumulate order)
            out[gid * math.prod(spec.rshape) + j[0]] = acc.get().cast(ir.dtype(spec.out_dtype))
    _nested(k, spec.rshape, body)
    return acc.get()


def build(spec: KernelSpec) -> ir.Kernel:
    k = ir.KernelBuilder(spec.symbol, local_size=(LOCAL_SIZE, 1, 1))
    out = k.buffer("out", ir.dtype(spec.out_dtype))
    bufs = [k.buffer(f"in{i}", ir.dtype(dt)) for i, dt in enumerate(spec.arg_dtypes)]
    n = math.prod(spec.shape)
    gid = k.global_id(0)
    with k.if_(gid < n):
        oidx = multi_index(gid, spec.shape)
        em = Emitter(k, bufs, oidx)
        value = em.emit(spec.expr) if spec.reduce is None else _reduce(k, spec, em, oidx, out, gid)
        if not spec.scan:  # a scan stored every prefix already
            _store(k, spec, em, oidx, out, gid, value.cast(ir.dtype(spec.out_dtype)))
    return k.build()


def _store(k, spec: KernelSpec, em: Emitter, oidx: list, out, gid, value):
    em.idx = oidx
    if spec.out_index is None:
        out[gid if spec.out_view is None else em.address(spec.out_view)] = value
        return
    addr = em.emit(spec.out_index)
    with k.if_(addr >= 0):   # a scatter skips the points its index marks negative
        out[addr] = value


def launch_dims(spec: KernelSpec) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    n = math.prod(spec.shape)
    return ((n + LOCAL_SIZE - 1) // LOCAL_SIZE, 1, 1), (LOCAL_SIZE, 1, 1)
