"""The AMD HCQ device layer shared by the KFD driver (drivers/amd/device.py) and the kernel-less AM driver
(drivers/amd/am/device.py): loading code objects, laying out kernel arguments, launching on the PM4 queue,
scratch, and turning a gputwin fault record into the error a caller sees. Subclasses provide the memory,
the queues and the chip's properties (`props`, `_apertures`)."""
from __future__ import annotations

from gputwin import sanitizer_config
from gputwin.abi.code_object import MAX_WORKGROUP_SIZE, CodeObject, CodeObjectError
from gputwin.abi.device_libs import provider
from gputwin.abi.kernargs import LaunchInfo, build_kernargs, lds_layout, unsupported_kinds
from gputwin.abi.kfd_fault_record import NUMERIC_FACTS, gputwin_fault_record
from gputwin.abi.printf import HEADER_BYTES, PrintfFormats, buffer_size, empty_buffer, print_buffer
from gputwin.drivers.amd.loader import LoadedKernel, scratch_layout
from gputwin.drivers.hcq import Buffer, HCQDevice, Program
from gputwin.errors import GpuFault, GpuHang, IllegalInstruction, MemoryFault, PacketError, SanitizerError

GFX12_MAX_GRID_YZ = 1 << 16   # gfx12 hands workgroup ids Y and Z to the kernel in TTMP7[15:0]/[31:16] (AMDGPUUsage)

# how a fault record's kind reads at the head of the message
_WHAT = {"memory": "GPU memory fault", "illegal_instruction": "illegal instruction", "trap": "wave trap",
         "packet": "rejected packet", "hang": "GPU hang", "error": "emulator error",
         "sanitizer": "sanitizer"}


class AMDProgram(Program):
    def __init__(self, device: AMDHCQDevice, kernel: LoadedKernel, image: Buffer, printf: PrintfFormats):
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


class AMDHCQDevice(HCQDevice):
    """Needs, from the subclass: props (topology-style chip properties), _apertures() -> (private, shared
    aperture bases), _kernargs (a Buffer) and _kernarg_ring (its SlotRing); it names its queues in
    _queue_names (record queue_id -> name)."""
    props: dict[str, int]

    def __init__(self):
        self._programs: dict[bytes, tuple[CodeObject, Buffer, PrintfFormats]] = {}
        self._printf_runs: list[tuple[PrintfFormats, Buffer]] = []   # launch order, not yet printed
        self._printf_free: list[Buffer] = []
        self._queue_names: dict[int, str] = {}
        self._entries: dict[int, str] = {}   # code address of every loaded kernel -> its name (for faults)
        self._scratch: tuple[int, int, Buffer] | None = None   # (bytes per lane, TMPRING_SIZE, buffer)
        self.dispatch_id = 0
        self.announces_host_waits = "racecheck" in sanitizer_config.checkers()   # for emulated queues
        super().__init__()

    def _apertures(self) -> tuple[int, int]:
        raise NotImplementedError

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
        private_base, shared_base = self._apertures()
        printf_va = self._printf_buffer(program.printf).va if k.uses_printf else 0
        launch = LaunchInfo(grid, block, dims, dynamic_lds=lds, private_base=private_base, shared_base=shared_base,
                            printf_buffer=printf_va)
        segment = build_kernargs(k.info, args, launch, self._pointer_of)
        _, dynamic_lds = lds_layout(k.info, args, launch)
        lds_max = self.props.get("lds_size_in_kb", 64) * 1024
        if k.lds_bytes + dynamic_lds > lds_max:   # refuse before anything is queued
            raise ValueError(f"{k.name}: {k.lds_bytes} bytes of static and {dynamic_lds} of dynamic LDS exceed "
                             f"the {lds_max} bytes a workgroup can have")
        if k.uses_scratch:     # may grow (and synchronize) now, before this launch takes its timeline value
            self._scratch_for(k)
        off = self._kernarg_ring.take(k.segment_size)
        va = self._kernargs.va + off
        self._kernargs.write(off, bytes(segment))
        if k.dispatch_ptr:
            self._kernargs.write(off + k.args_size, k.dispatch_packet(va, grid, block, dims, dynamic_lds))
        self._enqueue(lambda wait, sig: self._compute_queue().wait(self.timeline_signal, wait)
                      .exec(program, va, grid, block, dynamic_lds).signal(self.timeline_signal, sig))

    def _scratch_for(self, k: LoadedKernel) -> tuple[int, int]:
        """(COMPUTE_TMPRING_SIZE, scratch base) for a kernel using `k.scratch_per_lane` bytes per lane."""
        if self._scratch is None or self._scratch[0] < k.scratch_per_lane:
            tmpring, size = scratch_layout(k.scratch_per_lane, self.arch, self.props)
            if self._scratch is not None:
                self.synchronize()
                self._free(self._scratch[2])
            self._scratch = (k.scratch_per_lane, tmpring, self._alloc(size))
        return self._scratch[1], self._scratch[2].va

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
        buf.write(0, empty_buffer(size))
        self._printf_runs.append((formats, buf))
        return buf

    def _print_messages(self) -> None:
        """Print the records of every finished printf launch, in launch order, and recycle the buffers."""
        runs, self._printf_runs = self._printf_runs, []
        for formats, buf in runs:
            used = min(HEADER_BYTES + int.from_bytes(bytes(buf.read(0, 4)), "little"), buf.size)
            try:
                print_buffer(formats, bytes(buf.read(0, used)), self.name)
            finally:
                buf.write(0, bytes(used))   # the next run starts from an empty buffer
                self._printf_free.append(buf)

    def synchronize(self) -> None:
        """Wait for all submitted work, then print what its printf calls wrote (also when it faulted)."""
        try:
            super().synchronize()
        finally:
            if self._printf_runs:
                self._print_messages()
