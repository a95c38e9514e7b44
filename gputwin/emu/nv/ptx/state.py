"""The state of one batch of CTAs in flight, and how instructions bind to it.

Threads are laid out CTA-major: thread t of the batch is lane t % 32 of warp t // 32, and every CTA is
padded to whole warps (padding lanes start exited), so a warp never spans two CTAs. Every register is
one numpy array of T = warps * 32 raw bits (bool for predicates); shared memory is one flat byte array
(CTA c at c * shared_size), local memory likewise per thread. Generic addresses put shared memory at
SHARED_WINDOW and local memory at LOCAL_WINDOW, above the 47-bit user address range so no mapping of
the AddressSpace can collide with them; everything else is a global address.
"""
from __future__ import annotations

import numpy as np

from gputwin.emu.nv.ptx import types as T
from gputwin.emu.nv.ptx.barriers import Barriers
from gputwin.emu.nv.ptx.errors import PtxError
from gputwin.emu.nv.ptx.parser import Addr, Imm, Reg, Sym, Sink
from gputwin.errors import MemoryFault

SHARED_WINDOW = 1 << 48
LOCAL_WINDOW = 2 << 48
_M64 = (1 << 64) - 1
WINDOW_SIZE = 1 << 32

_SPECIAL_SCALAR = ("%ntid", "%nctaid")


def imm_value(imm: Imm, t: str, line: int):
    """A PTX literal as a numpy scalar of type t."""
    dt = T.dtype(t)
    n = T.size(t)
    if imm.bits:
        bits = np.uint64(imm.value)
        if imm.bits == "f32":
            f = np.array(imm.value, np.uint32).view(np.float32)
        else:
            f = np.array(imm.value, np.uint64).view(np.float64)
        if t in ("f32", "f64", "f16"):
            return np.array(f, dtype=dt)[()]
        if T.kind(t) == "f":
            raise PtxError(f"float literal for .{t}", line=line, token=hex(imm.value))
        if n == 4 and imm.bits == "f32" or n == 8 and imm.bits == "f64":
            return np.array(bits).astype(T.UINT[n]).view(dt)[()]
        raise PtxError(f"{imm.bits} bit literal for .{t}", line=line, token=hex(imm.value))
    if isinstance(imm.value, float):
        if T.kind(t) != "f" or t not in ("f32", "f64", "f16"):
            raise PtxError(f"decimal float literal for .{t}", line=line, token=str(imm.value))
        return np.array(imm.value, dtype=dt)[()]
    v = int(imm.value)
    if t in ("f32", "f64", "f16"):
        return np.array(v, dtype=dt)[()]
    if t == "pred":
        return np.bool_(v != 0)
    return np.array(v & ((1 << (8 * n)) - 1), dtype=np.uint64).astype(T.UINT[n]).view(dt)[()]


def convert_bits(val, src_size: int, dst_size: int, signed: bool):
    """Resize raw integer bits: truncate, or zero/sign-extend (the register rules of ld/cvt/mov)."""
    if src_size == dst_size:
        return val
    if dst_size < src_size:
        return np.asarray(val).view(T.UINT[src_size]).astype(T.UINT[dst_size])
    if signed:
        return np.asarray(val).view(T.SINT[src_size]).astype(T.SINT[dst_size]).view(T.UINT[dst_size])
    return np.asarray(val).view(T.UINT[src_size]).astype(T.UINT[dst_size])


