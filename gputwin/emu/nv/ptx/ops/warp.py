"""Warp-level operations: shfl.sync, vote.sync, match.sync, redux.sync, activemask.

A warp's active lanes are the lanes executing this step (see executor.py). Values are read from every
lane's register, so a shuffle from a lane that is not active returns that lane's current register
contents (PTX: undefined); the result predicate of shfl says whether the source lane was in range.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.nv.ptx import types as T
from gputwin.emu.nv.ptx.ops import op, the_type, unmodelled
from gputwin.emu.nv.ptx.parser import Pair


def _active(b, m):
    return np.ones((b.W, 32), bool) if m is None else m.reshape(b.W, 32)


def _ballot(bits_2d):
    """(W, 32) bool -> (W,) uint32 lane masks."""
    weights = (np.uint64(1) << np.arange(32, dtype=np.uint64))
    return (bits_2d.astype(np.uint64) * weights).sum(axis=1).astype(np.uint32)


@op("shfl")
def shfl(ins, b):
    mode = [x for x in ins.mods if x in ("up", "down", "bfly", "idx")]
    if not mode or "sync" not in ins.mods:
        raise unmodelled(ins, "shfl without .sync")
    mode = mode[0]
    dst = ins.args[0]
    dd, dp = (b.dst(ins, dst.items[0], "b32"), b.dst(ins, dst.items[1], "pred")) if isinstance(dst, Pair) \
        else (b.dst(ins, dst, "b32"), None)
    a, bb, c = (b.src(ins, x, "b32") for x in ins.args[1:4])
    lane = np.arange(32, dtype=np.int64)[None, :]

    def run(m):
        av = np.broadcast_to(a(), (b.T,)).reshape(b.W, 32)
        bv = np.broadcast_to(np.asarray(bb()).astype(np.int64), (b.T,)).reshape(b.W, 32) & 31
        cv = np.broadcast_to(np.asarray(c()).astype(np.int64), (b.T,)).reshape(b.W, 32)
        clamp, seg = cv & 31, (cv >> 8) & 31
        max_lane = (lane & seg) | (clamp & ~seg)
        min_lane = lane & seg
        if mode == "up":
            j = lane - bv
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bv
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bv
            ok = j <= max_lane
        else:
            j = min_lane | (bv & ~seg)
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        r = np.take_along_axis(av, j, axis=1).reshape(-1)
        dd(r, m)
        if dp is not None:
            dp(ok.reshape(-1), m)
    return run


@op("vote")
def vote(ins, b):
    mode = [x for x in ins.mods if x in ("all", "any", "uni", "ballot")]
    if not mode:
        raise unmodelled(ins)
    mode = mode[0]
    if mode == "ballot":
        d = b.dst(ins, ins.args[0], "b32")
    else:
        d = b.dst(ins, ins.args[0], "pred")
    p = b.src(ins, ins.args[1], "pred")
    mm = b.src(ins, ins.args[2], "b32") if len(ins.args) > 2 else (lambda: np.uint32(0xFFFFFFFF))

    def run(m):
        act = _active(b, m) & _member(b, mm())
        pv = np.broadcast_to(p(), (b.T,)).reshape(b.W, 32) & act
        if mode == "ballot":
            r = np.repeat(_ballot(pv), 32)
        elif mode == "all":
            r = np.repeat((pv == act).all(axis=1), 32)
        elif mode == "any":
            r = np.repeat(pv.any(axis=1), 32)
        else:
            r = np.repeat((pv == act).all(axis=1) | ~pv.any(axis=1), 32)
        d(r, m)
    return run


def _member(b, mask):
    mv = np.broadcast_to(np.asarray(mask).astype(np.uint32), (b.T,)).reshape(b.W, 32)[:, :1]
    return ((mv >> np.arange(32, dtype=np.uint32)[None, :]) & 1).astype(bool)


@op("activemask")
def activemask(ins, b):
    d = b.dst(ins, ins.args[0], "b32")
    return lambda m: d(np.repeat(_ballot(_active(b, m)), 32), m)


@op("match")
def match(ins, b):
    t = the_type(ins)
    mode = "all" if "all" in ins.mods else "any"
    dst = ins.args[0]
    dd, dp = (b.dst(ins, dst.items[0], "b32"), b.dst(ins, dst.items[1], "pred")) if isinstance(dst, Pair) \
        else (b.dst(ins, dst, "b32"), None)
    a = b.src(ins, ins.args[1], t)
    mm = b.src(ins, ins.args[2], "b32")

    def run(m):
        act = _active(b, m) & _member(b, mm())
        v = np.broadcast_to(a(), (b.T,)).reshape(b.W, 32)
        same = (v[:, :, None] == v[:, None, :]) & act[:, None, :] & act[:, :, None]   # (W, lane, other)
        weights = np.uint64(1) << np.arange(32, dtype=np.uint64)
        any_mask = (same.astype(np.uint64) * weights).sum(axis=2).astype(np.uint32)
        if mode == "any":
            dd(any_mask.reshape(-1), m)
            return
        full = _ballot(act)[:, None]
        allsame = (any_mask == full)
        dd(np.where(allsame, full, 0).astype(np.uint32).reshape(-1), m)
        if dp is not None:
            dp(allsame.reshape(-1), m)
    return run


@op("redux")
def redux(ins, b):
    t = the_type(ins)
    kind = [x for x in ins.mods if x in ("add", "min", "max", "and", "or", "xor")]
    if not kind or T.kind(t) == "f":
        raise unmodelled(ins)
    kind = kind[0]
    d = b.dst(ins, ins.args[0], t)
    a = b.src(ins, ins.args[1], t)
    mm = b.src(ins, ins.args[2], "b32")
    dt = T.dtype(t)

    def run(m):
        act = _active(b, m) & _member(b, mm())
        v = np.broadcast_to(a(), (b.T,)).reshape(b.W, 32)
        if kind == "add":
            r = np.where(act, v, 0).astype(dt).sum(axis=1, dtype=dt)
        elif kind in ("min", "max"):
            info = np.iinfo(dt)
            fill = info.max if kind == "min" else info.min
            r = (np.min if kind == "min" else np.max)(np.where(act, v, fill), axis=1)
        else:
            f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
            r = f.reduce(np.where(act, v, dt(-1) if kind == "and" else dt(0)).astype(dt), axis=1)
        d(np.repeat(np.asarray(r, dt), 32), m)
    return run


def sync_members(ins):
    """For a warp-synchronous instruction, the operand naming its member lanes (None: the whole warp);
    False for any other instruction. The executor makes present lanes wait for absent live members."""
    if "sync" not in ins.mods:
        return False
    if ins.op in ("shfl",):
        return ins.args[4] if len(ins.args) > 4 else None
    if ins.op in ("vote", "match", "redux"):
        return ins.args[2] if len(ins.args) > 2 else None
    if ins.op == "bar" and "warp" in ins.mods:
        return ins.args[0] if ins.args else None
    if ins.op in ("mma", "ldmatrix"):
        return None
    return False
