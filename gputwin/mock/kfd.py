"""The mock KFD: a virtual /dev/kfd (ioctls per linux/kfd_ioctl.h 1.16, see gputwin.abi.kfd_ioctl),
/dev/dri/renderD128+i and the sysfs topology, over one emulated GPU (gputwin.emu.amd.gpu) per arch.

`install(kernel, archs)` mounts it all in a MockKernel; a driver written for the real /dev/kfd then runs on
it unchanged. Failing ioctls raise OSError with the errno the real driver returns (docs/mock-kfd.md lists
them); nothing inside the mock raises anything else at the driver.
"""
from __future__ import annotations

import ctypes
import errno
import time
import zlib

from gputwin.abi import kfd_ioctl as k
from gputwin.abi.ioctl import IOC_NR, IOC_TYPE
from gputwin.drivers.kernel import Mapping
from gputwin.emu.amd.gpu import GPU
from gputwin.mock import kfd_events, kfd_memory, kfd_queues, kfd_topology
from gputwin.mock.kernel import MockDevice, MockKernel
from gputwin.mock.kfd_state import (GPUVM_BASE, GPUVM_LIMIT, KFD_DOORBELL_PROCESS_SLICE, KFD_MMAP_GPU_ID_MASK,
                                    KFD_MMAP_GPU_ID_SHIFT, KFD_MMAP_TYPE_DOORBELL,
                                    KFD_MMAP_TYPE_EVENTS, KFD_MMAP_TYPE_MASK, KFD_MMAP_TYPE_MMIO, LDS_APP_BASE_V9,
                                    PAGE, SCRATCH_APP_BASE_V9, KfdNode, KfdProcess, ProcessDevice, SharedMemory,
                                    aperture_limit, fail)

RENDER_MINOR_BASE = 128
MMAP_OFFSET_BASE = 1 << 32


def install(kernel: MockKernel, archs: list[str]) -> "MockKFD":
    """Mount /dev/kfd, one render node per GPU and the topology; one emulated GPU per entry of archs."""
    kfd = MockKFD(kernel, archs)
    kernel.mount_device("/dev/kfd", kfd)
    for node in kfd.nodes:
        kernel.mount_device(f"/dev/dri/renderD{node.render_minor}", kfd.render_nodes[node.gpu_id])
    kfd_topology.mount(kernel, kfd.nodes)
    return kfd


def _gpu_id(arch: str, index: int, taken: set[int]) -> int:
    """A stable, non-zero 16-bit id per GPU (real KFD hashes the device's identity the same way)."""
    gpu_id = zlib.crc32(f"{arch}:{index}".encode()) & 0xFFFF or 1
    while gpu_id in taken:
        gpu_id = (gpu_id + 1) & 0xFFFF or 1
    return gpu_id


