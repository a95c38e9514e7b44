"""AMDDevice: the public device API for an AMD GPU behind KFD (real /dev/kfd or gputwin's mock).

Compute work goes to a PM4 queue (KFD_IOC_QUEUE_TYPE_COMPUTE), copies to an SDMA queue; both rings,
their pointers, the timeline signal, kernel arguments and copy staging live in GTT memory mapped for the
CPU at the same address the GPU uses. User buffers and code live in VRAM and are reached only by the
copy engine and the shaders.
"""
from __future__ import annotations

import ctypes
import time

import numpy as np

from gputwin.abi import kfd_ioctl as kfd
from gputwin.abi.code_object import CodeObject, CodeObjectError
from gputwin.abi.kernargs import LaunchInfo, build_kernargs, lds_layout, unsupported_kinds
from gputwin.abi.device_libs import provider
from gputwin.abi.printf import HEADER_BYTES, PrintfFormats, buffer_size, empty_buffer, print_buffer
from gputwin.abi.kfd_fault_record import (GPUTWIN_FAULT_MAGIC, GPUTWIN_FAULT_VERSION, NUMERIC_FACTS,
                                          gputwin_fault_record)
from gputwin.drivers.amd.kfd import KFD, PAGE, KFDGpu
from gputwin.drivers.amd.loader import LoadedKernel, scratch_layout
from gputwin.drivers.amd.pm4 import AMDComputeQueue
from gputwin.drivers.amd.ring import Ring
from gputwin.drivers.amd.sdma import AMDCopyQueue
from gputwin.drivers.hcq import Buffer, HCQDevice, Program, SlotRing, TimelineSignal, round_up, watchdog_s
from gputwin.drivers.kernel import Kernel
from gputwin.emu.sanitizer import config as sanitizer_config
from gputwin.errors import (GpuFault, GpuHang, IllegalInstruction, MemoryFault, PacketError,
                            SanitizerError)

RING_SIZE = 64 << 10
MAX_WORKGROUP_SIZE = 1024   # work-items per workgroup on every supported arch (HSA_AGENT_INFO_WORKGROUP_MAX_SIZE)
GFX12_MAX_GRID_YZ = 1 << 16   # gfx12 hands workgroup ids Y and Z to the kernel in TTMP7[15:0]/[31:16] (AMDGPUUsage)
KERNARG_POOL = 1 << 20
EOP_SIZE = 0x1000
# per-CU context-save sizes (amdkfd kfd_queue.c: VGPRs, SGPRs, LDS, HW registers) for the CWSR area
_CWSR_SGPR, _CWSR_LDS, _CWSR_HWREG = 0x4000, 0x10000, 0x1000
_CWSR_VGPR_1_5X = ("gfx1100", "gfx1101", "gfx1151", "gfx1200", "gfx1201")   # 1.5x register file


# how a fault record's kind reads at the head of the message
_WHAT = {"memory": "GPU memory fault", "illegal_instruction": "illegal instruction", "trap": "wave trap",
         "packet": "rejected packet", "hang": "GPU hang", "error": "emulator error",
         "sanitizer": "sanitizer"}


class AMDProgram(Program):
    def __init__(self, device: AMDDevice, kernel: LoadedKernel, image: Buffer, printf: PrintfFormats):
        super().__init__(device, kernel.name)
        self.kernel, self.image = kernel, image   # the image buffer stays alive with the program
        self.printf = printf

    def signature(self) -> str:
        return self.kernel.info.signature()

    def dispatch_args(self, kernargs_va: int, grid, block, lds: int = 0) -> dict:
        dev, k = self.device, self.kernel
        tmpring, scratch_va = dev._scratch_for(k) if k.uses_scratch else (0, 0)
        dev.dispatch_id += 1
        return dict(code_va=k.code_va, rsrc1=k.rsrc1, rsrc2=k.rsrc2(lds), rsrc3=k.rsrc3,
                    user_data=k.user_data(kernargs_va, dev.dispatch_id), grid=grid, block=block, wave32=k.wave32,
                    tmpring_size=tmpring, scratch_va=scratch_va, group_segment=k.lds_bytes + lds)


