"""Typed buffer accesses: MTBUF (tbuffer_*, typed by the instruction's FORMAT field) and buffer_*_format_*
(typed by the V#), addressed and range-checked like MUBUF (mubuf.py).

Formats: on gfx11/gfx12 the unified FORMAT number of the generated table (LLVM's BUF_FMT_* names,
`Table.buf_format`); on gfx942 the GFX9 pair DFMT (FORMAT[3:0]: 1 = 8, 2 = 16, 3 = 8_8, 4 = 32,
5 = 16_16, 6 = 10_11_11, 9 = 2_10_10_10, 10 = 8_8_8_8, 11 = 32_32, 12 = 16_16_16_16, 13 = 32_32_32,
14 = 32_32_32_32) and NFMT (FORMAT[6:4]: 0 UNORM, 1 SNORM, 2 USCALED, 3 SSCALED, 4 UINT, 5 SINT, 7 FLOAT;
LLVM's SIDefines.h). Modelled: formats whose components are all 8, 16 or 32 bits (component c at byte
c * size), and loads of the packed 10_11_11_FLOAT and 2_10_10_10 (`_PACKED`: bit fields of one dword; the
11- and 10-bit floats are f16 without a sign bit, widened exactly). Loads (RDNA3 ISA guide, "Buffer
Instructions": data-format conversion):
UINT zero-extends, SINT sign-extends, 16-bit FLOAT converts exactly to f32 (NaNs quieted, payload kept),
UNORM gives v / (2^n - 1), SNORM max(v / (2^(n-1) - 1), -1.0) (the most negative code is -1.0, as
-(2^(n-1) - 1) is), USCALED / SSCALED the integer as f32 (exact); the quotients are rounded once to
nearest even (DECISION: the guide gives the formula, not the rounding; to confirm on hardware).
Components the instruction reads past the format's get 0 (x, y, z) or 1 (w; 1.0 for float results).
Stores write the components both have, converted from the VGPR to the format by `_encode` (see there:
the D3D11 functional spec's conversion rules; the ISA guides give none). Range checks: the element as a
whole (`_element_in_range`: "all or nothing"). Out of range reads 0 and is not written.
d16 forms hold a component in each 16-bit half (x, z low; y, w high; d16_hi: x high): loads convert to
16 bits (`_convert`), stores take the half (`_from_d16`); a half no component lands in keeps its bits.
Not modelled (IllegalInstruction naming them): the packed 11_11_10 and 10_10_10_2, stores to packed formats,
d16 with 32-bit integer formats, V# DST_SEL other than X, Y, Z, W, tfe.
"""
from __future__ import annotations

import dataclasses
import functools
import re

import numpy as np

from gputwin.emu.amd import access
from gputwin.emu.amd.mubuf import GFX9, GFX11, _access, _Addr
from gputwin.emu.amd.valu.fp import F16, F32, quiet, round_f64, to_f64
from gputwin.errors import IllegalInstruction

U32, U64 = np.uint32, np.uint64
_COMPS = {"x": 1, "xy": 2, "xyz": 3, "xyzw": 4}


_GFX9_DFMT = {1: "8", 2: "16", 3: "8_8", 4: "32", 5: "16_16", 6: "10_11_11", 7: "11_11_10", 8: "10_10_10_2",
              9: "2_10_10_10", 10: "8_8_8_8", 11: "32_32", 12: "16_16_16_16", 13: "32_32_32", 14: "32_32_32_32"}
_GFX9_NFMT = {0: "UNORM", 1: "SNORM", 2: "USCALED", 3: "SSCALED", 4: "UINT", 5: "SINT", 7: "FLOAT"}
_KINDS = "UINT|SINT|FLOAT|UNORM|SNORM|USCALED|SSCALED"


@functools.cache
def _format_name(value: int, gfx9: bool) -> str:
    if gfx9:
        dfmt, nfmt = value & 0xF, value >> 4
        return f"BUF_FMT_{_GFX9_DFMT.get(dfmt, f'dfmt{dfmt}')}_{_GFX9_NFMT.get(nfmt, f'nfmt{nfmt}')}"
    from gputwin.emu.amd.isa.table import load
    if value == 1:
        return "BUF_FMT_8_UNORM"                                   # the default LLVM does not print
    return load("gfx1100").buf_format.get(value, "").strip("[]") or str(value)


@dataclasses.dataclass(frozen=True)
class _Layout:
    """A format's components: for each, the bytes read (offset in the element, count) and its bit field there."""
    kind: str
    fields: tuple[tuple[int, int, int, int], ...]      # (byte offset, bytes, bit shift, bits)
    packed: bool


