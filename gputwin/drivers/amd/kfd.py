"""The KFD interface: /dev/kfd ioctls, the sysfs topology, GPU memory, queues and events.

Only the Kernel seam is used (open / ioctl / mmap / sysfs reads), so this runs on Linux's amdkfd and on
gputwin's mock alike. The sequence follows what amdkfd requires of a process (see linux
`include/uapi/linux/kfd_ioctl.h`, `drivers/gpu/drm/amd/amdkfd/kfd_chardev.c`):

  open /dev/kfd, GET_VERSION; per GPU: open its render node, ACQUIRE_VM with that fd, read the apertures;
  memory: reserve a VA range with an anonymous PROT_NONE mmap, ALLOC_MEMORY_OF_GPU at that address,
  MAP_MEMORY_TO_GPU, and for CPU access mmap the render node at the allocation's mmap_offset over the
  reservation (MAP_FIXED): then the CPU and the GPU see the same pages at the same address;
  queues: CREATE_QUEUE with ring / read pointer / write pointer / EOP / context-save memory, then mmap the
  doorbell page of /dev/kfd at the offset the queue reports; events: the first CREATE_EVENT of the
  process names the event page (a GTT allocation), WAIT_EVENTS sleeps until one fires.
"""
from __future__ import annotations

import ctypes
import errno
import weakref
from dataclasses import dataclass, field

from gputwin.abi import kfd_ioctl as kfd
from gputwin.drivers.hcq import round_up
from gputwin.drivers.kernel import (MAP_ANONYMOUS, MAP_FIXED, MAP_NORESERVE, MAP_PRIVATE, MAP_SHARED, PROT_NONE,
                                    PROT_READ, PROT_WRITE, File, HostKernel, Kernel, Mapping)
from gputwin.errors import OutOfMemory

TOPOLOGY = "/sys/devices/virtual/kfd/kfd/topology/nodes"
KFD_MIN_VERSION = (1, 6)   # ACQUIRE_VM + ALLOC_MEMORY_OF_GPU (the "new" memory API) appeared in 1.6
PAGE = 0x1000


@dataclass
class Memory:
    """One ALLOC_MEMORY_OF_GPU allocation."""
    va: int
    size: int
    handle: int
    flags: int
    host_addr: int | None            # CPU address (== va) when mapped for the CPU
    reservation: Mapping | None      # what to munmap on free
    gpu: "KFDGpu" = field(repr=False, default=None)


