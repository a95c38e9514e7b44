"""Drive the mock KFD the way a userspace driver does: raw ioctls with ctypes structs, mmaps of the
render node and of /dev/kfd, doorbell writes through the returned Mapping."""
from __future__ import annotations

import ctypes

from gputwin.abi import kfd_ioctl as k
from gputwin.drivers.kernel import MAP_FIXED, MAP_NORESERVE, MAP_PRIVATE, MAP_SHARED, PROT_READ, PROT_WRITE
from gputwin.mock.kernel import MockKernel
from gputwin.mock.kfd import install
from gputwin.mock.kfd_topology import TOPOLOGY

RW = PROT_READ | PROT_WRITE
VRAM_RW = k.KFD_IOC_ALLOC_MEM_FLAGS_VRAM | k.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | k.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
GTT_RW = k.KFD_IOC_ALLOC_MEM_FLAGS_GTT | k.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE


class Buffer:
    def __init__(self, args, cpu):
        self.va, self.size, self.handle, self.cpu = args.va_addr, args.size, args.handle, cpu

    def u32(self, index: int = 0, n: int = 1) -> list[int]:
        return list((ctypes.c_uint32 * n).from_address(self.va + 4 * index))

    def write_u32(self, index: int, *values: int) -> None:
        (ctypes.c_uint32 * len(values)).from_address(self.va + 4 * index)[:] = values

    def u64(self, index: int = 0) -> int:
        return ctypes.c_uint64.from_address(self.va + 8 * index).value

    def write_u64(self, index: int, value: int) -> None:
        ctypes.c_uint64.from_address(self.va + 8 * index).value = value


class KfdRig:
    """One mock machine with GPUs `archs`; `gpu` is the one this rig drives."""

    def __init__(self, archs=("gfx1100",), gpu: int = 0, acquire: bool = True):
        self.kernel = MockKernel()
        self.mock = install(self.kernel, list(archs))
        self.kfd = self.kernel.open("/dev/kfd")
        node = f"{TOPOLOGY}/nodes/{gpu + 1}"
        self.gpu_id = int(self.kernel.read_text(f"{node}/gpu_id"))
        props = dict(line.split() for line in self.kernel.read_text(f"{node}/properties").splitlines())
        self.render = self.kernel.open(f"/dev/dri/renderD{props['drm_render_minor']}")
        self.reservations = []
        if acquire:
            self.ioctl(k.AMDKFD_IOC_ACQUIRE_VM, k.kfd_ioctl_acquire_vm_args(drm_fd=self.render.fd, gpu_id=self.gpu_id))

    def ioctl(self, request, args):
        self.kfd.ioctl(request, args)
        return args

    def reserve(self, size: int) -> int:
        """A VA range the driver owns (as a driver reserves one with an inaccessible anonymous mmap)."""
        m = self.kernel.mmap(0, size, 0, MAP_PRIVATE | MAP_NORESERVE)
        self.reservations.append(m)
        return m.addr

    def alloc(self, size: int, flags: int = VRAM_RW, *, cpu: bool = True, map_gpu: bool = True) -> Buffer:
        va = self.reserve(size)
        args = self.ioctl(k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, k.kfd_ioctl_alloc_memory_of_gpu_args(
            va_addr=va, size=size, gpu_id=self.gpu_id, flags=flags))
        if map_gpu:
            self.map(args.handle)
        cpu_map = self.render.mmap(va, size, RW, MAP_SHARED | MAP_FIXED, args.mmap_offset) if cpu else None
        return Buffer(args, cpu_map)

    def map(self, handle: int, gpu_ids=None) -> k.kfd_ioctl_map_memory_to_gpu_args:
        ids = (ctypes.c_uint32 * 8)(*(gpu_ids or [self.gpu_id]))
        self._ids = ids
        return self.ioctl(k.AMDKFD_IOC_MAP_MEMORY_TO_GPU, k.kfd_ioctl_map_memory_to_gpu_args(
            handle=handle, device_ids_array_ptr=ctypes.addressof(ids), n_devices=len(gpu_ids or [1])))

    def unmap(self, handle: int) -> None:
        ids = (ctypes.c_uint32 * 1)(self.gpu_id)
        self.ioctl(k.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, k.kfd_ioctl_unmap_memory_from_gpu_args(
            handle=handle, device_ids_array_ptr=ctypes.addressof(ids), n_devices=1))

    def queue(self, queue_type=k.KFD_IOC_QUEUE_TYPE_COMPUTE, ring_bytes=0x1000):
        ring = self.alloc(ring_bytes, GTT_RW)
        ptrs = self.alloc(0x1000, GTT_RW)
        args = self.ioctl(k.AMDKFD_IOC_CREATE_QUEUE, k.kfd_ioctl_create_queue_args(
            ring_base_address=ring.va, ring_size=ring_bytes, gpu_id=self.gpu_id, queue_type=queue_type,
            queue_percentage=100, queue_priority=7, read_pointer_address=ptrs.va, write_pointer_address=ptrs.va + 8))
        base = args.doorbell_offset & ~(0x2000 - 1)
        doorbells = self.kfd.mmap(0, 0x2000, RW, MAP_SHARED, base)
        return Queue(self, args, ring, ptrs, doorbells, args.doorbell_offset - base,
                     4 if queue_type == k.KFD_IOC_QUEUE_TYPE_COMPUTE else 1)

    def event(self, event_type=k.KFD_IOC_EVENT_SIGNAL, auto_reset=1, page_handle=0):
        return self.ioctl(k.AMDKFD_IOC_CREATE_EVENT, k.kfd_ioctl_create_event_args(
            event_type=event_type, auto_reset=auto_reset, event_page_offset=page_handle))

    def wait(self, *event_ids: int, timeout: int = 0, wait_for_all: int = 0):
        data = (k.kfd_event_data * len(event_ids))()
        for d, e in zip(data, event_ids):
            d.event_id = e
        args = self.ioctl(k.AMDKFD_IOC_WAIT_EVENTS, k.kfd_ioctl_wait_events_args(
            events_ptr=ctypes.addressof(data), num_events=len(event_ids), wait_for_all=wait_for_all, timeout=timeout))
        return args.wait_result, data

    def close(self):
        self.kfd.close()
        self.render.close()


class Queue:
    def __init__(self, rig, args, ring, ptrs, doorbells, doorbell_at, unit):
        self.rig, self.args, self.ring, self.ptrs = rig, args, ring, ptrs
        self.doorbells, self.doorbell_at, self.unit = doorbells, doorbell_at, unit
        self.wptr = 0   # bytes

    def submit(self, *dwords: int) -> None:
        for d in dwords:
            self.ring.write_u32((self.wptr % self.ring.size) // 4, d)
            self.wptr += 4
        self.ptrs.write_u64(1, self.wptr // self.unit)
        self.doorbells.write64(self.doorbell_at, self.wptr // self.unit)

    @property
    def rptr(self) -> int:
        return self.ptrs.u64(0) * self.unit

