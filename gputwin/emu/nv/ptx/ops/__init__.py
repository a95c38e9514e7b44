"""Instruction semantics as tables: opcode -> OpSpec(factory, check, control).

A factory takes (instruction, batch) and returns fn(mask) that executes the instruction for the
threads in mask (None: every thread of the batch). Non-control instructions never touch the PC; the
executor applies their guard predicate and advances the PC. Control instructions (branches, calls,
barriers, exit) do both themselves. `check(ins)` runs at plan time and raises PtxError for a variant
that is not modelled, so nothing unmodelled starts running.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from gputwin.emu.nv.ptx import types as T
from gputwin.emu.nv.ptx.errors import PtxError


@dataclass
class OpSpec:
    factory: Callable
    check: Callable
    control: bool = False


OPS: dict[str, OpSpec] = {}


def _no_check(ins):
    return None


def op(*names, control=False, check=None):
    def deco(f):
        for n in names:
            OPS[n] = OpSpec(f, check or _no_check, control)
        return f
    return deco


def types_of(ins) -> list[str]:
    return [m for m in ins.mods if m in T.TYPES]


def the_type(ins) -> str:
    ts = types_of(ins)
    if not ts:
        raise PtxError(f"{ins.text} has no type", line=ins.line, token=ins.text)
    return ts[-1]


def unmodelled(ins, what=""):
    return PtxError(f"instruction {ins.text} is not modelled{': ' + what if what else ''}", line=ins.line,
                    token=ins.text)


def binary(ins, b, f, t=None, td=None):
    """d = f(a, b) over all threads, written where mask."""
    t = t or the_type(ins)
    d = b.dst(ins, ins.args[0], td or t)
    x, y = b.src(ins, ins.args[1], t), b.src(ins, ins.args[2], t)
    out = getattr(d, "view", None)
    if isinstance(f, np.ufunc) and out is not None and out.dtype == T.dtype(td or t):
        def run(m):
            if m is None:
                f(x(), y(), out=out, casting="unsafe")      # straight into the register
            else:
                d(f(x(), y()), m)
        return run
    return lambda m: d(f(x(), y()), m)


def unary(ins, b, f, t=None, td=None):
    t = t or the_type(ins)
    d = b.dst(ins, ins.args[0], td or t)
    x = b.src(ins, ins.args[1], t)
    return lambda m: d(f(x()), m)


def ternary(ins, b, f, t=None, td=None, ts=None):
    t = t or the_type(ins)
    ts = ts or (t, t, t)
    d = b.dst(ins, ins.args[0], td or t)
    x, y, z = (b.src(ins, a, tt) for a, tt in zip(ins.args[1:4], ts))
    return lambda m: d(f(x(), y(), z()), m)


from gputwin.emu.nv.ptx.ops import (control, integer, floating, compare, convert, memory, warp,  # noqa: E402,F401
                                    atomic, mma, arith)
