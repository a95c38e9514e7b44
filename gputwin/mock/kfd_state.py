"""State the mock KFD keeps, as the real driver does: the GPU nodes it exposes and the one KFD process of
this (Python) process, with its devices, allocations, queues and events.

Linux keeps one kfd_process per mm, however often /dev/kfd is opened; so does the mock: every open of
/dev/kfd shares the process, which is torn down when the last file is closed.
"""
from __future__ import annotations

import ctypes
import errno
import os
from dataclasses import dataclass, field

from gputwin.drivers.kernel import MAP_SHARED, PROT_READ, PROT_WRITE, libc_mmap, libc_munmap
from gputwin.emu.amd.gpu import GPU
from gputwin.mock.kernel import claim_kernel_memory, release_kernel_memory

PAGE = 4096

# kfd_priv.h mmap-offset encoding (kernel-private; userspace only passes back what the ioctls returned)
KFD_MMAP_TYPE_SHIFT = 62
KFD_MMAP_TYPE_MASK = 0x3 << KFD_MMAP_TYPE_SHIFT
KFD_MMAP_TYPE_DOORBELL = 0x3 << KFD_MMAP_TYPE_SHIFT
KFD_MMAP_TYPE_EVENTS = 0x2 << KFD_MMAP_TYPE_SHIFT
KFD_MMAP_TYPE_RESERVED_MEM = 0x1 << KFD_MMAP_TYPE_SHIFT
KFD_MMAP_TYPE_MMIO = 0x0 << KFD_MMAP_TYPE_SHIFT
KFD_MMAP_GPU_ID_SHIFT = 46
KFD_MMAP_GPU_ID_MASK = ((1 << 16) - 1) << KFD_MMAP_GPU_ID_SHIFT
KFD_MMAP_OFFSET_VALUE_MASK = (1 << KFD_MMAP_GPU_ID_SHIFT) - 1

KFD_DOORBELL_PROCESS_SLICE = 8192          # bytes of doorbells per process and GPU (1024 x 64-bit)
KFD_MAX_NUM_OF_QUEUES_PER_PROCESS = 1024
UNSIGNALED_EVENT_SLOT = 0xFFFFFFFFFFFFFFFF
KFD_FIRST_NONSIGNAL_EVENT_ID = 0x80000000

# gfx9+ 64-bit apertures (kfd_flat_memory.c)
LDS_APP_BASE_V9 = 0x1 << 48
SCRATCH_APP_BASE_V9 = 0x2 << 48
GPUVM_BASE = PAGE
GPUVM_LIMIT = (1 << 47) - 1


def aperture_limit(base: int) -> int:
    return (base & 0xFFFFFFFF00000000) | 0xFFFFFFFF


def fail(code: int, message: str) -> OSError:
    return OSError(code, f"{message}: {os.strerror(code)}")


def make_handle(gpu_id: int, idr: int) -> int:
    return (gpu_id << 32) | idr


class SharedMemory:
    """A memfd-backed block: the mock keeps its own mapping (what the GPU address space points at) and
    hands the fd to every CPU mapping, so CPU and GPU see the same pages."""

    def __init__(self, size: int, name: str):
        self.size = size
        self.fd = os.memfd_create(name, os.MFD_CLOEXEC)
        try:
            os.ftruncate(self.fd, size)
            self.addr = libc_mmap(0, size, PROT_READ | PROT_WRITE, MAP_SHARED, self.fd, 0)
        except OSError:
            os.close(self.fd)
            raise fail(errno.ENOMEM, f"cannot back {size:#x} bytes of {name}")
        claim_kernel_memory(self.addr, size)

    def map_at(self, addr: int, size: int, prot: int, flags: int) -> int:
        return libc_mmap(addr, size, prot, flags, self.fd, 0)

    def u64(self, offset: int) -> ctypes.c_uint64:
        return ctypes.c_uint64.from_address(self.addr + offset)

    def release(self) -> None:
        if self.fd >= 0:
            release_kernel_memory(self.addr)
            libc_munmap(self.addr, self.size)
            os.close(self.fd)
            self.fd = -1


@dataclass
class KfdNode:
    """One GPU as KFD exposes it: topology node index, gpu_id, render minor, the emulated device."""
    index: int                 # topology node (0 is the CPU)
    gpu_id: int
    render_minor: int
    gpu: GPU

    @property
    def profile(self):
        return self.gpu.profile


@dataclass
class Allocation:
    handle: int
    node: KfdNode
    va: int
    size: int
    flags: int
    host_addr: int                      # where the mock (and the GPU address space) reaches the memory
    memory: SharedMemory | None         # None for userptr and doorbell memory (owned elsewhere)
    mmap_offset: int = 0
    mapped_on: set = field(default_factory=set)   # gpu_ids
    asked: int = 0                      # the ioctl's byte count before rounding to pages (0: the size)
    evicted: bool = False               # USERPTR pages gone: in no GPU page table until they are back


@dataclass
class ProcessDevice:
    """kfd_process_device: a process's view of one GPU."""
    node: KfdNode
    drm_file: object | None = None
    scratch_va: int = 0
    doorbells: object | None = None     # kfd_queues.DoorbellPage, made on first use
    mmio: SharedMemory | None = None


@dataclass
class KfdProcess:
    devices: dict                       # gpu_id -> ProcessDevice
    allocations: dict = field(default_factory=dict)   # handle -> Allocation
    queues: dict = field(default_factory=dict)        # queue_id -> kfd_queues.KfdQueue
    events: dict = field(default_factory=dict)        # event_id -> kfd_events.Event
    event_page: object | None = None    # kfd_events.EventPage
    runtime_enabled: bool = False
    r_debug: int = 0
    next_idr: int = 1
    next_other_event: int = KFD_FIRST_NONSIGNAL_EVENT_ID
    opens: int = 0

    def device(self, gpu_id: int, what: str, *, bound: bool = False) -> ProcessDevice:
        pdd = self.devices.get(gpu_id)
        if pdd is None:
            raise fail(errno.EINVAL, f"{what}: no GPU with gpu_id {gpu_id:#x}")
        if bound and pdd.drm_file is None:
            raise fail(errno.EINVAL, f"{what}: gpu_id {gpu_id:#x} has no VM yet (AMDKFD_IOC_ACQUIRE_VM first)")
        return pdd
