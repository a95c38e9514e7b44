"""Opcodes shared by integer and floating-point types dispatch on the instruction's type."""
from __future__ import annotations

from gputwin.emu.nv.ptx import types as T
from gputwin.emu.nv.ptx.ops import op, the_type, unmodelled
from gputwin.emu.nv.ptx.ops.floating import FLOAT
from gputwin.emu.nv.ptx.ops.integer import INT


def _dispatch(name):
    def factory(ins, b):
        t = the_type(ins)
        table = FLOAT if T.kind(t) == "f" else INT
        if name not in table:
            raise unmodelled(ins, f"{name} on .{t}")
        return table[name](ins, b)
    return factory


for _n in ("add", "sub", "mul", "mad", "div", "min", "max", "abs", "neg", "sqrt", "rcp"):
    op(_n)(_dispatch(_n))
