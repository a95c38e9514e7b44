"""One-instruction kernels for unit tests: every thread loads its inputs a, b, c from arrays (lane i
reads element i), runs `body` (PTX using %a %b %c -> %d, plus scratch %p %q predicates) and stores %d."""
from __future__ import annotations

import numpy as np

from gputwin.emu.nv.ptx import load_module
from tests.emu.nv.ptx.rig import Rig

_REG = {1: "b8", 2: "b16", 4: "b32", 8: "b64"}


def op_kernel(body: str, ti: str, to: str, nin: int = 2, tb=None, tc=None) -> str:
    types = [ti, tb or ti, tc or ti][:nin]
    decl = "\n".join(f".reg .{_reg(t)} %{n};" for n, t in zip("abc", types))
    loads = "\n".join(
        f"ld.param.u64 %rd{i + 1}, [in{i}];\nmad.wide.u32 %rd{i + 1}, %t, {_size(t)}, %rd{i + 1};\n"
        f"ld.global.{_ld(t)} %{n}, [%rd{i + 1}];" for i, (n, t) in enumerate(zip("abc", types)))
    params = ", ".join(["    .param .u64 out"] + [f".param .u64 in{i}" for i in range(nin)])
    return f"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry k({params})
{{
.reg .b32 %t;
.reg .b64 %rd<8>;
.reg .pred %p, %q;
{decl}
.reg .{_reg(to)} %d;
mov.u32 %t, %tid.x;
{loads}
{body}
ld.param.u64 %rd0, [out];
mad.wide.u32 %rd0, %t, {_size(to)}, %rd0;
st.global.{_ld(to)} [%rd0], %d;
ret;
}}
"""


_SIZES = {"pred": 1, "b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
          "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8}


def _size(t):
    return _SIZES[t]


def _reg(t):
    return "pred" if t == "pred" else _REG[_size(t)]


def _ld(t):
    return {1: "u8", 2: "b16", 4: "b32", 8: "b64"}[_size(t)]


def run_op(body, ti, to, *inputs, tb=None, tc=None, dtype=None):
    """Run the op over len(inputs[0]) lanes; inputs are numpy arrays of the register's raw bits or values."""
    n = len(inputs[0])
    text = op_kernel(body, ti, to, len(inputs), tb, tc)
    mod = load_module(text)
    r = Rig()
    out_dt = dtype or {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[_size(to)]
    po = r.buf(nbytes=n * np.dtype(out_dt).itemsize)
    ins = [r.buf(np.ascontiguousarray(x)) for x in inputs]
    r.run(mod, "k", [po] + ins, grid=(1,), block=(n,))
    return r.get(po, out_dt, n)


def f32b(*vals):
    return np.array(vals, np.float32).view(np.uint32)


def u32(*vals):
    return np.array([v & 0xFFFFFFFF for v in vals], np.uint32)
