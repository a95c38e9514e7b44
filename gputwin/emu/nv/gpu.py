"""The emulated NVIDIA GPU as a whole: an arch profile, one GPU virtual address space, GPFIFO channels
and a deterministic GPU clock.

Execution is synchronous: a doorbell (a work-submit token written to the usermode region) runs every
channel of the GPU, round after round, until none can make progress (a channel waiting on a semaphore
acquire parks and is retried each round). What RM must hear goes to `NVGPU.listener` as a `GpuEvent`:
"nonstall" for NON_STALL_INTERRUPT, "memory_fault" (an MMU fault, error is the MemoryFault), "hang"
(GpuHang) and "error" (a method, class or shader the emulator rejects). A fault or hang stops the channel
it happened on; with no listener the first one is raised to whoever rang the doorbell.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from gputwin.abi.nv_classes import CBANK0_PARAM_OFFSET
from gputwin.emu import watchdog
from gputwin.emu.engine import UnitRunner
from gputwin import sanitizer_config
from gputwin.emu.memory import AddressSpace
from gputwin.emu.sanitizer.queues import QueueRaces
from gputwin.errors import GpuHang


@dataclass(frozen=True)
class NVProfile:
    """What distinguishes one modelled chip."""
    arch: str                    # sm_NN
    name: str
    device_id: int               # PCI device id
    sm_version: int              # NV2080_CTRL_GR_INFO_SM_VERSION encoding: major << 8 | minor
    gpcs: int
    tpc_per_gpc: int
    sm_per_tpc: int
    max_warps_per_sm: int
    vram_bytes: int
    channel_class: int           # *_CHANNEL_GPFIFO_A
    compute_class: int           # *_COMPUTE_A
    copy_class: int              # *_DMA_COPY_A
    usermode_class: int          # *_USERMODE_A
    max_shared_bytes: int        # per block

    @property
    def cbank0_param_offset(self) -> int:
        """Where kernel parameters start in constant bank 0 (c[0x0][...])."""
        return CBANK0_PARAM_OFFSET[self.compute_class]

    @property
    def sm_count(self) -> int:
        return self.gpcs * self.tpc_per_gpc * self.sm_per_tpc


PROFILES: dict[str, NVProfile] = {p.arch: p for p in (
    NVProfile("sm_90", "H100 SXM5 (emulated)", 0x2330, 0x900, gpcs=8, tpc_per_gpc=9, sm_per_tpc=2,
              max_warps_per_sm=64, vram_bytes=80 << 30, channel_class=0xC86F, compute_class=0xCBC0,
              copy_class=0xC8B5, usermode_class=0xC661, max_shared_bytes=227 << 10),
    NVProfile("sm_80", "A100 SXM4 (emulated)", 0x20B0, 0x800, gpcs=8, tpc_per_gpc=7, sm_per_tpc=2,
              max_warps_per_sm=64, vram_bytes=40 << 30, channel_class=0xC56F, compute_class=0xC6C0,
              copy_class=0xC6B5, usermode_class=0xC561, max_shared_bytes=163 << 10),
)}


@dataclass
class GpuEvent:
    kind: str                                  # nonstall, memory_fault, hang, error
    channel: object
    error: BaseException | None = None


@dataclass
class _Stats:
    methods: int = 0
    gp_entries: int = 0
    launches: int = 0
    copies: int = 0
    copy_bytes: int = 0
    warps: int = 0
    warp_insts: int = 0
    lane_ops: int = 0
    rounds: int = 0
    events: list = field(default_factory=list)


class NVGPU(UnitRunner):
    """One emulated NVIDIA GPU."""

    QUIET_KIND = "nonstall"

    NS_PER_METHOD = 32      # the deterministic clock: every executed method advances it by this many ns

    def __init__(self, arch: str = "sm_90", *, name: str | None = None):
        if arch not in PROFILES:
            raise ValueError(f"unknown NV arch {arch!r}; modelled: {', '.join(PROFILES)}")
        self.profile, self.arch = PROFILES[arch], arch
        self.name = name or arch
        self.mem = AddressSpace(f"{self.name} GPU VM")
        if "racecheck" in sanitizer_config.checkers():     # across channels: read when the GPU is made
            self.mem.queue_races = QueueRaces()
        self.channels: dict[int, object] = {}         # work-submit token -> Channel
        self.listener = None
        self.stats = _Stats()
        self._lock = threading.RLock()
        self._running = False
        self._ns = 0

    # --- channels ------------------------------------------------------------------------------------
    def create_channel(self, gpfifo_va: int, entries: int, userd, name: str = ""):
        """A GPFIFO channel; `userd` is the host bytes (uint8 array) of its USERD block."""
        from gputwin.emu.nv.channel import Channel
        with self._lock:
            token = max(self.channels, default=0) + 1
            ch = Channel(self, gpfifo_va, entries, userd, token, name or f"ch{token}")
            self.channels[token] = ch
            return ch

    def destroy_channel(self, ch) -> None:
        with self._lock:
            self.channels.pop(ch.token, None)

    # --- the doorbell and execution --------------------------------------------------------------------
    def doorbell(self, token: int) -> None:
        """NVC361_NOTIFY_CHANNEL_PENDING written with a work-submit token."""
        with self._lock:
            ch = self.channels.get(token)
            if ch is None:
                return      # hardware ignores a token of no channel; RM would log it
            ch.pending = True
            self.run()

    def run(self) -> None:
        with self._lock:
            if self._running:
                return
            self._running = True
            try:
                with watchdog.scope() as wd:    # one run is one scope: its launches share the deadline
                    progress = True
                    while progress:
                        progress = False
                        self.stats.rounds += 1
                        for ch in list(self.channels.values()):
                            while ch.runnable() and self._step(ch):
                                progress = True
                                if wd.expired():
                                    self._stop(ch, GpuEvent("hang", ch, GpuHang(
                                        f"{ch.describe()} still running after the watchdog: {wd.time_cause()}")))
            finally:
                self._running = False

    def _event(self, kind: str, ch, error: BaseException | None) -> GpuEvent:
        return GpuEvent(kind, ch, error)

    # --- the clock ---------------------------------------------------------------------------------------
    def tick(self) -> None:
        self._ns += self.NS_PER_METHOD

    def timestamp_ns(self) -> int:
        """GPU time in ns (PTIMER): deterministic, advanced only by executed methods."""
        return self._ns
