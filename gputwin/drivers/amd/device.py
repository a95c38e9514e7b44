"""AMDDevice: the public device API for an AMD GPU behind KFD (real /dev/kfd or gputwin's mock).

Compute work goes to a PM4 queue (KFD_IOC_QUEUE_TYPE_COMPUTE), copies to an SDMA queue; both rings,
their pointers, the timeline signal, kernel arguments and copy staging live in GTT memory mapped for the
CPU at the same address the GPU uses. User buffers and code live in VRAM and are reached only by the
copy engine and the shaders.
"""
from __future__ import annotations

import ctypes
import time

from gputwin.abi import kfd_ioctl as kfd
from gputwin.abi.kfd_fault_record import GPUTWIN_FAULT_MAGIC, GPUTWIN_FAULT_VERSION, gputwin_fault_record
from gputwin.drivers.amd.hcq_device import AMDHCQDevice
from gputwin.drivers.amd.kfd import KFD, PAGE, KFDGpu
from gputwin.drivers.amd.pm4 import AMDComputeQueue
from gputwin.drivers.amd.ring import Ring
from gputwin.drivers.amd.sdma import AMDCopyQueue
from gputwin.drivers.hcq import Buffer, SlotRing, TimelineSignal, round_up, watchdog_s
from gputwin.drivers.kernel import Kernel
from gputwin.errors import GpuFault, GpuHang, MemoryFault

RING_SIZE = 64 << 10
KERNARG_POOL = 1 << 20
EOP_SIZE = 0x1000
# per-CU context-save sizes (amdkfd kfd_queue.c: VGPRs, SGPRs, LDS, HW registers) for the CWSR area
_CWSR_SGPR, _CWSR_LDS, _CWSR_HWREG = 0x4000, 0x10000, 0x1000
_CWSR_VGPR_1_5X = ("gfx1100", "gfx1101", "gfx1151", "gfx1200", "gfx1201")   # 1.5x register file


