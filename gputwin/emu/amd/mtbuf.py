"""MTBUF (gfx11/gfx12 tbuffer_load_format_* / tbuffer_store_format_*): buffer accesses typed by the
instruction's unified FORMAT field, addressed and range-checked like MUBUF (mubuf.py).

Format numbers are the generated table's (LLVM's BUF_FMT_* names, `Table.buf_format`). Modelled: formats
whose components are all 8, 16 or 32 bits of type UINT, SINT or FLOAT (16/32-bit). Component c of the
element sits at byte c * size. Loads (RDNA3 ISA guide, "Buffer Instructions": data-format conversion):
UINT zero-extends, SINT sign-extends, 16-bit FLOAT converts exactly to f32 (NaNs quieted, payload kept);
components the instruction reads past the format's get 0 (x, y, z) or 1 (w; 1.0 for FLOAT formats).
Stores write the components both have, 32-bit formats only (narrowing conversions are not documented
bit-exactly). Each component is range-checked on its own; out of range reads 0 and is not written.
Not modelled (IllegalInstruction): NORM/SCALED and packed (10_11_11, 2_10_10_10...) formats, d16 forms,
narrow stores, tfe.
"""
from __future__ import annotations

import functools
import re

import numpy as np

from gputwin.emu.amd import access
from gputwin.emu.amd.mubuf import _access, _Addr
from gputwin.emu.amd.valu.fp import F32, quiet
from gputwin.errors import IllegalInstruction

U32, U64 = np.uint32, np.uint64
_COMPS = {"x": 1, "xy": 2, "xyz": 3, "xyzw": 4}


@functools.cache
def _format(value: int):
    """(component bits, type) of a unified buffer format, or None when it is not one of the modelled kinds."""
    from gputwin.emu.amd.isa.table import load
    name = load("gfx1100").buf_format.get(value, "").strip("[]")
    if value == 1:
        name = "BUF_FMT_8_UNORM"                                   # the default LLVM does not print
    m = re.fullmatch(r"BUF_FMT_((?:\d+_)+)(UINT|SINT|FLOAT)", name)
    if m is None:
        return None, name or str(value)
    bits = [int(b) for b in m.group(1).rstrip("_").split("_")]
    if len(set(bits)) != 1 or bits[0] not in (8, 16, 32) or m.group(2) == "FLOAT" and bits[0] == 8:
        return None, name
    return (bits[0], len(bits), m.group(2)), name


def build(inst):
    op = inst.op
    m = re.fullmatch(r"tbuffer_(load|store)_format_(x|xy|xyz|xyzw)", op)
    spec, name = _format(int(inst.extra.get("format", 0)))
    if m is None or spec is None:
        raise IllegalInstruction(f"{op} with format {name} is not modelled (docs: gputwin/emu/amd/mtbuf.py)")
    if inst.extra.get("tfe"):
        raise IllegalInstruction(f"{op} with tfe (texture fail enable) is not modelled")
    bits, nfmt, kind = spec
    ninst = _COMPS[m.group(2)]
    if m.group(1) == "store" and bits != 32:
        raise IllegalInstruction(f"{op}: stores to the narrow format {name} are not modelled")
    addr = _Addr(inst)
    return (_load if m.group(1) == "load" else _store)(inst, addr, bits // 8, nfmt, kind, ninst)


def _convert(raw, size: int, kind: str):
    if size == 4:
        return raw
    if kind == "SINT":
        sh = U32(32 - 8 * size)
        return ((raw << sh).view(np.int32) >> np.int32(32 - 8 * size)).view(U32)
    if kind == "FLOAT":                                           # 16-bit float -> f32, exact
        with np.errstate(invalid="ignore"):
            f = raw.astype(np.uint16).view(np.float16).astype(np.float32).view(U32)
        return quiet(f, F32)
    return raw


def _load(inst, addr, size, nfmt, kind, ninst):
    dst = inst.operands["vdst"].index
    one = U32(0x3F800000) if kind == "FLOAT" else U32(1)

    def h(g):
        if g.exec_count == 0:
            return
        act = g.exec.reshape(-1)
        address, check = addr.lanes(g)
        for c in range(ninst):
            data = np.zeros(act.size, U32)
            if c >= nfmt:
                data[:] = one if c == 3 else U32(0)
            else:
                sel = act & check(c * size, size)
                if sel.any():
                    for buf, offs, sub in _access(g, address + U64(c * size), sel, size, False):
                        part = access.gather(buf, offs, 1)[:, 0] if size == 4 else access.gather_bytes(buf, offs, size)
                        idx = np.flatnonzero(sel)
                        data[idx if sub is None else idx[sub]] = part
                data = _convert(data, size, kind)
            g.set_vgpr(dst + c, data.reshape(g.n, g.lanes))
    return h


def _store(inst, addr, size, nfmt, kind, ninst):
    src = inst.operands["vdata"].index

    def h(g):
        if g.exec_count == 0:
            return
        act = g.exec.reshape(-1)
        address, check = addr.lanes(g)
        for c in range(min(ninst, nfmt)):
            sel = act & check(c * size, size)
            if not sel.any():
                continue
            val = g.vgpr(src + c).reshape(-1)[sel]
            for buf, offs, sub in _access(g, address + U64(c * size), sel, size, True):
                access.scatter(buf, offs, (val if sub is None else val[sub])[:, None])
    return h
