"""gfx12 VALU instructions that gfx11 lacks, as entries in the VALU table format (valu/table.py Op).

v_minimum / v_maximum (and their 3-input and chained forms) are IEEE-754-2019 minimum / maximum: any NaN
input gives a NaN. Which NaN, per the RDNA4 guide's pseudocode: a signalling NaN first (src0, then
src1), quieted; else a quiet NaN (src0, then src1) as it is.
The _num forms (renamed from gfx11's v_min / v_max) are minimumNumber / maximumNumber: a NaN input, quiet
or signalling, yields the other input; two NaNs yield src0 quieted (gfx11 without IEEE mode returned
src1 as it was). med3_num with any NaN input is min3_num, as on gfx11. In all of them -0 orders below +0.
VOPD halves v_dual_min_num / v_dual_max_num use these entries too.
The OCP fp8/bf8 conversions (v_cvt_f32_fp8, v_cvt_pk_fp8_f32, v_cvt_sr_bf8_f32 ...) are valu/fp8.py's.
v_s_exp/log/rcp/rsq/sqrt_f32 ("pseudo-scalar transcendentals", which clang emits for uniform values) are
the VALU transcendentals on a scalar source with an SGPR result, written for every wave whatever its EXEC
(like v_readfirstlane); the f16 forms raise: what fills the SGPR's high half is not documented.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.amd.valu import fp8
from gputwin.emu.amd.valu.fp import F16, F32, F64, Fmt, as_float, is_nan, is_snan
from gputwin.emu.amd.valu.table import Op
from gputwin.errors import IllegalInstruction


def _pick_nan(a, b, r, f: Fmt):
    """r, with NaN inputs propagated in the guide's priority order."""
    q = f.udt(f.quiet_bit)
    r = np.where(is_nan(b, f), b, r)
    r = np.where(is_nan(a, f), a, r)
    r = np.where(is_snan(b, f), b | q, r)
    return np.where(is_snan(a, f), a | q, r)


def _ieee_min(a, b, f: Fmt, want_max: bool):
    a, b = np.broadcast_arrays(a, b)
    fa, fb = as_float(a, f), as_float(b, f)
    with np.errstate(invalid="ignore"):
        # a < b, with -0 below +0 (equal values otherwise: either bit pattern is the same number)
        lt = (fa < fb) | ((fa == fb) & ((a & f.sign) > (b & f.sign)))
        gt = (fa > fb) | ((fa == fb) & ((a & f.sign) < (b & f.sign)))
    r = np.where(gt if want_max else lt, a, b)
    return _pick_nan(a, b, r, f)


def _num(a, b, f: Fmt, want_max: bool):
    a, b = np.broadcast_arrays(a, b)
    fa, fb = as_float(a, f), as_float(b, f)
    with np.errstate(invalid="ignore"):
        lt = (fa < fb) | ((fa == fb) & ((a & f.sign) > (b & f.sign)))
        gt = (fa > fb) | ((fa == fb) & ((a & f.sign) < (b & f.sign)))
    na, nb = is_nan(a, f), is_nan(b, f)
    r = np.where(gt if want_max else lt, a, b)
    r = np.where(nb, a, r)
    r = np.where(na, b, r)
    return np.where(na & nb, a | f.udt(f.quiet_bit), r)


def _num_ops(f: Fmt) -> dict[str, Op]:
    n = f.name
    two, three = (n, n), (n, n, n)
    mn = lambda a, b: _num(a, b, f, False)   # noqa: E731
    mx = lambda a, b: _num(a, b, f, True)    # noqa: E731

    def med3(c, a, b, d):
        any_nan = is_nan(a, f) | is_nan(b, f) | is_nan(d, f)
        return np.where(any_nan, mn(mn(a, b), d), mx(mn(a, b), mn(mx(a, b), d)))
    ops = {f"v_min_num_{n}": Op(lambda c, a, b: mn(a, b), two, n, fmt=None, nan=False),
           f"v_max_num_{n}": Op(lambda c, a, b: mx(a, b), two, n, fmt=None, nan=False)}
    if f is not F64:
        ops.update({f"v_min3_num_{n}": Op(lambda c, a, b, d: mn(mn(a, b), d), three, n, fmt=None, nan=False),
                    f"v_max3_num_{n}": Op(lambda c, a, b, d: mx(mx(a, b), d), three, n, fmt=None, nan=False),
                    f"v_minmax_num_{n}": Op(lambda c, a, b, d: mx(mn(a, b), d), three, n, fmt=None, nan=False),
                    f"v_maxmin_num_{n}": Op(lambda c, a, b, d: mn(mx(a, b), d), three, n, fmt=None, nan=False),
                    f"v_med3_num_{n}": Op(med3, three, n, fmt=None, nan=False)})
    return ops