# Packed formats, their fields from the low bits up. The names list fields from the high bits: Mesa's
# ac_translate_buffer_dataformat gives R11G11B10_FLOAT (R in the low bits) as 10_11_11 and R10G10B10A2 as
# 2_10_10_10. 11_11_10 and 10_10_10_2 have no such source and are not modelled.
_PACKED = {"10_11_11": (11, 11, 10), "2_10_10_10": (10, 10, 10, 2)}


@functools.cache
def _format(value: int, gfx9: bool = False):
    """(its _Layout, or None when it is not one of the modelled formats; its name)."""
    name = _format_name(value, gfx9)
    m = re.fullmatch(rf"BUF_FMT_((?:\d+_)+)({_KINDS})", name)
    if m is None:
        return None, name
    digits, kind = m.group(1).rstrip("_"), m.group(2)
    if digits in _PACKED:
        if (kind == "FLOAT") != (digits == "10_11_11"):
            return None, name
        widths = _PACKED[digits]
        shifts = np.cumsum((0,) + widths[:-1])
        return _Layout(kind, tuple((0, 4, int(sh), w) for sh, w in zip(shifts, widths)), True), name
    bits = [int(b) for b in digits.split("_")]
    if len(set(bits)) != 1 or bits[0] not in (8, 16, 32) or kind == "FLOAT" and bits[0] == 8 or \
            bits[0] == 32 and kind not in ("UINT", "SINT", "FLOAT"):
        return None, name
    size = bits[0] // 8
    return _Layout(kind, tuple((c * size, size, 0, bits[0]) for c in range(len(bits))), False), name


# Every spelling of the typed forms: gfx11/gfx12 `*_d16_format_*`, `*_d16_hi_format_x`; GFX9 `*_format_d16_*`.
_NAME = re.compile(r"t?buffer_(load|store)_(format|d16_format|d16_hi_format|format_d16|format_d16_hi)_(x|xy|xyz|xyzw)")


@dataclasses.dataclass(frozen=True)
class _Form:
    """What the mnemonic says: load or store, how many components, and where they sit in the VGPRs."""
    kind: str
    comps: int
    d16: bool           # 16 bits a component, two per VGPR (x, z low halves; y, w high halves)
    hi: bool            # d16_hi: the one component in the high half


def _form(op: str) -> _Form | None:
    m = _NAME.fullmatch(op)
    return None if m is None else _Form(m[1], _COMPS[m[3]], "d16" in m[2], "hi" in m[2])


def build(inst, rules: str = GFX11):
    """tbuffer_*: the format is the instruction's."""
    form = _form(inst.op)
    spec = _checked(inst, form, int(inst.extra.get("format", 0)), rules == GFX9)
    return _build(inst, form, lambda g: [(spec, None)], rules)


_IDENTITY_DST_SEL = 4 | 5 << 3 | 6 << 6 | 7 << 9     # V# DST_SEL_X..W = X, Y, Z, W


def build_buffer_format(inst, rules: str = GFX11):
    """buffer_load/store_(d16_)format_*: the format is the V#'s, one per wave: gfx11 and gfx12 FORMAT [113:108]
    (6 bits: SQ_BUF_RSRC_WORD3_GFX11 / _GFX12 in ROCR's registers.h, where [116:114] is reserved on
    both); GFX9 NUM_FORMAT [110:108], DATA_FORMAT [114:111]. DST_SEL other than X, Y, Z, W is not modelled."""
    form = _form(inst.op)
    if form is None:
        raise IllegalInstruction(f"{inst.op} is not modelled (docs: gputwin/emu/amd/mtbuf.py)")
    rsrc = inst.operands["srsrc"].index
    gfx9 = rules == GFX9

    def formats(g):
        w3 = g.sgpr(rsrc + 3).astype(np.int64)
        if form.kind == "load" and ((w3 & 0xFFF) != _IDENTITY_DST_SEL).any():
            raise IllegalInstruction(f"{inst.op}: V# DST_SEL {int(w3[0] & 0xFFF):#x} other than X, Y, Z, W is not "
                                     f"modelled")
        value = ((w3 >> 15) & 0xF) | ((w3 >> 12) & 7) << 4 if gfx9 else (w3 >> 12) & 0x3F
        return [(_checked(inst, form, int(v), gfx9), value == v) for v in np.unique(value)]
    return _build(inst, form, formats, rules)


