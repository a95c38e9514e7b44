"""VOPC: v_cmp_* (lane mask to VCC or SDST) and v_cmpx_* (lane mask to EXEC), incl. v_cmp_class.

Inactive lanes read as 0 in the written mask. Float predicates follow IEEE ordering: the "n" forms
(nge, nlg, ngt, nle, neq, nlt) and "u" are true for unordered (NaN) inputs, the others false.
"""
from __future__ import annotations

import numpy as np

from .fp import F16, F32, F64, Fmt, as_float, is_denorm, is_inf, is_nan, is_snan, is_zero
from .intops import s
from .table import Op

_FLOAT = {
    "f": lambda a, b: np.zeros(np.broadcast(a, b).shape, bool),
    "lt": np.less, "eq": np.equal, "le": np.less_equal, "gt": np.greater,
    "lg": lambda a, b: np.less(a, b) | np.greater(a, b), "ge": np.greater_equal,
    "o": lambda a, b: ~np.isnan(a) & ~np.isnan(b), "u": lambda a, b: np.isnan(a) | np.isnan(b),
    "nge": lambda a, b: ~np.greater_equal(a, b), "nlg": lambda a, b: ~(np.less(a, b) | np.greater(a, b)),
    "ngt": lambda a, b: ~np.greater(a, b), "nle": lambda a, b: ~np.less_equal(a, b),
    "neq": lambda a, b: ~np.equal(a, b), "nlt": lambda a, b: ~np.less(a, b),
    "t": lambda a, b: np.ones(np.broadcast(a, b).shape, bool),
}
_INT = {
    "f": _FLOAT["f"], "lt": np.less, "eq": np.equal, "le": np.less_equal, "gt": np.greater,
    "ne": np.not_equal, "ge": np.greater_equal, "t": _FLOAT["t"],
}
_INT_TYPES = {"i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64,
              "u64": np.uint64}


def _fcmp(f: Fmt, pred):
    def fn(c, a, b):
        with np.errstate(all="ignore"):
            return np.asarray(pred(as_float(a, f), as_float(b, f)))
    return fn


def _icmp(dt, pred):
    return lambda c, a, b: np.asarray(pred(s(a, dt), s(b, dt)))


def _class(f: Fmt):
    """S1 bit: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf."""
    def fn(c, a, m):
        a, m = np.broadcast_arrays(a, np.asarray(m).astype(np.uint32))
        neg = (a & f.sign) != 0
        nan, snan, inf, zero, den = is_nan(a, f), is_snan(a, f), is_inf(a, f), is_zero(a, f), is_denorm(a, f)
        normal = ~(nan | inf | zero | den)
        cls = np.select([snan, nan, inf & neg, normal & neg, den & neg, zero & neg, zero, den, normal],
                        [0, 1, 2, 3, 4, 5, 6, 7, 8], 9)
        return ((m >> cls.astype(np.uint32)) & np.uint32(1)) == 1
    return fn


def _table():
    ops = {}
    for f in (F16, F32, F64):
        n = f.name
        for p, pred in _FLOAT.items():
            for x, out in (("cmp", "mask"), ("cmpx", "exec")):
                ops[f"v_{x}_{p}_{n}"] = Op(_fcmp(f, pred), (n, n), None, out=out, nan=False)
        cls_t = "u16" if f is F16 else "u32"
        ops[f"v_cmp_class_{n}"] = Op(_class(f), (n, cls_t), None, out="mask", flush=False, nan=False)
        ops[f"v_cmpx_class_{n}"] = Op(_class(f), (n, cls_t), None, out="exec", flush=False, nan=False)
    for t, dt in _INT_TYPES.items():
        for p, pred in _INT.items():
            for x, out in (("cmp", "mask"), ("cmpx", "exec")):
                ops[f"v_{x}_{p}_{t}"] = Op(_icmp(dt, pred), (t, t), None, out=out)
    return ops


OPS = _table()
