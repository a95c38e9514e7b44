"""VOP3P: packed 16-bit math (v_pk_*), v_fma_mix*, dot products, and WMMA (in wmma.py).

Packed operand rules (RDNA3 ISA guide, VOP3P): for source i the low result half reads the half chosen
by op_sel[i] and the high result half the half chosen by op_sel_hi[i]; neg applies to the low half,
neg_hi to the high half (float ops only). On an f16/bf16 operand an inline constant is its 16-bit encoding
in the low half with a zero high half (clang-19 emits (x, y) + (2.0, 0.0) as `v_pk_add_f16 v, v, 2.0`); on
a 16-bit integer operand it is the 32-bit constant: integers sign-extended (clang emits (x, y) + (-1, -1) as
`v_pk_add_u16 v, v, -1` and (3, 3) as `... 3 op_sel_hi:[1,0]`), float codes the f32 pattern (hardware-
recorded: v_pk_add_u16 of (5, 3) and 2.0 with op_sel_hi:[1,1] gives (5, 0x4003)). A literal is its 32 bits. v_pk_fmac_f16 / v_dot2acc_f32_f16 are VOP2: no op_sel, the
destination is the accumulator. For v_fma_mix*, op_sel_hi[i] says f16 (1) or f32 (0) and neg_hi is
abs. Each half of a packed op runs the scalar 16-bit table entry (same NaN/denormal/clamp rules).
DPP (v_fma_mix*, v_dot2_f32_f16: the VOP3P entries LLVM gives a DPP form) moves src0's 32 bits across
lanes first (dpp.py), then op_sel picks halves as usual; lanes DPP leaves invalid do not write.
"""
from __future__ import annotations

import numpy as np

from gputwin.errors import IllegalInstruction

from . import dpp, wmma
from .arith import OPS as ARITH
from .fp import F16, F32, BF16, Mode, fma_ro, round_f64, to_f64, apply_clamp, fix_nan, as_bits, has_inf, saturate_f16
from .intops import OPS as INT
from .operands import inline_const, read, write_vdst
from .table import Ctx, finish_float

U16, U32 = np.uint16, np.uint32

# packed mnemonic -> scalar 16-bit table entry applied to each half
HALF = {
    "v_pk_add_f16": ARITH["v_add_f16"], "v_pk_mul_f16": ARITH["v_mul_f16"], "v_pk_fma_f16": ARITH["v_fma_f16"],
    "v_pk_min_f16": ARITH["v_min_f16"], "v_pk_max_f16": ARITH["v_max_f16"], "v_pk_fmac_f16": ARITH["v_fma_f16"],
    "v_pk_add_u16": INT["v_add_nc_u16"], "v_pk_add_i16": INT["v_add_nc_i16"],
    "v_pk_sub_u16": INT["v_sub_nc_u16"], "v_pk_sub_i16": INT["v_sub_nc_i16"],
    "v_pk_mul_lo_u16": INT["v_mul_lo_u16"], "v_pk_lshlrev_b16": INT["v_lshlrev_b16"],
    "v_pk_lshrrev_b16": INT["v_lshrrev_b16"], "v_pk_ashrrev_i16": INT["v_ashrrev_i16"],
    "v_pk_min_i16": INT["v_min_i16"], "v_pk_max_i16": INT["v_max_i16"], "v_pk_min_u16": INT["v_min_u16"],
    "v_pk_max_u16": INT["v_max_u16"], "v_pk_mad_u16": INT["v_mad_u16"], "v_pk_mad_i16": INT["v_mad_i16"],
}
_VOP2_ACC = ("v_pk_fmac_f16", "v_dot2acc_f32_f16")


def _src32(group, inst, role: str, half_type: str | None, moved0=None):
    """32 bits of a packed source; a 16-bit inline constant sits in the low half, the high half is 0.
    moved0: src0 after DPP lane movement."""
    if moved0 is not None and role == "src0":
        return moved0
    op = inst.operands.get(role)
    if op is None and role == "src2" and inst.op in _VOP2_ACC:
        role = "vdst"
        op = inst.operands[role]
    if op is not None and op.kind == "const" and half_type in ("f16", "bf16"):
        return np.asarray(U32(inline_const(op.index, half_type)))
    if op is not None and op.kind == "const" and half_type in ("i16", "u16", "b16"):
        return np.asarray(U32(inline_const(op.index, "b32")))   # 32 bits: sign-extended, or the f32 pattern
    return np.asarray(read(group, inst, role, half_type if half_type in ("f32", "u32", "i32") else "b32"))


