"""The kernel IR: what the Tensor library (and tests) write kernels in.

A kernel is built with `KernelBuilder` inside Python `with` blocks and frozen into a `Kernel`:
- parameters: typed buffers (`k.buffer`) and scalars (`k.scalar`), in declaration order = call order;
- index space: the launch grid maps to workgroups, `local_size` (fixed at build time) to work-items;
  `k.global_id(a) = k.group_id(a) * local_size[a] + k.local_id(a)` (int32);
- values: typed SSA values (`Value`) with numpy-like operators; pure values (ALU) are recomputed where
  used, ordered values (loads, variable reads) belong to the block they were made in;
- statements: stores, `k.if_`, `k.range` loops, mutable variables (`k.var`) for reductions, workgroup
  shared memory (`k.shared`) and `k.barrier()` (top level only).
Binary ops need equal dtypes (the Tensor layer promotes and casts explicitly); Python numbers are
converted to the other operand's dtype. Transcendentals live in gputwin.compiler.mathlib and are built
from these primitives, so every target runs the same operation sequence (docs/compiler.md).
"""
from __future__ import annotations

import numpy as np

from gputwin.compiler.dtypes import (DTYPES, DType, bfloat16, bool_, dtype, float16, float32, int16,  # noqa: F401
                                     int32, int64, uint8, uint32)


# --- ops ----------------------------------------------------------------------------------------------
UNARY = {"neg", "abs", "not", "sqrt"}     # not: bool not / int bitwise invert
BINARY = {"add", "sub", "mul", "div", "floordiv", "mod", "max", "min", "and", "or", "xor", "shl", "shr",
          "lt", "le", "gt", "ge", "eq", "ne"}
COMPARE = {"lt", "le", "gt", "ge", "eq", "ne"}
LEAVES = {"const", "param", "group_id", "local_id"}


class IRError(TypeError):
    """A kernel that cannot be built: dtype mismatch, value used outside its block, bad statement."""


class Block:
    """A statement list; its parent chain decides which ordered values are visible inside it."""

    def __init__(self, parent: Block | None, kind: str):
        self.parent, self.kind, self.stmts = parent, kind, []
        self.depth = 0 if parent is None else parent.depth + 1

    def sees(self, other: Block | None) -> bool:
        b: Block | None = self
        while b is not None:
            if b is other:
                return True
            b = b.parent
        return other is None


class Value:
    """A typed value. `op` names the operation, `srcs` its operands, `arg` a constant payload."""
    __slots__ = ("op", "dtype", "srcs", "arg", "block", "_key")
    __hash__ = object.__hash__

    def __init__(self, op: str, dt: DType, srcs: tuple = (), arg=None, block: Block | None = None):
        self.op, self.dtype, self.srcs, self.arg, self.block = op, dt, srcs, arg, block
        self._key = None

    def __repr__(self) -> str:
        return f"<{self.op}:{self.dtype}>"

    # arithmetic -----------------------------------------------------------------------------------
    def __add__(self, o): return binary("add", self, o)
    def __radd__(self, o): return binary("add", o, self)
    def __sub__(self, o): return binary("sub", self, o)
    def __rsub__(self, o): return binary("sub", o, self)
    def __mul__(self, o): return binary("mul", self, o)
    def __rmul__(self, o): return binary("mul", o, self)
    def __truediv__(self, o): return binary("div", self, o)
    def __rtruediv__(self, o): return binary("div", o, self)
    def __floordiv__(self, o): return binary("floordiv", self, o)
    def __rfloordiv__(self, o): return binary("floordiv", o, self)
    def __mod__(self, o): return binary("mod", self, o)
    def __rmod__(self, o): return binary("mod", o, self)
    def __and__(self, o): return binary("and", self, o)
    def __rand__(self, o): return binary("and", o, self)
    def __or__(self, o): return binary("or", self, o)
    def __ror__(self, o): return binary("or", o, self)
    def __xor__(self, o): return binary("xor", self, o)
    def __rxor__(self, o): return binary("xor", o, self)
    def __lshift__(self, o): return binary("shl", self, o)
    def __rshift__(self, o): return binary("shr", self, o)
    def __neg__(self): return unary("neg", self)
    def __abs__(self): return unary("abs", self)
    def __invert__(self): return unary("not", self)
    def __lt__(self, o): return binary("lt", self, o)
    def __le__(self, o): return binary("le", self, o)
    def __gt__(self, o): return binary("gt", self, o)
    def __ge__(self, o): return binary("ge", self, o)
    def eq(self, o): return binary("eq", self, o)
    def ne(self, o): return binary("ne", self, o)

    def cast(self, dt) -> Value:
        return cast(self, dt)

    def bitcast(self, dt) -> Value:
        return bitcast(self, dt)

    def __bool__(self):
        raise IRError("an IR value has no Python truth value; use k.if_(cond) or where(cond, a, b)")


def const(value, dt) -> Value:
    dt = dtype(dt)
    if dt.is_float:
        bits = np.array([value], dtype=np.float64).astype(dt.np).view(f"u{dt.itemsize}")[0]
        return Value("const", dt, arg=int(bits))          # floats are kept as their exact storage bits
    if dt.kind == "b":
        return Value("const", dt, arg=int(bool(value)))
    v = int(value)
    lo, hi = (0, 1 << dt.bits) if dt.kind == "u" else (-(1 << (dt.bits - 1)), 1 << (dt.bits - 1))
    if not lo <= v < hi:
        raise IRError(f"constant {value} does not fit {dt}")
    return Value("const", dt, arg=v)


