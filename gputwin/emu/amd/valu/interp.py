"""VINTERP: parameter interpolation from VGPRs (the per-primitive P0/P10/P20 that lds_param_load put there).

RDNA3 / RDNA4 ISA guides ("Parameter Interpolation"): each quad shares its primitive's parameters, so two
sources read fixed lanes of the quad (a hard-wired DPP8), whatever EXEC says about those lanes:
- v_interp_p10_*:  D = fma(S0 from quad lane 1, S1, S2 from quad lane 0)   (tmp = P0 + I * P10)
- v_interp_p2_*:   D = fma(S0 from quad lane 2, S1, S2)                    (D = tmp + J * P20)
f32 forms compute in f32. The f16_f32 forms read S0 (and P10's S2) as the f16 half OPSEL picks; P10 writes
an f32, P2 an f16 into the half OPSEL[3] picks (the other half kept); _rtz forms round toward zero, the
others to nearest even. The FMA rounds once (the guide's fma). NEG negates a source (the selected half),
CLAMP clamps to [0, 1]; denormals follow MODE as for every VALU op; a NaN result is the first NaN source,
quieted, else the default NaN.
"""
from __future__ import annotations

import numpy as np

from gputwin.errors import IllegalInstruction

from .fp import F16, F32, Mode, apply_clamp, fma_ro, has_inf, is_nan, round_f64, saturate_f16, to_f64
from .operands import apply_mods, read, write_vdst

U32 = np.uint32


def _quad(v, lane: int):
    """Every lane gets `v` of lane (its quad's first lane + lane)."""
    v = np.asarray(v)
    if v.ndim < 2 or v.shape[1] == 1:
        return v                                   # scalars are the same in every lane
    return np.repeat(v[:, lane::4], 4, axis=1)


def build(inst):
    name = inst.op
    p10 = "_p10_" in name
    f16_in = "_f16_" in name
    dst = F32 if name.endswith("_f32") and not (f16_in and not p10) else F16
    rmode = 3 if "_rtz_" in name else 0
    typs = ("f16" if f16_in else "f32", "f32", "f16" if f16_in and p10 else "f32")
    for role in ("src0", "src2") if p10 else ("src0",):
        if inst.operands[role].kind != "vgpr":
            raise IllegalInstruction(f"{name}: {role} is read from another lane of the quad: it must be a VGPR")

    def h(group):
        mode = Mode.of(group.mode)
        xs, bits = [], []
        for i, (role, typ) in enumerate(zip(("src0", "src1", "src2"), typs)):
            v = read(group, inst, role, typ, bool(typ == "f16" and inst.op_sel[i]))
            if i == 0:
                v = _quad(v, 2 - p10)
            elif i == 2 and p10:
                v = _quad(v, 0)
            f = F16 if typ == "f16" else F32
            v = mode.flush_in(apply_mods(v, typ, False, inst.neg[i]), f)
            bits.append((v, f))
            xs.append(to_f64(v, f))
        res = round_f64(fma_ro(*xs), dst, rmode)
        res = _nan(res, bits, dst)
        res = mode.flush_out(res, dst)
        if dst is F16 and mode.fp16_ovfl:
            res = saturate_f16(res, has_inf(bits))
        if inst.clamp:
            res = apply_clamp(res, dst, mode)
        res = np.broadcast_to(res, (group.n, group.lanes))
        write_vdst(group, inst, "f32" if dst is F32 else "f16", res, None)
    return h


def _nan(res, bits, dst):
    """NaN results: the first NaN source (converted to the destination format, quieted), else default."""
    nan = is_nan(res, dst)
    if not nan.any():
        return res
    out = np.full(np.shape(res), dst.qnan, dst.udt)
    for v, f in reversed(bits):
        v = np.broadcast_to(v, np.shape(res))
        out = np.where(is_nan(v, f), round_f64(to_f64(v, f), dst, 0), out)
    return np.where(nan, out, res)
