"""The standalone entry point of the RDNA3 emulator: run one compute dispatch over an AddressSpace.

`run_dispatch(mem, Dispatch(...))` plays the part of the command processor and SPI after SET_SH_REG +
DISPATCH_DIRECT: it lays out each wave's initial state as the hardware does (user SGPRs, then the
enabled workgroup-id SGPRs, then the scratch wave offset; packed work-item ids in v0; EXEC covering the
work-items of a partial last wave; MODE from RSRC1) and runs the waves to completion. See
docs/emulator.md for the layout details and the decisions behind them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gputwin.emu import watchdog
from gputwin.emu.amd import cdna3, gfx12, mode_bits
from gputwin.emu.amd.executor import Executor
from gputwin.emu.amd.hwreg import PRIVATE_APERTURE_HI, SHARED_APERTURE_HI
from gputwin.emu.amd.program import Program, program_at, program_for
from gputwin.emu.amd.scratch import Scratch
from gputwin.emu.amd.wave import WaveGroup
from gputwin.emu.memory import AddressSpace
from gputwin.emu.progress import Progress
from gputwin.emu.sanitizer.session import Session
from gputwin.errors import GpuFault, IllegalInstruction, MemoryFault, SanitizerError

MAX_BATCH_LANES = 1 << 20      # workgroups run in batches of at most this many lanes ...
MAX_BATCH_STATE_BYTES = 1 << 29  # ... and of at most this much VGPR (RSRC1 count) or scratch state
LDS_GRANULE = 512              # COMPUTE_PGM_RSRC2.LDS_SIZE unit on gfx11 (bytes)
MAX_LDS = 64 * 1024
                               # (then discard it), which must exist even with no LDS (widest DS access: 16 B)


@dataclass
class Dispatch:
    code_address: int
    grid: tuple[int, int, int] = (1, 1, 1)          # workgroups
    block: tuple[int, int, int] = (1, 1, 1)         # work-items per workgroup
    wave64: bool = False
    user_sgprs: tuple[int, ...] | list[int] = ()
    rsrc1: int = 0
    rsrc2: int = 0
    rsrc3: int = 0
    lds_bytes: int = 0
    scratch_bytes_per_lane: int = 0
    scratch_base: int | None = None
    scratch_waves: int | None = None                # wave slots in the backing (TMPRING_SIZE.WAVES x SEs);
                                                    # None: as many as its mapping holds
    code: bytes | None = None                       # the code itself, instead of fetching it from mem
    group_segment: int | None = None                # LDS bytes the kernel declared, when known (sanitizers)


@dataclass
class Counters:
    wave_insts: int = 0
    lane_ops: int = 0
    waves: int = 0

    def __iadd__(self, other: "Counters") -> "Counters":
        self.wave_insts += other.wave_insts
        self.lane_ops += other.lane_ops
        self.waves += other.waves
        return self


@dataclass
class Context:
    """Per-batch state the core owns; reachable from every group as `group.ctx`."""
    mem: AddressSpace
    code_address: int
    waves_per_group: int
    lanes: int
    lds: np.ndarray                 # uint8 (workgroups * lds_bytes,)
    lds_bytes: int
    scratch: Scratch                # where each lane's private bytes live (scratch.py)
    first_wave: int                 # global id of the batch's first wave
    ended: np.ndarray = field(default=None)   # waves ended per workgroup of the batch
    steps: int = 0
    sanitizer: Session | None = None          # the dispatch's checkers when GPUTWIN_SANITIZE is set

    def aperture(self, index: int) -> int:
        return {235: SHARED_APERTURE_HI, 236: SHARED_APERTURE_HI, 237: PRIVATE_APERTURE_HI,
                238: PRIVATE_APERTURE_HI}[index]

    def clock(self) -> int:
        return self.steps


def _mode(rsrc1: int) -> int:
    """MODE register from COMPUTE_PGM_RSRC1: FLOAT_MODE [19:12], DX10_CLAMP [21], IEEE [23], FP16_OVFL [26]."""
    return ((rsrc1 >> 12) & 0xFF) | ((rsrc1 >> 21) & 1) << 8 | ((rsrc1 >> 23) & 1) << 9 | ((rsrc1 >> 26) & 1) << 23


def _fetch(mem: AddressSpace, d: Dispatch, arch: str, sanitize: bool) -> tuple[Program, int, int]:
    """(program, its base address, the entry's byte offset in it). Mapped code is decoded from the start
    of its mapping, so calls to functions placed before the kernel (clang -O0 helpers) run too."""
    if d.code is not None:
        return program_for(d.code, arch, d.wave64, sanitize), d.code_address, 0
    region = mem.find(d.code_address)
    if region is None:
        raise MemoryFault("instruction fetch from unmapped address", address=d.code_address, pc=d.code_address)
    return program_at(region.data, 0, arch, d.wave64, sanitize), region.base, d.code_address - region.base


def run_dispatch(mem: AddressSpace, dispatch: Dispatch, *, arch: str = "gfx1100",
                 watchdog_s: float | None = None, watchdog_insts: int | None = None) -> Counters:
    """Run every workgroup of `dispatch` to completion; returns the executed-work counters.
    A GpuFault leaves with the arch, the dispatch's code address and (illegal instructions, traps) the
    instruction at its pc filled in.

    The watchdog (gputwin/emu/watchdog.py) is the current scope's when one is open (GPU.run opens one per
    doorbell) and no limit is given here, else a new one: `watchdog_s` / `watchdog_insts` override
    GPUTWIN_WATCHDOG_S / GPUTWIN_WATCHDOG_INSTS."""
    d = dispatch
    session = Session.from_env(d.code_address, tuple(int(v) for v in d.grid), int(np.prod(d.block)),
                               d.group_segment)
    try:
        counters = _run_dispatch(mem, dispatch, arch, watchdog_s, watchdog_insts, session)
        if session is not None:
            session.finish()
        return counters
    except GpuFault as e:
        if session is not None:
            try:
                session.finish(e)
            except SanitizerError as found:
                e = found
        if e.arch is None:
            e.arch = arch
        if e.code_address is None:
            e.code_address = dispatch.code_address
        if e.instruction is None and e.pc is not None and e.kind in ("illegal_instruction", "trap"):
            e.instruction = _instruction_at(mem, dispatch, e.pc, arch)
        raise e


def _instruction_at(mem: AddressSpace, d: Dispatch, pc: int, arch: str) -> str | None:
    """The instruction at `pc` as LLVM prints it, else its first word as `.long`; None if unreadable."""
    from gputwin.emu.amd.isa import decode, inst_text
    if d.code is not None:
        off = pc - d.code_address
        data = bytes(d.code[off:off + 16]) if off >= 0 else b""
    else:
        region = mem.find(pc)
        data = bytes(region.data[pc - region.base:pc - region.base + 16]) if region is not None else b""
    if len(data) < 4:
        return None
    try:
        return inst_text(decode(data, arch, 0, wave64=d.wave64), arch, d.wave64)
    except Exception:   # noqa: BLE001 - bytes that are no instruction (or that the printer refuses)
        return f".long {int.from_bytes(data[:4], 'little'):#010x}"


def _run_dispatch(mem: AddressSpace, dispatch: Dispatch, arch: str, watchdog_s: float | None,
                  watchdog_insts: int | None, session: Session | None) -> Counters:
    if arch != "gfx1100" and arch not in gfx12.ARCHES and arch != cdna3.ARCH:
        raise IllegalInstruction(f"architecture {arch} is not modelled by the RDNA3 emulator")
    if arch == cdna3.ARCH:
        cdna3.check_dispatch(dispatch.wave64)
    mode_bits.check_descriptor(dispatch.rsrc1, dispatch.rsrc2)
    wd = watchdog.current() if watchdog_s is None and watchdog_insts is None else None
    if wd is None:
        wd = watchdog.Watchdog(watchdog_s, watchdog_insts)
    prog, base, entry = _fetch(mem, dispatch, arch, session is not None)
    d = dispatch
    gx, gy, gz = (int(v) for v in d.grid)
    bx, by, bz = (int(v) for v in d.block)
    if min(gx, gy, gz, bx, by, bz) < 1 or bx * by * bz > 1024:
        raise ValueError(f"bad dispatch shape grid={d.grid} block={d.block}")
    lanes = 64 if d.wave64 else 32
    wpg = -(-(bx * by * bz) // lanes)
    nwg = gx * gy * gz
    vgprs = ((d.rsrc1 & 0x3F) + 1) * (4 if d.wave64 else 8)        # granulated VGPR count (gfx10+)
    if arch == cdna3.ARCH:
        vgprs = cdna3.vgpr_count(d.rsrc1)                           # VGPRs + AGPRs, granules of 8
    per_lane = max(4 * vgprs, int(d.scratch_bytes_per_lane))
    batch_lanes = min(MAX_BATCH_LANES, MAX_BATCH_STATE_BYTES // per_lane)
    per_batch = max(1, batch_lanes // (wpg * lanes))
    if d.scratch_base is not None and d.scratch_bytes_per_lane:
        per_batch = min(per_batch, _scratch_slots(mem, d, lanes) // wpg)   # waves in flight hold one slot each
    counters = Counters()
    progress = Progress(f"{arch} dispatch", nwg * wpg)
    try:
        for first in range(0, nwg, per_batch):
            if wd.expired():          # a grid of many short batches: each is too quick to check inside
                raise wd.hang(wd.time_cause(), f"{progress.waves_done} of {progress.waves_total} waves "
                              f"finished, {progress.wave_insts} wave-instructions executed; no wave running "
                              f"(next workgroup {first} of {nwg})")
            wgs = np.arange(first, min(nwg, first + per_batch))
            counters += _run_batch(mem, d, prog, base, entry, wgs, wpg, lanes, wd, progress, session)
            progress.waves_done, progress.wave_insts = counters.waves, counters.wave_insts
            progress.show()
    finally:
        progress.close()
        prog.snapshot()
    return counters


def _scratch_slots(mem: AddressSpace, d: Dispatch, lanes: int) -> int:
    """Wave slots of the scratch backing that a batch may use; MemoryFault when the backing is not mapped
    or cannot hold one workgroup's waves (the hardware would never launch it)."""
    region = mem.find(d.scratch_base)
    if region is None:
        raise MemoryFault("scratch backing (COMPUTE_DISPATCH_SCRATCH_BASE) is not mapped", address=d.scratch_base,
                          pc=d.code_address)
    wave_bytes = int(d.scratch_bytes_per_lane) * lanes
    room = (region.end - d.scratch_base) // wave_bytes
    slots = room if d.scratch_waves is None else int(d.scratch_waves)
    if slots > room:
        raise MemoryFault(f"scratch backing mapping holds {room} wave slots of {wave_bytes} bytes, fewer than the "
                          f"{slots} that COMPUTE_TMPRING_SIZE promises", address=d.scratch_base, pc=d.code_address)
    wpg = -(-int(np.prod(d.block)) // lanes)
    if slots < wpg:
        raise MemoryFault(f"scratch backing holds {slots} wave slots of {wave_bytes} bytes (TMPRING_SIZE and its "
                          f"mapping), fewer than the {wpg} waves of one workgroup", address=d.scratch_base,
                          pc=d.code_address)
    return slots


def _scratch_for(mem: AddressSpace, d: Dispatch, nwaves: int, lanes: int, first_wave: int) -> Scratch:
    """The batch's private memory: slots 0..nwaves-1 of the backing when one is given, else emulator memory."""
    per_lane = int(d.scratch_bytes_per_lane)
    if d.scratch_base is None or not per_lane:
        return Scratch(np.zeros(nwaves * lanes * per_lane, np.uint8), per_lane, lanes, first_wave, nwaves)
    region = mem.find(d.scratch_base)
    return Scratch(region.data, per_lane, lanes, first_wave, nwaves, base=d.scratch_base - region.base,
                   swizzled=True)


def _run_batch(mem, d: Dispatch, prog, base: int, entry: int, wgs: np.ndarray, wpg: int, lanes: int,
               wd, progress: Progress, session: Session | None) -> Counters:
    gx, gy = int(d.grid[0]), int(d.grid[1])
    bx, by, bz = (int(v) for v in d.block)
    nb = wgs.size
    lds_bytes = max(((d.rsrc2 >> 15) & 0x1FF) * LDS_GRANULE, int(d.lds_bytes))
    if lds_bytes > MAX_LDS:
        raise ValueError(f"LDS of {lds_bytes} bytes exceeds the {MAX_LDS} bytes a workgroup can have")
    nwaves = nb * wpg
    ctx = Context(mem=mem, code_address=base, waves_per_group=wpg, lanes=lanes,
                  lds=np.zeros(nb * lds_bytes, np.uint8), lds_bytes=lds_bytes,
                  scratch=_scratch_for(mem, d, nwaves, lanes, int(wgs[0]) * wpg), first_wave=int(wgs[0]) * wpg,
                  ended=np.zeros(nb, np.int64), sanitizer=session)
    if session is not None:
        session.start_batch(nb * lds_bytes, nb)
    # work-items of one workgroup: flat id = wave-in-group * lanes + lane; packed x | y << 10 | z << 20 in v0
    flat = np.arange(wpg * lanes).reshape(wpg, lanes)
    tid_cnt = (d.rsrc2 >> 11) & 3
    x, y, z = flat % bx, (flat // bx) % by, flat // (bx * by)
    v0 = (x | (y << 10 if tid_cnt >= 1 else 0) | (z << 20 if tid_cnt >= 2 else 0)).astype(np.uint32)
    local_wg = np.repeat(np.arange(nb), wpg)
    rdna4 = prog.arch in gfx12.ARCHES
    mode = gfx12.initial_mode(d.rsrc1) if rdna4 else _mode(d.rsrc1)
    g = WaveGroup(ctx, int(wgs[0]) * wpg + np.arange(nwaves), local_wg, wave64=d.wave64, mode=mode, pc=entry,
                  exec_mask=np.tile(flat < bx * by * bz, (nb, 1)))
    if rdna4:
        gfx12.init_sgprs(g, d, wgs[local_wg], gx, gy, wpg)
    else:
        _init_sgprs(g, d, wgs[local_wg], gx, gy)
    g.put_vgpr(0, np.tile(v0, (nb, 1)))          # every lane, active or not, gets its ids
    ex = Executor(ctx, prog, wd, progress=progress)
    ex.run([g])
    return Counters(ex.wave_insts, ex.lane_ops, nwaves)


def _init_sgprs(g: WaveGroup, d: Dispatch, wg_ids: np.ndarray, gx: int, gy: int) -> None:
    count = (d.rsrc2 >> 1) & 0x1F
    user = [int(v) & 0xFFFFFFFF for v in d.user_sgprs]
    if count and len(user) > count:
        raise ValueError(f"{len(user)} user SGPR values but RSRC2.USER_SGPR is {count}")
    count = max(count, len(user))           # RSRC2 left 0 (hand-made dispatches): the values given
    for i, v in enumerate(user):
        g.s[i] = v
    i = count
    ids = (wg_ids % gx, (wg_ids // gx) % gy, wg_ids // (gx * gy))
    for bit, comp in ((7, 0), (8, 1), (9, 2)):
        if d.rsrc2 >> bit & 1:
            g.s[i] = ids[comp]
            i += 1
    if d.rsrc2 >> 10 & 1:      # workgroup info (gfx10.3+): waves in the workgroup [5:0], wave id [24:20]
        wpg = g.ctx.waves_per_group
        g.s[i] = wpg | (g.waves % wpg).astype(np.uint32) << 20
        i += 1
    if d.rsrc2 & 1:      # private segment wave byte offset: the wave's slot in the backing (0 without one)
        sc = g.ctx.scratch
        g.s[i] = ((g.waves - sc.first_wave) * (sc.lanes * sc.per_lane)).astype(np.uint32) if sc.swizzled else 0
