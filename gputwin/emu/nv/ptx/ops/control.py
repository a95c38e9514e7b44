"""Control flow: bra, call/ret (with the .param ABI), exit, trap, barriers; fences are no-ops.

Control instructions move the threads' keys themselves (see executor.py for the key = (call-depth
rank, PC) scheduling); b.cur_key is the key every executing thread holds. A control instruction run for
every thread (mask None) may instead return the one key they all move to; the key array is then left
for the executor to bring up to date.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.nv.ptx.errors import PtxError
from gputwin.emu.nv.ptx.keys import DEPTH, EXIT, MAXD
from gputwin.emu.nv.ptx.ops import op, unmodelled
from gputwin.emu.nv.ptx.parser import Vec
from gputwin.emu.nv.ptx.sanitize import warp_synced
from gputwin.errors import GpuFault



def _split(b, ins, m):
    """(taken, not_taken) masks of the guarded instruction among the executing threads m."""
    g = b.guard(ins)
    if g is None:
        return m, None
    p = g()
    if m is None:
        return p, ~p
    return m & p, m & ~p


def _set(key, m, value):
    """key = value where m (None: everywhere); a branch-free blend, fast on irregular masks."""
    if m is None:
        key[...] = value
    else:
        np.bitwise_xor(key, (key ^ np.int64(value)) & np.negative(m.astype(np.int64)), out=key)


def _advance(key, m):
    if m is not None:
        key[m] += 1


@op("bra", "brx", control=True)
def bra(ins, b):
    if ins.op == "brx":
        raise unmodelled(ins, "indirect branch")
    tgt = ins.target
    g = b.guard(ins)

    def run(m):
        key = b.key
        base = b.cur_key - (b.cur_key & (DEPTH - 1))
        if g is None:
            if m is None:
                return base + tgt                  # every thread moves together: the executor keeps it
            _set(key, m, base + tgt)
            return
        p = g()
        if m is None:                              # a uniform decision keeps the batch converged
            if p.all():
                return base + tgt
            if not p.any():
                return b.cur_key + 1
        taken = p if m is None else (m & p)
        nt = ~p if m is None else (m & ~p)
        key += nt                                  # not taken: next instruction
        _set(key, taken, base + tgt)
    return run


@op("exit", control=True)
def exit_(ins, b):
    def run(m):
        t, nt = _split(b, ins, m)
        _set(b.key, t, EXIT)
        if nt is not None:
            b.key += nt
    return run


@op("ret", control=True)
def ret(ins, b):
    def run(m):
        t, nt = _split(b, ins, m)
        depth = MAXD - (b.cur_key // DEPTH)
        if depth == 0:
            _set(b.key, t, EXIT)
        else:
            back = (MAXD - (depth - 1)) * DEPTH
            if t is None:
                b.key[...] = back + b.stack[depth - 1]
            else:
                b.key[t] = back + b.stack[depth - 1][t]
        if nt is not None:
            b.key += nt
    return run


def _call_parts(ins):
    """(return param names, target name, argument param names) of a call."""
    args = list(ins.args)
    rets = []
    if args and isinstance(args[0], Vec):
        rets = [x.name for x in args.pop(0).items]
    target = args.pop(0).name
    params = [x.name for x in args.pop(0).items] if args and isinstance(args[0], Vec) else []
    if args:
        raise unmodelled(ins, "call with a prototype (indirect call)")
    return rets, target, params


def _copy_slots(b, ins, pairs, m):
    for src, dst in pairs:
        if m is None:
            dst[...] = src[:, :dst.shape[1]] if src.shape[1] >= dst.shape[1] else 0
            if src.shape[1] < dst.shape[1]:
                dst[:, :src.shape[1]] = src
        else:
            k = min(src.shape[1], dst.shape[1])
            dst[m, :k] = src[m, :k]


def _slot(b, ins, fn, name):
    key = (fn, name)
    if key not in b.plan.pslots:
        raise PtxError(f"{name} is not a .param of {fn}", line=ins.line, token=name)
    return b.pslots[b.plan.pslots[key][0]]


@op("call", control=True)
def call(ins, b):
    rets, target, params = _call_parts(ins)
    callee = b.mod_functions[target]
    if len(params) != len(callee.params) or len(rets) != len(callee.rets):
        raise PtxError(f"call to {target} with {len(params)} arguments / {len(rets)} results; it takes "
                       f"{len(callee.params)} / {len(callee.rets)}", line=ins.line, token=target)
    pairs = [(_slot(b, ins, ins.fn, a), _slot(b, ins, target, p.name)) for a, p in zip(params, callee.params)]
    entry = b.plan.func_base[target]

    def run(m):
        t, nt = _split(b, ins, m)
        if t is not None and not t.any():
            b.key += nt
            return
        depth = MAXD - (b.cur_key // DEPTH)
        if depth + 1 > b.plan.max_depth:
            raise GpuFault(f"call depth exceeded at PTX line {ins.line}", kind="stack")
        _copy_slots(b, ins, pairs, t)
        here = b.cur_key & (DEPTH - 1)
        if t is None:
            b.stack[depth][...] = here + 1
        else:
            b.stack[depth][t] = here + 1
        _set(b.key, t, (MAXD - depth - 1) * DEPTH + entry)
        if nt is not None:
            b.key += nt.astype(np.int64) * 2      # skip the call and its return step
    return run


@op("callret")
def callret(ins, b):
    rets, target, params = _call_parts(ins)
    callee = b.mod_functions[target]
    pairs = [(_slot(b, ins, target, r.name), _slot(b, ins, ins.fn, a)) for a, r in zip(rets, callee.rets)]
    return lambda m: _copy_slots(b, ins, pairs, m)


@op("trap", control=True)
def trap(ins, b):
    def run(m):
        t, nt = _split(b, ins, m)
        if t is None or t.any():
            e = GpuFault(f"trap at PTX line {ins.line}", kind="trap")
            e.ptx_line = ins.line
            raise e
        b.key += nt
    return run


@op("brkpt", control=True)
def brkpt(ins, b):
    def run(m):
        raise GpuFault(f"brkpt at PTX line {ins.line}", kind="trap")
    return run


@op("bar", "barrier", control=True)
def bar(ins, b):
    if "warp" in ins.mods:                         # bar.warp.sync (__syncwarp): lanes of a step are in step
        def warp_sync(m):
            if m is None:
                b.key += 1
            else:
                b.key[m] += 1
            if b.sanitizer is not None:
                warp_synced(b, m)
        return warp_sync
    if "cluster" in ins.mods:
        raise unmodelled(ins, "cluster barriers")
    kind = [x for x in ins.mods if x in ("sync", "arrive", "red")]
    if not kind:
        kind = ["sync"]                            # bar 0 == bar.sync 0 (old spelling)
    if ins.pred is not None:
        raise unmodelled(ins, "predicated barrier")
    if kind[0] == "red":
        return _bar_red(ins, b)
    barrier, count = _barrier_operands(ins, b, ins.args)
    wait = kind[0] == "sync"                       # arrive never waits

    def run(m):
        b.barriers.reach(ins, m, barrier, count, wait)
    return run


def _barrier_operands(ins, b, args):
    """Operands a (the barrier) and b (the thread count, None when absent) as u32 sources."""
    if not 1 <= len(args) <= 2:
        raise PtxError(f"{ins.text}: a barrier takes a barrier number and an optional thread count",
                       line=ins.line, token=ins.text)
    return b.src(ins, args[0], "u32"), b.src(ins, args[1], "u32") if len(args) == 2 else None


@op("membar", "fence", "nanosleep", "pmevent")
def nop(ins, b):
    return lambda m: None                          # a sequential model: every access is already ordered


def _bar_red(ins, b):
    """bar.red.popc.u32 d, a{, b}, {!}c / bar.red.and|or.pred p, a{, b}, {!}c: a barrier whose result, the
    CTA-wide reduction of c over the threads that arrived, is written when the barrier releases."""
    red = [x for x in ins.mods if x in ("popc", "and", "or")]
    if not red:
        raise unmodelled(ins)
    red = red[0]
    dst = b.dst(ins, ins.args[0], "u32" if red == "popc" else "pred")
    cpred = b.src(ins, ins.args[-1], "pred")
    barrier, count = _barrier_operands(ins, b, ins.args[1:-1])
    ncta = b.nctas

    def run(m):
        arrived = np.ones(b.T, bool) if m is None else m.copy()
        c = np.broadcast_to(cpred(), (b.T,)).copy()

        def finish():
            per = (c & arrived).reshape(ncta, -1)
            live = arrived.reshape(ncta, -1)
            if red == "popc":
                v = per.sum(axis=1).astype(np.uint32)
            elif red == "and":
                v = (per | ~live).all(axis=1)
            else:
                v = per.any(axis=1)
            dst(np.repeat(v, b.tpc_padded), arrived)
        b.pending_red.append((arrived & b.valid, finish))
        b.barriers.reach(ins, m, barrier, count, True)
    return run
