"""cvt (every type pair, rounding and saturation), mov (with vector pack/unpack) and cvta.

Float -> integer: the .rni/.rzi/.rmi/.rpi rounding, then saturation to the destination range (PTX
saturates float-to-int conversions always), NaN -> 0. Integer -> float: the exact integer (64-bit ones
as an exact float64 pair) rounded once in the requested mode. Float -> float: one rounding; .rni etc.
on same-size floats round to an integral value.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.nv.ptx import floats as F
from gputwin.emu.nv.ptx import types as T
from gputwin.emu.nv.ptx.ops import op, the_type, types_of, unmodelled
from gputwin.emu.nv.ptx.ops.floating import encode, finish
from gputwin.emu.nv.ptx.parser import Vec
from gputwin.emu.nv.ptx.state import LOCAL_WINDOW, SHARED_WINDOW

INT_ROUND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def _int_range(t):
    n = 8 * T.size(t)
    if T.kind(t) == "s":
        return -(1 << (n - 1)), (1 << (n - 1)) - 1
    return 0, (1 << n) - 1


def float_to_int(v64, t, rnd):
    """float64 values -> integer type t: round, saturate, NaN -> 0."""
    r = INT_ROUND[rnd](v64)
    lo, hi = _int_range(t)
    dt = T.dtype(t)
    nan = np.isnan(r)
    big = r >= float(hi)           # float(hi) may round up to 2^n: compare before converting
    small = r <= float(lo)
    safe = np.where(nan | big | small, 0.0, r)
    out = safe.astype(dt)
    out = np.where(big, dt(hi), out)
    out = np.where(small, dt(lo), out)
    return np.where(nan, dt(0), out).astype(dt)


def int_to_f64_pair(x, t):
    """An exact (s, err) float64 pair for integer values of type t."""
    x = np.asarray(x)
    if T.size(t) < 8:
        return x.astype(np.float64), np.zeros(x.shape)
    u = x.astype(np.uint64) if T.kind(t) != "s" else x.astype(np.int64)
    if T.kind(t) == "s":
        hi = (u >> 32).astype(np.float64) * 4294967296.0
        lo = (u & 0xFFFFFFFF).astype(np.float64)
    else:
        hi = (u >> np.uint64(32)).astype(np.float64) * 4294967296.0
        lo = (u & np.uint64(0xFFFFFFFF)).astype(np.float64)
    return F.two_sum(hi, lo)


def _decode(v, t):
    if t == "bf16":
        return F.bf16_to_f32(v).astype(np.float64)
    return np.asarray(v).astype(np.float64)


@op("cvt")
def cvt(ins, b):
    ts = types_of(ins)
    if len(ts) != 2:
        raise unmodelled(ins, "cvt needs two types")
    dt, st = ts
    mods = set(ins.mods)
    ftz, sat = "ftz" in mods, "sat" in mods
    frnd = [m for m in ins.mods if m in ("rn", "rz", "rm", "rp", "rna", "rs")]
    irnd = [m for m in ins.mods if m in INT_ROUND]
    if "relu" in mods or "rs" in frnd:
        raise unmodelled(ins)
    if dt in ("f16x2", "bf16x2"):
        return _cvt_pack(ins, b, dt, st, frnd[0] if frnd else "rn", "relu" in mods, sat)
    if dt == "tf32":
        return _cvt_tf32(ins, b, frnd)
    d = b.dst(ins, ins.args[0], dt)
    x = b.src(ins, ins.args[1], st)
    dk, sk = T.kind(dt), T.kind(st)

    if dk != "f" and sk != "f":                       # integer -> integer
        dtp = T.dtype(dt)
        if sat:
            lo, hi = _int_range(dt)
            sdt = T.dtype(st)

            def run(m):
                v = np.asarray(x()).astype(sdt)
                if T.kind(st) == "s":
                    r = np.clip(v.astype(np.int64), max(lo, -(1 << 63)), min(hi, (1 << 63) - 1)) if \
                        T.kind(dt) == "s" or T.size(dt) < 8 else np.where(v < 0, 0, v).astype(np.int64)
                    d(np.asarray(r).astype(dtp), m)
                else:
                    vv = v.astype(np.uint64)
                    d(np.minimum(vv, np.uint64(hi)).astype(dtp), m)
            return run
        ssz, dsz = T.size(st), T.size(dt)
        signed = T.kind(st) == "s"

        def run(m):
            v = np.asarray(x())
            if dsz <= ssz:
                r = v.astype(T.UINT[ssz], copy=False).astype(T.UINT[dsz]).view(dtp) if v.ndim else \
                    np.asarray(v).astype(T.UINT[ssz]).astype(T.UINT[dsz]).view(dtp)
            else:
                r = (v.astype(T.SINT[dsz]) if signed else v.astype(T.UINT[ssz]).astype(T.UINT[dsz])).view(dtp) \
                    if v.ndim else np.asarray(v).astype(T.SINT[dsz] if signed else T.UINT[dsz]).astype(dtp)
            d(r, m)
        return run

    if dk != "f":                                     # float -> integer
        if not irnd:
            raise unmodelled(ins, "float to integer needs .rni/.rzi/.rmi/.rpi")

        def run(m):
            v = _decode(x(), st)
            if ftz:
                v = np.where(np.abs(v) < np.finfo(np.float32).tiny, 0.0, v)
            d(float_to_int(v, dt, irnd[0]), m)
        return run

    if sk != "f":                                     # integer -> float
        mode = frnd[0] if frnd else "rn"

        def run(m):
            s, err = int_to_f64_pair(x(), st)
            if dt == "f64":
                r = s if mode == "rn" else _f64_directed(s, err, mode)
            else:
                r = encode(F.round_to_odd(s, err), dt, mode)
            d(finish(r, dt, ftz, sat), m)
        return run

    # float -> float
    def run(m):
        v = _decode(x(), st)
        if ftz:
            tiny = np.finfo(np.float32).tiny if st in ("f32", "bf16") else np.finfo(T.dtype(st)).tiny
            v = np.where((np.abs(v) < tiny) & (v != 0), np.copysign(0.0, v), v)
        if irnd:                                      # round to an integral value, same format
            r = INT_ROUND[irnd[0]](v)
            r = encode(r, dt, "rn")
        elif T.size(dt) > T.size(st) or dt == st:
            r = encode(v, dt, "rn")                   # widening is exact
        elif frnd:
            mode = frnd[0]
            if mode == "rna":
                raise unmodelled(ins, ".rna")
            r = encode(v, dt, mode)
        else:
            raise unmodelled(ins, "narrowing cvt needs a rounding mode")
        if st == "f32" and dt == "f32" and not irnd:  # cvt.ftz/sat.f32.f32
            r = np.asarray(x())
            if ftz:
                r = F.ftz(r)
        nan_in = np.isnan(v)
        r = finish(np.asarray(r), dt, ftz and dt != "f64", sat)
        if dt == "f64" and not irnd:
            r = np.where(nan_in, np.array(F.CANON["f64"]).view(np.float64), r)
        d(r, m)
    return run


def _f64_directed(s, err, mode):
    fix = err != 0
    if mode == "rz":
        return np.where(fix & ((err > 0) != (s > 0)), np.nextafter(s, 0.0), s)
    if mode == "rm":
        return np.where(fix & (err < 0), np.nextafter(s, -np.inf), s)
    return np.where(fix & (err > 0), np.nextafter(s, np.inf), s)


def _cvt_pack(ins, b, dt, st, mode, relu, sat):
    """cvt.rn.f16x2.f32 d, a, b: d.hi = cvt(a), d.lo = cvt(b)."""
    if st != "f32":
        raise unmodelled(ins)
    half = dt[:-2]
    d = b.dst(ins, ins.args[0], "b32")
    x, y = b.src(ins, ins.args[1], "f32"), b.src(ins, ins.args[2], "f32")

    def one(v):
        r = finish(encode(np.asarray(v).astype(np.float64), half, mode), half, False, sat)
        return (np.asarray(r).view(np.uint16) if half == "f16" else np.asarray(r)).astype(np.uint32)

    return lambda m: d((one(x()) << np.uint32(16)) | one(y()), m)


def _cvt_tf32(ins, b, frnd):
    """cvt.rna.tf32.f32: keep 10 mantissa bits, rounding to nearest, ties away from zero."""
    if frnd != ["rna"]:
        raise unmodelled(ins, "tf32 conversion other than .rna")
    d = b.dst(ins, ins.args[0], "b32")
    x = b.src(ins, ins.args[1], "f32")

    def run(m):
        v = np.asarray(x())
        bits = v.view(np.uint32) if v.ndim else np.asarray(v).reshape(1).view(np.uint32)
        r = (bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
        r = np.where(np.isfinite(v), r, np.where(np.isnan(v), np.uint32(0x7FFFFFFF), bits))
        d(r.astype(np.uint32).reshape(np.shape(v)), m)
    return run


@op("mov")
def mov(ins, b):
    t = the_type(ins)
    dst, src = ins.args[0], ins.args[1]
    n = T.size(t)
    if isinstance(src, Vec):                          # pack {a, b, ...} -> d
        k = len(src.items)
        part = n // k
        parts = [b.src(ins, it, {1: "b8", 2: "b16", 4: "b32"}[part]) for it in src.items]
        d = b.dst(ins, dst, t)
        U = T.UINT[n]

        def pack(m):
            r = np.zeros(b.T, U)
            for i, p in enumerate(parts):
                r |= np.asarray(p()).astype(U) << U(8 * part * i)
            d(r.view(T.dtype(t)), m)
        return pack
    if isinstance(dst, Vec):                          # unpack d -> {a, b, ...}
        k = len(dst.items)
        part = n // k
        pt = {1: "b8", 2: "b16", 4: "b32"}[part]
        outs = [b.dst(ins, it, pt) for it in dst.items]
        x = b.src(ins, src, {2: "b16", 4: "b32", 8: "b64"}[n])
        U = T.UINT[n]
        PU = T.UINT[part]

        def unpack(m):
            v = np.asarray(x()).astype(U)
            for i, o in enumerate(outs):
                o((v >> U(8 * part * i)).astype(PU), m)
        return unpack
    d = b.dst(ins, dst, t)
    x = b.src(ins, src, t)
    return lambda m: d(np.broadcast_to(x(), (b.T,)), m)


@op("cvta")
def cvta(ins, b):
    t = the_type(ins)
    to = "to" in ins.mods
    space = [m for m in ins.mods if m in ("global", "shared", "local", "const", "param", "shared::cta")]
    space = ["shared" if m == "shared::cta" else m for m in space]
    if not space or space[0] == "param":
        raise unmodelled(ins)
    window = {"global": 0, "const": 0, "shared": SHARED_WINDOW, "local": LOCAL_WINDOW}[space[0]]
    d = b.dst(ins, ins.args[0], t)
    x = b.src(ins, ins.args[1], t)
    U = T.UINT[T.size(t)]
    w = U(window & ((1 << 8 * T.size(t)) - 1))
    if window == 0:
        return lambda m: d(np.broadcast_to(x(), (b.T,)), m)
    if to:
        return lambda m: d(np.broadcast_to(np.asarray(x()).astype(U) - w, (b.T,)), m)
    return lambda m: d(np.broadcast_to(np.asarray(x()).astype(U) + w, (b.T,)), m)
