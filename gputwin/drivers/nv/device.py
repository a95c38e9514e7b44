"""NVDevice: the public device API for an NVIDIA GPU behind RM (real nvidia.ko or gputwin's mock).

Objects (docs/driver-nv.md): one RM client; device, subdevice, usermode (its region is the doorbell), a VA
space registered with UVM, one channel group (TSG) with a context share and two GPFIFO channels in it:
compute (the compute class on subchannel 1) and copy (the copy class on subchannel 4). Memory is RM memory
mapped into the GPU VA space through UVM external ranges: host-visible memory (rings, pushbuffers, the
timeline, staging, QMDs and constant buffers, error notifiers) is the process's own pages wrapped as
NV01_MEMORY_SYSTEM_OS_DESCRIPTOR at GPU VA == CPU address; user buffers and code are video memory
(NV01_MEMORY_LOCAL_USER) at a VA reserved with an anonymous PROT_NONE mapping, reached only by the GPU.
"""
from __future__ import annotations

import ctypes
import time

from gputwin import sanitizer_config
from gputwin.abi import nv_classes as c
from gputwin.abi import nv_ctrl as k
from gputwin.abi import nv_methods as m
from gputwin.abi import nv_qmd as q
from gputwin.abi import nv_rm as r
from gputwin.abi import nv_sanitizer_report as sr
from gputwin.drivers.hcq import Buffer, HCQDevice, Program, SlotRing, TimelineSignal, round_up, watchdog_s
from gputwin.drivers.kernel import MAP_NORESERVE, MAP_PRIVATE, MAP_SHARED, PROT_NONE, PROT_READ, PROT_WRITE, Kernel
from gputwin.abi.cubin import CubinKernel, read_cubin
from gputwin.drivers.nv import ptx_params, sass
from gputwin.drivers.nv.channel import GPFIFO_ENTRIES, PUSHBUF_BYTES, Channel
from gputwin.drivers.nv.qmd import launch_qmd
from gputwin.drivers.nv.queues import NVComputeQueue, NVCopyQueue, inc
from gputwin.drivers.nv.rm import RM, UVM
from gputwin.errors import GpuFault, GpuHang, MemoryFault, SanitizerError

PAGE = 4096
LAUNCH_POOL = 1 << 20
LAUNCH_SLOT = 0x1000          # QMD (256 B) then constant buffer 0, per launch
VA_BASE, VA_LIMIT = 0x10_0000_0000, 1 << 40
SM_ARCH = {0x900: "sm_90", 0x800: "sm_80", 0x809: "sm_89"}


class NVProgram(Program):
    """A loaded kernel. `cubin` (a real GPU): the kernel's entry in the uploaded cubin image; None on the
    emulated SM, whose image is `name NUL ptx NUL`."""

    def __init__(self, device: "NVDevice", kernel: ptx_params.PtxKernel, image: Buffer, cubin: CubinKernel | None = None):
        super().__init__(device, kernel.name)
        self.kernel, self.image, self.cubin = kernel, image, cubin

    def signature(self) -> str:
        return self.kernel.signature()


def cubin_kernel_signature(ck: CubinKernel, ptx_kernel: ptx_params.PtxKernel | None) -> ptx_params.PtxKernel:
    """The launch signature of a cubin kernel: the PTX's typed parameters when the PTX is known (its layout must
    equal the cubin's EIATTR_KPARAM_INFO, else the two disagree on the ABI), otherwise the cubin's own layout:
    8-byte parameters as .u64 (a buffer or an integer), others as exactly that many raw bytes."""
    layout = tuple((p.offset, p.size) for p in ck.params)
    if ptx_kernel is not None:
        mine = tuple((p.offset, p.size) for p in ptx_kernel.params)
        if mine != layout or ptx_kernel.params_size != ck.params_size:
            raise ptx_params.PtxSignatureError(f"{ck.name}: PTX parameters at {mine} ({ptx_kernel.params_size} B) but "
                                               f"the cubin's at {layout} ({ck.params_size} B)")
        return ptx_kernel
    params = tuple(ptx_params.PtxParam(f"p{p.ordinal}", "u64" if p.size == 8 else "b8", p.size, 1 << p.log_alignment,
                                       p.offset, p.size != 8) for p in ck.params)
    return ptx_params.PtxKernel(ck.name, params, ck.params_size, ck.shared_bytes)


