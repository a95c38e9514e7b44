"""Comparisons: setp, set, selp, slct, with every comparison and boolean combination.

Float comparisons: eq/ne/lt/le/gt/ge are ordered (false if either is NaN, except ne which PTX defines
as ordered too), equ/neu/ltu/leu/gtu/geu are unordered (true if either is NaN), num/nan test for NaN.
Unsigned comparisons lo/ls/hi/hs; integer eq..ge compare as the type's signedness.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.nv.ptx import floats as F
from gputwin.emu.nv.ptx import types as T
from gputwin.emu.nv.ptx.ops import op, types_of, unmodelled
from gputwin.emu.nv.ptx.parser import Pair

CMPS = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
        "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
BOOLS = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}
_BASE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
         "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}


def comparator(ins, t):
    cmp = [m for m in ins.mods if m in CMPS]
    if not cmp:
        raise unmodelled(ins, "no comparison")
    c = cmp[0]
    ftz = "ftz" in ins.mods
    if t in ("bf16",):
        conv = F.bf16_to_f32
    else:
        conv = None
    if T.kind(t) == "f":
        def f(a, b):
            if conv is not None:
                a, b = conv(a), conv(b)
            if ftz:
                a, b = F.ftz(np.asarray(a)), F.ftz(np.asarray(b))
            nan = np.isnan(a) | np.isnan(b)
            if c == "num":
                return ~nan
            if c == "nan":
                return nan
            if c.endswith("u"):
                return _BASE[c[:-1]](a, b) | nan
            return _BASE[c](a, b) & ~nan
        return f
    if c in ("lo", "ls", "hi", "hs"):
        U = T.UINT[T.size(t)]
        return lambda a, b: _BASE[c](np.asarray(a).astype(U), np.asarray(b).astype(U))
    if c not in _BASE or c in ("num", "nan"):
        raise unmodelled(ins, f"comparison .{c} on .{t}")
    return _BASE[c]


@op("setp")
def setp(ins, b):
    t = types_of(ins)[-1]
    if t in ("f16x2", "bf16x2"):
        raise unmodelled(ins, "packed setp")
    f = comparator(ins, t)
    bop = [m for m in ins.mods if m in BOOLS]
    dst = ins.args[0]
    if isinstance(dst, Pair):
        dp, dq = b.dst(ins, dst.items[0], "pred"), b.dst(ins, dst.items[1], "pred")
    else:
        dp, dq = b.dst(ins, dst, "pred"), None
    x, y = b.src(ins, ins.args[1], t), b.src(ins, ins.args[2], t)
    c = b.src(ins, ins.args[3], "pred") if bop else None
    g = BOOLS[bop[0]] if bop else None
    out = getattr(dp, "view", None)
    if g is None and dq is None and isinstance(f, np.ufunc) and out is not None:
        def run_into(m):
            if m is None:
                f(x(), y(), out=out)                # straight into the predicate register
            else:
                dp(np.broadcast_to(f(x(), y()), (b.T,)), m)
        return run_into

    def run(m):
        r = np.broadcast_to(f(x(), y()), (b.T,))
        if g is None:
            dp(r, m)
        else:
            cv = np.array(c())                  # a copy: the destination may be the source predicate
            dp(g(r, cv), m)
            if dq is not None:
                dq(g(~r, cv), m)
        if g is None and dq is not None:
            dq(~r, m)
    return run


@op("set")
def set_(ins, b):
    ts = types_of(ins)
    dt, st = ts[0], ts[-1]
    f = comparator(ins, st)
    bop = [m for m in ins.mods if m in BOOLS]
    d = b.dst(ins, ins.args[0], dt)
    x, y = b.src(ins, ins.args[1], st), b.src(ins, ins.args[2], st)
    c = b.src(ins, ins.args[3], "pred") if bop else None
    g = BOOLS[bop[0]] if bop else None
    one = np.float32(1.0) if dt == "f32" else np.array(-1).astype(T.dtype(dt))[()]

    def run(m):
        r = f(x(), y())
        if g is not None:
            r = g(r, c())
        d(np.where(r, one, T.dtype(dt)(0)).astype(T.dtype(dt)), m)
    return run


@op("selp")
def selp(ins, b):
    t = types_of(ins)[-1]
    d = b.dst(ins, ins.args[0], t)
    x, y, p = b.src(ins, ins.args[1], t), b.src(ins, ins.args[2], t), b.src(ins, ins.args[3], "pred")
    return lambda m: d(np.where(p(), x(), y()).astype(T.dtype(t)), m)


@op("slct")
def slct(ins, b):
    ts = types_of(ins)
    dt, ct = ts[0], ts[-1]
    ftz = "ftz" in ins.mods
    d = b.dst(ins, ins.args[0], dt)
    x, y, c = b.src(ins, ins.args[1], dt), b.src(ins, ins.args[2], dt), b.src(ins, ins.args[3], ct)

    def run(m):
        cv = np.asarray(c())
        if ftz and ct == "f32":
            cv = F.ftz(cv)
        d(np.where(cv >= 0, x(), y()).astype(T.dtype(dt)), m)   # NaN >= 0 is false: b
    return run
