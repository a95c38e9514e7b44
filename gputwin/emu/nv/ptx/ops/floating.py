"""Floating-point instructions in f16, f16x2, bf16, bf16x2, f32 and f64.

Inputs are widened to float64, the exact result is formed (gputwin.emu.nv.ptx.floats) and rounded once
to the destination format in the instruction's rounding mode; then .ftz, .sat and the canonical NaN
apply. The common f32 .rn cases use float32 numpy directly (IEEE round-to-nearest-even), which is the
same result. `.approx` instructions and div.full are "approximate vs hardware" (fidelity.py): each has
one documented implementation, named in its factory's comment.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.nv.ptx import floats as F
from gputwin.emu.nv.ptx import types as T
from gputwin.emu.nv.ptx.errors import PtxError
from gputwin.emu.nv.ptx.ops import op, the_type, unmodelled

FLOAT: dict[str, object] = {}
HALF = ("f16", "bf16")
PACKED = ("f16x2", "bf16x2")


def fop(name):
    def deco(f):
        FLOAT[name] = f
        return f
    return deco


def mode_of(ins, default="rn"):
    for m in ins.mods:
        if m in F.MODES:
            return m
    return default


# --- decode / encode per format ------------------------------------------------------------------------

def decode(x, fmt):
    """PTX value of format fmt (as read with src(..., fmt)) -> float64."""
    if fmt == "bf16":
        return F.bf16_to_f32(x).astype(np.float64)
    return np.asarray(x).astype(np.float64)


def encode(r64, fmt, mode):
    """float64 (already rounded to odd where needed) -> the format's value, rounded in mode."""
    if fmt == "f32":
        return F.to_f32(r64, mode)
    if fmt == "f16":
        return F.to_f16(r64, mode)
    if fmt == "bf16":
        return F.to_bf16_bits(r64, mode)
    if fmt == "f64":
        return np.asarray(r64, np.float64)
    raise ValueError(fmt)


def as_float(v, fmt):
    """A format value (bf16 as bits) as a numpy float array for classification."""
    return F.bf16_to_f32(v) if fmt == "bf16" else np.asarray(v)


def finish(r, fmt, ftz, sat):
    """Apply .ftz to results, .sat and the canonical NaN to a rounded format value."""
    if fmt == "bf16":
        f = F.bf16_to_f32(r)
        if ftz:
            f = F.ftz(f)
        if sat:
            f = F.saturate(f)
        if ftz or sat:
            r = F.f32_to_bf16_bits(f)
        return np.where(np.isnan(f), F.CANON["bf16"], r).astype(np.uint16)
    if ftz:
        r = F.ftz(r)
    if sat:
        r = F.saturate(np.asarray(r))
    return F.canon(np.asarray(r), fmt)


def _in(x, fmt, ftz):
    v = decode(x, fmt)
    if ftz:
        tiny = {"f32": np.finfo(np.float32).tiny, "f16": np.finfo(np.float16).tiny,
                "bf16": np.finfo(np.float32).tiny, "f64": np.finfo(np.float64).tiny}[fmt]
        v = np.where((np.abs(v) < tiny) & (v != 0), np.copysign(0.0, v), v)
    return v


def exact_fma(a, b, c, fmt, mode, kind):
    """Round a*b+c (kind "fma"), a+b ("add") or a*b ("mul") of format values given as float64."""
    if fmt == "f64":
        return _f64_exact(a, b, c, mode, kind)
    if kind == "mul":
        s, err = a * b, np.zeros_like(a * b)
        x = s
    else:
        p, q = (a, b) if kind == "add" else (a * b, c)
        s, err = F.two_sum(p, q)
        x = F.round_to_odd(s, err)
        if mode == "rm":                             # an exact zero sum is -0 under rm unless both are +0
            zero = (s == 0) & (err == 0)
            if np.any(zero):
                both_pos = (p == 0) & (q == 0) & ~np.signbit(p) & ~np.signbit(q)
                x = np.where(zero & ~both_pos, -0.0, x)
    return encode(x, fmt, mode)


