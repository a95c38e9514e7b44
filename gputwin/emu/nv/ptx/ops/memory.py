"""ld / st / ldu of every width and vector shape in every state space, and cp.async.

Addresses are computed only for the active lanes; gputwin.emu.nv.ptx.state.Batch checks alignment
(the whole vector's size, as PTX requires) and bounds, and raises MemoryFault with the address and the
PTX line. Parameters: a kernel's `.param` space is the launch's parameter bytes (uniform); a `.func`'s
parameters and call-site `.param` variables are per-thread byte slots.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.nv.ptx import types as T
from gputwin.emu.nv.ptx.errors import PtxError
from gputwin.emu.nv.ptx.ops import op, the_type, unmodelled
from gputwin.emu.nv.ptx.parser import Addr, Reg, Sink, Vec

SPACES = ("global", "shared", "local", "const", "param")


def space_of(ins):
    sp = [m for m in ins.mods if m in SPACES or m.startswith("shared::")]
    if not sp:
        return "generic"
    s = sp[0]
    if s == "shared::cluster":
        raise unmodelled(ins, "distributed shared memory (clusters)")
    return "shared" if s == "shared::cta" else s


def vec_of(ins):
    for m in ins.mods:
        if m in ("v2", "v4", "v8"):
            return int(m[1:])
    return 1


def _items(op_):
    return list(op_.items) if isinstance(op_, Vec) else [op_]


def _slot_fits(ins, data, off: int, nbytes: int) -> None:
    """A call parameter/return access must lie inside the slot the .param declaration made."""
    if off < 0 or off + nbytes > data.shape[1]:
        raise PtxError(f"{ins.text}: {nbytes} bytes at offset {off} past the {data.shape[1]}-byte .param",
                       line=ins.line, token=ins.text)


def _param_slot(b, ins, addr: Addr):
    """(kind, data, offset): kernel params ("kernel", bytes, off) or a per-thread slot ("slot", arr, off)."""
    if addr.base is None or (ins.fn, addr.base.name) in b.plan.regs:
        raise unmodelled(ins, "register-addressed .param access")
    name = addr.base.name
    plan = b.plan
    if ins.fn == plan.kernel and name in plan.kernel_params:
        return "kernel", b.launch.params, plan.kernel_params[name] + addr.offset
    key = (ins.fn, name)
    if key in plan.pslots:
        slot, size = plan.pslots[key]
        return "slot", b.pslots[slot], addr.offset
    raise PtxError(f"unknown parameter {name}", line=ins.line, token=name)


def _no_b128(ins, t):
    if T.size(t) > 8:
        raise unmodelled(ins, "128-bit values")


@op("ld", "ldu")
def ld(ins, b):
    t = the_type(ins)
    _no_b128(ins, t)
    sp = space_of(ins)
    n = T.size(t)
    vec = vec_of(ins)
    outs = [b.dst(ins, it, t) if not isinstance(it, Sink) else None for it in _items(ins.args[0])]
    if len(outs) != vec:
        raise PtxError("vector width does not match the destination", line=ins.line, token=ins.text)
    addr = ins.args[1]
    if not isinstance(addr, Addr):
        raise PtxError("ld needs an address operand", line=ins.line, token=str(addr))
    U = T.UINT[n]
    dtp = T.dtype(t)
    if sp == "param":
        kind, data, off = _param_slot(b, ins, addr)
        if kind == "kernel":
            vals = []
            for i in range(vec):
                o = off + i * n
                if o + n > len(data):
                    raise PtxError(f"ld.param past the {len(data)} parameter bytes", line=ins.line, token=ins.text)
                vals.append(np.frombuffer(data, U, 1, o).view(dtp)[0])

            def run_k(m):
                for o_, v in zip(outs, vals):
                    if o_:
                        o_(np.broadcast_to(v, (b.T,)), m)
            return run_k

        _slot_fits(ins, data, off, vec * n)

        def run_s(m):
            for i, o_ in enumerate(outs):
                if o_:
                    o_(data[:, off + i * n: off + (i + 1) * n].copy().view(U).reshape(-1).view(dtp), m)
        return run_s

    direct = getattr(outs[0], "view", None) if vec == 1 and outs[0] is not None else None
    gbase = _global_base(ins, b, sp, addr) if direct is not None else None
    sbase = _shared_base(ins, b, sp, addr) if direct is not None else None
    goff, generic = addr.offset, sp in ("", "generic")

    def run(m):
        if m is None and gbase is not None and b.gather_global(gbase, goff, n, direct, generic):
            return
        if m is None and sbase is not None and b.gather_shared(sbase, goff, n, direct):
            return
        idx = b.active(m, b.T)
        a = b.address(ins, addr, idx)
        if direct is not None and m is None and b.load_into(ins, sp, a, n, direct):
            return
        if vec > 1:
            b.access(ins, sp, a, idx, n * vec, False)            # the vector's alignment
        for i, o_ in enumerate(outs):
            bits = b.load(ins, sp, a + np.uint64(i * n), idx, n)
            if o_ is None:
                continue
            if m is None:
                o_(bits.view(dtp), None)
                continue
            full = np.zeros(b.T, U)
            full[idx] = bits
            o_(full.view(dtp), m)
    return run


def _global_base(ins, b, sp, addr):
    """The 64-bit base register of a global/generic address, as uint64, for Batch.gather_global."""
    base = addr.base
    if sp not in ("global", "const", "", "generic") or not isinstance(base, Reg) or \
            (ins.fn, base.name) not in b.plan.regs:
        return None
    arr, _ = b.reg(ins, base.name)
    return arr.view(np.uint64) if arr.itemsize == 8 and arr.ndim == 1 else None


def _shared_base(ins, b, sp, addr):
    """The unsigned base register of a .shared address, for Batch.gather_shared."""
    base = addr.base
    if sp != "shared" or not isinstance(base, Reg) or (ins.fn, base.name) not in b.plan.regs:
        return None
    arr, _ = b.reg(ins, base.name)
    return arr.view(T.UINT[arr.itemsize]) if arr.itemsize in (4, 8) and arr.ndim == 1 else None


@op("st")
def st(ins, b):
    t = the_type(ins)
    _no_b128(ins, t)
    sp = space_of(ins)
    n = T.size(t)
    vec = vec_of(ins)
    addr = ins.args[0]
    srcs = [b.src(ins, it, t) for it in _items(ins.args[1])]
    if len(srcs) != vec:
        raise PtxError("vector width does not match the source", line=ins.line, token=ins.text)
    U = T.UINT[n]
    if sp == "param":
        kind, data, off = _param_slot(b, ins, addr)
        if kind == "kernel":
            raise unmodelled(ins, "st.param to a kernel parameter")
        _slot_fits(ins, data, off, vec * n)

        def run_s(m):
            for i, s in enumerate(srcs):
                v = np.broadcast_to(np.asarray(s()).astype(dtp_u(t)), (b.T,)).view(U)
                col = data[:, off + i * n: off + (i + 1) * n]
                vb = v.reshape(-1, 1).view(np.uint8).reshape(b.T, n)
                if m is None:
                    col[...] = vb
                else:
                    col[m] = vb[m]
        return run_s

    def run(m):
        idx = b.active(m, b.T)
        a = b.address(ins, addr, idx)
        if vec > 1:
            b.access(ins, sp, a, idx, n * vec, True)
        for i, s in enumerate(srcs):
            v = np.broadcast_to(np.asarray(s()), (b.T,))
            bits = np.ascontiguousarray(v[idx]).view(U) if v.dtype.itemsize == n else \
                np.ascontiguousarray(v[idx]).astype(U)
            b.store(ins, sp, a + np.uint64(i * n), idx, bits)
    return run


def dtp_u(t):
    return T.dtype(t)


@op("prefetch", "prefetchu", "applypriority", "discard", "createpolicy")
def hint(ins, b):
    if ins.op == "createpolicy":
        d = b.dst(ins, ins.args[0], "b64")
        return lambda m: d(np.zeros(b.T, np.uint64), m)
    return lambda m: None                       # cache hints: no architectural effect


@op("isspacep")
def isspacep(ins, b):
    sp = [m for m in ins.mods if m in ("global", "shared", "local", "const", "param")][0]
    d = b.dst(ins, ins.args[0], "pred")
    x = b.src(ins, ins.args[1], "u64")

    def run(m):
        hi = np.asarray(x()) >> np.uint64(48)
        # generic windows (state.py): shared at 1 << 48, local at 2 << 48; kernel params have none
        r = {"global": hi == 0, "const": hi == 0, "shared": hi == 1, "local": hi == 2, "param": hi < 0}[sp]
        d(np.broadcast_to(r, (b.T,)), m)
    return run


# --- cp.async: the copy happens at issue (a sequential model); commit/wait groups are then no-ops ---

@op("cp")
def cp_async(ins, b):
    if "async" not in ins.mods:
        raise unmodelled(ins)
    if "bulk" in ins.mods:
        raise unmodelled(ins, "cp.async.bulk (TMA)")
    if "commit_group" in ins.mods or "wait_group" in ins.mods or "wait_all" in ins.mods:
        return lambda m: None
    dst, src, size = ins.args[0], ins.args[1], ins.args[2]
    n = int(size.value)
    if len(ins.args) > 4:
        raise unmodelled(ins, "cache-policy operand")
    srcsize = b.src(ins, ins.args[3], "u32") if len(ins.args) > 3 else None   # zero-fill beyond src-size
    if n not in (4, 8, 16):
        raise unmodelled(ins, f"cp-size {n}")

    def run(m):
        idx = b.active(m, b.T)
        sa = b.address(ins, src, idx)
        da = b.address(ins, dst, idx)
        b.access(ins, "global", sa, idx, n, False)
        b.access(ins, "shared", da, idx, n, True)
        nz = None
        if srcsize is not None:
            nz = np.broadcast_to(np.asarray(srcsize()).astype(np.int64), (b.T,))[idx]
        for i in range(0, n, 4):
            bits = b.load(ins, "global", sa + np.uint64(i), idx, 4) if nz is None else \
                _zfill_load(b, ins, sa, idx, i, nz)
            b.store(ins, "shared", da + np.uint64(i), idx, bits)
    return run


def _zfill_load(b, ins, sa, idx, i, nz):
    """cp.async with src-size: bytes past src-size are zero (and are not read)."""
    out = np.zeros(len(idx), np.uint32)
    whole = nz >= i + 4
    if whole.any():
        out[whole] = b.load(ins, "global", sa[whole] + np.uint64(i), idx[whole], 4)
    part = (nz > i) & ~whole
    for k in range(1, 4):                  # at most 3 partial byte counts
        sel = part & (nz - i == k)
        if sel.any():
            bs = [b.load(ins, "global", sa[sel] + np.uint64(i + j), idx[sel], 1).astype(np.uint32) << np.uint32(8 * j)
                  for j in range(k)]
            out[sel] = np.bitwise_or.reduce(bs)
    return out
