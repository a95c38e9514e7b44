"""Tensor-core warp matrix instructions: ldmatrix and mma.sync (m16n8k8/m16n8k16 f16 and bf16, m16n8k4/
m16n8k8 tf32, f32 accumulators), with the fragment layouts of the PTX ISA ("Matrix fragments for mma").

Accumulation is "approximate vs hardware" (fidelity.py): C plus the exact products, summed in float64
in k order, rounded once to f32. The hardware's adder tree and its intermediate precision are not
documented; for operands whose products and partial sums are exact in float64 this is exact.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.nv.ptx import floats as F
from gputwin.emu.nv.ptx.ops import op, unmodelled
from gputwin.emu.nv.ptx.ops.memory import space_of
from gputwin.emu.nv.ptx.parser import Vec

LANE = np.arange(32)
G, Q = LANE // 4, LANE % 4


@op("ldmatrix")
def ldmatrix(ins, b):
    if "m8n8" not in ins.mods or "b16" not in ins.mods:
        raise unmodelled(ins, "ldmatrix shape")
    x = [int(m[1:]) for m in ins.mods if m in ("x1", "x2", "x4")]
    x = x[0] if x else 1
    trans = "trans" in ins.mods
    sp = space_of(ins)
    outs = [b.dst(ins, it, "b32") for it in ins.args[0].items]
    if len(outs) != x:
        raise unmodelled(ins, "destination count")
    addr = ins.args[1]

    def run(m):
        act = np.ones((b.W, 32), bool) if m is None else m.reshape(b.W, 32)
        warps = np.flatnonzero(act.any(axis=1))
        rows_lanes = (warps[:, None] * 32 + np.arange(8 * x)[None, :]).reshape(-1)   # row-address lanes
        a = b.address(ins, addr, rows_lanes)
        lo = b.load(ins, sp, a, rows_lanes, 8)
        hi = b.load(ins, sp, a + np.uint64(8), rows_lanes, 8)
        row16 = np.stack([lo, hi], axis=1).view(np.uint16).reshape(len(warps), x, 8, 8)   # [w, mat, row, col]
        if trans:
            row16 = row16.transpose(0, 1, 3, 2)
        for i, o in enumerate(outs):
            e0 = row16[:, i, G, 2 * Q].astype(np.uint32)
            e1 = row16[:, i, G, 2 * Q + 1].astype(np.uint32)
            full = np.zeros((b.W, 32), np.uint32)
            full[warps] = e0 | (e1 << np.uint32(16))
            o(full.reshape(-1), m)
    return run


# (row, col) of each fragment element: lists over registers of (rows[32], cols[32]) per packed half
def _layout_a(shape, kind):
    if kind == "tf32":
        if shape == "m16n8k4":
            return [[(G, Q)], [(G + 8, Q)]]
        return [[(G, Q)], [(G + 8, Q)], [(G, Q + 4)], [(G + 8, Q + 4)]]
    regs = [[(G, 2 * Q), (G, 2 * Q + 1)], [(G + 8, 2 * Q), (G + 8, 2 * Q + 1)]]
    if shape == "m16n8k16":
        regs += [[(G, 2 * Q + 8), (G, 2 * Q + 9)], [(G + 8, 2 * Q + 8), (G + 8, 2 * Q + 9)]]
    return regs


def _layout_b(shape, kind):
    if kind == "tf32":
        if shape == "m16n8k4":
            return [[(Q, G)]]
        return [[(Q, G)], [(Q + 4, G)]]
    regs = [[(2 * Q, G), (2 * Q + 1, G)]]
    if shape == "m16n8k16":
        regs += [[(2 * Q + 8, G), (2 * Q + 9, G)]]
    return regs


_LAYOUT_C = [(G, 2 * Q), (G, 2 * Q + 1), (G + 8, 2 * Q), (G + 8, 2 * Q + 1)]


def _decode(bits, kind):
    if kind == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if kind == "bf16":
        return F.bf16_to_f32(bits.astype(np.uint16)).astype(np.float64)
    # tf32: the f32 bits with the low 13 mantissa bits ignored
    return (bits.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)


@op("mma")
def mma(ins, b):
    shape = [m for m in ins.mods if m.startswith("m") and "n" in m and "k" in m]
    kinds = [m for m in ins.mods if m in ("f16", "bf16", "tf32", "f32")]
    if not shape or "sync" not in ins.mods or kinds[:1] != ["f32"] or len(kinds) != 4 or kinds[3] != "f32":
        raise unmodelled(ins, "only f32-accumulating f16/bf16/tf32 mma.sync")
    shape = shape[0]
    kind = kinds[1]
    if kinds[2] != kind or (kind == "tf32") != (shape in ("m16n8k4", "m16n8k8") and kind == "tf32") or \
            (kind != "tf32" and shape not in ("m16n8k8", "m16n8k16")) or \
            (kind == "tf32" and shape not in ("m16n8k4", "m16n8k8")):
        raise unmodelled(ins, f"shape {shape} for .{kind}")
    if "row" not in ins.mods or "col" not in ins.mods:
        raise unmodelled(ins, "layouts other than .row.col")
    K = int(shape.split("k")[1])
    la, lb = _layout_a(shape, kind), _layout_b(shape, kind)
    d_ops, a_ops, b_ops, c_ops = (x.items for x in ins.args[:4] if isinstance(x, Vec))
    if len(a_ops) != len(la) or len(b_ops) != len(lb) or len(d_ops) != 4 or len(c_ops) != 4:
        raise unmodelled(ins, "operand counts")
    outs = [b.dst(ins, x, "f32") for x in d_ops]
    av = [b.src(ins, x, "b32") for x in a_ops]
    bv = [b.src(ins, x, "b32") for x in b_ops]
    cv = [b.src(ins, x, "f32") for x in c_ops]

    def gather(srcs, layout, nrows, ncols, W):
        mat = np.zeros((W, nrows, ncols))
        for s, elems in zip(srcs, layout):
            v = np.broadcast_to(s(), (b.T,)).reshape(W, 32)
            for h, (r, c) in enumerate(elems):
                part = v if kind == "tf32" else (v >> np.uint32(16 * h)) & np.uint32(0xFFFF)
                mat[:, r, c] = _decode(part, kind)
        return mat

    def run(m):
        W = b.W
        A = gather(av, la, 16, K, W)
        B = gather(bv, lb, K, 8, W)
        C = np.zeros((W, 16, 8))
        for s, (r, c) in zip(cv, _LAYOUT_C):
            C[:, r, c] = np.broadcast_to(s(), (b.T,)).reshape(W, 32)
        acc = C.copy()
        for k in range(K):                         # k order, float64 (see the module docstring)
            acc = acc + A[:, :, k:k + 1] * B[:, k:k + 1, :]
        D = F.canon(acc.astype(np.float32), "f32")
        for o, (r, c) in zip(outs, _LAYOUT_C):
            o(D[:, r, c].reshape(-1), m)
    return run
