"""Running a kernel: SIMT over all threads of a batch of CTAs, scheduled by minimum PC.

Scheduling policy (the divergence model). Every thread has a key = (call-depth rank, PC). Each step
picks the smallest key among runnable threads and executes that one instruction for every thread
holding it, across all warps and CTAs of the batch at once (numpy arrays over warps x 32 lanes).
  * Divergence: threads that branch elsewhere simply hold other keys; the lowest PC runs first.
  * Reconvergence: compilers lay out structured code so a join point follows both sides of a branch,
    and a loop's exit follows its body; threads that reach the join early wait there (higher PC)
    until the others arrive, then run together again. This is the classic "min-PC" SIMT policy.
  * Calls: a deeper call has a smaller depth rank, so threads inside a callee run (and return) before
    their caller's other threads move past the call site; they rejoin at the instruction after it.
  * Warp-synchronous instructions (shfl/vote/match/redux .sync, bar.warp.sync, mma/ldmatrix .sync) wait
    for their warp's live member lanes (the membermask operand): lanes that arrive while members are
    elsewhere (e.g. in a block the compiler placed out of line) are set aside (key + SYNC) and join the
    members when they reach the same instruction. If nothing else can run, the waiting lanes go ahead as
    they are (members that can never come, as in divergent shuffles PTX leaves undefined).
    `activemask` does not wait: it reports the lanes executing that step.
  * Barriers: bar.sync parks the arriving threads until their named barrier's phase completes (barriers.py:
    the warps it counts have arrived, by bar.sync or bar.arrive; exited threads do not hold a count-less
    barrier back). A CTA whose warps reach a barrier together is released in the same step and keeps
    running vectorised; parked threads no arrival can release are a hang.
CTAs run in batches of at most MAX_BATCH_THREADS threads, in CTA order; atomics serialise colliding
lanes in thread order, so every run is deterministic.

Watchdog: the emulators' shared one (gputwin/emu/watchdog.py): a step budget per batch
(GPUTWIN_WATCHDOG_INSTS; every step advances a warp by at most one instruction, so it bounds the per-warp
instruction count deterministically) and the wall clock (GPUTWIN_WATCHDOG_S) of the current watchdog
scope; either one raises GpuHang.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from gputwin.emu import hostmem, watchdog  # noqa: F401 - keeps big numpy temporaries' pages
from gputwin.emu.nv.ptx.errors import PtxError
from gputwin.emu.nv.ptx.keys import DEPTH, EXIT, MAXD, SYNC, WAIT
from gputwin.emu.nv.ptx.ops import OPS
from gputwin.emu.nv.ptx.ops.warp import sync_members
from gputwin.emu.nv.ptx.sanitize import SanitizedBatch
from gputwin.emu.nv.ptx.state import Batch
from gputwin.emu.progress import Progress
from gputwin.emu.sanitizer.session import Session
from gputwin.errors import GpuFault, GpuHang

MAX_BATCH_THREADS = 1 << 15      # measured: 32K-thread batches keep each numpy pass in cache


@dataclass
class Counters:
    warp_insts: int = 0
    lane_ops: int = 0
    warps: int = 0

    def __iadd__(self, other):
        self.warp_insts += other.warp_insts
        self.lane_ops += other.lane_ops
        self.warps += other.warps
        return self


class Launch:
    def __init__(self, mem, mod, name, grid, block, params, dynamic_shared_bytes, arch):
        self.mem, self.mod, self.name = mem, mod, name
        self.grid = tuple(int(x) for x in (tuple(grid) + (1, 1, 1))[:3])
        self.block = tuple(int(x) for x in (tuple(block) + (1, 1, 1))[:3])
        if min(self.grid) < 1 or min(self.block) < 1 or np.prod(self.block) > 1024:
            raise ValueError(f"bad launch grid={self.grid} block={self.block} (at most 1024 threads per CTA)")
        self.params = bytes(params)
        self.dynamic_shared_bytes = int(dynamic_shared_bytes)
        self.arch = arch
        self.global_addrs = module_globals(mem, mod)


def module_globals(mem, mod) -> dict[str, int]:
    from gputwin.emu.nv.ptx.globals import map_globals
    return map_globals(mem, mod)


def run_kernel(mem, mod, name: str, *, grid=(1, 1, 1), block=(1, 1, 1), params: bytes = b"",
               dynamic_shared_bytes: int = 0, arch: str = "sm_90") -> Counters:
    """Run kernel `name` of a loaded module over AddressSpace `mem`; returns the launch's Counters."""
    k = mod.kernels.get(name)
    if k is None:
        raise KeyError(f"PTX module has no kernel {name!r} (has {sorted(mod.kernels)})")
    _check_target(mod, arch)
    plan = mod.plan(name)
    if len(params) < k.params_size:
        raise ValueError(f"kernel {name} takes {k.params_size} bytes of parameters, got {len(params)}")
    _check_shared(k, name, int(dynamic_shared_bytes), arch)
    launch = Launch(mem, mod, name, grid, block, params, dynamic_shared_bytes, arch)
    ncta = int(np.prod(launch.grid))
    tpc = (int(np.prod(launch.block)) + 31) // 32 * 32
    per = max(1, MAX_BATCH_THREADS // tpc)
    total = Counters()
    wd = watchdog.current() or watchdog.Watchdog()
    budget, deadline, watchdog_s = wd.wave_insts, wd.deadline, wd.seconds
    progress = Progress(f"PTX kernel {name}", ncta * (tpc // 32), unit="warps", inst_unit="warp-instructions")
    session = Session.from_env(0, launch.grid, int(np.prod(launch.block)), kernel=name)
    try:
        with np.errstate(all="ignore"):
            for start in range(0, ncta, per):
                if time.monotonic() > deadline:     # a grid of many short batches: each is too quick to check inside
                    raise GpuHang(f"PTX kernel {name} still running after {watchdog_s:g} s (GPUTWIN_WATCHDOG_S): "
                                  f"{start} of {ncta} CTAs finished, none running")
                ctas = np.arange(start, min(ncta, start + per))
                batch = Batch(launch, plan, ctas) if session is None else SanitizedBatch(launch, plan, ctas, session)
                total += _run_batch(batch, plan, budget, deadline, watchdog_s, progress)
                progress.waves_done, progress.wave_insts = total.warps, total.warp_insts
                progress.show()
        if session is not None:
            session.finish()
    except (GpuFault, GpuHang) as e:
        if session is None:
            raise
        session.finish(e)       # raises the findings (with the fault or hang after them), else nothing
        raise
    finally:
        progress.close()
    return total


def _sm(target: str) -> int | None:
    digits = "".join(ch for ch in target.split(",")[0].removeprefix("sm_") if ch.isdigit())
    return int(digits) if target.startswith("sm_") and digits else None


def _check_target(mod, arch: str) -> None:
    """A module built for a newer GPU (.target sm_90 on an sm_80 device) does not load, as the driver's
    JIT refuses it; a target the emulator does not know (compute_XX, sm_90a features) is checked by
    opcode instead."""
    want, have = _sm(mod.parsed.target), _sm(arch)
    if want is not None and have is not None and want > have:
        raise PtxError(f"module targets {mod.parsed.target}; the device is {arch}", line=None,
                       token=mod.parsed.target)


MAX_SHARED_BYTES = {"sm_80": 163 << 10, "sm_90": 227 << 10}   # per block, opt-in maximum (CUDA guide, CC 8.0/9.0)


def _check_shared(k, name: str, dynamic: int, arch: str) -> None:
    """Shared memory past the arch's per-block maximum is refused (the driver would not launch it), before
    anything is allocated for it: a .shared array of 4 GiB is the module's error, a dynamic size the caller's."""
    limit = MAX_SHARED_BYTES.get(arch, max(MAX_SHARED_BYTES.values()))
    if k.static_shared_bytes > limit:
        raise PtxError(f"kernel {name} declares {k.static_shared_bytes} bytes of .shared; {arch} allows {limit} per block",
                       line=None, token=name)
    if dynamic < 0 or k.static_shared_bytes + dynamic > limit:
        raise ValueError(f"kernel {name}: {k.static_shared_bytes} static + {dynamic} dynamic shared bytes; "
                         f"{arch} allows {limit} per block")


def bind(batch: Batch, plan):
    """Each instruction resolved against this batch's arrays: (fn, is_control)."""
    out = []
    for ins in plan.code:
        spec = OPS[ins.op]
        try:
            fn = spec.factory(ins, batch)
        except IndexError as e:    # a factory reads ins.args[k]: the statement has fewer operands
            raise PtxError(f"{ins.text}: too few operands for {ins.op} ({len(ins.args)} given)", line=ins.line,
                           token=ins.text) from e
        if not spec.control:
            g = batch.guard(ins)
            if g is not None:
                fn = _guarded(fn, g)
        members = sync_members(ins)
        if members is not False:
            members = (lambda: np.uint32(0xFFFFFFFF)) if members is None else batch.src(ins, members, "b32")
        out.append((fn, spec.control, members))
    return out


def _hold_for_members(b: Batch, key, mask, members):
    """Lanes of `mask` whose warp has live member lanes not in `mask`: those must wait."""
    W = b.W
    present = mask.reshape(W, 32)
    mm = np.broadcast_to(np.asarray(members()).astype(np.uint32), (b.T,)).reshape(W, 32)
    union = np.bitwise_or.reduce(np.where(present, mm, np.uint32(0)), axis=1)
    bits = ((union[:, None] >> np.arange(32, dtype=np.uint32)[None, :]) & 1).astype(bool)
    missing = bits & (key < EXIT).reshape(W, 32) & ~present
    hold = missing.any(axis=1)
    if not hold.any():
        return None
    return (present & hold[:, None]).reshape(-1)


def _warps_in(mask, W) -> int:
    """How many warps have a lane in the bool mask: a warp's 32 flags read as four 64-bit words (6x
    faster than any() along an axis of 32, which numpy reduces slowly)."""
    m = np.ascontiguousarray(mask).view(np.uint64).reshape(W, 4)
    return int(np.count_nonzero(m[:, 0] | m[:, 1] | m[:, 2] | m[:, 3]))


def _guarded(fn, g):
    def run(m):
        p = g()
        return fn(p if m is None else (m & p))
    return run


def _run_batch(b: Batch, plan, budget, deadline, watchdog_s, progress: Progress) -> Counters:
    code = bind(b, plan)
    T_, W = b.T, b.W
    key = np.where(b.valid, np.int64(MAXD * DEPTH), np.int64(EXIT))
    b.key = key
    b.stack = np.zeros((plan.max_depth + 1, T_), np.int64)
    c = Counters(warps=_warps_in(b.valid, W))
    full_mask = b.valid.all()
    conv, stale, forced, mn, mask = False, False, False, 0, None
    steps = 0
    while True:
        if not conv:
            mn = int(key.min())
            if mn >= WAIT:
                if mn >= EXIT:
                    break
                if not b.barriers.complete():              # nobody can run: exits may complete a barrier
                    b.barriers.stuck(plan)
                continue
            forced = bool(mn & SYNC)                      # only lanes waiting for their warp can run
            if forced:
                mn -= SYNC
                key[key == mn + SYNC] = mn
            mask = key == mn
            full = full_mask and bool(mask.all())
        pc = mn & (DEPTH - 1)
        fn, control, members = code[pc]
        if members is not False and not full:
            waiting = key == mn + SYNC                    # lanes already waiting here join this step
            if waiting.any():
                key[waiting] = mn
                mask = mask | waiting
                full = full_mask and bool(mask.all())
            hold = None if (full or forced) else _hold_for_members(b, key, mask, members)
            if hold is not None:
                key[hold] = mn + SYNC
                mask = mask & ~hold
                if not mask.any():
                    conv = False
                    continue
        if full:
            c.warp_insts += W
            c.lane_ops += T_
        else:
            c.warp_insts += _warps_in(mask, W)
            c.lane_ops += int(np.count_nonzero(mask))
        steps += 1
        b.steps = steps
        if control:
            if stale:
                key.fill(mn)
                stale = False
            b.cur_key = mn
            moved = fn(None if full else mask)
            if moved is not None:           # all threads moved together to one key
                mn, conv, stale = moved, True, True
            else:
                conv = False
        else:
            fn(None if full else mask)
            if full:                        # every thread at mn + 1: the key array is brought up to
                mn += 1                     # date lazily, before the next control instruction
                conv = stale = True
            else:
                key += mask                 # bool adds as 0/1: one pass, no scatter
                conv = False
        if steps & 63 == 0:                 # a slow step (exact f64 paths) must not outlast the watchdog
            if steps > budget or time.monotonic() > deadline:
                ins = plan.code[pc]
                raise GpuHang(f"PTX kernel {plan.kernel} still running after {steps} steps "
                              f"(limits: GPUTWIN_WATCHDOG_INSTS={budget} steps, GPUTWIN_WATCHDOG_S={watchdog_s:g} s); last at PTX line {ins.line} ({ins.text})")
            progress.show(c.warp_insts)
    return c


__all__ = ["run_kernel", "Counters", "PtxError"]