def _halves(group, inst, i: int, typ: str, moved0=None):
    """(lo, hi) 16-bit halves of source i after op_sel / op_sel_hi and neg / neg_hi."""
    v = _src32(group, inst, f"src{i}", typ, moved0)
    vop2 = inst.encoding == "VOP2"
    sel_lo = False if vop2 else inst.op_sel[i]
    sel_hi = True if vop2 else inst.op_sel_hi[i]
    lo = ((v >> U32(16)) if sel_lo else v).astype(U16)
    hi = ((v >> U32(16)) if sel_hi else v).astype(U16)
    if typ in ("f16", "bf16"):
        if inst.neg[i]:
            lo = lo ^ U16(0x8000)
        if inst.neg_hi[i]:
            hi = hi ^ U16(0x8000)
    return lo, hi


def _pk_half(group, inst, op, mode: Mode, mask):
    ctx = Ctx(group, inst, mode, 0, inst.clamp, None, group.exec)
    los, his = [], []
    for i, typ in enumerate(op.srcs):
        lo, hi = _halves(group, inst, i, typ)
        if typ == "f16":
            lo, hi = mode.flush_in(lo, F16), mode.flush_in(hi, F16)
        los.append(lo)
        his.append(hi)
    out = []
    for srcs in (los, his):
        r = np.asarray(op.fn(ctx, *srcs))
        if op.dst == "f16":
            r = finish_float(op, inst, mode, r, srcs)
        out.append(r.astype(U32))
    write_vdst(group, inst, "b32", out[0] | (out[1] << U32(16)), mask)


def _mix_src(group, inst, i: int, mode: Mode, moved0=None):
    """fma_mix source i as float64: f16 half (op_sel_hi=1, half by op_sel) or f32; neg_hi is abs."""
    if inst.op_sel_hi[i]:
        v = _src32(group, inst, f"src{i}", "f16", moved0)
        h = ((v >> U32(16)) if inst.op_sel[i] else v).astype(U16)
        if inst.neg_hi[i]:
            h = h & U16(0x7FFF)
        if inst.neg[i]:
            h = h ^ U16(0x8000)
        return to_f64(mode.flush_in(h, F16), F16), h, F16
    v = _src32(group, inst, f"src{i}", "f32", moved0).astype(U32)
    if inst.neg_hi[i]:
        v = v & U32(0x7FFFFFFF)
    if inst.neg[i]:
        v = v ^ U32(0x80000000)
    v = mode.flush_in(v, F32)
    return to_f64(v, F32), v, F32


def _fma_mix(group, inst, mode: Mode, mask, moved0=None):
    xs = [_mix_src(group, inst, i, mode, moved0) for i in range(3)]
    x = fma_ro(xs[0][0], xs[1][0], xs[2][0])
    out_f = F32 if inst.op == "v_fma_mix_f32" else F16
    mode.need_rne(out_f, inst.op)
    r = as_bits(x.astype(np.float32), F32) if out_f is F32 else round_f64(x, F16, 0)
    if np.isnan(x).any():   # NaN sources keep their payload (converted to the output format)
        nan_src = [round_f64(s, out_f, 0) if out_f is not F32 else as_bits(s.astype(np.float32), F32)
                   for s, _, _ in xs]
        r = fix_nan(r, nan_src, out_f)
    r = mode.flush_out(r, out_f)
    if out_f is F16 and mode.fp16_ovfl:
        r = saturate_f16(r, has_inf([(b, f) for _, b, f in xs]))
    if inst.clamp:
        r = apply_clamp(r, out_f, mode)
    if out_f is F32:
        write_vdst(group, inst, "b32", r, mask)
        return
    old = group.vgpr(inst.operands["vdst"].index)
    hi = inst.op == "v_fma_mixhi_f16"
    new = (old & U32(0xFFFF)) | (r.astype(U32) << U32(16)) if hi else (old & U32(0xFFFF0000)) | r.astype(U32)
    write_vdst(group, inst, "b32", new, mask)


