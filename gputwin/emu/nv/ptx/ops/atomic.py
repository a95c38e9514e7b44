"""Atomics and reductions: atom / red on global, shared and generic addresses.

Lanes of one step that hit the same address are serialised in thread order (lane order within a warp,
warps in order), so each lane's returned old value and the final memory are deterministic. The
sequential order is realised vectorised: either in rounds (the k-th lane of every address at once) or
per address with ufunc.accumulate, whichever needs fewer Python iterations.

atom.add.f32 rounds to nearest even and flushes subnormal inputs and results (PTX); f64, f16 and bf16
adds round to nearest even without flushing.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.nv.ptx import floats as F
from gputwin.emu.nv.ptx import types as T
from gputwin.emu.nv.ptx.ops import op, the_type, unmodelled
from gputwin.emu.nv.ptx.ops.memory import space_of

OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas")


def _f16_add(old, v, half):
    a = old.view(np.float16).astype(np.float64) if half == "f16" else F.bf16_to_f32(old).astype(np.float64)
    c = v.view(np.float16).astype(np.float64) if half == "f16" else F.bf16_to_f32(v).astype(np.float64)
    s, err = F.two_sum(a, c)
    x = F.round_to_odd(s, err)
    r = F.to_f16(x).view(np.uint16) if half == "f16" else F.to_bf16_bits(x)
    return F.canon(r.view(np.float16), "f16").view(np.uint16) if half == "f16" else r


def combine(kind, t):
    """f(old_bits, operand_bits[, c_bits]) -> new bits, for the type's unsigned container."""
    U = T.UINT[T.size(t)]
    dt = T.dtype(t)
    if kind == "add":
        if t == "f32":
            return lambda o, v: F.canon(F.ftz(F.ftz(o.view(np.float32)) + F.ftz(v.view(np.float32))),
                                        "f32").view(U)
        if t == "f64":
            return lambda o, v: F.canon(o.view(np.float64) + v.view(np.float64), "f64").view(U)
        if t in ("f16", "bf16"):
            return lambda o, v: _f16_add(o, v, t)
        return lambda o, v: (o + v).astype(U)
    if kind in ("min", "max"):
        if T.kind(t) == "f":
            raise ValueError("float min/max atomics")
        f = np.minimum if kind == "min" else np.maximum
        return lambda o, v: f(o.view(dt), v.view(dt)).view(U)
    if kind == "inc":
        return lambda o, v: np.where(o >= v, U(0), o + U(1)).astype(U)
    if kind == "dec":
        return lambda o, v: np.where((o == 0) | (o > v), v, o - U(1)).astype(U)
    if kind in ("and", "or", "xor"):
        return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
    if kind == "exch":
        return lambda o, v: v
    if kind == "cas":
        return lambda o, v, c: np.where(o == v, c, o).astype(U)
    raise ValueError(kind)


def _accumulate_ufunc(kind, t):
    """A ufunc whose accumulate equals the sequential combine (exact/associative or sequential float)."""
    if kind == "add" and t not in ("f32", "f16", "bf16"):
        return np.add
    if kind in ("and", "or", "xor"):
        return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
    if kind in ("min", "max") and T.kind(t) != "f":
        return np.minimum if kind == "min" else np.maximum
    return None


def _per_address(uf, t, starts, sizes, order, cur, vals, olds) -> bool:
    """Sequential results per address with uf.accumulate; False (nothing written) where an f32 sum
    meets a subnormal, which .f32 atomics flush and accumulate would not."""
    U = T.UINT[T.size(t)]
    vdt = T.dtype(t)
    res = []
    for g, (s0, n) in enumerate(zip(starts, sizes)):
        lanes = order[s0:s0 + n]
        seq = np.concatenate([cur[g:g + 1], vals[lanes]]).view(vdt)
        acc = uf.accumulate(seq)
        if t == "f32":
            tiny = np.finfo(np.float32).tiny
            if ((np.abs(acc) < tiny) & (acc != 0)).any():
                return False
            acc[1:] = F.canon(acc[1:], "f32")
        res.append((g, lanes, np.asarray(acc, vdt).view(U)))
    for g, lanes, acc in res:
        olds[lanes] = acc[:-1]
        cur[g] = acc[-1]
    return True