def _checked(inst, form, value: int, gfx9: bool):
    spec, name = _format(value, gfx9)
    if form is None or spec is None:
        raise IllegalInstruction(f"{inst.op} with format {name} is not modelled (docs: gputwin/emu/amd/mtbuf.py)")
    if form.d16 and spec.fields[0][3] == 32 and spec.kind != "FLOAT":
        raise IllegalInstruction(f"{inst.op}: d16 with the 32-bit integer format {name} is not modelled (narrowing "
                                 f"or widening to 16 bits is not documented)")
    if form.kind == "store" and spec.packed:
        raise IllegalInstruction(f"{inst.op}: stores to the packed format {name} are not modelled")
    return spec


def _build(inst, form, formats, rules: str):
    if inst.extra.get("tfe"):
        raise IllegalInstruction(f"{inst.op} with tfe (texture fail enable) is not modelled")
    return (_load if form.kind == "load" else _store)(inst, _Addr(inst, rules), formats, form)


def _convert(raw, bits: int, kind: str, d16: bool):
    """A loaded component of `bits` bits as the VGPR (d16: the 16-bit half) receives it. d16 (DECISION, RDNA3
    guide: "data returned is converted to 16 bits"): integers as 16-bit integers, 16-bit floats unchanged,
    other float results rounded once to f16, nearest even (overflow to inf)."""
    sh = U32(32 - bits)
    signed = ((raw << sh).view(np.int32) >> np.int32(32 - bits))
    if kind in ("UINT", "SINT"):
        val = signed.view(U32) if kind == "SINT" and bits < 32 else raw
        return val & U32(0xFFFF) if d16 else val
    if kind == "FLOAT":
        if bits == 32:
            return round_f64(to_f64(raw, F32), F16).astype(U32) if d16 else raw
        raw = raw << U32(16 - bits - 1) if bits < 16 else raw    # 11/10-bit: f16 without the sign bit (5-bit exponent)
        return raw if d16 else _f16_to_f32(raw)
    top = float((1 << (bits - 1)) - 1)                            # 2^(n-1) - 1
    # float64 quotients round to f32 (f16) correctly: v / (2^n - 1) never lies within 2^-53 of a midpoint
    value = {"UNORM": lambda: raw / (2.0 * top + 1.0), "SNORM": lambda: np.maximum(signed / top, -1.0),
             "USCALED": lambda: raw.astype(np.float64), "SSCALED": lambda: signed.astype(np.float64)}[kind]()
    return round_f64(value, F16).astype(U32) if d16 else value.astype(np.float32).view(U32)


def _f16_to_f32(h):
    """f16 bits (in uint32) -> f32 bits, exact; NaNs quieted, payload kept."""
    with np.errstate(invalid="ignore"):
        f = h.astype(np.uint16).view(np.float16).astype(np.float32).view(U32)
    return quiet(f, F32)


def _slot(form, c: int) -> tuple[int, int]:
    """(VGPR offset, bit shift) of component c."""
    if not form.d16:
        return c, 0
    return c // 2, 16 if form.hi or c % 2 else 0


def _load(inst, addr, formats, form):
    dst = inst.operands["vdst"].index
    half = U32(0xFFFF if form.d16 else 0xFFFFFFFF)

    def h(g):
        if g.exec_count == 0:
            return
        act_all = g.exec.reshape(-1)
        address, check = addr.lanes(g)
        out = [np.zeros(act_all.size, U32) for _ in range(form.comps)]
        for layout, waves in formats(g):
            kind = layout.kind
            lanes = None if waves is None else np.repeat(waves, g.lanes)
            act = act_all if lanes is None else act_all & lanes
            one = U32(1) if kind in ("UINT", "SINT") else U32(0x3C00 if form.d16 else 0x3F800000)
            sel = act & _element_in_range(addr, check, layout, form.comps)
            for c in range(form.comps):
                data = np.zeros(act.size, U32)
                if c >= len(layout.fields):
                    data[:] = one if c == 3 else U32(0)
                else:
                    at, size, shift, bits = layout.fields[c]
                    if sel.any():
                        for buf, offs, sub in _access(g, address + U64(at), sel, size, False):
                            part = access.gather(buf, offs, 1)[:, 0] if size == 4 else \
                                access.gather_bytes(buf, offs, size)
                            idx = np.flatnonzero(sel)
                            data[idx if sub is None else idx[sub]] = part
                    if layout.packed:
                        data = (data >> U32(shift)) & U32((1 << bits) - 1)
                    data = _convert(data, bits, kind, form.d16)
                out[c] = data if lanes is None else np.where(lanes, data, out[c])
        # d16: a half no component lands in keeps its bits (as the D16 loads of vmem.py do)
        regs = {}
        for c in range(form.comps):
            reg, shift = _slot(form, c)
            keep, val = regs.get(reg, (~U32(0), U32(0)))
            regs[reg] = (keep & ~(half << U32(shift)), val | out[c] << U32(shift))
        for reg, (keep, val) in regs.items():
            if keep:
                val = val | g.vgpr(dst + reg).reshape(-1) & keep
            g.set_vgpr(dst + reg, val.reshape(g.n, g.lanes))
    return h


