"""The sanitizers' hook into the AMD shader core: each memory instruction of a sanitized Program checks its
lanes' accesses before it runs (gputwin/emu/sanitizer/ holds the checkers; docs/sanitizers.md).

`wrap(inst, handler)` puts a check in front of the handler of a GLOBAL/FLAT, DS or MUBUF
instruction: it computes each active lane's address as the instruction will, asks the dispatch's Session
(ctx.sanitizer) and reports what it finds with the lane, wave, workgroup and instruction. The handler then
runs unchanged, so a sanitized run computes what an unsanitized one does. Programs without sanitizing
never see this module: the hot path pays nothing when the checkers are off."""
from __future__ import annotations

import numpy as np

from gputwin.emu.amd import cdna3, gfx12, lds, mubuf, vmem
from gputwin.emu.amd.hwreg import PRIVATE_APERTURE_HI, SHARED_APERTURE_HI
from gputwin.emu.amd.wave import compact
from gputwin.emu.sanitizer import checks, memcheck
from gputwin.emu.sanitizer.checks import ATOMIC, LOAD, STORE, describe
from gputwin.emu.sanitizer.initcheck import dense
from gputwin.emu.sanitizer.report import Finding

U64 = np.uint64


def wrap(inst, handler, arch: str, wave64: bool):
    """`handler` with the sanitizer's checks in front (or `handler` itself for other instructions)."""
    base = gfx12.as_gfx11(inst) if arch in gfx12.ARCHES else inst
    rules = mubuf.GFX9 if arch == cdna3.ARCH else mubuf.GFX12 if arch in gfx12.ARCHES else mubuf.GFX11
    check = _plan(base, rules)
    if check is None:
        return handler
    site = _Site(inst, arch, wave64)

    def sanitized(g):
        if g.exec_count and g.ctx.sanitizer is not None:
            check(g, site)
        return handler(g)
    return sanitized


class _Site:
    """The instruction, for reports (its text is made only when something is found)."""

    def __init__(self, inst, arch, wave64):
        self.inst, self.arch, self.wave64 = inst, arch, wave64
        self._text = None

    def text(self) -> str:
        if self._text is None:
            from gputwin.emu.amd.isa.disasm import inst_text
            try:
                self._text = inst_text(self.inst, self.arch, self.wave64)
            except Exception:   # noqa: BLE001 - a report never fails for want of a printer
                self._text = self.inst.op
        return self._text


def _plan(inst, rules: str = mubuf.GFX11):
    enc, op = inst.encoding, inst.op
    if enc in ("GLOBAL", "FLAT"):      # SCRATCH: the emulator faults past a lane's private bytes itself
        seg, _, rest = op.partition("_")
        kind, _, size = rest.partition("_")
        if kind == "atomic":
            ent = vmem.ATOMIC_NAMES.get(size)
            return None if ent is None else _vmem(vmem._Addr(inst), 8 if ent[1] else 4, ATOMIC)
        spec = vmem.SIZES.get(size)
        if kind not in ("load", "store") or spec is None:
            return None
        return _vmem(vmem._Addr(inst), spec[0], LOAD if kind == "load" else STORE)
    if enc == "DS":
        return _ds(inst)
    if enc == "MUBUF" and op.startswith("buffer_"):
        _, kind, rest = op.split("_", 2) if op.count("_") >= 2 else (None, None, "")
        if kind == "atomic":
            ent = vmem.ATOMIC_NAMES.get(rest)
            return None if ent is None else _buffer(mubuf._Addr(inst, rules), 8 if ent[1] else 4, ATOMIC)
        spec = vmem.SIZES.get(rest)
        if kind in ("load", "store") and spec is not None and "format" not in rest:
            return _buffer(mubuf._Addr(inst, rules), spec[0], LOAD if kind == "load" else STORE)
    return None


# --- where the lanes are --------------------------------------------------------------------------
# An access's lanes are flat (wave row * lanes + lane) ids: an index array, or None when every lane of the
# group takes part in order (then nothing is gathered; ids are made only for a report).
def _active(g):
    return None if g.exec_full else np.flatnonzero(g.exec.reshape(-1))