def _f64_exact(a, b, c, mode, kind):
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    c = np.broadcast_to(np.asarray(c, np.float64), a.shape) if c is not None else None
    if kind == "add":
        naive = a + b
        if mode == "rn":
            return naive
        s, err = F.two_sum(a, b)
        ok = np.isfinite(s)
        out = s.copy()
        fin = np.isfinite(a) & np.isfinite(b)
        sel = fin & ~ok
        if sel.any():      # overflow of a finite sum: directed modes may stop at the largest finite
            out[sel] = F.exact_map(lambda x, y: x + y, mode, a[sel], b[sel])
        fix = ok & (err != 0)
        if mode == "rz":
            step = fix & ((err > 0) != (s > 0))
            out = np.where(step, np.nextafter(s, 0.0), out)
        elif mode == "rm":
            out = np.where(fix & (err < 0), np.nextafter(s, -np.inf), out)
        elif mode == "rp":
            out = np.where(fix & (err > 0), np.nextafter(s, np.inf), out)
        zero = ok & (s == 0) & (err == 0) & (mode == "rm")
        if np.any(zero):
            out = np.where(zero & ~((a == 0) & (b == 0) & ~np.signbit(a) & ~np.signbit(b)), -0.0, out)
        return out
    naive = a * b if kind == "mul" else a * b + c
    if kind == "mul" and mode == "rn":
        return naive
    fin = np.isfinite(a) & np.isfinite(b) & (np.isfinite(c) if c is not None else True)
    out = naive.copy()
    if kind == "mul":
        sel = fin & (a != 0) & (b != 0)
        if sel.any():
            out[sel] = F.exact_map(lambda x, y: x * y, mode, a[sel], b[sel])
        return out
    sel = fin & ~((a == 0) | (b == 0))                  # a zero product: a*b + c is exact in numpy
    if sel.any():
        r = F.exact_map(lambda x, y, z: x * y + z, mode, a[sel], b[sel], c[sel])
        zero = r == 0                                     # exact cancellation: +0, or -0 under rm
        r = np.where(zero, -0.0 if mode == "rm" else 0.0, r)
        out[sel] = r
    if mode != "rn":
        zsel = fin & ((a == 0) | (b == 0))
        if zsel.any():
            p = a[zsel] * b[zsel]
            cz = c[zsel]
            both_zero = (cz == 0)
            out[zsel] = np.where(both_zero & (mode == "rm") & (np.signbit(p) != np.signbit(cz)), -0.0, p + cz)
    return out


# --- the arithmetic ops ---------------------------------------------------------------------------------

def _split(fmt):
    return fmt[:-2] if fmt in PACKED else fmt


def _packed(ins, b, nin, compute):
    """Run compute(list of half inputs as format values) on the lo and hi halves of .f16x2/.bf16x2."""
    t = the_type(ins)
    half = _split(t)
    d = b.dst(ins, ins.args[0], "b32")
    srcs = [b.src(ins, a, "b32") for a in ins.args[1:1 + nin]]

    def halves(v, hi):
        h = (np.asarray(v).astype(np.uint32) >> np.uint32(16 if hi else 0)) & np.uint32(0xFFFF)
        h = h.astype(np.uint16)
        return h.view(np.float16) if half == "f16" else h

    def run(m):
        vals = [s() for s in srcs]
        lo = compute([halves(v, False) for v in vals])
        hi = compute([halves(v, True) for v in vals])
        bits = lambda r: np.asarray(r).view(np.uint16).astype(np.uint32) if half == "f16" else \
            np.asarray(r).astype(np.uint32)
        d((bits(hi) << np.uint32(16)) | bits(lo), m)
    return run, half


def _arith(kind):
    nin = {"add": 2, "sub": 2, "mul": 2, "fma": 3}[kind]

    def factory(ins, b):
        if len(ins.args) != 1 + nin:      # the slices below would silently drop or ignore operands
            raise PtxError(f"{ins.text}: {kind} takes {1 + nin} operands, {len(ins.args)} given", line=ins.line,
                           token=ins.text)
        t = the_type(ins)
        mode = mode_of(ins)
        ftz, sat = "ftz" in ins.mods, "sat" in ins.mods
        if "relu" in ins.mods or "oob" in ins.mods:
            raise unmodelled(ins)
        fmt = _split(t)
        if fmt not in ("f16", "bf16", "f32", "f64"):     # fma.s32 reaches here without the type dispatch
            raise PtxError(f"{ins.text}: {kind} needs a floating-point type, not .{t}", line=ins.line, token=ins.text)

        def compute(vals):
            a = _in(vals[0], fmt, ftz)
            bb = _in(vals[1], fmt, ftz)
            if kind == "sub":
                bb = -bb
            c = _in(vals[2], fmt, ftz) if kind == "fma" else None
            k = "add" if kind == "sub" else kind
            return finish(exact_fma(a, bb, c, fmt, mode, k), fmt, ftz, sat)

        if t in PACKED:
            run, _ = _packed(ins, b, nin, compute)
            return run
        d = b.dst(ins, ins.args[0], t)
        srcs = [b.src(ins, a, t) for a in ins.args[1:1 + nin]]
        if t == "f32" and mode == "rn" and not sat:
            return _fast_f32(kind, d, srcs, ftz, b)
        if t == "f64" and mode == "rn" and kind != "fma":
            f = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[kind]
            x, y = srcs
            return lambda m: d(F.canon(np.asarray(f(x(), y())), "f64"), m)
        return lambda m: d(compute([s() for s in srcs]), m)
    return factory