class MockKFD(MockDevice):
    def __init__(self, kernel: MockKernel, archs: list[str]):
        if not archs:
            raise ValueError("a mock KFD needs at least one GPU arch")
        self.kernel = kernel
        self.nodes: list[KfdNode] = []
        for i, arch in enumerate(archs):
            gpu = GPU(arch, name=f"{arch}#{i}")
            node = KfdNode(i + 1, _gpu_id(arch, i, {n.gpu_id for n in self.nodes}), RENDER_MINOR_BASE + i, gpu)
            gpu.listener = lambda event, node=node: kfd_events.on_gpu_event(self, node, event)
            self.nodes.append(node)
        self.render_nodes = {n.gpu_id: kfd_memory.RenderNode(self, n) for n in self.nodes}
        self.process: KfdProcess | None = None
        self.by_mmap_offset: dict[int, object] = {}
        self.queue_owner: dict = {}          # emulated queue -> KfdProcess
        self.faults: list = []               # (gpu_id, GpuEvent) of every fault/hang, for inspection
        self._next_offset = MMAP_OFFSET_BASE

    # --- files -------------------------------------------------------------------------------------
    def open(self, kernel, path, flags):
        if self.process is None:
            self.process = KfdProcess(devices={n.gpu_id: ProcessDevice(n) for n in self.nodes})
        self.process.opens += 1
        return self.process

    def close(self, p: KfdProcess) -> None:
        p.opens -= 1
        if p.opens == 0 and p is self.process:
            self._teardown(p)

    def _teardown(self, p: KfdProcess) -> None:
        for q in list(p.queues.values()):
            kfd_queues.destroy(self, p, q)
        p.event_page = None
        for alloc in list(p.allocations.values()):
            kfd_memory.release(self, p, alloc)
        for pdd in p.devices.values():
            for memory in (pdd.doorbells.memory if pdd.doorbells else None, pdd.mmio):
                if memory is not None:
                    memory.release()
        self.process = None

    # --- ioctls ------------------------------------------------------------------------------------
    def ioctl(self, p: KfdProcess, request: int, arg: bytearray) -> int:
        entry = _BY_NR.get(IOC_NR(request)) if IOC_TYPE(request) == k.AMDKFD_IOCTL_BASE else None
        if entry is None:
            return super().ioctl(p, request, arg)       # ENOTTY, naming the request
        name, struct, handler = entry
        if handler is None:
            raise fail(errno.ENOTTY, f"{name} is not modelled by the mock KFD")
        # as kfd_ioctl(): the kernel's own struct size counts; a shorter user struct is zero-extended
        size = ctypes.sizeof(struct)
        args = struct.from_buffer_copy(bytes(arg[:size]).ljust(size, b"\0"))
        self.revalidate_userptrs()        # several ioctls run the GPU or touch its memory
        handler(self, p, args)
        arg[:] = bytes(args)[:len(arg)].ljust(len(arg), b"\0")
        return 0

    # --- mmap of /dev/kfd: doorbells, events, MMIO remap ---------------------------------------------
    def mmap(self, p: KfdProcess, addr: int, size: int, prot: int, flags: int, offset: int) -> Mapping:
        kind, gpu_id = offset & KFD_MMAP_TYPE_MASK, (offset & KFD_MMAP_GPU_ID_MASK) >> KFD_MMAP_GPU_ID_SHIFT
        if kind == KFD_MMAP_TYPE_DOORBELL:
            if size != KFD_DOORBELL_PROCESS_SLICE:
                raise fail(errno.EINVAL, f"mmap of doorbells: {size:#x} bytes at {offset:#x} "
                                         f"(the doorbell page is {KFD_DOORBELL_PROCESS_SLICE:#x} bytes)")
            return self.doorbells(p.device(gpu_id, "mmap of doorbells")).map(addr, size, prot, flags)
        if kind == KFD_MMAP_TYPE_EVENTS:
            page = p.event_page
            if page is None or page.memory is None or size > page.size:
                state = "not created by KFD" if page is None or page.memory is None else "smaller"
                raise fail(errno.EINVAL, f"mmap of the event page: {size:#x} bytes, page {state}")
            return Mapping(page.memory.map_at(addr, size, prot, flags), size)
        if kind == KFD_MMAP_TYPE_MMIO:
            if size != PAGE:
                raise fail(errno.EINVAL, f"mmap of the MMIO remap page: {size:#x} bytes")
            return Mapping(self.mmio(p.device(gpu_id, "mmap of MMIO")).map_at(addr, size, prot, flags), size)
        raise fail(errno.EINVAL, f"mmap of /dev/kfd at unknown offset {offset:#x}")

    # --- shared helpers ----------------------------------------------------------------------------
    def doorbells(self, pdd: ProcessDevice) -> kfd_queues.DoorbellPage:
        if pdd.doorbells is None:
            pdd.doorbells = kfd_queues.DoorbellPage(pdd, self.revalidate_userptrs)
        return pdd.doorbells

    def mmio(self, pdd: ProcessDevice) -> SharedMemory:
        if pdd.mmio is None:
            pdd.mmio = SharedMemory(PAGE, f"kfd-mmio-{pdd.node.gpu_id:#x}")
        return pdd.mmio

    def new_mmap_offset(self, alloc) -> int:
        offset = self._next_offset
        self._next_offset += alloc.size + PAGE
        self.by_mmap_offset[offset] = alloc
        return offset

    def revalidate_userptrs(self) -> None:
        if self.process is not None:
            kfd_memory.revalidate_userptrs(self, self.process)

    def run_gpus(self) -> None:
        for node in self.nodes:
            node.gpu.run()

    def node(self, gpu_id: int) -> KfdNode | None:
        return next((n for n in self.nodes if n.gpu_id == gpu_id), None)


# --- the small ioctls --------------------------------------------------------------------------------
def _get_version(kfd, p, a):
    a.major_version, a.minor_version = k.KFD_IOCTL_MAJOR_VERSION, k.KFD_IOCTL_MINOR_VERSION


def _apertures(pdd: ProcessDevice) -> k.kfd_process_device_apertures:
    return k.kfd_process_device_apertures(
        lds_base=LDS_APP_BASE_V9, lds_limit=aperture_limit(LDS_APP_BASE_V9), scratch_base=SCRATCH_APP_BASE_V9,
        scratch_limit=aperture_limit(SCRATCH_APP_BASE_V9), gpuvm_base=GPUVM_BASE, gpuvm_limit=GPUVM_LIMIT,
        gpu_id=pdd.node.gpu_id)


def _get_process_apertures(kfd, p, a):
    pdds = list(p.devices.values())[:k.NUM_OF_SUPPORTED_GPUS]
    for i, pdd in enumerate(pdds):
        a.process_apertures[i] = _apertures(pdd)
    a.num_of_nodes = len(pdds)


def _get_process_apertures_new(kfd, p, a):
    pdds = list(p.devices.values())
    if a.num_of_nodes == 0:
        a.num_of_nodes = len(pdds)
        return
    pdds = pdds[:a.num_of_nodes]
    kfd.kernel.copy_to_user(a.kfd_process_device_apertures_ptr, b"".join(bytes(_apertures(d)) for d in pdds))
    a.num_of_nodes = len(pdds)


