"""Building kernels: KernelBuilder, the statements it records and the finished Kernel.

Kernel authors import these through `gputwin.compiler.ir`; see that module and docs/compiler.md.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from gputwin.compiler import ir
from gputwin.compiler.dtypes import DType, bool_, dtype, float32, int32, int64, uint32
from gputwin.compiler.ir import Block, IRError, Value, _as_value, _check_visible, maximum, minimum


# --- memory objects -----------------------------------------------------------------------------------
class _Indexable:
    dtype: DType
    space: str

    def __getitem__(self, index) -> Value:
        return self._builder.load(self, index)

    def __setitem__(self, index, value):
        self._builder.store(self, index, value)


class Buffer(_Indexable):
    """A kernel parameter pointing to global memory; indexed in elements (int32 or int64 index)."""
    space = "global"

    def __init__(self, builder, name: str, dt: DType, index: int):
        self._builder, self.name, self.dtype, self.index = builder, name, dt, index

    def __repr__(self):
        return f"Buffer({self.name}:{self.dtype})"


class Shared(_Indexable):
    """Workgroup-shared memory (LDS on AMD, shared on NV, a per-workgroup array on CPU)."""
    space = "shared"

    def __init__(self, builder, name: str, dt: DType, size: int):
        self._builder, self.name, self.dtype, self.size = builder, name, dt, size


class Var:
    """A mutable variable (an accumulator): read with .get(), written with .set(v)."""

    def __init__(self, builder, name: str, dt: DType, block: Block):
        self._builder, self.name, self.dtype, self.block = builder, name, dt, block

    def get(self) -> Value:
        return self._builder._var_get(self)

    def set(self, value) -> None:
        self._builder._var_set(self, value)


# --- statements ---------------------------------------------------------------------------------------
@dataclass
class Load:
    mem: object
    index: Value
    out: Value


@dataclass
class Store:
    mem: object
    index: Value
    value: Value


@dataclass
class If:
    cond: Value
    body: Block


@dataclass
class Range:
    var: Value
    start: Value
    stop: Value
    step: int
    body: Block


@dataclass
class VarDecl:
    var: Var
    init: Value


@dataclass
class VarGet:
    var: Var
    out: Value


@dataclass
class VarSet:
    var: Var
    value: Value


@dataclass
class Barrier:
    pass


@dataclass
class UniformRange:
    """for var in range(count), the same for every work-item, around barrier-separated phases: the
    kernel's top level may hold these between its phases (k.uniform_range)."""
    var: Value
    count: int
    phases: list[Block]


@dataclass(frozen=True)
class Param:
    name: str
    dtype: DType
    kind: str          # "buffer" or "scalar"


@dataclass
class Kernel:
    """A finished kernel: what compile() takes."""
    name: str
    params: list[Param]
    local_size: tuple[int, int, int]
    phases: list                     # top-level statement lists (Blocks) separated by barriers, and
                                     # UniformRanges of such lists
    shared: list[Shared]
    images: dict = field(default_factory=dict, repr=False, compare=False)   # target -> image, per object