def serialise(kind, t, where, buf_kind, b, ins, sp, addrs, idx, vals, cvals):
    """Apply the atomic lane by lane in thread order; returns the old value each lane saw."""
    U = T.UINT[T.size(t)]
    key = where if buf_kind != "global" else addrs
    order = np.argsort(key, kind="stable")            # by address, then thread order
    sk = key[order]
    starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
    gid_sorted = np.cumsum(np.r_[True, sk[1:] != sk[:-1]]) - 1
    rank_sorted = np.arange(len(sk)) - starts[gid_sorted]
    first = order[starts]                            # one lane per address
    cur = b.load(ins, sp, addrs[first], idx[first], T.size(t)).astype(U)
    olds = np.empty(len(addrs), U)
    f = combine(kind, t)
    sizes = np.diff(np.r_[starts, len(sk)])
    uf = _accumulate_ufunc(kind, t)
    if uf is None and kind == "add" and t == "f32":
        uf = np.add                  # float32 accumulate is sequential; checked for subnormals below
    if uf is not None and len(starts) < sizes.max():
        if _per_address(uf, t, starts, sizes, order, cur, vals, olds):
            b.store(ins, sp, addrs[first], idx[first], cur)
            return olds
    for r in range(int(sizes.max())):
        sel = rank_sorted == r
        lanes = order[sel]
        g = gid_sorted[sel]
        olds[lanes] = cur[g]
        cur[g] = f(cur[g], vals[lanes]) if kind != "cas" else f(cur[g], vals[lanes], cvals[lanes])
    b.store(ins, sp, addrs[first], idx[first], cur)
    return olds


def _factory(ins, b, returns):
    t = the_type(ins)
    kind = [x for x in ins.mods if x in OPS]
    if not kind:
        raise unmodelled(ins)
    kind = kind[0]
    if "v2" in ins.mods or "v4" in ins.mods or "v8" in ins.mods:
        raise unmodelled(ins, "vector atomics")
    if kind in ("min", "max") and T.kind(t) == "f":
        raise unmodelled(ins, "float min/max atomics")
    if t in ("f16x2", "bf16x2", "b128") or (T.kind(t) == "f" and kind not in ("add", "exch", "cas")):
        raise unmodelled(ins, f".{t} {kind}")
    sp = space_of(ins)
    U = T.UINT[T.size(t)]
    args = list(ins.args)
    d = b.dst(ins, args.pop(0), t) if returns else None
    addr = args.pop(0)
    v = b.src(ins, args.pop(0), t)
    c = b.src(ins, args.pop(0), t) if kind == "cas" else None
    if args:
        raise unmodelled(ins, "cache-policy operand")

    def run(m):
        idx = b.active(m, b.T)
        if len(idx) == 0:
            return
        a = b.address(ins, addr, idx)
        bk, where = b.access(ins, sp, a, idx, T.size(t), True)
        if isinstance(bk, str) and bk == "mixed":
            raise unmodelled(ins, "an atomic whose lanes hit different state spaces")
        vals = np.ascontiguousarray(np.broadcast_to(v(), (b.T,))[idx]).view(U)
        cvals = np.ascontiguousarray(np.broadcast_to(c(), (b.T,))[idx]).view(U) if c else None
        old = serialise(kind, t, where, "global" if isinstance(bk, str) else "buf", b, ins, sp, a, idx, vals, cvals)
        if d is not None:
            full = np.zeros(b.T, U)
            full[idx] = old
            d(full.view(T.dtype(t)), m)
    return run


@op("atom")
def atom(ins, b):
    return _factory(ins, b, True)


@op("red")
def red(ins, b):
    return _factory(ins, b, False)