def _two(f: Fmt, want_max: bool):
    return lambda c, a, b: _ieee_min(a, b, f, want_max)


def _three(f: Fmt, first_max: bool, second_max: bool):
    return lambda c, a, b, d: _ieee_min(_ieee_min(a, b, f, first_max), d, f, second_max)


def _table() -> dict[str, Op]:
    ops = {}
    for f in (F16, F32, F64):
        n = f.name
        ops.update(_num_ops(f))
        ops[f"v_minimum_{n}"] = Op(_two(f, False), (n, n), n, fmt=None, nan=False)
        ops[f"v_maximum_{n}"] = Op(_two(f, True), (n, n), n, fmt=None, nan=False)
        if f is F64:
            continue
        three = (n, n, n)
        ops[f"v_minimum3_{n}"] = Op(_three(f, False, False), three, n, fmt=None, nan=False)
        ops[f"v_maximum3_{n}"] = Op(_three(f, True, True), three, n, fmt=None, nan=False)
        ops[f"v_minimummaximum_{n}"] = Op(_three(f, False, True), three, n, fmt=None, nan=False)
        ops[f"v_maximumminimum_{n}"] = Op(_three(f, True, False), three, n, fmt=None, nan=False)
    return ops


OPS = _table()
OPS.update(fp8.rdna4_ops())          # OCP fp8/bf8 conversions (valu/fp8.py)
FP8_WIDEN_PACKED = ("v_cvt_pk_f32_fp8", "v_cvt_pk_f32_bf8")
PSEUDO_SCALAR = {f"v_s_{n}_f32": f"v_{n}_f32" for n in ("exp", "log", "rcp", "rsq", "sqrt")}


def _pseudo_scalar(inst):
    from gputwin.emu.amd import valu
    from gputwin.emu.amd.valu.fp import Mode
    from gputwin.emu.amd.valu.table import Ctx, finish_float

    op = valu.OPS[PSEUDO_SCALAR[inst.op]]
    if inst.operands["src0"].kind == "vgpr":
        raise IllegalInstruction(f"{inst.op}: a VGPR source is not a scalar")
    specs = valu._plan(inst, op)
    sdst = inst.operands["sdst"].index

    def h(g):
        srcs, _ = valu._fetch(g, inst, op, specs)
        mode = Mode.of(g.mode)
        rmode = mode.round(op.fmt)
        if rmode and not op.directed:
            mode.need_rne(op.fmt, inst.op)
        res = op.fn(Ctx(g, inst, mode, rmode, inst.clamp, None, g.exec), *srcs)
        res = finish_float(op, inst, mode, res, srcs)
        g.set_sgpr(sdst, np.broadcast_to(res, (g.n, 1))[:, 0].astype(np.uint32))
    return h


def build(inst):
    """A handler for a gfx12-only VALU instruction in OPS (or a VOPD with such a half), else None (the
    shared VALU path runs it)."""
    from gputwin.emu.amd import valu
    from gputwin.emu.amd.valu import vopd
    if inst.encoding == "VOPD":
        if not any(vopd.half_name(h.op) in OPS for h in inst.vopd or ()):
            return None
        lookup = lambda name: OPS.get(name) or valu.OPS.get(name)   # noqa: E731
        return lambda g: vopd.execute(g, inst, lookup, valu._fetch, valu._run_op)
    if inst.op in PSEUDO_SCALAR:
        return _pseudo_scalar(inst)
    if inst.op.startswith("v_s_"):
        raise IllegalInstruction(f"{inst.op}: f16 pseudo-scalar results are not modelled")
    op = OPS.get(inst.op)
    if op is None:
        return None
    if inst.op in FP8_WIDEN_PACKED and (inst.clamp or inst.omod):
        raise IllegalInstruction(f"{inst.op}: clamp / omod on a packed pair of f32 results are not modelled")
    specs = valu._plan(inst, op)
    return lambda g: valu._run_op(g, inst, op, *valu._fetch(g, inst, op, specs))