def _dot2_f32(ht):
    """D.f32 = S0.lo*S1.lo + S0.hi*S1.hi + S2.f32 (products exact; sums in float64, one final rounding:
    approximate vs hardware for sums that are inexact in float64)."""
    hf = F16 if ht == "f16" else BF16

    def fn(group, inst, mode: Mode, mask, moved0=None):
        mode.need_rne(F32, inst.op)
        a, b = _halves(group, inst, 0, ht, moved0), _halves(group, inst, 1, ht)
        c32 = _src32(group, inst, "src2", "f32").astype(U32)
        if hf is F16:
            a = tuple(mode.flush_in(x, F16) for x in a)
            b = tuple(mode.flush_in(x, F16) for x in b)
        c32 = mode.flush_in(c32, F32)
        with np.errstate(all="ignore"):
            x = to_f64(a[0], hf) * to_f64(b[0], hf) + to_f64(a[1], hf) * to_f64(b[1], hf) + to_f64(c32, F32)
        r = as_bits(x.astype(np.float32), F32)
        r = mode.flush_out(fix_nan(r, [c32], F32), F32)
        if inst.clamp:
            r = apply_clamp(r, F32, mode)
        write_vdst(group, inst, "b32", r, mask)
    return fn


def _dot_int(width: int, signed_flags: bool):
    """v_dot4 (8-bit) / v_dot8 (4-bit): S2 + sum of element products; iu forms take signedness of
    A and B from neg[0] / neg[1]; clamp saturates to the i32 (iu) or u32 range."""
    n, m = 32 // width, (1 << width) - 1

    def fn(group, inst, mode: Mode, mask, moved0=None):
        if moved0 is not None:
            raise IllegalInstruction(f"{inst.op}: DPP is not modelled for integer dot products")
        a = np.asarray(read(group, inst, "src0", "b32")).astype(np.int64)
        b = np.asarray(read(group, inst, "src1", "b32")).astype(np.int64)
        c = np.asarray(read(group, inst, "src2", "b32")).astype(np.int64)
        sa = signed_flags and inst.neg[0]
        sb = signed_flags and inst.neg[1]
        tot = c - ((c & (1 << 31)) << 1) if signed_flags else c
        for k in range(n):
            x, y = (a >> (width * k)) & m, (b >> (width * k)) & m
            if sa:
                x = x - ((x & (1 << (width - 1))) << 1)
            if sb:
                y = y - ((y & (1 << (width - 1))) << 1)
            tot = tot + x * y
        if inst.clamp:
            tot = np.clip(tot, -2 ** 31, 2 ** 31 - 1) if signed_flags else np.clip(tot, 0, 2 ** 32 - 1)
        write_vdst(group, inst, "b32", (tot & 0xFFFFFFFF).astype(U32), mask)
    return fn


WHOLE = {
    "v_fma_mix_f32": _fma_mix, "v_fma_mixlo_f16": _fma_mix, "v_fma_mixhi_f16": _fma_mix,
    "v_dot2_f32_f16": _dot2_f32("f16"), "v_dot2acc_f32_f16": _dot2_f32("f16"), "v_dot2_f32_bf16": _dot2_f32("bf16"),
    "v_dot4_i32_iu8": _dot_int(8, True), "v_dot4_u32_u8": _dot_int(8, False),
    "v_dot8_i32_iu4": _dot_int(4, True), "v_dot8_u32_u4": _dot_int(4, False),
}
OPS = set(HALF) | set(WHOLE) | set(wmma.OPS)


_DPP = ("v_fma_mix_f32", "v_fma_mixlo_f16", "v_fma_mixhi_f16", "v_dot2_f32_f16")


def execute(group, inst) -> None:
    mode = Mode.of(group.mode)
    mask = None                                  # EXEC (the WaveGroup fast path)
    if inst.dpp is not None:
        if inst.op not in _DPP or inst.operands["src0"].kind != "vgpr":
            raise IllegalInstruction(f"{inst.op}: DPP on this packed instruction is not modelled")
        moved0, write = dpp.apply(group, inst.dpp, read(group, inst, "src0", "b32"))
        WHOLE[inst.op](group, inst, mode, group.exec & write, moved0)
        return
    if inst.op in wmma.OPS:
        wmma.execute(group, inst, mode)
    elif inst.op in HALF:
        op = HALF[inst.op]
        if op.fmt is not None:
            mode.need_rne(op.fmt, inst.op)
        _pk_half(group, inst, op, mode, mask)
    else:
        WHOLE[inst.op](group, inst, mode, mask)
