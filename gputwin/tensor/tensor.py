"""The Tensor: a lazily evaluated n-d array on one device, with numpy's names and semantics.

A tensor is (device context, shape, dtype, expression, storages); see lazy.py. Ops check shapes,
dtypes and indices eagerly and raise before any kernel runs; kernels run when a value is needed
(`.numpy()`, a reduction, a matmul, `.realize()`).
"""
from __future__ import annotations

import math

import numpy as np

from gputwin.tensor import dtypes as D
from gputwin.tensor import lazy
from gputwin.tensor.runtime import DeviceContext, get_context
from gputwin.tensor.shape import ShapeError, View, normalize_shape
from gputwin.tensor.spec import KernelSpec, Load, Op


class Tensor:
    __slots__ = ("ctx", "shape", "dtype", "_expr", "_bufs", "__weakref__")
    __array_priority__ = 100  # numpy defers mixed operators (ndarray + Tensor) to us

    def __init__(self, data, device=None, dtype=None):
        ctx = get_context(device)
        if isinstance(data, Tensor):
            data = data.numpy()
        arr = np.asarray(data)
        if arr.dtype == object:
            raise D.DTypeError("cannot make a tensor from ragged or non-numeric data")
        dt = D.to_dtype(dtype) if dtype is not None else D.dtype_of_data(arr)
        arr = np.asarray(arr.astype(dt, copy=False), order="C")
        shape = normalize_shape(arr.shape)
        self._init(ctx, shape, dt, Load(0, dt, View.contiguous(shape)), (ctx.upload(arr),))

    def _init(self, ctx, shape, dtype, expr, bufs):
        self.ctx, self.shape, self.dtype, self._expr, self._bufs = ctx, shape, dtype, expr, bufs
        if bufs and not self.is_view:
            ctx.pending[id(self)] = self  # so an in-place write to a storage computes its readers first

    @classmethod
    def _make(cls, ctx: DeviceContext, shape, dtype, expr, bufs=()) -> "Tensor":
        t = cls.__new__(cls)
        t._init(ctx, tuple(shape), dtype, expr, tuple(bufs))
        return t

    # --- basic properties ------------------------------------------------------------------------
    @property
    def device(self) -> str:
        return self.ctx.spec

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"Tensor({self.numpy()!r}, device={self.device!r})"

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("the truth value of a tensor with more than one element is ambiguous")
        return bool(self.numpy().reshape(()))

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if not D.is_int(self.dtype):
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        return int(self.item())

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError(f"unsupported format string {spec!r} for a {self.ndim}-d tensor (numpy's rule: "
                            "only 0-d tensors take a format spec)")
        return str(self)

    def item(self):
        if self.size != 1:
            raise ValueError(f"item() needs exactly one element, the tensor has {self.size}")
        return self.numpy().reshape(()).item()

    # --- evaluation ------------------------------------------------------------------------------
    @property
    def is_view(self) -> bool:
        """True when the value is a strided view of one storage (nothing left to compute)."""
        return isinstance(self._expr, Load) and self._expr.mask is None

    def realize(self, contiguous: bool = False, copy: bool = False) -> "Tensor":
        """Run the pending kernel, if any; with contiguous=True also copy a strided view to a
        fresh row-major buffer, with copy=True always to a fresh buffer."""
        if self.is_view and not copy and not (contiguous and not self._expr.view.is_contiguous):
            return self
        out = self.ctx.alloc(self.size * self.dtype.itemsize)
        if self.size:
            self.ctx.run(make_spec("E", self.shape, self._expr, self.dtype, self._bufs), self._bufs, out)
        self._expr, self._bufs = Load(0, self.dtype, View.contiguous(self.shape)), (out,)
        return self

    def numpy(self) -> np.ndarray:
        self.realize()
        ld, (st,) = self._expr, self._bufs
        view, isz = ld.view, self.dtype.itemsize
        if self.size == 0:
            return np.zeros(self.shape, self.dtype)
        # Read back the span the view covers and let numpy apply the strides on the host.
        lo = view.offset + sum(min(0, (s - 1) * d) for s, d in zip(view.shape, view.strides))
        hi = view.offset + sum(max(0, (s - 1) * d) for s, d in zip(view.shape, view.strides))
        raw = self.ctx.download(st, lo * isz, (hi - lo + 1) * isz).view(self.dtype)
        out = np.lib.stride_tricks.as_strided(raw[view.offset - lo:], view.shape,
                                              tuple(d * isz for d in view.strides))
        return np.array(out)

    def tolist(self):
        return self.numpy().tolist()

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from gputwin.tensor import numpy_protocol  # imports every module-level function: late
        return numpy_protocol.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from gputwin.tensor import numpy_protocol
        return numpy_protocol.array_function(func, types, args, kwargs)

    def to(self, device) -> "Tensor":
        ctx = get_context(device)
        return self if ctx is self.ctx else Tensor(self.numpy(), device=ctx)

    def astype(self, dtype) -> "Tensor":
        return ops.astype(self, dtype)

    cast = astype

    def contiguous(self) -> "Tensor":
        return Tensor._make(self.ctx, self.shape, self.dtype, self._expr, self._bufs).realize(contiguous=True)

    def copy(self) -> "Tensor":
        """A tensor with its own storage (numpy's copy: later writes to either do not reach the other)."""
        return Tensor._make(self.ctx, self.shape, self.dtype, self._expr, self._bufs).realize(copy=True)

    # --- elementwise -----------------------------------------------------------------------------
    def __add__(self, o): return ops.binary("add", self, o)
    def __radd__(self, o): return ops.binary("add", o, self)
    def __sub__(self, o): return ops.binary("sub", self, o)
    def __rsub__(self, o): return ops.binary("sub", o, self)
    def __mul__(self, o): return ops.binary("mul", self, o)
    def __rmul__(self, o): return ops.binary("mul", o, self)
    def __truediv__(self, o): return ops.binary("div", self, o)
    def __rtruediv__(self, o): return ops.binary("div", o, self)
    def __pow__(self, o): return ops.binary("pow", self, o)
    def __rpow__(self, o): return ops.binary("pow", o, self)
    def __and__(self, o): return ops.binary("and", self, o)
    def __rand__(self, o): return ops.binary("and", o, self)
    def __or__(self, o): return ops.binary("or", self, o)
    def __ror__(self, o): return ops.binary("or", o, self)
    def __xor__(self, o): return ops.binary("xor", self, o)
    def __rxor__(self, o): return ops.binary("xor", o, self)
    def __floordiv__(self, o): return ops.binary("floordiv", self, o)
    def __rfloordiv__(self, o): return ops.binary("floordiv", o, self)
    def __mod__(self, o): return ops.binary("mod", self, o)
    def __rmod__(self, o): return ops.binary("mod", o, self)
    def __divmod__(self, o): return ops.binary("floordiv", self, o), ops.binary("mod", self, o)
    def __rdivmod__(self, o): return ops.binary("floordiv", o, self), ops.binary("mod", o, self)
    def __lshift__(self, o): return ops.binary("shl", self, o)
    def __rlshift__(self, o): return ops.binary("shl", o, self)
    def __rshift__(self, o): return ops.binary("shr", self, o)
    def __rrshift__(self, o): return ops.binary("shr", o, self)
    def __lt__(self, o): return ops.binary("lt", self, o)
    def __le__(self, o): return ops.binary("le", self, o)
    def __gt__(self, o): return ops.binary("gt", self, o)
    def __ge__(self, o): return ops.binary("ge", self, o)
    def __eq__(self, o): return ops.binary("eq", self, o)  # noqa: elementwise, as numpy
    def __ne__(self, o): return ops.binary("ne", self, o)
    __hash__ = object.__hash__
    def __iadd__(self, o): return self._inplace("add", o)
    def __isub__(self, o): return self._inplace("sub", o)
    def __imul__(self, o): return self._inplace("mul", o)
    def __itruediv__(self, o): return self._inplace("div", o)
    def __ifloordiv__(self, o): return self._inplace("floordiv", o)
    def __imod__(self, o): return self._inplace("mod", o)
    def __ipow__(self, o): return self._inplace("pow", o)
    def __iand__(self, o): return self._inplace("and", o)
    def __ior__(self, o): return self._inplace("or", o)
    def __ixor__(self, o): return self._inplace("xor", o)
    def __ilshift__(self, o): return self._inplace("shl", o)
    def __irshift__(self, o): return self._inplace("shr", o)

    def _inplace(self, op: str, o) -> "Tensor":
        """numpy's in-place operators: the result is written into this tensor's storage (views of it
        see it), cast to its dtype under numpy's same_kind rule; a pending tensor just takes the new
        expression (nothing can view a storage it does not have yet)."""
        r = ops.binary(op, self, o)
        if r.shape != self.shape:
            raise ShapeError(f"non-broadcastable output operand with shape {self.shape} doesn't match the "
                             f"broadcast shape {r.shape}")
        if not np.can_cast(r.dtype, self.dtype, "same_kind"):
            raise D.DTypeError(f"cannot cast the result of in-place {op} from {r.dtype} to {self.dtype} "
                               "(numpy's same_kind rule)")
        r = ops.cast(r, self.dtype)
        if self.is_view:
            indexing.setitem(self, Ellipsis, r)
        else:
            self._init(self.ctx, self.shape, self.dtype, r._expr, r._bufs)
        return self

    def __neg__(self): return ops.unary("neg", self)
    def __pos__(self): return ops.value_copy(self)
    def __round__(self, ndigits=None): return ops.round_(self, ndigits or 0)
    def __abs__(self): return ops.unary("abs", self)
    def __invert__(self): return ops.unary("not", self)
    def __matmul__(self, o): return reduce.matmul(self, o)
    def __rmatmul__(self, o): return reduce.matmul(o, self)

    def add(self, o): return ops.binary("add", self, o)
    def sub(self, o): return ops.binary("sub", self, o)
    def mul(self, o): return ops.binary("mul", self, o)
    def div(self, o): return ops.binary("div", self, o)
    def pow(self, o): return ops.binary("pow", self, o)
    def maximum(self, o): return ops.binary("max", self, o)
    def minimum(self, o): return ops.binary("min", self, o)
    def neg(self): return ops.unary("neg", self)
    def abs(self): return ops.unary("abs", self)
    def exp(self): return ops.unary("exp", self)
    def log(self): return ops.unary("log", self)
    def sqrt(self): return ops.unary("sqrt", self)
    def sin(self): return ops.unary("sin", self)
    def cos(self): return ops.unary("cos", self)
    def tanh(self): return ops.unary("tanh", self)
    def sigmoid(self): return ops.unary("sigmoid", self)
    def relu(self): return ops.unary("relu", self)
    def gelu(self): return ops.unary("gelu", self)
    def where(self, a, b): return ops.where(self, a, b)
    def floor(self): return ops.unary("floor", self)
    def ceil(self): return ops.unary("ceil", self)
    def trunc(self): return ops.unary("trunc", self)
    def rint(self): return ops.unary("rint", self)
    def round(self, decimals=0): return ops.round_(self, decimals)
    def sign(self): return ops.sign(self)
    def isnan(self): return ops.unary("isnan", self)
    def isinf(self): return ops.unary("isinf", self)
    def isfinite(self): return ops.unary("isfinite", self)
    def clip(self, lo=None, hi=None): return ops.clip(self, lo, hi)

    # --- reductions and matmul -------------------------------------------------------------------
    def sum(self, axis=None, keepdims=False): return reduce.reduce("sum", self, axis, keepdims)
    def prod(self, axis=None, keepdims=False): return reduce.reduce("prod", self, axis, keepdims)
    def max(self, axis=None, keepdims=False): return reduce.reduce("max", self, axis, keepdims)
    def min(self, axis=None, keepdims=False): return reduce.reduce("min", self, axis, keepdims)
    def mean(self, axis=None, keepdims=False): return reduce.mean(self, axis, keepdims)
    def var(self, axis=None, ddof=0, keepdims=False): return reduce.var(self, axis, ddof, keepdims)
    def std(self, axis=None, ddof=0, keepdims=False): return reduce.var(self, axis, ddof, keepdims).sqrt()
    def any(self, axis=None, keepdims=False): return reduce.any_all("any", self, axis, keepdims)
    def all(self, axis=None, keepdims=False): return reduce.any_all("all", self, axis, keepdims)
    def cumsum(self, axis=None, dtype=None): return reduce.scan("sum", self, axis, dtype)
    def cumprod(self, axis=None, dtype=None): return reduce.scan("prod", self, axis, dtype)
    def argmax(self, axis=None, keepdims=False): return reduce.argreduce("argmax", self, axis, keepdims)
    def argmin(self, axis=None, keepdims=False): return reduce.argreduce("argmin", self, axis, keepdims)
    def matmul(self, o): return reduce.matmul(self, o)
    def dot(self, o): return reduce.dot(self, o)
    def sort(self, axis=-1): return sorting.sort(self, axis)
    def argsort(self, axis=-1): return sorting.argsort(self, axis)
    def softmax(self, axis=-1): return reduce.softmax(self, axis)
    def log_softmax(self, axis=-1): return reduce.log_softmax(self, axis)

    # --- movement --------------------------------------------------------------------------------
    def reshape(self, *shape): return movement.reshape(self, shape)
    def permute(self, *dims): return movement.permute(self, dims)
    def transpose(self, *axes): return movement.transpose(self, axes)
    def swapaxes(self, a, b): return movement.swapaxes(self, a, b)
    @property
    def T(self): return movement.transpose(self, ())
    def expand(self, *shape): return movement.expand(self, shape)
    def broadcast_to(self, shape): return movement.expand(self, tuple(shape))
    def flip(self, axis=None): return movement.flip(self, axis)
    def pad(self, pad_width, value=0): return movement.pad(self, pad_width, value)
    def flatten(self): return ops.value_copy(movement.reshape(self, (-1,)))  # numpy: a copy
    def ravel(self): return movement.reshape(self, (-1,))                    # numpy: a view when it can
    def squeeze(self, axis=None): return movement.squeeze(self, axis)
    def unsqueeze(self, axis): return movement.unsqueeze(self, axis)
    def __getitem__(self, key): return indexing.getitem(self, key)
    def __setitem__(self, key, value): indexing.setitem(self, key, value)
    def nonzero(self): return indexing.nonzero(self)


def make_spec(kind: str, shape, expr, dtype, bufs, **kw) -> KernelSpec:
    """A KernelSpec for `expr`; its name is readable (for timings) and its IR name is unique."""
    ops_used = []
    node = expr
    while isinstance(node, Op) and len(ops_used) < 3:
        ops_used.append(node.op)
        node = node.srcs[0]
    label = "_".join([kind + ("_" + kw["reduce"] if kw.get("reduce") else "")] + ops_used
                     + ["x".join(map(str, shape)) or "scalar"])
    return KernelSpec(label, tuple(shape), expr, dtype, lazy.arg_dtypes([expr, kw.get("out_index")], len(bufs)),
                      **kw)


from gputwin.tensor import indexing, movement, ops, reduce, sorting  # noqa: E402  (methods above dispatch to these)