def _fast_f32(kind, d, srcs, ftz, b):
    out = getattr(d, "view", None)
    if kind in ("add", "sub", "mul"):
        f = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[kind]
        x, y = srcs
        if ftz:
            return lambda m: d(F.canon(F.ftz(f(F.ftz(x()), F.ftz(y()))), "f32"), m)

        def run(m):
            if m is None and out is not None:        # straight into the register, NaNs fixed in place
                f(x(), y(), out=out)
                if np.isnan(out).any():
                    out[np.isnan(out)] = np.array(F.CANON["f32"]).view(np.float32)
                return
            d(F.canon(np.asarray(f(x(), y())), "f32"), m)
        return run
    x, y, z = srcs
    if ftz:
        return _fma_f32_ftz(d, x, y, z)
    T_ = b.T
    scratch = b.scratch("fma_f32", lambda: (np.empty(T_, np.float64), np.empty(T_, np.float64),
                                            np.empty(T_, np.uint64), np.empty(T_, bool)))
    mid, top = np.uint64(0x10000000), np.uint64(0x1FFFFFFF)
    tiny = np.uint64(0x3810000000000000 << 1)          # the f32 normal range's bottom, sign shifted out
    inf2 = np.uint64(0xFFE0000000000000)               # infinity, sign shifted out: above it is NaN

    def fma(m):
        s, t, u, hit = scratch                          # shared by the batch's fma.rn.f32 steps
        np.copyto(s, x())                               # widening copies first: measured faster than
        np.copyto(t, y())                               # a ufunc casting its inputs on the fly
        np.multiply(s, t, out=s)                        # exact: 24 x 24 bits fit in 53
        np.copyto(t, z())
        np.add(s, t, out=s)
        # s rounds to the right f32 unless it sits exactly on an f32 midpoint (or in the f32 subnormal
        # range) while being inexact: only then is the exact (TwoSum + round-to-odd) path needed
        sb = s.view(np.uint64)
        np.bitwise_and(sb, top, out=u)
        hard = np.equal(u, mid, out=hit).any()
        np.left_shift(sb, np.uint64(1), out=u)
        hard = hard or u.min() < tiny
        nan = u.max() > inf2
        r = s
        if hard:
            p = np.multiply(x(), y(), dtype=np.float64)
            r, err = F.two_sum(p, np.asarray(z(), np.float64))
            r = F.round_to_odd(r, err)
        if m is None and out is not None:
            np.copyto(out, r, casting="same_kind")      # float64 -> float32 rounds to nearest even
            if nan:
                out[np.isnan(out)] = np.array(F.CANON["f32"]).view(np.float32)
            return
        v = r.astype(np.float32)
        d(F.canon(v, "f32") if nan else v, m)
    return fma


def _fma_f32_ftz(d, x, y, z):
    def fma(m):
        a, bb, c = F.ftz(x()), F.ftz(y()), F.ftz(z())
        p = np.asarray(a).astype(np.float64) * np.asarray(bb).astype(np.float64)     # exact
        c64 = np.asarray(c).astype(np.float64)
        s, err = F.two_sum(p, c64)
        r = np.asarray(F.round_to_odd(s, err)).astype(np.float32)
        d(F.canon(F.ftz(r), "f32"), m)
    return fma


for _k in ("add", "sub", "mul", "fma"):
    FLOAT[_k] = _arith(_k)
FLOAT["mad"] = _arith("fma")      # mad.rnd.f32/f64 is fma; mad.f32 without rounding is too (sm_20+)
op("fma")(FLOAT["fma"])


# --- division, square root, reciprocal and the .approx family -----------------------------------------

def _unary_float(ins, b, f, fmt_allowed=("f32", "f64")):
    t = the_type(ins)
    if t not in fmt_allowed:
        raise unmodelled(ins, f"type .{t}")
    ftz = "ftz" in ins.mods
    d = b.dst(ins, ins.args[0], t)
    x = b.src(ins, ins.args[1], t)

    def run(m):
        v = x()
        if ftz:
            v = F.ftz(np.asarray(v))
        r = f(np.asarray(v, np.float64), t)
        r = np.asarray(r).astype(T.dtype(t)) if t != "bf16" else r
        d(finish(r, t, ftz, False), m)
    return run