def _as_value(x, like: DType) -> Value:
    if isinstance(x, Value):
        return x
    if isinstance(x, (bool, int, float, np.generic)):
        return const(x, like)
    raise IRError(f"cannot use {type(x).__name__} {x!r} as a kernel value")


def _block_of(*vals: Value) -> Block | None:
    blocks = [v.block for v in vals if v.block is not None]
    return max(blocks, key=lambda b: b.depth) if blocks else None


def _check_visible(*vals: Value):
    cur = _current_builder()
    if cur is None:
        return
    for v in vals:
        if v.block is not None and not cur.block.sees(v.block):
            raise IRError(f"{v!r} was made inside a block (if/range/barrier phase) that does not contain "
                          f"this use; keep it in a k.var or shared memory to carry it out")


def unary(op: str, x: Value) -> Value:
    if op not in UNARY:
        raise IRError(f"unknown unary op {op!r}; known: {', '.join(sorted(UNARY))}")
    x = _as_value(x, float32)
    _check_visible(x)
    if op == "sqrt" and not x.dtype.is_float:
        raise IRError(f"sqrt needs a float, got {x.dtype}")
    if op == "not" and x.dtype.is_float:
        raise IRError(f"~ needs a bool or integer, got {x.dtype}")
    if op == "neg" and x.dtype.kind == "b":
        raise IRError("negating a bool is not allowed (numpy raises too); use ~")
    return Value(op, x.dtype, (x,), block=x.block)


def binary(op: str, a, b) -> Value:
    if op not in BINARY:
        raise IRError(f"unknown binary op {op!r}; known: {', '.join(sorted(BINARY))}")
    if not isinstance(a, Value) and not isinstance(b, Value):
        raise IRError(f"{op} needs at least one IR value")
    a = _as_value(a, b.dtype if isinstance(b, Value) else None)
    b = _as_value(b, a.dtype)
    _check_visible(a, b)
    if a.dtype != b.dtype:
        raise IRError(f"{op} of {a.dtype} and {b.dtype}: cast one operand first")
    dt = a.dtype
    if op == "div" and not dt.is_float:
        raise IRError(f"/ needs floats, got {dt}; use // for floor division of integers")
    if op in ("floordiv", "mod", "shl", "shr") and not dt.is_int:
        raise IRError(f"{op} needs integers, got {dt}")
    if op in ("and", "or", "xor") and dt.is_float:
        raise IRError(f"{op} needs bools or integers, got {dt}")
    if op in ("add", "sub", "mul") and dt.kind == "b":
        raise IRError(f"{op} of bools: use |, & or ^")
    return Value(op, bool_ if op in COMPARE else dt, (a, b), block=_block_of(a, b))


def where(cond, a, b) -> Value:
    """cond ? a : b, all three evaluated (no side effects exist in pure values)."""
    if isinstance(a, Value) or isinstance(b, Value):
        like = a.dtype if isinstance(a, Value) else b.dtype
    else:
        raise IRError("where needs at least one IR value among a and b")
    cond, a, b = _as_value(cond, bool_), _as_value(a, like), _as_value(b, like)
    _check_visible(cond, a, b)
    if cond.dtype != bool_:
        raise IRError(f"where's condition must be bool, got {cond.dtype}")
    if a.dtype != b.dtype:
        raise IRError(f"where of {a.dtype} and {b.dtype}: cast one operand first")
    return Value("where", a.dtype, (cond, a, b), block=_block_of(cond, a, b))


def fma(a, b, c) -> Value:
    """a * b + c rounded once (IEEE fusedMultiplyAdd), floats only."""
    like = next(x.dtype for x in (a, b, c) if isinstance(x, Value))
    a, b, c = (_as_value(x, like) for x in (a, b, c))
    _check_visible(a, b, c)
    if not (a.dtype == b.dtype == c.dtype) or not like.is_float:
        raise IRError(f"fma needs three equal float dtypes, got {a.dtype}, {b.dtype}, {c.dtype}")
    return Value("fma", like, (a, b, c), block=_block_of(a, b, c))


def maximum(a, b) -> Value:
    """numpy.maximum: NaN propagates; for equal operands (+0/-0) the second one is returned."""
    return binary("max", a, b)


def minimum(a, b) -> Value:
    return binary("min", a, b)


def sqrt(x) -> Value:
    """Correctly rounded square root (float16/bfloat16 via float32, as numpy does)."""
    return unary("sqrt", x)


def cast(x: Value, dt) -> Value:
    """numpy's astype semantics (see docs/compiler.md for the out-of-range float -> int rule)."""
    dt = dtype(dt)
    _check_visible(x)
    return x if x.dtype == dt else Value("cast", dt, (x,), block=x.block)


def bitcast(x: Value, dt) -> Value:
    dt = dtype(dt)
    _check_visible(x)
    if dt.bits != x.dtype.bits or bool_ in (dt, x.dtype):
        raise IRError(f"bitcast {x.dtype} -> {dt} needs equal sizes and no bool")
    return x if x.dtype == dt else Value("bitcast", dt, (x,), block=x.block)


_BUILDERS: list = []     # open KernelBuilders; the innermost decides which blocks a value may be used in


def _current_builder():
    return _BUILDERS[-1] if _BUILDERS else None


# the builder and its statements (re-exported: `ir` is the one module kernel authors import)
from gputwin.compiler.builder import (Barrier, Buffer, If, Kernel, KernelBuilder, Load, Param,  # noqa: E402,F401
                                      Range, Shared, Store, UniformRange, Var, VarDecl, VarGet, VarSet)

# transcendentals are compositions of the primitives above (one implementation for every target)
from gputwin.compiler.mathlib import cos, exp, log, pow, sin, tanh  # noqa: E402,F401