class Batch:
    """Registers, memories and special registers of the CTAs of one batch."""

    sanitizer = None        # the launch's checkers (sanitize.SanitizedBatch); None: unchecked

    def __init__(self, launch, plan, ctas: np.ndarray):
        self.launch, self.plan, self.mem = launch, plan, launch.mem
        self._scratch = {}
        bx, by, bz = launch.block
        tpc = bx * by * bz
        self.tpc_padded = (tpc + 31) // 32 * 32
        self.nctas = len(ctas)
        self.T = self.nctas * self.tpc_padded
        self.W = self.T // 32
        T_ = self.T
        local_t = np.tile(np.arange(self.tpc_padded, dtype=np.uint32), self.nctas)
        self.valid = local_t < tpc
        self.cta_of = np.repeat(np.arange(self.nctas, dtype=np.int64), self.tpc_padded)
        gx, gy, _ = launch.grid
        cid = np.repeat(ctas.astype(np.uint32), self.tpc_padded)
        lt = np.minimum(local_t, tpc - 1)
        self.special = {
            "%tid.x": (lt % bx).astype(np.uint32), "%tid.y": (lt // bx % by).astype(np.uint32),
            "%tid.z": (lt // (bx * by)).astype(np.uint32),
            "%ctaid.x": (cid % gx).astype(np.uint32), "%ctaid.y": (cid // gx % gy).astype(np.uint32),
            "%ctaid.z": (cid // (gx * gy)).astype(np.uint32),
            "%laneid": (local_t % 32).astype(np.uint32), "%warpid": (local_t // 32).astype(np.uint32),
        }
        lane = self.special["%laneid"].astype(np.uint64)
        one = np.uint64(1)
        self.special.update({
            "%lanemask_eq": (one << lane).astype(np.uint32),
            "%lanemask_lt": ((one << lane) - one).astype(np.uint32),
            "%lanemask_le": ((one << (lane + one)) - one).astype(np.uint32),
            "%lanemask_gt": (np.uint64(0xFFFFFFFF) ^ ((one << (lane + one)) - one)).astype(np.uint32),
            "%lanemask_ge": (np.uint64(0xFFFFFFFF) ^ ((one << lane) - one)).astype(np.uint32),
        })
        for nm, v in (("%ntid", launch.block), ("%nctaid", launch.grid)):
            for ax, x in zip("xyz", v):
                self.special[f"{nm}.{ax}"] = np.uint32(x)
        self.special["%nwarpid"] = np.uint32(self.tpc_padded // 32)
        self.special["%smid"] = np.uint32(0)
        self.special["%nsmid"] = np.uint32(1)
        self.special["%gridid"] = np.uint64(0)
        self.special["%dynamic_smem_size"] = np.uint32(launch.dynamic_shared_bytes)
        self.special["%total_smem_size"] = np.uint32(plan.dynamic_shared_offset + launch.dynamic_shared_bytes)
        self.regs = [np.zeros(T_, T.container(t)) for t in plan.reg_types]
        self.shared_size = (plan.dynamic_shared_offset + launch.dynamic_shared_bytes + 15) // 16 * 16 \
            if (plan.shared or launch.dynamic_shared_bytes) else 0
        self.shared_limit = plan.dynamic_shared_offset + launch.dynamic_shared_bytes if self.shared_size else 0
        self.shared = np.zeros(self.nctas * self.shared_size, np.uint8)
        self.shared_base = self.cta_of * self.shared_size
        self.local = np.zeros(T_ * plan.local_size, np.uint8)
        self.local_base = np.arange(T_, dtype=np.int64) * plan.local_size
        self.pslots = [np.zeros((T_, n), np.uint8) for n in plan.pslot_sizes]
        self._views = {}
        self._mask_bits = [None, {}]
        self.pending_red = []                        # (threads, finish) of bar.red, run when those are released
        self.barriers = Barriers(self)
        self.all_idx = np.arange(T_)
        self.cc = np.zeros(T_, np.uint64)           # carry flag of add.cc / addc
        self.steps = 0                               # the deterministic %clock
        self.mod_functions = launch.mod.functions

    # --- operands --------------------------------------------------------------------------------------
    def reg(self, ins, name: str):
        slot = self.plan.regs.get((ins.fn, name))
        if slot is None:
            raise PtxError(f"undeclared register {name}", line=ins.line, token=name)
        return self.regs[slot], self.plan.reg_types[slot]

    def src(self, ins, op, t: str):
        """A zero-argument callable giving operand `op` as type t (array over all threads, or a scalar)."""
        if isinstance(op, Imm):
            v = imm_value(op, t, ins.line)
            return lambda: v
        if isinstance(op, tuple) and op[0] == "not":
            arr, _ = self.reg(ins, op[1].name)
            return lambda: ~arr
        if isinstance(op, Sym) or (isinstance(op, Reg) and (ins.fn, op.name) not in self.plan.regs
                                   and op.name not in self.special and not op.name.startswith("%clock")):
            v = self.symbol_value(ins, op.name, getattr(op, "offset", 0), t)
            return lambda: v
        if not isinstance(op, Reg):
            raise PtxError(f"bad source operand for {ins.text}", line=ins.line, token=str(op))
        name = op.name
        if name in self.special or name in ("%clock", "%clock64", "%globaltimer", "%clock_hi"):
            return self._special(ins, name, t)
        arr, rt = self.reg(ins, name)
        cs, ts = arr.itemsize, T.size(t)
        if t == "pred" or rt == "pred":
            if t != rt:
                raise PtxError(f"predicate/value mismatch for {name}", line=ins.line, token=name)
            return lambda: arr
        if cs == ts:
            v = arr.view(T.dtype(t))
            return lambda: v
        if ts < cs:                              # relaxed rule: the low bits of a wider register
            dt = T.dtype(t)
            return lambda: arr.astype(T.UINT[ts]).view(dt)
        dt = T.dtype(t)                          # a narrower register widened (cvt sources)
        signed = T.kind(rt) == "s"
        return lambda: convert_bits(arr, cs, ts, signed).view(dt)

    def _special(self, ins, name, t):
        if name in ("%clock", "%clock64", "%clock_hi", "%globaltimer"):
            ts = T.size(t)
            dt = T.dtype(t)
            return lambda: np.array(self.steps * 4, np.uint64).astype(T.UINT[ts]).view(dt)[()]
        v = self.special[name]
        ts = T.size(t)
        if np.ndim(v) == 0:
            vv = np.array(v).astype(T.UINT[ts]).view(T.dtype(t))[()]
            return lambda: vv
        vv = v.astype(T.UINT[ts]).view(T.dtype(t))
        return lambda: vv

    def symbol_value(self, ins, name, offset, t):
        """The address a symbol stands for (mov/cvta of a variable): shared and local offsets are
        window-relative (as .shared/.local addresses), globals are AddressSpace addresses."""
        plan = self.plan
        if name in plan.shared:
            v = plan.shared[name] + offset
        elif (ins.fn, name) in plan.local:
            v = plan.local[(ins.fn, name)] + offset
        elif name in self.launch.global_addrs:
            v = self.launch.global_addrs[name] + offset
        else:
            raise PtxError(f"symbol {name} has no address here (taking the address of a kernel or "
                           f"function parameter is not modelled)", line=ins.line, token=name)
        return imm_value(Imm(v), t if T.kind(t) != "f" else "u64", ins.line)

    def dst(self, ins, op, t: str):
        """A callable (value, mask) writing a value of type t into register `op` where mask (None: all)."""
        if isinstance(op, Sink):
            return lambda val, m: None
        if not isinstance(op, Reg):
            raise PtxError(f"destination of {ins.text} must be a register", line=ins.line, token=str(op))
        arr, rt = self.reg(ins, op.name)
        if (t == "pred") != (rt == "pred"):
            raise PtxError(f"predicate/value mismatch for {op.name}", line=ins.line, token=op.name)
        # Masked writes blend bits (arr ^= (arr ^ new) & maskbits): branch-free, unlike np.copyto(where=),
        # which is 50x slower on the irregular masks divergence produces.
        if t == "pred":
            def wp(val, m):
                if m is None:
                    arr[...] = val
                else:
                    np.bitwise_xor(arr, (arr ^ val) & m, out=arr)
            wp.view = arr                            # full-mask writers may compute straight into it
            return wp
        cs, ts = arr.itemsize, T.size(t)
        dt = T.dtype(t)
        U = arr.dtype
        if cs == ts:
            view = arr.view(dt)

            def w(val, m):
                if m is None:
                    view[...] = val
                else:
                    new = np.asarray(val).astype(dt, copy=False).view(U)
                    np.bitwise_xor(arr, (arr ^ new) & self.mask_bits(m, cs), out=arr)
            w.view = view                            # full-mask writers may compute straight into it
            return w
        signed = T.kind(t) == "s"
        udt = T.UINT[ts]

        def wx(val, m):
            bits = convert_bits(np.asarray(val, dtype=dt).view(udt), ts, cs, signed)
            if m is None:
                arr[...] = bits
            else:
                new = np.asarray(bits).astype(U, copy=False)
                np.bitwise_xor(arr, (arr ^ new) & self.mask_bits(m, cs), out=arr)
        return wx

    def mask_bits(self, m, nbytes):
        """All-ones words where m is set (cached for the mask object of the current step)."""
        cache = self._mask_bits
        if cache[0] is not m:
            cache = self._mask_bits = [m, {}]
        bits = cache[1].get(nbytes)
        if bits is None:
            bits = cache[1][nbytes] = np.negative(m.astype(T.UINT[nbytes]))
        return bits

    def guard(self, ins):
        """The guard predicate of an instruction as a callable giving the bool array, or None."""
        if ins.pred is None:
            return None
        arr, rt = self.reg(ins, ins.pred)
        if rt != "pred":
            raise PtxError("guard is not a predicate", line=ins.line, token=ins.pred)
        if ins.neg:
            return lambda: ~arr
        return lambda: arr

    def scratch(self, name, make):
        """Work arrays made once per batch and shared by every instruction of one kind (steps never
        nest, so they never hold them at the same time): no allocation on the hot path."""
        v = self._scratch.get(name)
        if v is None:
            v = self._scratch[name] = make()
        return v

    def active(self, m, T_=None):
        return self.all_idx if m is None else np.flatnonzero(m)

    # --- memory ------------------------------------------------------------------------------------------
    def fault(self, ins, what, address, write):
        e = MemoryFault(f"{what} at PTX line {ins.line} ({ins.text})", address=int(address), write=write)
        e.ptx_line = ins.line                       # for callers that report it (the message has it too)
        return e

    def access(self, ins, space: str, addrs: np.ndarray, idx: np.ndarray, nbytes: int, write: bool):
        """Resolve per-lane addresses: ("global", addrs) or (flat_buffer, element indices in units of
        nbytes). Checks alignment and bounds; raises MemoryFault naming address and PTX line."""
        addrs = addrs.astype(np.uint64, copy=False)
        if addrs.size and nbytes > 1 and int(np.bitwise_or.reduce(addrs)) & (nbytes - 1) and \
                (addrs & np.uint64(nbytes - 1)).any():
            bad = addrs[(addrs & np.uint64(nbytes - 1)) != 0][0]
            raise self.fault(ins, f"misaligned {nbytes}-byte {space} access", bad, write)
        if space in ("", "generic"):
            hi = addrs >> np.uint64(48)
            if addrs.size and hi.any():
                if (hi == 1).all():
                    return self.access(ins, "shared", addrs - np.uint64(SHARED_WINDOW), idx, nbytes, write)
                if (hi == 2).all():
                    return self.access(ins, "local", addrs - np.uint64(LOCAL_WINDOW), idx, nbytes, write)
                if ((hi == 1) | (hi == 2)).any():
                    return ("mixed", addrs)
            space = "global"
        if space in ("global", "const"):
            if write and space == "const":
                raise self.fault(ins, "store to .const", addrs[0], write)
            return ("global", addrs)
        if space in ("shared", "local"):
            limit = self.shared_limit if space == "shared" else self.plan.local_size
            if addrs.size and int(addrs.max()) + nbytes > limit:
                bad = addrs[addrs + np.uint64(nbytes) > np.uint64(limit)][0]
                what = "the CTA's" if space == "shared" else "the thread's"
                raise self.fault(ins, f"{nbytes}-byte {space} access outside {what} {limit} bytes", bad, write)
            base = self.shared_base if space == "shared" else self.local_base
            flat = (base if idx is self.all_idx else base[idx]) + addrs.view(np.int64)
            if nbytes > 1:                       # element index in units of nbytes (aligned: checked above)
                flat >>= nbytes.bit_length() - 1
            return (self.shared if space == "shared" else self.local, flat)
        raise PtxError(f"state space .{space} is not modelled for {ins.text}", line=ins.line, token=space)

    def load(self, ins, space, addrs, idx, nbytes):
        """Raw bits (uint of nbytes) at each active lane's address."""
        kind, where = self.access(ins, space, addrs, idx, nbytes, False)
        udt = T.UINT[nbytes]
        if isinstance(kind, np.ndarray):
            return kind.view(udt)[where]
        if kind == "global":
            fast = self._global_view(where, nbytes, False)
            if fast is not None:
                view, el = fast
                return view[el]
            try:
                return self.mem.load(where, nbytes).view(udt).reshape(-1)
            except MemoryFault as e:
                raise self.fault(ins, f"{nbytes}-byte load from unmapped global address", e.address, False)
        if kind == "mixed":
            out = np.empty(len(where), udt)
            for win, sp in ((0, "global"), (1, "shared"), (2, "local")):
                sel = (where >> np.uint64(48)) == win
                if sel.any():
                    out[sel] = self.load(ins, sp if win == 0 else "generic", where[sel], idx[sel], nbytes)
            return out

    def load_into(self, ins, space, addrs, nbytes, out) -> bool:
        """Full-mask load gathered straight into a register view; False if the fast path does not apply
        (the caller then uses load())."""
        kind, where = self.access(ins, space, addrs, self.all_idx, nbytes, False)
        if isinstance(kind, np.ndarray):                  # shared / local: element indices into the buffer
            np.take(kind.view(T.UINT[nbytes]), where, out=out.view(T.UINT[nbytes]), mode="clip")
            return True
        if kind != "global":
            return False
        fast = self._global_view(where, nbytes, False)
        if fast is None:
            return False
        view, el = fast
        np.take(view, el, out=out.view(view.dtype), mode="clip")   # indices already bounds-checked
        return True

    def store(self, ins, space, addrs, idx, bits):
        """Write raw bits at each active lane's address; where lanes collide the highest lane wins."""
        nbytes = bits.dtype.itemsize
        kind, where = self.access(ins, space, addrs, idx, nbytes, True)
        if isinstance(kind, np.ndarray):
            kind.view(bits.dtype)[where] = bits
            return
        if kind == "global":
            fast = self._global_view(where, nbytes, True)
            if fast is not None:
                view, el = fast
                view[el] = bits
                return
            try:
                self.mem.store(where, bits.view(np.uint8).reshape(-1, nbytes))
            except MemoryFault as e:
                raise self.fault(ins, f"{nbytes}-byte store to unmapped global address", e.address, True)
            return
        if kind == "mixed":
            for win, sp in ((0, "global"), (1, "shared"), (2, "local")):
                sel = (where >> np.uint64(48)) == win
                if sel.any():
                    self.store(ins, sp if win == 0 else "generic", where[sel], idx[sel], bits[sel])

    def gather_global(self, base, offset: int, nbytes: int, out, generic: bool) -> bool:
        """Full-mask global load of every thread's `base + offset` (base: a 64-bit register as uint64)
        gathered into `out`, when every lane is aligned and inside one mapping (below the shared and
        local windows for generic addresses). False otherwise: the caller then takes the checked path,
        which faults or routes by window. One subtraction, one or two reductions, a shift, the gather."""
        r = self.mem.find((int(base[0]) + offset) & _M64)
        if r is None or r.base % nbytes or (generic and r.end > SHARED_WINDOW):
            return False
        off = self.scratch("gather_off", lambda: np.empty(self.T, np.uint64))
        np.subtract(base, np.uint64((r.base - offset) & _M64), out=off)    # wraps below the base: huge
        # one OR over the offsets gives the alignment and a bound (max <= OR); max() only if that is loose
        acc, size = int(np.bitwise_or.reduce(off)), r.data.size
        if acc & (nbytes - 1) or (acc + nbytes > size and int(off.max()) + nbytes > size):
            return False
        el = off.view(np.int64)
        if nbytes > 1:
            el >>= nbytes.bit_length() - 1
        view = self._typed(r, nbytes)
        np.take(view, el, out=out.view(view.dtype), mode="clip")      # indices bounds-checked above
        return True

    def gather_shared(self, base, offset: int, nbytes: int, out) -> bool:
        """Full-mask .shared load of every thread's `base + offset` (base: an unsigned register) into
        `out`, when every lane is aligned and inside its CTA's shared memory; False otherwise (the
        checked path then faults). The same passes as gather_global, plus the CTA's base."""
        off = self.scratch("gather_off", lambda: np.empty(self.T, np.uint64))
        np.add(base, np.uint64(offset & _M64), out=off, casting="unsafe")     # widens 32-bit bases
        acc, limit = int(np.bitwise_or.reduce(off)), self.shared_limit
        if acc & (nbytes - 1) or (acc + nbytes > limit and int(off.max()) + nbytes > limit):
            return False
        el = off.view(np.int64)
        el += self.shared_base
        if nbytes > 1:
            el >>= nbytes.bit_length() - 1
        np.take(self.shared.view(T.UINT[nbytes]), el, out=out.view(T.UINT[nbytes]), mode="clip")
        return True

    def _typed(self, r, nbytes):
        """The mapping's bytes as unsigned elements of nbytes (cached per mapping)."""
        key = (id(r.data), nbytes)
        view = self._views.get(key)
        if view is None or view[0] is not r.data:
            view = (r.data, r.data[: r.data.size // nbytes * nbytes].view(T.UINT[nbytes]))
            self._views[key] = view
        return view[1]

    def _global_view(self, addrs, nbytes, write):
        """Fast path: every lane inside one mapping whose base is aligned -> (typed view, element
        indices); None otherwise (the AddressSpace's own per-lane path then checks and faults)."""
        if addrs.size == 0:
            return None
        lo, hi = int(addrs.min()), int(addrs.max())
        r = self.mem.find(lo)
        if r is None or hi + nbytes > r.end or r.base % nbytes or (write and not r.writable):
            return None
        el = (addrs - np.uint64(r.base)).view(np.int64)
        if nbytes > 1:
            el >>= nbytes.bit_length() - 1
        return self._typed(r, nbytes), el

    def address(self, ins, op: Addr, idx):
        """The per-lane address of a memory operand, as uint64, for the active lanes idx."""
        if not isinstance(op, Addr):
            raise PtxError(f"{ins.text}: the address operand must be in brackets", line=ins.line, token=ins.text)
        base = op.base
        if base is None:
            return np.full(len(idx), op.offset, np.uint64)
        if isinstance(base, Reg) and (ins.fn, base.name) in self.plan.regs:
            arr, rt = self.reg(ins, base.name)
            a = (arr if idx is self.all_idx else arr[idx]).astype(np.uint64, copy=False)
            return a + np.uint64(op.offset & 0xFFFFFFFFFFFFFFFF) if op.offset else a
        v = int(self.symbol_value(ins, base.name, op.offset, "u64"))
        return np.full(len(idx), v, np.uint64)