class KFD:
    """The process's /dev/kfd, shared by all GPUs of one Kernel.

    amdkfd keeps one kfd_process per process for as long as the process lives, whatever is closed: one event
    page, one VM per GPU bound to the first render-node file given to ACQUIRE_VM (another file is EBUSY).
    So on the host kernel this object, its /dev/kfd and render-node files live as long as the process.
    A mock kernel is torn down with its last user instead, so a finished mock machine can be collected."""
    _mock: "weakref.WeakValueDictionary[int, KFD]" = weakref.WeakValueDictionary()
    _host: KFD | None = None

    @classmethod
    def of(cls, kernel: Kernel) -> KFD:
        if isinstance(kernel, HostKernel):
            if cls._host is None:
                cls._host = cls(kernel, persistent=True)
            return cls._host
        inst = cls._mock.get(id(kernel))
        if inst is None or inst.kernel is not kernel or inst.fd is None:
            inst = cls(kernel)
            cls._mock[id(kernel)] = inst
        return inst

    def __init__(self, kernel: Kernel, persistent: bool = False):
        self.kernel, self.persistent = kernel, persistent
        self.fd: File | None = kernel.open("/dev/kfd")
        ver = self.ioctl(kfd.AMDKFD_IOC_GET_VERSION)
        self.version = (ver.major_version, ver.minor_version)
        if ver.major_version != kfd.KFD_IOCTL_MAJOR_VERSION or self.version < KFD_MIN_VERSION:
            raise OSError(errno.ENOTSUP, f"/dev/kfd speaks ioctl version {self.version}, need "
                                         f"{kfd.KFD_IOCTL_MAJOR_VERSION}.x >= {KFD_MIN_VERSION}")
        self.event_page: Memory | None = None
        self.event_page_on: set[int] = set()   # gpu_ids the event page is mapped on (every signalling GPU)
        self.vms: dict[int, tuple[File, kfd.kfd_process_device_apertures]] = {}   # gpu_id -> render node, apertures
        self.users = 0

    def ioctl(self, request: int, **fields):
        """Issue a KFD ioctl with a fresh args struct filled from `fields`; returns the struct."""
        name, struct = kfd.IOCTLS[request]
        args = struct(**fields)
        try:
            self.fd.ioctl(request, args)
        except OSError as e:
            raise OSError(e.errno, f"{name}: {e.strerror or e}") from None
        return args

    def gpu_nodes(self) -> list[tuple[int, int, dict[str, int]]]:
        """(node, gpu_id, properties) of each GPU in the topology, in node order (CPU nodes have gpu_id 0)."""
        out = []
        for name in sorted((n for n in self.kernel.listdir(TOPOLOGY) if n.isdigit()), key=int):
            gpu_id = int(self.kernel.read_text(f"{TOPOLOGY}/{name}/gpu_id").strip() or 0)
            if gpu_id:
                props = {}
                for line in self.kernel.read_text(f"{TOPOLOGY}/{name}/properties").splitlines():
                    parts = line.split()
                    if len(parts) == 2 and parts[1].lstrip("-").isdigit():
                        props[parts[0]] = int(parts[1])
                out.append((int(name), gpu_id, props))
        return out

    def acquire_vm(self, gpu_id: int, render_minor: int, n_gpus: int) -> tuple[File, kfd.kfd_process_device_apertures]:
        """The GPU's render-node file and apertures; ACQUIRE_VM happens once per GPU and process."""
        if gpu_id not in self.vms:
            drm = self.kernel.open(f"/dev/dri/renderD{render_minor}")
            try:
                self.ioctl(kfd.AMDKFD_IOC_ACQUIRE_VM, drm_fd=drm.fd, gpu_id=gpu_id)
                arr = (kfd.kfd_process_device_apertures * max(n_gpus, 1))()
                got = self.ioctl(kfd.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW,
                                 kfd_process_device_apertures_ptr=ctypes.addressof(arr), num_of_nodes=len(arr))
                ap = next((a for a in arr[:got.num_of_nodes] if a.gpu_id == gpu_id), None)
                if ap is None:
                    raise OSError(errno.ENODEV, f"GET_PROCESS_APERTURES_NEW does not list gpu_id {gpu_id}")
            except BaseException:
                drm.close()
                raise
            self.vms[gpu_id] = (drm, ap)
        return self.vms[gpu_id]

    def release(self) -> None:
        self.users -= 1
        if self.users > 0 or self.persistent or self.fd is None:
            return
        if self.event_page is not None:   # amdkfd refuses to free the event page (EPERM): it goes with
            self.kernel.munmap(self.event_page.reservation)   # the process
            self.event_page = None
        for drm, _ in self.vms.values():
            drm.close()
        self.vms.clear()
        self.fd.close()
        self.fd = None