def _acquire_vm(kfd, p, a):
    what = "AMDKFD_IOC_ACQUIRE_VM"
    pdd = p.device(a.gpu_id, what)
    render = kfd.render_nodes[a.gpu_id]
    try:
        drm_file = kfd.kernel.file(a.drm_fd)
    except OSError:
        drm_file = None
    if drm_file is None or drm_file.device is not render:  # kfd_ioctl_acquire_vm: fget() failed or not this GPU's DRM file
        raise fail(errno.EINVAL, f"{what}: drm_fd {a.drm_fd} is no open render node of gpu_id {a.gpu_id:#x}")
    if pdd.drm_file is not None and pdd.drm_file != a.drm_fd:
        raise fail(errno.EINVAL, f"{what}: gpu_id {a.gpu_id:#x} already has a VM from drm_fd {pdd.drm_file}")
    pdd.drm_file = a.drm_fd


def _get_clock_counters(kfd, p, a):
    node = kfd.node(a.gpu_id)
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
    a.gpu_clock_counter = node.gpu.gpu_clock() if node is not None else 0
    a.cpu_clock_counter = a.system_clock_counter = now
    a.system_clock_freq = 1_000_000_000


def _available_memory(kfd, p, a):
    pdd = p.device(a.gpu_id, "AMDKFD_IOC_AVAILABLE_MEMORY")
    a.available = pdd.node.profile.local_mem_size - kfd_memory.vram_in_use(kfd, pdd.node)


def _set_scratch_backing_va(kfd, p, a):
    p.device(a.gpu_id, "AMDKFD_IOC_SET_SCRATCH_BACKING_VA", bound=True).scratch_va = a.va_addr


def _set_memory_policy(kfd, p, a):
    what = "AMDKFD_IOC_SET_MEMORY_POLICY"
    p.device(a.gpu_id, what)
    policies = (k.KFD_IOC_CACHE_POLICY_COHERENT, k.KFD_IOC_CACHE_POLICY_NONCOHERENT)
    if a.default_policy not in policies or a.alternate_policy not in policies:
        raise fail(errno.EINVAL, f"{what}: policies {a.default_policy}/{a.alternate_policy}")


def _runtime_enable(kfd, p, a):
    what = "AMDKFD_IOC_RUNTIME_ENABLE"
    if a.mode_mask & k.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK:
        if p.runtime_enabled:
            raise fail(errno.EBUSY, f"{what}: the runtime is already enabled")
        if p.queues:
            raise fail(errno.EEXIST, f"{what}: queues exist already")
        p.runtime_enabled, p.r_debug = True, a.r_debug
    else:
        p.runtime_enabled = False
    a.capabilities_mask = 0


_HANDLERS = {
    k.AMDKFD_IOC_GET_VERSION: _get_version,
    k.AMDKFD_IOC_CREATE_QUEUE: kfd_queues.create_queue,
    k.AMDKFD_IOC_DESTROY_QUEUE: kfd_queues.destroy_queue,
    k.AMDKFD_IOC_SET_MEMORY_POLICY: _set_memory_policy,
    k.AMDKFD_IOC_GET_CLOCK_COUNTERS: _get_clock_counters,
    k.AMDKFD_IOC_GET_PROCESS_APERTURES: _get_process_apertures,
    k.AMDKFD_IOC_UPDATE_QUEUE: kfd_queues.update_queue,
    k.AMDKFD_IOC_CREATE_EVENT: kfd_events.create_event,
    k.AMDKFD_IOC_DESTROY_EVENT: kfd_events.destroy_event,
    k.AMDKFD_IOC_SET_EVENT: kfd_events.set_event,
    k.AMDKFD_IOC_RESET_EVENT: kfd_events.reset_event,
    k.AMDKFD_IOC_WAIT_EVENTS: kfd_events.wait_events,
    k.AMDKFD_IOC_SET_SCRATCH_BACKING_VA: _set_scratch_backing_va,
    k.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW: _get_process_apertures_new,
    k.AMDKFD_IOC_ACQUIRE_VM: _acquire_vm,
    k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU: kfd_memory.alloc_memory_of_gpu,
    k.AMDKFD_IOC_FREE_MEMORY_OF_GPU: kfd_memory.free_memory_of_gpu,
    k.AMDKFD_IOC_MAP_MEMORY_TO_GPU: kfd_memory.map_memory_to_gpu,
    k.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU: kfd_memory.unmap_memory_from_gpu,
    k.AMDKFD_IOC_AVAILABLE_MEMORY: _available_memory,
    k.AMDKFD_IOC_RUNTIME_ENABLE: _runtime_enable,
}
# ioctl nr -> (name, the kernel's args struct, handler or None when the mock does not model it)
_BY_NR = {IOC_NR(req): (name, struct, _HANDLERS.get(req)) for req, (name, struct) in k.IOCTLS.items()}