class NVDevice(HCQDevice):
    def __init__(self, kernel: Kernel, index: int = 0, *, ptx_native: bool = False):
        """`ptx_native`: the GPU executes PTX (gputwin's emulated SM); a real GPU runs SASS from a cubin."""
        self.kernel, self.index, self.ptx_native = kernel, index, ptx_native
        self._files, self._maps, self._programs, self.rm, self.uvm = [], [], {}, None, None
        self._host_memory = []      # anonymous mappings behind allocations, unmapped at close
        self._next_va = VA_BASE
        self.name = f"NV:{index}"
        # under racecheck, an emulated GPU hears of the host's waits (gputwin.abi.nv_sanitizer_report)
        self.announces_host_waits = ptx_native and "racecheck" in sanitizer_config.checkers()
        try:
            self._open()
            super().__init__()
            self._setup_channels()
            self._launch_pool = self._alloc(LAUNCH_POOL, host=True)
            self._launch_ring = SlotRing(self._launch_pool, self.synchronize)
        except BaseException:
            self._release()
            raise

    # --- RM objects -------------------------------------------------------------------------------------
    def _open(self) -> None:
        self.rm = rm = RM(self.kernel)
        cards = rm.card_info()
        if not 0 <= self.index < len(cards):
            raise IndexError(f"NV:{self.index}: the machine has {len(cards)} NVIDIA GPU(s)")
        self.minor = cards[self.index].minor_number
        self.dev_file = self._open_dev()
        reg = r.nv_ioctl_register_fd_t(ctl_fd=rm.ctl.fd)
        self.dev_file.ioctl(r.nv_ioctl(r.NV_ESC_REGISTER_FD, reg), reg)
        self.device = rm.alloc(rm.client, c.NV01_DEVICE_0, c.NV0080_ALLOC_PARAMETERS(deviceId=self.index))
        self.subdevice = rm.alloc(self.device, c.NV20_SUBDEVICE_0, c.NV2080_ALLOC_PARAMETERS(subDeviceId=0))
        classes = rm.control(self.device, k.NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, k.NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS())
        have = set(classes.classList[:classes.numClasses])
        pick = lambda *ids: next((i for i in ids if i in have), None)   # noqa: E731 - newest first
        self.usermode_class = pick(c.HOPPER_USERMODE_A, c.AMPERE_USERMODE_A, c.TURING_USERMODE_A)
        self.channel_class = pick(c.HOPPER_CHANNEL_GPFIFO_A, c.AMPERE_CHANNEL_GPFIFO_A)
        self.compute_class = pick(c.HOPPER_COMPUTE_A, c.AMPERE_COMPUTE_A)
        self.copy_class = pick(c.HOPPER_DMA_COPY_A, c.AMPERE_DMA_COPY_A)
        if None in (self.usermode_class, self.channel_class, self.compute_class, self.copy_class):
            raise RuntimeError(f"{self.name}: the GPU offers none of the Ampere/Hopper classes this driver uses "
                               f"(class list: {', '.join(hex(x) for x in sorted(have))})")
        info = (k.NV2080_CTRL_GR_INFO * 4)(*(k.NV2080_CTRL_GR_INFO(index=i) for i in (
            k.NV2080_CTRL_GR_INFO_INDEX_SM_VERSION, k.NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS,
            k.NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC, k.NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC)))
        rm.control(self.subdevice, k.NV2080_CTRL_CMD_GR_GET_INFO, k.NV2080_CTRL_GR_GET_INFO_PARAMS(
            grInfoListSize=4, grInfoList=ctypes.addressof(info)))
        sm = info[0].data
        self.arch = SM_ARCH.get(sm, f"sm_{sm >> 8}{sm & 0xFF:x}")
        self.sm_count = info[1].data * info[2].data * info[3].data
        self.name = f"NV:{self.index} ({self.arch})"
        gid = rm.control(self.subdevice, k.NV2080_CTRL_CMD_GPU_GET_GID_INFO, k.NV2080_CTRL_GPU_GET_GID_INFO_PARAMS(
            flags=k.NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY))
        self.uuid = bytes(gid.data[:gid.length])
        self.usermode_obj = rm.alloc(self.subdevice, self.usermode_class,
                                     c.NV_HOPPER_USERMODE_A_PARAMS() if self.usermode_class == c.HOPPER_USERMODE_A else None)
        self.usermode = self._cpu_map(self.usermode_obj, c.USERMODE_SIZE, self.subdevice)
        self.vaspace = rm.alloc(self.device, c.FERMI_VASPACE_A, c.NV_VASPACE_ALLOCATION_PARAMETERS(
            index=c.NV_VASPACE_ALLOCATION_INDEX_GPU_NEW, flags=c.NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING))
        self.uvm = UVM(self.kernel)
        self.uvm.register_gpu(self.uuid, rm.ctl.fd, rm.client, self.vaspace)

    def _open_dev(self):
        f = self.kernel.open(f"/dev/nvidia{self.minor}")
        self._files.append(f)
        return f

    def _cpu_map(self, memory: int, size: int, device: int):
        """mmap RM memory through a fresh /dev/nvidiaN file (one mmap context per file)."""
        f = self._open_dev()
        self.rm.map_memory(f, device, memory, size)
        mapping = f.mmap(0, size, PROT_READ | PROT_WRITE, MAP_SHARED)
        self._maps.append(mapping)
        return mapping

    def _setup_channels(self) -> None:
        rm = self.rm
        self._notifiers = self._alloc(PAGE, host=True)            # error notifiers: group at 0, channels at 16/32
        self.group = rm.alloc(self.device, c.KEPLER_CHANNEL_GROUP_A, c.NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS(
            hObjectError=self._notifiers.meta[0], hVASpace=self.vaspace, engineType=c.NV2080_ENGINE_TYPE_GRAPHICS))
        self.ctxshare = rm.alloc(self.group, c.FERMI_CONTEXT_SHARE_A, c.NV_CTXSHARE_ALLOCATION_PARAMETERS(
            hVASpace=self.vaspace, flags=c.NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC))
        self.compute_channel = self._channel("compute", self.compute_class, m.SUBCHANNEL_COMPUTE,
                                             c.NV_GR_ALLOCATION_PARAMETERS(version=2, size=ctypes.sizeof(c.NV_GR_ALLOCATION_PARAMETERS)))
        self.copy_channel = self._channel("copy", self.copy_class, m.SUBCHANNEL_COPY, c.NVB0B5_ALLOCATION_PARAMETERS(
            version=c.NVB0B5_ALLOCATION_PARAMETERS_VERSION_1, engineType=c.NV2080_ENGINE_TYPE_COPY0))
        rm.control(self.group, k.NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, k.NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS(bEnable=1))
        for ch, cls, sub in ((self.compute_channel, self.compute_class, m.SUBCHANNEL_COMPUTE),
                             (self.copy_channel, self.copy_class, m.SUBCHANNEL_COPY)):
            ch.push(inc(sub, m.NVC56F_SET_OBJECT, cls))

    def _channel(self, what: str, engine_class: int, subchannel: int, engine_params) -> Channel:
        ring = self._alloc(round_up(8 * GPFIFO_ENTRIES + m.USERD_SIZE, PAGE), host=True)
        pushbuf = self._alloc(PUSHBUF_BYTES, host=True)
        params = c.NV_CHANNEL_ALLOC_PARAMS(hObjectError=self._notifiers.meta[0], gpFifoOffset=ring.va,
                                           gpFifoEntries=GPFIFO_ENTRIES, hContextShare=self.ctxshare,
                                           hVASpace=self.vaspace, engineType=c.NV2080_ENGINE_TYPE_GRAPHICS)
        params.hUserdMemory[0], params.userdOffset[0] = ring.meta[0], 8 * GPFIFO_ENTRIES
        handle = self.rm.alloc(self.group, self.channel_class, params)
        self.rm.alloc(handle, engine_class, engine_params)
        token = self.rm.control(handle, k.NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN,
                                k.NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS()).workSubmitToken
        ch = Channel(f"{self.name} {what} channel", ring, pushbuf, self.usermode, token, self._wait_previous, watchdog_s)
        ch.handle = handle
        return ch

    # --- memory -----------------------------------------------------------------------------------------
    def _reserve_va(self, size: int):
        """A GPU VA range below 2^40 (GPFIFO entries and method addresses carry 40 bits), held as an anonymous
        PROT_NONE mapping so no CPU mapping lands there."""
        while self._next_va + size <= VA_LIMIT:
            hint = self._next_va
            self._next_va = round_up(hint + size, 2 << 20)
            reservation = self.kernel.mmap(hint, size, PROT_NONE, MAP_PRIVATE | MAP_NORESERVE)
            if reservation.addr == hint:
                return reservation
            self.kernel.munmap(reservation)
        raise MemoryError(f"{self.name}: GPU VA space below {VA_LIMIT:#x} is exhausted")

    def _alloc(self, size: int, host: bool = False) -> Buffer:
        size_pages = round_up(size, PAGE if host else 2 << 20)
        reservation = self._reserve_va(size_pages)
        cpu = None
        try:
            if host:
                cpu = self.kernel.mmap(0, size_pages, PROT_READ | PROT_WRITE, MAP_PRIVATE)
                memory = self.rm.alloc_os_descriptor(self.dev_file, self.device, cpu.addr, size_pages)
            else:   # the exact size: RM rounds it to huge pages itself, and knows what was asked for
                memory = self.rm.alloc(self.device, c.NV01_MEMORY_LOCAL_USER, c.NV_MEMORY_ALLOCATION_PARAMS(
                    owner=self.rm.client, type=c.NVOS32_TYPE_IMAGE, size=size, alignment=2 << 20,
                    flags=c.NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE | c.NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED
                    | c.NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT | c.NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM,
                    attr=c.NVOS32_ATTR_PAGE_SIZE(c.NVOS32_ATTR_PAGE_SIZE_HUGE)
                    | c.NVOS32_ATTR_PHYSICALITY(c.NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS),
                    attr2=c.NVOS32_ATTR2_ZBC(c.NVOS32_ATTR2_ZBC_PREFER_NO_ZBC)))
            try:
                self.uvm.map(self.uuid, reservation.addr, size_pages, self.rm.ctl.fd, self.rm.client, memory)
            except BaseException:
                self.rm.free(memory)
                raise
        except BaseException:
            for mp in (reservation, cpu):
                if mp is not None:
                    self.kernel.munmap(mp)
            raise
        self._host_memory += [reservation] + ([cpu] if cpu is not None else [])
        return Buffer(self, reservation.addr, size, cpu.addr if cpu is not None else None,
                      (memory, reservation, cpu, size_pages))

    def _free(self, buf: Buffer) -> None:
        memory, reservation, cpu, size = buf.meta
        self.uvm.free(buf.va, size)
        self.rm.free(memory)
        for mp in (reservation, cpu):
            if mp is not None:
                self._host_memory.remove(mp)
                self.kernel.munmap(mp)

    def _new_signal(self) -> TimelineSignal:
        return TimelineSignal(self._alloc(PAGE, host=True))

    def _compute_queue(self) -> NVComputeQueue:
        return NVComputeQueue()

    def _copy_queue(self) -> NVCopyQueue:
        return NVCopyQueue()

    # --- faults, as RM reports them -------------------------------------------------------------------------
    def _sleep(self, timeout_s: float) -> None:
        view = self._notifiers.host_view()
        note = c.NvNotification.from_buffer_copy(bytes(view[:ctypes.sizeof(c.NvNotification)]))
        if note.status == c.NV_NOTIFICATION_STATUS_ERROR:
            self._raise_rc(note.info32)
        time.sleep(min(timeout_s, 0.001))

    def _raise_rc(self, code: int) -> None:
        if code == c.ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT:
            for ch in (self.compute_channel, self.copy_channel):
                try:
                    info = self.rm.control(ch.handle, k.NV906F_CTRL_CMD_GET_MMU_FAULT_INFO,
                                           k.NV906F_CTRL_GET_MMU_FAULT_INFO_PARAMS())
                except r.RmError:
                    continue
                raise MemoryFault(f"{self.name}: GPU MMU fault on the {ch.name} ({info.faultString.decode(errors='replace')})",
                                  address=info.addrHi << 32 | info.addrLo, write=bool(info.faultType))
            raise MemoryFault(f"{self.name}: GPU MMU fault (RC {code})", address=0)
        if code == c.ROBUST_CHANNEL_PREEMPTIVE_REMOVAL:
            raise GpuHang(f"{self.name}: the channel group was removed after a hang (RC {code})")
        if code == c.ROBUST_CHANNEL_GR_EXCEPTION:
            self._raise_sanitizer_report()
        raise GpuFault(f"{self.name}: channel error, robust-channel code {code}", kind=f"rc{code}")

    def _raise_sanitizer_report(self) -> None:
        """The emulated GPU's checkers stopped the compute channel: raise their findings (gputwin's mock RM
        only, gputwin.abi.nv_sanitizer_report; a real RM refuses the control and this returns)."""
        for ch in (self.compute_channel, self.copy_channel):    # racecheck across channels stops a copy too
            try:
                rep = self.rm.control(ch.handle, sr.NV906F_CTRL_CMD_GPUTWIN_GET_SANITIZER_REPORT,
                                      sr.GPUTWIN_SANITIZER_REPORT_PARAMS())
                break
            except r.RmError:
                continue
        else:
            return
        message = rep.message.decode(errors="replace")
        lines = message.splitlines()
        findings = [x.strip() for x in lines[1:]] if len(lines) > 1 else lines
        raise SanitizerError(f"{self.name}: {message}", findings=findings, address=rep.address or None,
                             write=bool(rep.write), line=rep.line or None, queue=ch.name,
                             kernel=rep.kernel.decode(errors="replace") or None,
                             instruction=rep.instruction.decode(errors="replace") or None)

    # --- programs ------------------------------------------------------------------------------------------
    def load(self, image, name: str) -> NVProgram:
        """Load kernel `name` of a PTX module (text) or, on a real GPU, of a cubin (ELF bytes). A real GPU gets
        PTX compiled to a cubin (sass.compile_ptx: nvJitLink or ptxas, cached); the emulated SM runs PTX."""
        self._check()
        if isinstance(image, (bytes, bytearray, memoryview)) and bytes(image[:4]) == b"\x7fELF":
            if self.ptx_native:
                raise NotImplementedError(f"{self.name}: the emulated SM executes PTX, not SASS; load the PTX "
                                          f"the cubin was built from")
            return self._load_cubin(bytes(image), name, None)
        text = image.decode() if isinstance(image, (bytes, bytearray)) else str(image)
        kernels = ptx_params.kernels(text)
        if name not in kernels:
            raise KeyError(f"no kernel {name!r} in the PTX module; it has {', '.join(sorted(kernels)) or 'none'}")
        if not self.ptx_native:
            return self._load_cubin(sass.compile_ptx(text, self.arch), name, kernels[name])
        key = (text, name)
        if key not in self._programs:
            blob = name.encode() + b"\0" + text.encode() + b"\0"
            buf = self._alloc(len(blob))
            self.copyin(buf, blob)
            self._programs[key] = buf
        return NVProgram(self, kernels[name], self._programs[key])

    def _load_cubin(self, elf: bytes, name: str, ptx_kernel: ptx_params.PtxKernel | None) -> NVProgram:
        """Upload the whole cubin once; the kernel's code is its .text section at that offset in the image."""
        cubin = read_cubin(elf)
        if cubin.arch != self.arch:
            raise ValueError(f"{self.name}: the cubin is for {cubin.arch}, this GPU is {self.arch}")
        ck = cubin.kernels.get(name)
        if ck is None:
            raise KeyError(f"no kernel {name!r} in the cubin; it has {', '.join(sorted(cubin.kernels)) or 'none'}")
        if ck.relocations or ck.frame_bytes:
            raise NotImplementedError(f"{self.name}: kernel {name} needs {ck.relocations} relocation(s) and "
                                      f"{ck.frame_bytes} bytes of local memory; this loader applies neither")
        kernel = cubin_kernel_signature(ck, ptx_kernel)
        key = (elf, None)
        if key not in self._programs:
            buf = self._alloc(len(elf))
            self.copyin(buf, elf)
            self._programs[key] = buf
        return NVProgram(self, kernel, self._programs[key], ck)

    def _launch(self, program: NVProgram, args: tuple, grid, block, dims: int, lds: int = 0) -> None:
        self._check()
        kern = program.kernel
        params = kern.pack(args, self)
        if block[0] * block[1] * block[2] > 1024 or block[2] > 64:
            raise ValueError(f"{kern.name}: a block of {block} exceeds 1024 threads (z at most 64)")
        if grid[1] >= 1 << 16 or grid[2] >= 1 << 16 or grid[0] >= 1 << 31:
            raise ValueError(f"{kern.name}: grid {grid} exceeds (2^31-1, 65535, 65535)")
        ck = program.cubin
        off = c.CBANK0_PARAM_OFFSET[self.compute_class] if ck is None else ck.param_cbank_offset
        cb_size = round_up(max(off + len(params), len(ck.constant0) if ck else 0), 16)
        if 0x100 + cb_size > LAUNCH_SLOT:
            raise ValueError(f"{kern.name}: {len(params)} parameter bytes exceed the {LAUNCH_SLOT - 0x100 - off} "
                             f"this driver reserves")
        slot = self._launch_ring.take(LAUNCH_SLOT)
        qmd_va, cb_va = self._launch_pool.va + slot, self._launch_pool.va + slot + 0x100
        view = self._launch_pool.host_view()
        if ck is not None:                      # the compiler's constant-bank-0 image, then the parameters
            view[slot + 0x100:slot + 0x100 + len(ck.constant0)] = memoryview(ck.constant0)
        view[slot + 0x100 + off:slot + 0x100 + off + len(params)] = memoryview(params)
        qmd = self._qmd(program, grid, block, lds, cb_va, cb_size)
        view[slot:slot + q.QMD_SIZE] = memoryview(qmd.to_bytes())
        self._enqueue(lambda wait, sig: self._compute_queue().wait(self.timeline_signal, wait).launch(qmd_va)
                      .signal(self.timeline_signal, sig))

    def _qmd(self, program: NVProgram, grid, block, lds: int, cb_va: int, cb_size: int) -> q.QMD:
        ck = program.cubin
        if ck is None:
            return launch_qmd(grid=grid, block=block, shared_bytes=program.kernel.static_shared + lds,
                              program_va=program.image.va, cb_va=cb_va, cb_size=cb_size)
        return launch_qmd(grid=grid, block=block, shared_bytes=ck.shared_bytes + lds,
                          program_va=program.image.va + ck.text_offset, cb_va=cb_va, cb_size=cb_size,
                          registers=ck.registers, barriers=ck.barriers, arch=self.arch)

    def _wait_previous(self) -> None:
        """Wait for every submission before the one being pushed (whose timeline value is already taken), so
        a channel may reuse its pushbuffer and GPFIFO entries."""
        self._wait_value(self.timeline_value - 2)

    # --- teardown ------------------------------------------------------------------------------------------
    def _release(self) -> None:
        for mapping in self._maps:
            try:
                self.kernel.munmap(mapping)
            except OSError:
                pass
        self._maps = []
        if self.uvm is not None:
            self.uvm.close()
            self.uvm = None
        if self.rm is not None:
            try:
                self.rm.close()
            except (OSError, r.RmError):
                pass
            self.rm = None
        for f in self._files:
            f.close()
        self._files = []
        for mapping in self._host_memory:     # after RM and UVM let go of the pages
            self.kernel.munmap(mapping)
        self._host_memory = []

    def __repr__(self) -> str:
        return f"NVDevice({self.name})"