class AMDDevice(AMDHCQDevice):
    kernarg_pool_size = KERNARG_POOL
    ring_size = RING_SIZE

    def __init__(self, kernel: Kernel, index: int = 0):
        self.index = index
        self.gpu = KFDGpu(KFD.of(kernel), index)
        self.arch, self.name = self.gpu.arch, f"AMD:{index} ({self.gpu.arch})"
        self.props = self.gpu.props
        self._events = None
        self._queues: list[int] = []
        try:
            super().__init__()
            self._setup_events()
            self.compute_ring = self._create_ring(kfd.KFD_IOC_QUEUE_TYPE_COMPUTE, "compute", unit=4, contiguous=False)
            self.copy_ring = self._create_ring(kfd.KFD_IOC_QUEUE_TYPE_SDMA, "sdma", unit=1, contiguous=True)
            self._kernargs = self._alloc(self.kernarg_pool_size, host=True)
            self._kernarg_ring = SlotRing(self._kernargs, self.synchronize)
        except BaseException:
            self._release()
            raise

    # --- setup ---------------------------------------------------------------------------------------
    def _setup_events(self) -> None:
        types = (kfd.KFD_IOC_EVENT_SIGNAL, kfd.KFD_IOC_EVENT_MEMORY, kfd.KFD_IOC_EVENT_HW_EXCEPTION)
        self._events = (kfd.kfd_event_data * 3)()
        mailboxes = []
        for slot, t in zip(self._events, types):
            slot.event_id, mailbox = self.gpu.create_event(t, auto_reset=t == kfd.KFD_IOC_EVENT_SIGNAL)
            mailboxes.append(mailbox)
        self.signal_event = (self._events[0].event_id, mailboxes[0])
        # gputwin's mock KFD says what faulted here; real KFD leaves the record untouched (kfd_fault_record.py)
        self._fault = gputwin_fault_record(magic=GPUTWIN_FAULT_MAGIC, size=ctypes.sizeof(gputwin_fault_record),
                                           version=GPUTWIN_FAULT_VERSION)
        for slot in self._events[1:]:
            slot.kfd_event_data_ext = ctypes.addressof(self._fault)

    def _cwsr_sizes(self) -> tuple[int, int, int]:
        """(ctx_save_restore_size, ctl_stack_size, bytes to allocate) for a compute queue's context-save
        area, as amdkfd computes them (kfd_queue.c) and, on newer kernels, reports them in the topology."""
        p = self.gpu.props
        xcc = max(p.get("num_xcc", 1), 1)
        cus = p.get("simd_count", 0) // max(p.get("simd_per_cu", 1), 1) // xcc
        gfx10_plus = not self.arch.startswith("gfx9")
        waves = cus * 32 if gfx10_plus else -(-cus * 32 // max(p.get("simd_per_cu", 4), 1))
        ctl = p.get("ctl_stack_size") or round_up((12 if gfx10_plus else 8) * waves + 8 + 40, PAGE)
        vgpr = 0x60000 if self.arch in _CWSR_VGPR_1_5X else 0x40000 if gfx10_plus else 0x80000
        cwsr = p.get("cwsr_size") or ctl + round_up((vgpr + _CWSR_SGPR + _CWSR_LDS + _CWSR_HWREG) * cus, PAGE)
        debug = round_up(waves * 32, 64)   # the debugger's per-wave bytes follow each XCC's area
        return cwsr, ctl, round_up((cwsr + debug) * xcc, PAGE)

    def _create_ring(self, queue_type: int, what: str, unit: int, contiguous: bool) -> Ring:
        ring = self.gpu.alloc(self.ring_size, "gtt", cpu_access=True, uncached=True)
        ptrs = self.gpu.alloc(PAGE, "gtt", cpu_access=True, uncached=True)   # rptr at 0, wptr at 8
        eop = ctx = None
        ctx_size = ctl_size = 0
        if queue_type == kfd.KFD_IOC_QUEUE_TYPE_COMPUTE:
            eop = self.gpu.alloc(EOP_SIZE, "vram")
            ctx_size, ctl_size, total = self._cwsr_sizes()
            ctx = self.gpu.alloc(total, "vram")
        qid, doorbells, offset = self.gpu.create_queue(queue_type, ring, ptrs.va, ptrs.va + 8, eop, ctx, ctx_size,
                                                       ctl_size)
        self._queues.append(qid)
        self._queue_names[qid] = f"{what} queue {qid}"
        return Ring(f"{self.name} {what} queue {qid}", ring.host_addr, ring.size, ptrs.host_addr, ptrs.host_addr + 8,
                    doorbells, offset, unit, contiguous, self._sleep, watchdog_s)

    def _apertures(self) -> tuple[int, int]:
        return self.gpu.apertures.scratch_base, self.gpu.apertures.lds_base

    # --- HCQDevice hooks -------------------------------------------------------------------------------
    def _alloc(self, size: int, host: bool = False) -> Buffer:
        mem = self.gpu.alloc(size, "gtt" if host else "vram", cpu_access=host, uncached=host)
        return Buffer(self, mem.va, size, mem.host_addr, mem)

    def _free(self, buf: Buffer) -> None:
        self.gpu.free(buf.meta)

    def _new_signal(self) -> TimelineSignal:
        return TimelineSignal(self._alloc(PAGE, host=True))

    def _compute_queue(self) -> AMDComputeQueue:
        return AMDComputeQueue(self.signal_event)

    def _copy_queue(self) -> AMDCopyQueue:
        return AMDCopyQueue(self.signal_event)

    def _sleep(self, timeout_s: float) -> None:
        t0 = time.monotonic()
        result = self.gpu.wait_events(self._events, max(1, int(timeout_s * 1000)))
        mem, hw = self._events[1].memory_exception_data, self._events[2].hw_exception_data
        if self.gpu.gpu_id in (hw.gpu_id, mem.gpu_id):
            raise self._fault_error(mem, hw)
        if hw.gpu_id or mem.gpu_id:   # another GPU of the process faulted: its own device reports it, and
            self._rearm_fault_events()   # amdkfd evicts only the faulting GPU's queues
        if result == kfd.KFD_IOC_WAIT_RESULT_TIMEOUT and time.monotonic() - t0 < timeout_s / 2:
            time.sleep(0.001)   # a kernel that answers "timeout" at once (nothing can change): do not spin hot

    def _rearm_fault_events(self) -> None:
        for slot in self._events[1:]:
            self.gpu.reset_event(slot.event_id)
            ctypes.memset(ctypes.addressof(slot), 0, ctypes.sizeof(slot._u))   # the union leads the struct
        self._fault.valid = 0

    def _fault_error(self, mem, hw) -> BaseException:
        """The exception for a memory-exception / hw-exception event: from the fault record when the kernel
        filled it in (gputwin's mock KFD), else from the standard event data (real KFD)."""
        if self._fault.valid and self._fault.gpu_id == self.gpu.gpu_id:
            return self._record_error(self._fault)
        if hw.gpu_id or mem.ErrorType == kfd.KFD_MEM_ERR_GPU_HANG:   # a reset reports both
            if not hw.gpu_id or hw.reset_cause == kfd.KFD_HW_EXCEPTION_GPU_HANG:   # amdgpu's job timeout
                return GpuHang(f"{self.name}: the GPU hung and was reset (reset type {hw.reset_type})")
            return GpuFault(f"{self.name}: hardware exception (reset cause {hw.reset_cause})", kind="hw_exception",
                            arch=self.arch)
        what = [n for n in ("NotPresent", "ReadOnly", "NoExecute") if getattr(mem.failure, n)]
        return MemoryFault(f"{self.name}: GPU memory fault ({', '.join(what) or 'unknown cause'})",
                           address=mem.va, write=True if mem.failure.ReadOnly else None, arch=self.arch)

    def _release(self) -> None:
        for qid in self._queues:
            try:
                self.gpu.destroy_queue(qid)
            except OSError:
                pass
        self._queues = []
        if self._events is not None:
            for slot in self._events:
                try:
                    self.gpu.destroy_event(slot.event_id)
                except OSError:
                    pass
            self._events = None
        self.gpu.close()

    def __repr__(self) -> str:
        return f"AMDDevice({self.name})"

