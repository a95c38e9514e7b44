"""Mock KFD user-mode queues: CREATE/DESTROY/UPDATE_QUEUE and the doorbell page that rings them.

Each (process, GPU) has one doorbell page of KFD_DOORBELL_PROCESS_SLICE bytes, one 64-bit doorbell per
queue (slot = queue_id). CREATE_QUEUE returns doorbell_offset = KFD_MMAP_TYPE_DOORBELL | gpu_id | byte offset
of the slot; mmap of /dev/kfd there gives a `DoorbellMapping`, whose write32/write64 run the GPU.
"""
from __future__ import annotations

import errno
from dataclasses import dataclass

from gputwin.abi import kfd_ioctl as k
from gputwin.drivers.kernel import Mapping, libc_munmap
from gputwin.emu.amd.gpu import Queue
from gputwin.emu.memory import AddressSpace
from gputwin.mock.kfd_state import (KFD_DOORBELL_PROCESS_SLICE, KFD_MAX_NUM_OF_QUEUES_PER_PROCESS,
                                    KFD_MMAP_GPU_ID_SHIFT, KFD_MMAP_TYPE_DOORBELL, KfdProcess, ProcessDevice,
                                    SharedMemory, fail)
from gputwin.errors import MemoryFault


class DoorbellPage:
    """The doorbells of one process on one GPU."""

    def __init__(self, pdd: ProcessDevice, before_run=lambda: None):
        self.pdd, self.before_run = pdd, before_run   # before_run: the KFD's USERPTR revalidation
        self.memory = SharedMemory(KFD_DOORBELL_PROCESS_SLICE, f"kfd-doorbells-{pdd.node.gpu_id:#x}")
        self.slots: dict[int, Queue] = {}   # byte offset -> queue

    def map(self, addr: int, size: int, prot: int, flags: int) -> "DoorbellMapping":
        return DoorbellMapping(self.memory.map_at(addr, size, prot, flags), size, self)

    def ring(self, offset: int, value: int) -> None:
        q = self.slots.get(offset & ~7)
        if q is not None:   # a doorbell no queue owns goes nowhere, as on the hardware
            self.before_run()
            self.pdd.node.gpu.ring_doorbell(q, value)


class DoorbellMapping(Mapping):
    def __init__(self, addr: int, size: int, page: DoorbellPage):
        super().__init__(addr, size)
        self.page = page

    def write32(self, offset: int, value: int) -> None:
        super().write32(offset, value)
        self.page.ring(offset, value & 0xFFFFFFFF)

    def write64(self, offset: int, value: int) -> None:
        super().write64(offset, value)
        self.page.ring(offset, value)

    def unmap(self) -> None:
        libc_munmap(self.addr, self.size)


@dataclass
class KfdQueue:
    queue_id: int
    pdd: ProcessDevice
    hw: Queue
    queue_type: int


def _check_properties(a, what: str) -> None:
    if a.queue_percentage > k.KFD_MAX_QUEUE_PERCENTAGE:
        raise fail(errno.EINVAL, f"{what}: queue_percentage {a.queue_percentage} > {k.KFD_MAX_QUEUE_PERCENTAGE}")
    if a.queue_priority > k.KFD_MAX_QUEUE_PRIORITY:
        raise fail(errno.EINVAL, f"{what}: queue_priority {a.queue_priority} > {k.KFD_MAX_QUEUE_PRIORITY}")
    a.ring_size = max(a.ring_size, k.KFD_MIN_QUEUE_RING_SIZE)
    if a.ring_size & (a.ring_size - 1):
        raise fail(errno.EINVAL, f"{what}: ring_size {a.ring_size:#x} is not a power of two")


def _gpu_mapped(mem: AddressSpace, va: int, size: int, what: str, name: str, write: bool = False) -> None:
    try:
        mem.view(va, size, write=write)
    except MemoryFault:
        raise fail(errno.EINVAL, f"{what}: {name} [{va:#x}, +{size:#x}) is not mapped "
                                 f"{'writable ' if write else ''}on the GPU") from None


def create_queue(kfd, p: KfdProcess, a: k.kfd_ioctl_create_queue_args) -> None:
    what = "AMDKFD_IOC_CREATE_QUEUE"
    _check_properties(a, what)
    pdd = p.device(a.gpu_id, what, bound=True)
    if a.queue_type not in (k.KFD_IOC_QUEUE_TYPE_COMPUTE, k.KFD_IOC_QUEUE_TYPE_SDMA, k.KFD_IOC_QUEUE_TYPE_SDMA_XGMI):
        reason = "AQL queues are not modelled" if a.queue_type == k.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL else "unknown"
        raise fail(errno.EINVAL, f"{what}: queue_type {a.queue_type} ({reason})")
    mem = pdd.node.gpu.mem
    _gpu_mapped(mem, a.ring_base_address, a.ring_size, what, "ring")
    _gpu_mapped(mem, a.read_pointer_address, 8, what, "read pointer", write=True)   # the engine reports it
    _gpu_mapped(mem, a.write_pointer_address, 8, what, "write pointer")
    qid = next((i for i in range(KFD_MAX_NUM_OF_QUEUES_PER_PROCESS) if i not in p.queues), None)
    if qid is None:
        raise fail(errno.ENOMEM, f"{what}: the process has {KFD_MAX_NUM_OF_QUEUES_PER_PROCESS} queues")
    gpu = pdd.node.gpu
    create = gpu.create_compute_queue if a.queue_type == k.KFD_IOC_QUEUE_TYPE_COMPUTE else gpu.create_sdma_queue
    hw = create(a.ring_base_address, a.ring_size, a.read_pointer_address, a.write_pointer_address, name=f"q{qid}")
    hw.report_rptr()
    hw.enabled = a.queue_percentage > 0 and a.ring_base_address != 0
    p.queues[qid] = KfdQueue(qid, pdd, hw, a.queue_type)
    kfd.doorbells(pdd).slots[8 * qid] = hw
    kfd.queue_owner[hw] = p
    a.queue_id = qid
    a.doorbell_offset = KFD_MMAP_TYPE_DOORBELL | a.gpu_id << KFD_MMAP_GPU_ID_SHIFT | 8 * qid


def destroy(kfd, p: KfdProcess, q: KfdQueue) -> None:
    q.pdd.node.gpu.destroy_queue(q.hw)
    kfd.doorbells(q.pdd).slots.pop(8 * q.queue_id, None)
    kfd.queue_owner.pop(q.hw, None)
    del p.queues[q.queue_id]


def destroy_queue(kfd, p: KfdProcess, a: k.kfd_ioctl_destroy_queue_args) -> None:
    q = p.queues.get(a.queue_id)
    if q is None:
        raise fail(errno.EINVAL, f"AMDKFD_IOC_DESTROY_QUEUE: no queue {a.queue_id}")
    destroy(kfd, p, q)


def update_queue(kfd, p: KfdProcess, a: k.kfd_ioctl_update_queue_args) -> None:
    what = "AMDKFD_IOC_UPDATE_QUEUE"
    _check_properties(a, what)
    q = p.queues.get(a.queue_id)
    if q is None:
        raise fail(errno.EFAULT, f"{what}: no queue {a.queue_id}")
    if a.ring_base_address:
        _gpu_mapped(q.pdd.node.gpu.mem, a.ring_base_address, a.ring_size, what, "ring")
    q.hw.ring_va, q.hw.ring_bytes = a.ring_base_address, a.ring_size
    q.hw.enabled = a.queue_percentage > 0 and a.ring_base_address != 0
    if q.hw.enabled:
        q.pdd.node.gpu.run()
