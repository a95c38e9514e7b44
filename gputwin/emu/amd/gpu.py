"""The emulated AMD GPU as a whole: one arch profile, one GPU address space, queues with doorbells, and
the engines that run them (the PM4 compute front end in cp.py, the SDMA copy engine in sdma.py).

Execution is synchronous and deterministic: a doorbell write sets the queue's write pointer and runs every
queue of the GPU, round after round, until no queue can make progress (a queue waiting on memory parks and
is retried each round). What the hardware would tell the kernel driver (end-of-pipe / trap interrupts,
memory faults, hangs and rejected packets) goes to `GPU.listener` as a `GpuEvent`; a fault or hang stops
the queue it happened on. With no listener, the first fault is raised to whoever rang the doorbell.
One run is one watchdog scope (gputwin/emu/watchdog.py): its wall-clock limit (GPUTWIN_WATCHDOG_S) spans
every packet and dispatch of the run; a queue still making progress past it is a hang.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from gputwin import sanitizer_config
from gputwin.emu import watchdog
from gputwin.emu.engine import UnitRunner
from gputwin.emu.memory import AddressSpace
from gputwin.emu.sanitizer.queues import QueueRaces


@dataclass(frozen=True)
class ArchProfile:
    """What distinguishes one modelled chip: identity, shader array shape, memory, engines."""
    arch: str
    marketing_name: str
    gfx_target_version: int          # KFD topology encoding: major*10000 + minor*100 + stepping
    device_id: int
    wave_size: int                   # default wave size (topology wave_front_size)
    wave32: bool                     # whether COMPUTE_DISPATCH_INITIATOR.CS_W32_EN may select wave32
    simd_per_cu: int
    cu_count: int
    array_count: int                 # shader arrays in total
    cu_per_simd_array: int           # as topology reports it (the most any array has)
    simd_arrays_per_engine: int
    max_waves_per_simd: int
    lds_size_in_kb: int
    local_mem_size: int              # bytes of VRAM reported and allocatable
    num_sdma_engines: int
    num_xcc: int = 1
    max_slots_scratch_cu: int = 32
    scratch_wave_granule: int = 256  # COMPUTE_TMPRING_SIZE.WAVESIZE unit, bytes per wave
    fw_version: int = 2040

    @property
    def simd_count(self) -> int:
        return self.simd_per_cu * self.cu_count


PROFILES: dict[str, ArchProfile] = {p.arch: p for p in (
    ArchProfile("gfx1100", "Radeon RX 7900 XTX (emulated)", 110000, 0x744C, wave_size=32, wave32=True,
                simd_per_cu=2, cu_count=96, array_count=12, cu_per_simd_array=8, simd_arrays_per_engine=2,
                max_waves_per_simd=16,
                lds_size_in_kb=64, local_mem_size=24 << 30, num_sdma_engines=2),
    ArchProfile("gfx1201", "Radeon RX 9070 XT (emulated)", 120001, 0x7550, wave_size=32, wave32=True,
                simd_per_cu=2, cu_count=64, array_count=8, cu_per_simd_array=8, simd_arrays_per_engine=2,
                max_waves_per_simd=16,
                lds_size_in_kb=64, local_mem_size=16 << 30, num_sdma_engines=2),
    ArchProfile("gfx942", "Instinct MI300X (emulated)", 90402, 0x74A1, wave_size=64, wave32=False,
                simd_per_cu=4, cu_count=304, array_count=32, cu_per_simd_array=10, simd_arrays_per_engine=1,
                max_waves_per_simd=8,
                lds_size_in_kb=64, local_mem_size=192 << 30, num_sdma_engines=16, num_xcc=8,
                scratch_wave_granule=1024),
)}


@dataclass
class GpuEvent:
    """Something the GPU reports to its kernel driver.

    kind: "interrupt" (RELEASE_MEM INT_SEL / SDMA TRAP; ctx_id is the packet's interrupt context),
    "memory_fault" (error is the MemoryFault, with address), "hang" (GpuHang), "error" (a packet or shader
    the emulator rejects: unknown opcode, illegal instruction, ...)."""
    kind: str
    queue: "Queue"
    ctx_id: int = 0
    error: BaseException | None = None


class Queue:
    """A ring buffer in GPU memory with read/write pointers, processed by one engine.

    Pointers are kept in bytes, unwrapped (64-bit, monotonically increasing); `ptr_unit` is the unit the
    doorbell and the read-pointer report use (dwords for PM4, bytes for SDMA)."""
    kind = "queue"
    ptr_unit = 4

    def __init__(self, gpu: "GPU", ring_va: int, ring_bytes: int, rptr_va: int, wptr_va: int, name: str):
        if ring_bytes <= 0 or ring_bytes & (ring_bytes - 1) or ring_bytes % 4:
            raise ValueError(f"ring size {ring_bytes} is not a power of two")
        self.gpu, self.ring_va, self.ring_bytes = gpu, ring_va, ring_bytes
        self.rptr_va, self.wptr_va, self.name = rptr_va, wptr_va, name
        self.rptr = 0          # bytes consumed
        self.wptr = 0          # bytes written by the host, from the doorbell
        self.stopped = False   # after a fault or hang, as KFD leaves a faulting queue
        self.enabled = True    # KFD deactivates a queue with queue_percentage 0 or no ring
        self.error: BaseException | None = None
        self.parked = False    # waiting on memory at the current packet

    # --- the ring ---------------------------------------------------------------------------------
    def ring_offset(self, pos: int | None = None) -> int:
        return (self.rptr if pos is None else pos) % self.ring_bytes

    def ring_dwords(self, pos: int, n: int) -> list[int]:
        """n dwords of the ring from unwrapped byte position pos, wrapping at the end."""
        mem, out = self.gpu.mem, []
        while n:
            off = pos % self.ring_bytes
            take = min(n, (self.ring_bytes - off) // 4)
            out += mem.view(self.ring_va + off, 4 * take).view("<u4").tolist()
            pos, n = pos + 4 * take, n - take
        return out

    def available(self) -> int:
        return self.wptr - self.rptr

    def report_rptr(self) -> None:
        self.gpu.mem.write_u64(self.rptr_va, self.rptr // self.ptr_unit)

    def set_wptr(self, value: int) -> None:
        self.wptr = (int(value) & 0xFFFFFFFFFFFFFFFF) * self.ptr_unit

    def describe(self, pos: int | None = None) -> str:
        return f"{self.kind} queue {self.name} at ring offset {self.ring_offset(pos):#x}"

    def step(self) -> bool:
        """Process one packet; False when the queue cannot progress (empty, incomplete or waiting)."""
        raise NotImplementedError


@dataclass
class _Stats:
    packets: int = 0
    dispatches: int = 0
    rounds: int = 0
    wave_insts: int = 0   # summed over every dispatch's emulator counters
    lane_ops: int = 0
    waves: int = 0
    events: list = field(default_factory=list)


class GPU(UnitRunner):
    """One emulated AMD GPU of a given arch."""

    QUIET_KIND = "interrupt"

    def __init__(self, arch: str = "gfx1100", *, name: str | None = None):
        if arch not in PROFILES:
            raise ValueError(f"unknown AMD arch {arch!r}; modelled: {', '.join(PROFILES)}")
        self.profile = PROFILES[arch]
        self.arch = arch
        self.name = name or arch
        self.mem = AddressSpace(f"{self.name} GPU VM")
        if "racecheck" in sanitizer_config.checkers():     # across queues: read when the GPU is made
            self.mem.queue_races = QueueRaces()
        self.queues: list[Queue] = []
        self.listener = None            # callable(GpuEvent) -> None, set by the kernel driver
        self.stats = _Stats()
        self._lock = threading.RLock()
        self._running = False
        self._clock0 = time.monotonic_ns()

    # --- queues ------------------------------------------------------------------------------------
    def create_compute_queue(self, ring_va: int, ring_bytes: int, rptr_va: int, wptr_va: int,
                             name: str = "") -> Queue:
        from gputwin.emu.amd.cp import ComputeQueue
        return self._add(ComputeQueue(self, ring_va, ring_bytes, rptr_va, wptr_va, name or f"pm4{len(self.queues)}"))

    def create_sdma_queue(self, ring_va: int, ring_bytes: int, rptr_va: int, wptr_va: int,
                          name: str = "") -> Queue:
        from gputwin.emu.amd.sdma import SdmaQueue
        return self._add(SdmaQueue(self, ring_va, ring_bytes, rptr_va, wptr_va, name or f"sdma{len(self.queues)}"))

    def _add(self, q: Queue) -> Queue:
        with self._lock:
            self.queues.append(q)
        return q

    def destroy_queue(self, q: Queue) -> None:
        with self._lock:
            self.queues.remove(q)

    # --- doorbells and execution -------------------------------------------------------------------
    def ring_doorbell(self, q: Queue, value: int) -> None:
        """A doorbell write: the new write pointer (in the queue's pointer unit), then run."""
        with self._lock:
            q.set_wptr(value)
            self.run()

    def run(self) -> None:
        """Run queues until none can make progress. Re-entrant calls (from a listener) are no-ops."""
        with self._lock:
            if self._running:
                return
            self._running = True
            try:
                with watchdog.scope() as wd:
                    progress = True
                    while progress:
                        progress = False
                        self.stats.rounds += 1
                        for q in list(self.queues):
                            while q.enabled and not q.stopped and self._step(q):
                                progress = True
                                if wd.expired():   # e.g. a write pointer far past the packets
                                    self._stop(q, GpuEvent("hang", q, error=wd.hang(
                                        wd.time_cause(), f"{q.describe()} still running")))
            finally:
                self._running = False

    def _event(self, kind: str, q: Queue, error: BaseException | None) -> GpuEvent:
        return GpuEvent(kind, q, error=error)

    # --- clocks ------------------------------------------------------------------------------------
    GPU_CLOCK_HZ = 100_000_000

    def gpu_clock(self) -> int:
        """The 100 MHz GPU counter RELEASE_MEM / COPY_DATA / SDMA TIMESTAMP report (monotonic)."""
        return (time.monotonic_ns() - self._clock0) // 10