def _ids(lanes, count: int) -> np.ndarray:
    return np.arange(count) if lanes is None else lanes


def _finding(g, site, checker, what, flat_lane, **facts) -> Finding:
    ctx = g.ctx
    row, lane = divmod(int(flat_lane), g.lanes)
    wave = int(g.waves[row])
    return Finding(checker, what, pc=ctx.code_address + g.pc, instruction=site.text(), wave=wave, lane=lane,
                   workgroup=ctx.sanitizer.workgroup(wave // ctx.waves_per_group), **facts)


# --- the checks -------------------------------------------------------------------------------------
def _global(g, site, addrs, lanes, nbytes, kind):
    """Global accesses: addrs uint64 of the lanes `lanes` (see _active)."""
    def finding(checker, what, i, **facts):
        return _finding(g, site, checker, what, _ids(lanes, addrs.size)[i], **facts)
    checks.global_access(g.ctx.sanitizer, g.ctx.mem, addrs, nbytes, kind, finding)


def _shared(g, site, offs, lanes, nbytes, kind, flat=False):
    """LDS accesses: offs are byte addresses in the workgroup's LDS of the lanes `lanes`. DS accesses
    past the allocation are silent on hardware (dropped, read 0); FLAT ones fault in the emulator, so
    memcheck reports only what lies between the declared group segment and the allocation."""
    ctx = g.ctx
    san, size = ctx.sanitizer, ctx.lds_bytes
    declared = size if san.group_segment is None else min(size, san.group_segment)
    bad = memcheck.outside_range(offs, nbytes, declared)
    report = bad if bad is None or not flat else bad & (offs + nbytes <= size)
    if report is not None and report.any() and san.on("memcheck"):
        i = int(np.argmax(report))
        san.report(_finding(g, site, "memcheck", f"invalid {describe(kind, 'LDS', nbytes)}", _ids(lanes, offs.size)[i],
                            address=int(offs[i]), size=nbytes, write=kind != LOAD, lanes=int(report.sum()),
                            detail=memcheck.past_the_end(int(offs[i]), nbytes, declared,
                                                         f"the workgroup's {declared}-byte group segment")))
    races = san.races
    if races is None or kind == ATOMIC:
        return
    if bad is None and lanes is None:          # every lane of the group, all inside: no gathers
        waves, local_wg, offs_in = np.repeat(g.waves, g.lanes), np.repeat(g.wg, g.lanes), offs
        ids = None
    else:
        ids = _ids(lanes, offs.size) if bad is None else _ids(lanes, offs.size)[~bad]
        offs_in = offs if bad is None else offs[~bad]
        rows = ids // g.lanes
        waves, local_wg = g.waves[rows], g.wg[rows]
    race = races.access(local_wg * size + offs_in, waves, local_wg, nbytes, kind == STORE)
    if race is not None:
        other = "several waves" if race.other_wave < 0 else f"wave {race.other_wave}"
        earlier = "read" if race.kind == "write-after-read" else "wrote"
        san.report(_finding(g, site, "racecheck", f"LDS {race.kind} race on {nbytes} bytes",
                            race.index if ids is None else ids[race.index],
                            address=int(offs_in[race.index]), size=nbytes, write=kind == STORE, lanes=race.lanes,
                            detail=f"{other} {earlier} it with no barrier in between"))


def _span(addr, g, lanes):
    """(lowest address, highest address, the lanes' 32-bit offsets) of a GLOBAL/FLAT access from its
    offsets alone, when the 64-bit base is one value for the whole group (the common case), else None."""
    base = addr.uniform_base(g)
    if base is None:
        return None
    v = g.vgpr(addr.vaddr.index).reshape(-1)
    if lanes is not None:
        v = v[lanes]
    return base + int(v.min()), base + int(v.max()), v


def _settled(g, site, span, nbytes, kind) -> bool:
    """Is a global access over [span] settled for every checker on without a look at its lanes' 64-bit
    addresses? Inside one allocation; its bytes all initialised (or not tracked) for a read; and where a
    store must be recorded (initcheck) or racecheck across queues tracks the queue, every lane active and
    consecutive, so the access is one byte range, checked and recorded as a whole (a race found is
    reported at its lane)."""
    lo, hi, offsets = span
    mem, san = g.ctx.mem, g.ctx.sanitizer
    r = mem.find(lo)
    if r is None or hi + nbytes > r.alloc_end:
        return False
    whole = slice(lo - r.base, hi - r.base + nbytes)
    tracked = r.shadow is not None and san.on("initcheck")
    if tracked and kind != STORE and not r.shadow[whole].all():
        return False
    races = mem.queue_races
    racing = races is not None and races.current is not None
    mark = tracked and kind != LOAD
    if not (racing or mark):
        return True
    if offsets.size != g.n * g.lanes or not dense(offsets, nbytes):
        return False
    if mark:
        r.shadow[whole] = True
    if racing:
        found = races.access(r, whole, kind != LOAD)
        if found is not None:
            i = found.index // nbytes
            checks.report_race(san, found, i, lo + i * nbytes, nbytes, kind,
                               lambda checker, what, j, **facts: _finding(g, site, checker, what, j, **facts))
    return True


def _vmem(addr, nbytes, kind):
    seg = addr.seg

    def check(g, site):
        lanes = _active(g)
        if seg == "GLOBAL" or seg == "FLAT" and _flat_global(g, addr):
            span = _span(addr, g, lanes)
            if span is not None and _settled(g, site, span, nbytes, kind):
                return
        grid = addr._grid(g).reshape(-1)
        a = grid if lanes is None else grid[lanes]
        if seg == "FLAT":
            hi = (a >> U64(32)).astype(np.int64)
            shared, private = hi == SHARED_APERTURE_HI, hi == PRIVATE_APERTURE_HI
            if shared.any() or private.any():
                low = (a & U64(0xFFFFFFFF)).astype(np.int64)
                ids = _ids(lanes, a.size)
                if shared.any():
                    _shared(g, site, low[shared], ids[shared], nbytes, kind, flat=True)
                glob = ~(shared | private)
                a, lanes = a[glob], ids[glob]
        _global(g, site, a, lanes, nbytes, kind)
    return check


def _flat_global(g, addr) -> bool:
    """Does no lane of a FLAT access reach the LDS or private apertures (high dwords uniform, not theirs)?"""
    hi = compact(g.vgpr(addr.vaddr.index + 1))
    h0 = int(hi.flat[0])
    return h0 not in (SHARED_APERTURE_HI, PRIVATE_APERTURE_HI) and (hi.size == 1 or bool((hi == h0).all()))


def _buffer(addr, nbytes, kind):
    def check(g, site):
        address, in_range = addr.lanes(g)
        sel = g.exec.reshape(-1) & in_range(0, min(nbytes, 4))   # out-of-range lanes touch no memory
        lanes = np.flatnonzero(sel)
        _global(g, site, address[lanes], lanes, nbytes, kind)
    return check


def _ds(inst):
    """The check of a DS access (its offsets, bytes per access and kind come from the mnemonic), or None
    for those that reach no LDS bytes at a lane's own address (append/consume, the permutes, nop)."""
    stem = inst.op[3:]
    kind, _, rest = stem.partition("_")
    if kind in ("load", "store") and rest.startswith("2addr") or stem.startswith("storexchg_2addr"):
        width = 8 if stem.endswith("b64") else 4
        scale = width * (64 if "stride64" in stem else 1)
        offs = (inst.offset0 * scale, inst.offset1 * scale)
        mode = ATOMIC if stem.startswith("storexchg") else LOAD if kind == "load" else STORE
    elif kind == "load" and (rest in lds._DWORDS or rest in lds._SUB):
        width = 4 * lds._DWORDS[rest] if rest in lds._DWORDS else lds._SUB[rest][0]
        offs, mode = (int(inst.offset),), LOAD
    elif kind == "store" and (rest in lds._DWORDS or rest in ("b8", "b16", "b8_d16_hi", "b16_d16_hi")):
        width = 4 * lds._DWORDS[rest] if rest in lds._DWORDS else 1 if rest.startswith("b8") else 2
        offs, mode = (int(inst.offset),), STORE
    else:
        key = stem.replace("_rtn_", "_")
        if stem.startswith("cmpst_"):
            key = "cmpstore_" + stem.rsplit("_", 1)[1]
        ent = lds._ATOMICS.get(key)
        if ent is None:
            return None
        width, offs, mode = 8 if ent[1] else 4, (int(inst.offset),), ATOMIC
    reg = inst.operands["addr"].index

    def check(g, site):
        lanes = _active(g)
        base = g.vgpr(reg).reshape(-1)
        base = (base if lanes is None else base[lanes]).astype(np.int64)
        for off in offs:
            _shared(g, site, (base + off) & 0xFFFFFFFF, lanes, width, mode)
    return check


# --- barriers (the executor calls these only when a Session is on) ----------------------------------
def barrier_arrived(ctx, program, g) -> None:
    """synccheck: a group parks at s_barrier; every lane that started must be active (else the barrier
    sits in divergent control flow: in HIP/OpenCL terms not every work-item reaches it)."""
    san = ctx.sanitizer
    if not san.on("synccheck"):
        return
    started = ((g.waves % ctx.waves_per_group)[:, None] * g.lanes + np.arange(g.lanes)) < san.block_items
    missing = started & ~g.exec
    if missing.any():
        row = int(np.argmax(missing.any(axis=1)))
        n = int(missing[row].sum())
        san.report(_barrier_finding(ctx, program, g, row, "divergent barrier", lanes=int(missing.sum()),
                                    detail=f"{n} of the wave's {int(started[row].sum())} work-items are not "
                                           f"active at it (the barrier is inside divergent control flow)"))


def barrier_released(ctx, program, released: list) -> None:
    """A barrier lets these groups go: racecheck starts a new epoch for their workgroups; synccheck
    checks that every wave of each waited at the same s_barrier and none had ended instead."""
    san = ctx.sanitizer
    if san.races is not None:
        san.races.barrier(np.unique(np.concatenate([g.wg for g in released])))
    if not san.on("synccheck"):
        return
    wg = np.concatenate([g.wg for g in released])
    pc = np.concatenate([np.full(g.n, g.pc, np.int64) for g in released])
    lo, hi = np.full(ctx.ended.size, 1 << 62, np.int64), np.full(ctx.ended.size, -1, np.int64)
    np.minimum.at(lo, wg, pc)
    np.maximum.at(hi, wg, pc)
    here = hi >= 0
    for bad, what in ((here & (lo != hi), "mismatch"), (here & (lo == hi) & (ctx.ended > 0), "partial")):
        if not bad.any():
            continue
        w = int(np.argmax(bad))
        g = next(x for x in released if (x.wg == w).any())
        row = int(np.argmax(g.wg == w))
        if what == "mismatch":
            offsets = ", ".join(f"{ctx.code_address + _barrier_pc(program, int(p)) - san.entry:#x}"
                                for p in (lo[w], hi[w]))
            san.report(_barrier_finding(ctx, program, g, row, "barrier mismatch",
                                        detail=f"waves of one workgroup were released from different "
                                               f"s_barrier instructions (pc offsets {offsets})"))
        else:
            san.report(_barrier_finding(
                ctx, program, g, row, "barrier not reached by the whole workgroup",
                detail=f"{int(ctx.ended[w])} of its {ctx.waves_per_group} waves had ended instead (hardware "
                       f"lets ended waves release it; in HIP/OpenCL it is undefined, a hang elsewhere)"))


def _barrier_pc(program, after: int) -> int:
    """Code offset of the barrier a group parked after (its pc is the next instruction's)."""
    return next((pc for pc, st in program.steps.items() if st[1] == after and st[2] is not None), after)


def _barrier_finding(ctx, program, g, row, what, **facts) -> Finding:
    pc = _barrier_pc(program, g.pc)
    st = program.steps.get(pc)
    site = _Site(st[2], program.arch, g.wave64) if st is not None and st[2] is not None else None
    wave = int(g.waves[row])
    return Finding("synccheck", what, pc=ctx.code_address + pc, instruction=site.text() if site else None,
                   wave=wave, workgroup=ctx.sanitizer.workgroup(wave // ctx.waves_per_group), **facts)