class KernelBuilder:
    """Builds one kernel. Use as `with KernelBuilder(...) as k:` or call k.build() at the end."""

    def __init__(self, name: str, local_size=(64, 1, 1)):
        if not name.isidentifier() or name.startswith(("gt_", "llvm")):
            raise IRError(f"kernel name {name!r} must be an identifier not starting with gt_ or llvm "
                          f"(reserved for the compiler's helpers and LLVM intrinsics)")
        ls = tuple(local_size) + (1,) * (3 - len(tuple(local_size)))
        if len(ls) != 3 or any(not isinstance(d, int) or d < 1 for d in ls) or ls[0] * ls[1] * ls[2] > 1024:
            raise IRError(f"local_size {local_size} must be 1-3 positive ints with a product <= 1024")
        self.name, self.local_size = name, ls
        self.params: list[Param] = []
        self._param_values: list = []
        self.phases = [Block(None, "phase")]
        self._phase_list = self.phases     # where barrier() starts the next phase (inside a uniform_range:
        self.block = self.phases[0]        # the loop's list)
        self.shared_arrays: list[Shared] = []
        self._names: set[str] = set()
        self._built = False
        ir._BUILDERS.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self in ir._BUILDERS:
            ir._BUILDERS.remove(self)

    # parameters -------------------------------------------------------------------------------------
    def _new_name(self, name: str) -> str:
        if not name.isidentifier() or name in self._names:
            raise IRError(f"parameter name {name!r} is not an identifier or is used twice")
        self._names.add(name)
        return name

    def buffer(self, name: str, dt) -> Buffer:
        buf = Buffer(self, self._new_name(name), dtype(dt), len(self.params))
        self.params.append(Param(name, buf.dtype, "buffer"))
        self._param_values.append(buf)
        return buf

    def scalar(self, name: str, dt) -> Value:
        dt = dtype(dt)
        if dt not in (int32, int64, float32, uint32):
            raise IRError(f"scalar parameters are int32, int64, uint32 or float32, got {dt}")
        v = Value("param", dt, arg=len(self.params))
        self.params.append(Param(self._new_name(name), dt, "scalar"))
        self._param_values.append(v)
        return v

    def shared(self, name: str, dt, size: int) -> Shared:
        if size < 1:
            raise IRError("shared arrays need at least one element")
        arr = Shared(self, self._new_name(name), dtype(dt), int(size))
        self.shared_arrays.append(arr)
        return arr

    # index space ------------------------------------------------------------------------------------
    def group_id(self, axis: int = 0) -> Value:
        return Value("group_id", int32, arg=self._axis(axis))

    def local_id(self, axis: int = 0) -> Value:
        return Value("local_id", int32, arg=self._axis(axis))

    def global_id(self, axis: int = 0) -> Value:
        return self.group_id(axis) * self.local_size[self._axis(axis)] + self.local_id(axis)

    @staticmethod
    def _axis(axis: int) -> int:
        if axis not in (0, 1, 2):
            raise IRError(f"axis must be 0, 1 or 2, got {axis}")
        return axis

    # statements -------------------------------------------------------------------------------------
    def _emit(self, stmt):
        if self._built:
            raise IRError("kernel already built")
        self.block.stmts.append(stmt)

    def _index(self, mem, index) -> Value:
        index = _as_value(index, int32)
        _check_visible(index)
        if index.dtype not in (int32, int64):
            raise IRError(f"index into {mem.name} must be int32 or int64, got {index.dtype}")
        if mem._builder is not self:
            raise IRError(f"{mem.name} belongs to another kernel")
        return index

    def load(self, mem, index) -> Value:
        index = self._index(mem, index)
        out = Value("load", mem.dtype, block=self.block)
        self._emit(Load(mem, index, out))
        return out

    def store(self, mem, index, value) -> None:
        index = self._index(mem, index)
        value = _as_value(value, mem.dtype)
        _check_visible(value)
        if value.dtype != mem.dtype:
            raise IRError(f"storing {value.dtype} into {mem.name} of {mem.dtype}: cast first")
        self._emit(Store(mem, index, value))

    @contextlib.contextmanager
    def _child(self, kind: str):
        parent = self.block
        self.block = Block(parent, kind)
        try:
            yield self.block
        finally:
            self.block = parent

    @contextlib.contextmanager
    def if_(self, cond):
        cond = _as_value(cond, bool_)
        _check_visible(cond)
        if cond.dtype != bool_:
            raise IRError(f"if_ needs a bool condition, got {cond.dtype}")
        with self._child("if") as body:
            yield
        self._emit(If(cond, body))

    @contextlib.contextmanager
    def range(self, start, stop=None, step: int = 1):
        """for i in range(start, stop, step): the loop variable has the dtype of stop (int32/int64)."""
        if stop is None:
            start, stop = 0, start
        like = stop.dtype if isinstance(stop, Value) else (start.dtype if isinstance(start, Value) else int32)
        start, stop = _as_value(start, like), _as_value(stop, like)
        _check_visible(start, stop)
        if start.dtype != stop.dtype or start.dtype not in (int32, int64):
            raise IRError(f"range bounds must both be int32 or int64, got {start.dtype}, {stop.dtype}")
        if not isinstance(step, int) or step == 0:
            raise IRError(f"range step must be a nonzero Python int, got {step!r}")
        with self._child("range") as body:
            var = Value("loopvar", like, block=body)
            yield var
        self._emit(Range(var, start, stop, step, body))

    def var(self, dt, init, name: str = "acc") -> Var:
        dt = dtype(dt)
        init = _as_value(init, dt)
        _check_visible(init)
        if init.dtype != dt:
            raise IRError(f"var of {dt} initialised with {init.dtype}")
        # declared at the top level of a top-level phase: the work-item's own state for the rest of the
        # kernel, readable after barriers and inside uniform_range (block None: visible everywhere after)
        top = self.block.kind == "phase" and self.block.parent is None
        v = Var(self, name, dt, None if top else self.block)
        self._emit(VarDecl(v, init))
        return v

    def _var_check(self, var: Var):
        if var._builder is not self or not self.block.sees(var.block):
            raise IRError(f"variable {var.name} is not visible here (declared in another block or phase)")

    def _var_get(self, var: Var) -> Value:
        self._var_check(var)
        out = Value("varget", var.dtype, block=self.block)
        self._emit(VarGet(var, out))
        return out

    def _var_set(self, var: Var, value) -> None:
        self._var_check(var)
        value = _as_value(value, var.dtype)
        _check_visible(value)
        if value.dtype != var.dtype:
            raise IRError(f"setting {var.name} of {var.dtype} to {value.dtype}: cast first")
        self._emit(VarSet(var, value))

    def barrier(self) -> None:
        """Workgroup barrier with shared-memory visibility. Only at the top level of the kernel; values
        (not pure index math) made before it cannot be used after it: pass them through shared memory."""
        if self.block.kind != "phase":
            raise IRError("barrier() must be at the kernel's top level, not inside if_/range")
        self.block.stmts.append(Barrier())
        self.block = Block(self.block.parent, "phase")
        self._phase_list.append(self.block)

    @contextlib.contextmanager
    def uniform_range(self, count: int):
        """for t in range(count) at the kernel's top level, identical for every work-item, whose body may
        hold barriers (a tiled loop: fill shared memory, barrier, compute). Entering it, between its
        iterations and leaving it are barriers. Work-item state that lives through it is kept in k.var
        variables declared at the top level before it; t is int32 and visible only inside."""
        if self.block.kind != "phase" or self.block.parent is not None:
            raise IRError("uniform_range must be at the kernel's top level, outside if_/range/uniform_range")
        if not isinstance(count, int) or count < 0:
            raise IRError(f"uniform_range count must be a non-negative Python int, got {count!r}")
        scope = Block(None, "uniform")
        loop = UniformRange(Value("uniform", int32, block=scope), count, [Block(scope, "phase")])
        self._emit(Barrier())
        self.phases.append(loop)
        self._phase_list, self.block = loop.phases, loop.phases[0]
        try:
            yield loop.var
        finally:
            self._phase_list, self.block = self.phases, Block(None, "phase")
            self.phases.append(self.block)

    def reduce(self, op, init, start, stop, body) -> Value:
        """Sequential reduction in index order: acc = op(acc, body(i)) for i in range(start, stop).
        op is "add", "mul", "max", "min" or a function of (acc, x)."""
        fn = {"add": lambda a, x: a + x, "mul": lambda a, x: a * x,
              "max": maximum, "min": minimum}.get(op, op) if isinstance(op, str) else op
        if not callable(fn):
            raise IRError(f"unknown reduction {op!r}")
        if not callable(body):
            raise IRError("reduce needs a body function of the loop index")
        outer, acc = self.block, None
        with self.range(start, stop) as i:
            x = body(i)
            if acc is None:   # the accumulator takes the body's dtype and lives outside the loop
                acc = Var(self, "acc", x.dtype, outer)
                outer.stmts.append(VarDecl(acc, _as_value(init, x.dtype)))
            acc.set(fn(acc.get(), x))
        return acc.get()

    def build(self) -> Kernel:
        if self._built:
            raise IRError("kernel already built")
        if self.block.parent is not None:
            raise IRError("build() inside an open if_/range/uniform_range block")
        self._built = True
        if self in ir._BUILDERS:
            ir._BUILDERS.remove(self)
        return Kernel(self.name, list(self.params), self.local_size, self.phases, list(self.shared_arrays))