@fop("div")
def div_float(ins, b):
    t = the_type(ins)
    ftz = "ftz" in ins.mods
    approx = "approx" in ins.mods
    full = "full" in ins.mods
    mode = mode_of(ins)
    d = b.dst(ins, ins.args[0], t)
    x, y = b.src(ins, ins.args[1], t), b.src(ins, ins.args[2], t)
    if t not in ("f32", "f64"):
        raise unmodelled(ins, f"type .{t}")

    def run(m):
        a, c = np.asarray(x()), np.asarray(y())
        if ftz or approx or full:                       # approx/full flush like the hardware's fast path
            a, c = F.ftz(a) if ftz else a, F.ftz(c) if ftz else c
        a64, c64 = np.broadcast_arrays(a.astype(np.float64), c.astype(np.float64))
        if approx:        # approximate vs hardware: a * (1/b), each step rounded to f32
            r = (a.astype(np.float32) * (np.float32(1) / c.astype(np.float32))).astype(np.float32)
        elif t == "f32" and mode == "rn" or full:       # division of f32 in f64 then one rounding: exact
            r = (a64 / c64).astype(np.float32)
        elif t == "f64" and mode == "rn":
            r = a64 / c64
        else:
            r = _directed_div(a64, c64, mode, t)
        if ftz:
            r = F.ftz(r)
        d(F.canon(np.asarray(r), t), m)
    return run


def _directed_div(a, c, mode, t):
    q = a / c
    fin = np.isfinite(a) & np.isfinite(c) & (c != 0) & (a != 0)
    out = q.copy()
    if fin.any():
        ex = F.exact_map(lambda x, y: x / y, "rn" if t == "f32" else mode, a[fin], c[fin])
        if t == "f32":     # a rounded-to-odd f64 quotient then the directed f32 rounding
            ex = F.exact_map(lambda x, y: x / y, "rz", a[fin], c[fin])
            exact = F.exact_map(lambda x, y: x / y, "rp", a[fin], c[fin]) == ex
            odd = (ex.view(np.uint64) & np.uint64(1)) == 1
            ex = np.where(exact | odd, ex, np.nextafter(ex, np.copysign(np.inf, ex)))
        out[fin] = ex
    return F.to_f32(out, mode) if t == "f32" else out


@fop("sqrt")
def sqrt_float(ins, b):
    mode = mode_of(ins)
    approx = "approx" in ins.mods

    def f(v, t):
        if approx or mode == "rn":
            r = np.sqrt(v)     # approx: approximate vs hardware (the correctly rounded root)
            return r.astype(np.float32) if t == "f32" else r
        # directed: the nearest root r, stepped one ulp where r*r lies on the wrong side of v (exactly)
        r = np.sqrt(v)
        r = r.astype(np.float32) if t == "f32" else r
        rr = np.asarray(r, np.float64)
        fin = np.isfinite(v) & (v > 0)
        if t == "f32":
            sq = rr * rr                            # exact in float64 for an f32 root
            over, under = sq > v, sq < v
        else:
            cmp = F.exact_map(lambda x, y: x * x - y, "rn", rr, v)
            over, under = cmp > 0, cmp < 0
        ft = r.dtype.type
        if mode in ("rz", "rm"):
            r = np.where(fin & over, np.nextafter(r, ft(0)), r)
        else:
            r = np.where(fin & under, np.nextafter(r, ft(np.inf)), r)
        return r
    return _unary_float(ins, b, f)


@fop("rcp")
def rcp_float(ins, b):
    mode = mode_of(ins)
    approx = "approx" in ins.mods

    def f(v, t):
        if approx or mode == "rn":   # approx: approximate vs hardware (the correctly rounded reciprocal)
            r = 1.0 / v
            return r.astype(np.float32) if t == "f32" else r
        return _directed_div(np.ones_like(v), v, mode, t)
    return _unary_float(ins, b, f)


def _approx(fn):
    def factory(ins, b):
        def f(v, t):
            return fn(v).astype(np.float32) if t == "f32" else fn(v)
        t = the_type(ins)
        if t in ("f16", "bf16", "f16x2", "bf16x2"):
            raise unmodelled(ins, f"type .{t}")
        return _unary_float(ins, b, f)
    return factory