class AMDDevice(HCQDevice):
    kernarg_pool_size = KERNARG_POOL
    ring_size = RING_SIZE

    def __init__(self, kernel: Kernel, index: int = 0):
        self.index = index
        self.gpu = KFDGpu(KFD.of(kernel), index)
        self.arch, self.name = self.gpu.arch, f"AMD:{index} ({self.gpu.arch})"
        self._programs: dict[bytes, tuple[CodeObject, Buffer, PrintfFormats]] = {}
        self._printf_runs: list[tuple[PrintfFormats, Buffer]] = []   # launch order, not yet printed
        self._printf_free: list[Buffer] = []
        self._events = None
        self._queues: list[int] = []
        self._queue_names: dict[int, str] = {}
        self._entries: dict[int, str] = {}   # code address of every loaded kernel -> its name (for faults)
        self._scratch: tuple[int, int, Buffer] | None = None   # (bytes per lane, TMPRING_SIZE, buffer)
        self.dispatch_id = 0
        self.announces_host_waits = "racecheck" in sanitizer_config.checkers()   # for emulated queues
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

    def _record_error(self, r: gputwin_fault_record) -> BaseException:
        """The GpuFault family member (or GpuHang) a fault record describes, with the kernel's name and the PC
        offset inside it added from what this device loaded."""
        kind = r.kind.decode(errors="replace")
        message = f"{self.name}: {_WHAT.get(kind, 'GPU fault')}: {r.message.decode(errors='replace')}"
        if kind == "hang":
            return GpuHang(message)
        facts = {name: getattr(r, name) for name, bit in NUMERIC_FACTS if r.facts & bit}
        if "write" in facts:
            facts["write"] = bool(facts["write"])
        code, pc = facts.get("code_address"), facts.get("pc")
        facts.update(arch=r.arch.decode(errors="replace") or self.arch,
                     queue=self._queue_names.get(r.queue_id, f"queue {r.queue_id}"),
                     instruction=r.instruction.decode(errors="replace") or None,
                     kernel=self._entries.get(code), kernel_offset=pc - code if None not in (pc, code) else None)
        if kind == "memory":
            return MemoryFault(message, **{"address": 0, **facts})
        if kind == "illegal_instruction":
            return IllegalInstruction(message, **facts)
        if kind == "packet":
            return PacketError(message, **facts)
        if kind == "sanitizer":   # several findings: a head line, then one indented line each
            lines = r.message.decode(errors="replace").split("\n  ")
            return SanitizerError(message, findings=lines[1:] if len(lines) > 1 else lines, **facts)
        return GpuFault(message, kind=kind, **facts)

    # --- programs ----------------------------------------------------------------------------------------
    def load(self, image, name: str) -> AMDProgram:
        """Load kernel `name` of an HSA code object (bytes of a .hsaco, or a parsed CodeObject)."""
        self._check()
        if not isinstance(image, (CodeObject, bytes, bytearray, memoryview)):
            raise TypeError(f"load wants the bytes of a code object (or a CodeObject), got {type(image).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"load wants the kernel's name as a str, got {name!r}")
        data = image.data if isinstance(image, CodeObject) else bytes(image)
        if data not in self._programs:
            co = image if isinstance(image, CodeObject) else CodeObject.parse(data)
            if not co.runs_on(self.arch):
                raise CodeObjectError(f"code object is for {co.arch}, this device is {self.arch}")
            missing = co.undefined_symbols()
            if missing:
                raise CodeObjectError("the code object needs device symbols it does not define: "
                                      + "; ".join(f"{m}, defined by {provider(m)}" for m in missing))
            formats = PrintfFormats.from_metadata(co.metadata)
            buf = self._alloc(co.image_size)
            self.copyin(buf, co.relocated_image(buf.va))
            self._programs[data] = (co, buf, formats)
            self._entries.update((buf.va + k.entry_offset, k.name) for k in co.kernels.values())
        co, buf, formats = self._programs[data]
        info = co.find_kernel(name)
        name = info.name
        bad = unsupported_kinds(info)
        if bad:
            raise CodeObjectError(f"kernel {name}: argument kinds {', '.join(map(repr, bad))} are not supported")
        kernel = LoadedKernel(info, buf.va, self.arch)
        if kernel.code_va % 256:
            raise CodeObjectError(f"kernel {name}: its entry at {kernel.code_va:#x} (image offset "
                                  f"{info.entry_offset:#x}) is not 256-byte aligned, as "
                                  "COMPUTE_PGM_LO (address >> 8) needs")
        if kernel.segment_size > self._kernargs.size:
            raise CodeObjectError(f"kernel {name}: a kernarg segment of {kernel.segment_size} bytes does not fit "
                                  f"the {self._kernargs.size}-byte kernarg pool")
        if kernel.uses_printf and not formats:
            raise CodeObjectError(f"kernel {name} takes a printf buffer but the code object has no amdhsa.printf "
                                  "format strings to print its records with")
        return AMDProgram(self, kernel, buf, formats)

    def _launch(self, program: AMDProgram, args: tuple, grid, block, dims: int, lds: int = 0) -> None:
        self._check()
        k = program.kernel
        if block[0] * block[1] * block[2] > min(k.max_block, MAX_WORKGROUP_SIZE):
            raise ValueError(f"{k.name}: a block of {block} is more than its "
                             f"{min(k.max_block, MAX_WORKGROUP_SIZE)} work-items")
        if any(g * b >= 1 << 32 for g, b in zip(grid, block)):
            raise ValueError(f"{k.name}: grid {grid} x block {block} exceeds 2^32 work-items per dimension")
        if self.arch.startswith("gfx12") and max(grid[1:]) > GFX12_MAX_GRID_YZ:
            raise ValueError(f"{k.name}: grid {grid}: on {self.arch} workgroup ids Y and Z are 16 bits (TTMP7), "
                             f"at most {GFX12_MAX_GRID_YZ} workgroups in Y and Z")
        ap = self.gpu.apertures
        printf_va = self._printf_buffer(program.printf).va if k.uses_printf else 0
        launch = LaunchInfo(grid, block, dims, dynamic_lds=lds, private_base=ap.scratch_base, shared_base=ap.lds_base,
                            printf_buffer=printf_va)
        segment = build_kernargs(k.info, args, launch, self._pointer_of)
        _, dynamic_lds = lds_layout(k.info, args, launch)
        lds_max = self.gpu.props.get("lds_size_in_kb", 64) * 1024
        if k.lds_bytes + dynamic_lds > lds_max:   # refuse before anything is queued
            raise ValueError(f"{k.name}: {k.lds_bytes} bytes of static and {dynamic_lds} of dynamic LDS exceed "
                             f"the {lds_max} bytes a workgroup can have")
        if k.uses_scratch:     # may grow (and synchronize) now, before this launch takes its timeline value
            self._scratch_for(k)
        off = self._kernarg_ring.take(k.segment_size)
        va = self._kernargs.va + off
        view = self._kernargs.host_view()
        view[off:off + len(segment)] = memoryview(segment)
        if k.dispatch_ptr:
            packet = k.dispatch_packet(va, grid, block, dims, dynamic_lds)
            view[off + k.args_size:off + k.args_size + 64] = memoryview(packet)
        self._enqueue(lambda wait, sig: self._compute_queue().wait(self.timeline_signal, wait)
                      .exec(program, va, grid, block, dynamic_lds).signal(self.timeline_signal, sig))

    # --- printf ------------------------------------------------------------------------------------------
    def _printf_buffer(self, formats: PrintfFormats) -> Buffer:
        """The buffer a printf-using launch writes to: the current one while launches come from the same
        code object (records then stay in launch order in one buffer), else a fresh one. Host-visible
        memory, so synchronize reads the records in place."""
        if self._printf_runs and self._printf_runs[-1][0] is formats:
            return self._printf_runs[-1][1]
        size = buffer_size()
        while self._printf_free and self._printf_free[-1].size != size:
            self._free(self._printf_free.pop())
        buf = self._printf_free.pop() if self._printf_free else self._alloc(size, host=True)
        buf.host_view()[:HEADER_BYTES] = np.frombuffer(empty_buffer(size), np.uint8)
        self._printf_runs.append((formats, buf))
        return buf

    def _print_messages(self) -> None:
        """Print the records of every finished printf launch, in launch order, and recycle the buffers."""
        runs, self._printf_runs = self._printf_runs, []
        for formats, buf in runs:
            view = buf.host_view()
            used = min(HEADER_BYTES + int.from_bytes(bytes(view[:4]), "little"), buf.size)
            try:
                print_buffer(formats, bytes(view[:used]), self.name)
            finally:
                view[:used] = 0   # the next run starts from an empty buffer
                self._printf_free.append(buf)

    def synchronize(self) -> None:
        """Wait for all submitted work, then print what its printf calls wrote (also when it faulted)."""
        try:
            super().synchronize()
        finally:
            if self._printf_runs:
                self._print_messages()

    def _scratch_for(self, k: LoadedKernel) -> tuple[int, int]:
        """(COMPUTE_TMPRING_SIZE, scratch base) for a kernel using `k.scratch_per_lane` bytes per lane."""
        if self._scratch is None or self._scratch[0] < k.scratch_per_lane:
            tmpring, size = scratch_layout(k.scratch_per_lane, self.arch, self.gpu.props)
            if self._scratch is not None:
                self.synchronize()
                self._free(self._scratch[2])
            self._scratch = (k.scratch_per_lane, tmpring, self._alloc(size))
        return self._scratch[1], self._scratch[2].va

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