class KFDGpu:
    """One GPU of the process: its VM, memory, queues and events."""

    def __init__(self, kfd_: KFD, index: int):
        self.kfd, self.kernel = kfd_, kfd_.kernel
        nodes = kfd_.gpu_nodes()
        if not 0 <= index < len(nodes):
            raise OSError(errno.ENODEV, f"no AMD GPU {index}: the KFD topology lists {len(nodes)}")
        self.node, self.gpu_id, self.props = nodes[index]
        kfd_.users += 1
        try:
            self.drm, self.apertures = kfd_.acquire_vm(self.gpu_id, self.props["drm_render_minor"], len(nodes))
        except BaseException:
            kfd_.release()
            raise
        self.doorbells: Mapping | None = None
        self.doorbells_base = 0
        self._live: list[Memory] = []

    @property
    def gfx_target_version(self) -> int:
        return self.props["gfx_target_version"]

    @property
    def arch(self) -> str:
        v = self.gfx_target_version
        return f"gfx{v // 10000}{v // 100 % 100:x}{v % 100:x}"

    # --- memory -------------------------------------------------------------------------------------
    def alloc(self, size: int, kind: str = "vram", cpu_access: bool = False, uncached: bool = False) -> Memory:
        """Allocate and map GPU memory. kind: 'vram', 'gtt' (system memory the GPU reaches over PCIe),
        'userptr' (ordinary host pages registered with the GPU). cpu_access maps it for the CPU too."""
        asked, size = max(size, 1), round_up(max(size, 1), PAGE)
        flags = (kfd.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | kfd.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
                 | kfd.KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE)
        flags |= {"vram": kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM, "gtt": kfd.KFD_IOC_ALLOC_MEM_FLAGS_GTT,
                  "userptr": kfd.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR}[kind]
        if uncached:
            flags |= kfd.KFD_IOC_ALLOC_MEM_FLAGS_COHERENT | kfd.KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED
        if cpu_access and kind == "vram":
            flags |= kfd.KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC
        try:
            if kind == "userptr":   # the pages are the user's own; KFD takes their address as mmap_offset
                reservation = self.kernel.mmap(0, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS)
                mmap_offset = reservation.addr
            else:                  # reserve the VA so no CPU allocation can take it
                reservation = self.kernel.mmap(0, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE)
                mmap_offset = 0
        except OSError as e:   # an anonymous mmap fails only for want of address space (EINVAL past 2^64)
            if e.errno in (errno.ENOMEM, errno.EINVAL):
                raise OutOfMemory(f"{self.arch}: cannot allocate {size} bytes of {kind}: no {size}-byte range of "
                                  f"virtual addresses is free ({e.strerror or e})", size=size, heap=kind) from None
            raise
        try:
            # the byte count asked for: amdgpu rounds the BO up to pages itself (amdgpu_bo_do_create:
            # size = ALIGN(size, PAGE_SIZE)), and a mock kernel can tell its sanitizers where it really ends
            got = self.kfd.ioctl(kfd.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, va_addr=reservation.addr, size=asked,
                                 gpu_id=self.gpu_id, flags=flags, mmap_offset=mmap_offset)
        except OSError as e:
            self.kernel.munmap(reservation)
            if e.errno == errno.ENOMEM:
                raise OutOfMemory(f"{self.arch}: cannot allocate {size} bytes of {kind}: {e.strerror or e}",
                                  size=size, heap=kind) from None
            raise
        mem = Memory(reservation.addr, size, got.handle, flags, reservation.addr if kind == "userptr" else None,
                     reservation, self)
        try:
            if cpu_access and kind != "userptr":
                mem.reservation = self.drm.mmap(mem.va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                                                got.mmap_offset)
                mem.host_addr = mem.reservation.addr
                if mem.host_addr != mem.va:
                    raise OSError(errno.EINVAL, f"render node mapped at {mem.host_addr:#x}, not {mem.va:#x}")
            self._map_to_gpu(mem.handle, kfd.AMDKFD_IOC_MAP_MEMORY_TO_GPU)
        except BaseException:
            self.kfd.ioctl(kfd.AMDKFD_IOC_FREE_MEMORY_OF_GPU, handle=mem.handle)
            self.kernel.munmap(mem.reservation)
            raise
        self._live.append(mem)
        return mem

    def _map_to_gpu(self, handle: int, request: int) -> None:
        ids = (ctypes.c_uint32 * 1)(self.gpu_id)
        got = self.kfd.ioctl(request, handle=handle, device_ids_array_ptr=ctypes.addressof(ids), n_devices=1)
        if got.n_success != 1:
            raise OSError(errno.EIO, f"{kfd.IOCTLS[request][0]}: mapped on {got.n_success} of 1 GPUs")

    def free(self, mem: Memory) -> None:
        if mem in self._live:
            self._live.remove(mem)
        self._map_to_gpu(mem.handle, kfd.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU)
        self.kernel.munmap(mem.reservation)
        self.kfd.ioctl(kfd.AMDKFD_IOC_FREE_MEMORY_OF_GPU, handle=mem.handle)

    # --- queues ---------------------------------------------------------------------------------------
    def create_queue(self, queue_type: int, ring: Memory, rptr_va: int, wptr_va: int, eop: Memory | None = None,
                     ctx_save: Memory | None = None, ctx_save_size: int = 0, ctl_stack_size: int = 0,
                     priority: int = 7) -> tuple[int, Mapping, int]:
        """Create a user-mode queue; returns (queue_id, doorbell page mapping, doorbell byte offset in it)."""
        got = self.kfd.ioctl(
            kfd.AMDKFD_IOC_CREATE_QUEUE, ring_base_address=ring.va, ring_size=ring.size, gpu_id=self.gpu_id,
            queue_type=queue_type, queue_percentage=kfd.KFD_MAX_QUEUE_PERCENTAGE, queue_priority=priority,
            write_pointer_address=wptr_va, read_pointer_address=rptr_va,
            eop_buffer_address=eop.va if eop else 0, eop_buffer_size=eop.size if eop else 0,
            ctx_save_restore_address=ctx_save.va if ctx_save else 0, ctx_save_restore_size=ctx_save_size,
            ctl_stack_size=ctl_stack_size)
        if self.doorbells is None:   # one doorbell page (two 4 KiB pages) per GPU and process
            self.doorbells_base = got.doorbell_offset & ~0x1FFF
            self.doorbells = self.kfd.fd.mmap(0, 0x2000, PROT_READ | PROT_WRITE, MAP_SHARED, self.doorbells_base)
        return got.queue_id, self.doorbells, got.doorbell_offset - self.doorbells_base

    def destroy_queue(self, queue_id: int) -> None:
        self.kfd.ioctl(kfd.AMDKFD_IOC_DESTROY_QUEUE, queue_id=queue_id)

    # --- events ---------------------------------------------------------------------------------------
    def create_event(self, event_type: int, auto_reset: bool = False) -> tuple[int, int | None]:
        """(event_id, mailbox address) of a new event. A signal event's mailbox is its 64-bit slot in the event
        page: amdkfd wakes the event named by an interrupt's context id only if that slot was written."""
        fields = dict(event_type=event_type, auto_reset=int(auto_reset), node_id=self.node)
        if self.kfd.event_page is None and event_type == kfd.KFD_IOC_EVENT_SIGNAL:
            page = self.alloc(0x8000, "gtt", cpu_access=True, uncached=True)
            self._live.remove(page)   # owned by the process (amdkfd never frees it), unmapped with /dev/kfd
            got = self.kfd.ioctl(kfd.AMDKFD_IOC_CREATE_EVENT, event_page_offset=page.handle, **fields)
            self.kfd.event_page = page
            self.kfd.event_page_on.add(self.gpu_id)
        else:
            got = self.kfd.ioctl(kfd.AMDKFD_IOC_CREATE_EVENT, **fields)
        if event_type != kfd.KFD_IOC_EVENT_SIGNAL:
            return got.event_id, None
        if self.gpu_id not in self.kfd.event_page_on:   # this GPU's queues write the mailboxes too
            self._map_to_gpu(self.kfd.event_page.handle, kfd.AMDKFD_IOC_MAP_MEMORY_TO_GPU)
            self.kfd.event_page_on.add(self.gpu_id)
        return got.event_id, self.kfd.event_page.va + 8 * got.event_slot_index

    def destroy_event(self, event_id: int) -> None:
        self.kfd.ioctl(kfd.AMDKFD_IOC_DESTROY_EVENT, event_id=event_id)

    def reset_event(self, event_id: int) -> None:
        self.kfd.ioctl(kfd.AMDKFD_IOC_RESET_EVENT, event_id=event_id)

    def wait_events(self, events: ctypes.Array, timeout_ms: int) -> int:
        """WAIT_EVENTS on any of `events` (kfd_event_data array, filled in place); returns wait_result."""
        return self.kfd.ioctl(kfd.AMDKFD_IOC_WAIT_EVENTS, events_ptr=ctypes.addressof(events),
                              num_events=len(events), wait_for_all=0, timeout=timeout_ms).wait_result

    def close(self) -> None:
        for mem in list(self._live):
            self.free(mem)
        if self.gpu_id in self.kfd.event_page_on and self.kfd.users > 1:   # the last GPU leaves it to the process
            self._map_to_gpu(self.kfd.event_page.handle, kfd.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU)
            self.kfd.event_page_on.discard(self.gpu_id)
        if self.doorbells is not None:
            self.kernel.munmap(self.doorbells)
            self.doorbells = None
        self.kfd.release()