# approximate vs hardware: the float64 function rounded once to f32 (fidelity.py)
op("rsqrt")(_approx(lambda v: 1.0 / np.sqrt(v)))
op("ex2")(_approx(np.exp2))
op("lg2")(_approx(np.log2))
op("sin")(_approx(np.sin))
op("cos")(_approx(np.cos))
op("tanh")(_approx(np.tanh))


# --- min / max / abs / neg / copysign / testp -------------------------------------------------------

def _minmax(is_max):
    def factory(ins, b):
        t = the_type(ins)
        nan = "NaN" in ins.mods
        xorsign = "xorsign" in ins.mods
        ftz = "ftz" in ins.mods
        fmt = _split(t)

        def compute(vals):
            a, c = _in(vals[0], fmt, ftz), _in(vals[1], fmt, ftz)
            if xorsign:
                sign = np.signbit(a) ^ np.signbit(c)
                a, c = np.abs(a), np.abs(c)
            # -0 < +0; one NaN: the other operand (unless .NaN); both NaN: canonical NaN
            lt = (a < c) | ((a == c) & np.signbit(a) & ~np.signbit(c))
            pick_a = ~lt if is_max else lt
            pick_a = pick_a | ((a == c) & (np.signbit(a) == np.signbit(c)))
            r = np.where(pick_a, a, c)
            an, cn = np.isnan(a), np.isnan(c)
            r = np.where(an & ~cn, c, np.where(cn & ~an, a, r))
            if nan:
                r = np.where(an | cn, np.nan, r)
            if xorsign:
                r = np.where(sign, -np.abs(r), np.abs(r))
            return finish(encode(r, fmt, "rn"), fmt, ftz, False)

        if t in PACKED:
            run, _ = _packed(ins, b, 2, compute)
            return run
        d = b.dst(ins, ins.args[0], t)
        x, y = b.src(ins, ins.args[1], t), b.src(ins, ins.args[2], t)
        return lambda m: d(compute([x(), y()]), m)
    return factory


FLOAT["min"] = _minmax(False)
FLOAT["max"] = _minmax(True)


def _signop(kind):
    def factory(ins, b):
        t = the_type(ins)
        n = T.size(t)
        U = T.UINT[n]
        ftz = "ftz" in ins.mods
        fmt = _split(t)
        sign = {"f64": 1 << 63, "f32": 1 << 31, "f16": 1 << 15, "bf16": 1 << 15}[fmt]
        if t in PACKED:
            sign = sign | (sign << 16)
        d = b.dst(ins, ins.args[0], t)
        x = b.src(ins, ins.args[1], t)

        def run(m):
            v = np.asarray(x())
            bits = v.view(U) if v.ndim else np.asarray(v).reshape(1).view(U)[0]
            if ftz and t == "f32":
                bits = F.ftz(v).view(U) if v.ndim else np.asarray(F.ftz(v)).reshape(1).view(U)[0]
            r = (bits & U(~sign & ((1 << 8 * n) - 1))) if kind == "abs" else (bits ^ U(sign))
            d(np.asarray(r).view(T.dtype(t)), m)
        return run
    return factory


FLOAT["abs"] = _signop("abs")
FLOAT["neg"] = _signop("neg")


@op("copysign")
def copysign(ins, b):
    t = the_type(ins)
    d = b.dst(ins, ins.args[0], t)
    x, y = b.src(ins, ins.args[1], t), b.src(ins, ins.args[2], t)
    U = T.UINT[T.size(t)]
    sign = U(1 << (8 * T.size(t) - 1))
    # copysign d, a, b: the magnitude of b with the sign of a
    return lambda m: d(((np.asarray(y()).view(U) & ~sign) | (np.asarray(x()).view(U) & sign)).view(T.dtype(t)), m)


@op("testp")
def testp(ins, b):
    t = the_type(ins)
    what = [m for m in ins.mods if m in ("finite", "infinite", "number", "notanumber", "normal", "subnormal")]
    if not what:
        raise unmodelled(ins)
    d = b.dst(ins, ins.args[0], "pred")
    x = b.src(ins, ins.args[1], t)
    tiny = np.finfo(T.dtype(t)).tiny

    def run(m):
        v = np.asarray(x())
        a = np.abs(v)
        r = {"finite": np.isfinite(v), "infinite": np.isinf(v), "number": ~np.isnan(v),
             "notanumber": np.isnan(v), "normal": np.isfinite(v) & (a >= tiny),
             "subnormal": (a < tiny) & (a != 0)}[what[0]]
        d(r, m)
    return run