def _encode(val, size: int, kind: str):
    """The bits a store writes for one component: the VGPR value converted to the format, zero-extended.
    The ISA guides give no store conversion; these are the D3D11 functional spec's (3.2.3, data conversion),
    with results exact, as we read it (DECISION: to confirm on hardware):
    UINT / SINT saturate to the narrower range (a VGPR is unsigned for UINT, signed for SINT).
    16-bit FLOAT: f32 -> f16 rounded to nearest even, overflow to +-inf, NaN stays NaN (quiet, payload's top bits).
    UNORM: NaN -> 0, clamp to [0, 1], times 2^n - 1; SNORM: NaN -> 0, clamp to [-1, 1], times 2^(n-1) - 1;
    then to the nearest integer. The product is exact in float64 and can be a tie only at +-0.5, where
    D3D's round-half-away and round-half-even agree. USCALED / SSCALED (not in D3D; Vulkan's SCALED vertex
    formats): NaN -> 0, the float clamped to the format's integer range, rounded to nearest even."""
    if size == 4:
        return val
    n = 8 * size
    mask = U32((1 << n) - 1)
    if kind == "UINT":
        return np.minimum(val, mask)
    if kind == "SINT":
        lo, hi = -(1 << (n - 1)), (1 << (n - 1)) - 1
        return np.clip(val.view(np.int32), lo, hi).view(U32) & mask
    f = to_f64(val, F32)
    if kind == "FLOAT":
        return round_f64(f, F16).astype(U32)
    top = float((1 << (n - 1)) - 1)                               # 2^(n-1) - 1
    lo, hi, scale = {"UNORM": (0.0, 1.0, 2.0 * top + 1.0), "SNORM": (-1.0, 1.0, top),
                     "USCALED": (0.0, 2.0 * top + 1.0, 1.0), "SSCALED": (-top - 1.0, top, 1.0)}[kind]
    code = np.rint(np.clip(np.nan_to_num(f, nan=0.0), lo, hi) * scale)
    return code.astype(np.int64).astype(U32) & mask


def _from_d16(h, kind: str):
    """A d16 store's 16-bit half as the 32-bit VGPR value `_encode` takes (DECISION): integers extended by
    their sign, f16 widened exactly to f32, NaNs quieted (a 16-bit float format takes the half unchanged)."""
    if kind == "UINT":
        return h
    if kind == "SINT":
        return ((h << U32(16)).view(np.int32) >> np.int32(16)).view(U32)
    return _f16_to_f32(h)


def _store(inst, addr, formats, form):
    src = inst.operands["vdata"].index

    def h(g):
        if g.exec_count == 0:
            return
        act_all = g.exec.reshape(-1)
        address, check = addr.lanes(g)
        for layout, waves in formats(g):                         # (not packed: _checked refuses those)
            kind = layout.kind
            act = act_all if waves is None else act_all & np.repeat(waves, g.lanes)
            sel = act & _element_in_range(addr, check, layout, form.comps)
            if not sel.any():
                continue
            for c in range(min(form.comps, len(layout.fields))):
                at, size = layout.fields[c][:2]
                reg, shift = _slot(form, c)
                val = g.vgpr(src + reg).reshape(-1)[sel]
                if form.d16:
                    half = (val >> U32(shift)) & U32(0xFFFF)
                    val = half if kind == "FLOAT" and size == 2 else _encode(_from_d16(half, kind), size, kind)
                else:
                    val = _encode(val, size, kind)
                for buf, offs, sub in _access(g, address + U64(at), sel, size, True):
                    part = val if sub is None else val[sub]
                    if size == 4:
                        access.scatter(buf, offs, part[:, None])
                    else:
                        access.scatter_bytes(buf, offs, part, size)
    return h


def _element_in_range(addr, check, layout, comps: int):
    """Format instructions are range-checked "all or nothing" (RDNA3.5, RDNA4 and CDNA3 guides): on GFX9 the
    element's first byte decides (its raw / structured rule checks the start); on GFX11/GFX12 the element is
    out of range when any component the instruction moves is ("for typed-buffer, if any component of the
    thread is out of bounds, the whole thread is", RDNA4 guide)."""
    fields = layout.fields[:comps]
    if addr.rules == GFX9:
        return check(0, fields[0][1])
    ok = check(*fields[0][:2])
    for at, size, *_ in fields[1:]:
        ok = ok & check(at, size)
    return ok
