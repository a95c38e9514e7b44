"""Mock KFD memory: ALLOC/FREE/MAP/UNMAP_MEMORY_OF_GPU and the render node whose mmap gives the CPU the
same pages the GPU sees.

GPU VA == host VA: the process picks va_addr; MAP_MEMORY_TO_GPU maps the allocation into each named GPU's
AddressSpace at va_addr; mmap of the render node at the returned mmap_offset (MAP_FIXED at va_addr) maps the
same memfd there. USERPTR allocations wrap the user's own memory (mmap_offset carries its address).
"""
from __future__ import annotations

import errno
import os
import struct

from gputwin.abi import kfd_ioctl as k
from gputwin.drivers.kernel import MAP_SHARED, PROT_READ, PROT_WRITE, Mapping
from gputwin.mock import usermem
from gputwin.mock.kernel import MockDevice
from gputwin.mock.kfd_state import (KFD_DOORBELL_PROCESS_SLICE, KFD_MMAP_GPU_ID_SHIFT, KFD_MMAP_TYPE_MMIO,
                                    PAGE, Allocation, KfdProcess, SharedMemory, fail, make_handle)

_TYPES = (k.KFD_IOC_ALLOC_MEM_FLAGS_VRAM | k.KFD_IOC_ALLOC_MEM_FLAGS_GTT | k.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR
          | k.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL | k.KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)
MAX_MAP_DEVICES = 1 << 16
SYSTEM_MEMORY = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _page_up(n: int) -> int:
    return (n + PAGE - 1) & ~(PAGE - 1)


def vram_in_use(kfd, node) -> int:
    return sum(a.size for a in kfd.process.allocations.values()
               if a.node is node and a.flags & k.KFD_IOC_ALLOC_MEM_FLAGS_VRAM) if kfd.process else 0


def alloc_memory_of_gpu(kfd, p: KfdProcess, a: k.kfd_ioctl_alloc_memory_of_gpu_args) -> None:
    what = "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"
    pdd = p.device(a.gpu_id, what, bound=True)
    kind = a.flags & _TYPES
    if kind == 0 or kind & (kind - 1):
        raise fail(errno.EINVAL, f"{what}: flags {a.flags:#x} name {'no' if not kind else 'several'} memory types")
    if a.size == 0 or a.va_addr % PAGE:
        raise fail(errno.EINVAL, f"{what}: va_addr {a.va_addr:#x} size {a.size:#x} (page-aligned, non-empty)")
    size = _page_up(a.size)
    if a.va_addr + size > 1 << 47:
        raise fail(errno.EINVAL, f"{what}: [{a.va_addr:#x}, +{size:#x}) is outside the GPU VM")
    for other in p.allocations.values():
        if a.va_addr < other.va + other.size and other.va < a.va_addr + size:
            raise fail(errno.EINVAL, f"{what}: [{a.va_addr:#x}, +{size:#x}) overlaps allocation "
                                     f"[{other.va:#x}, +{other.size:#x})")
    node, memory, host, offset = pdd.node, None, 0, 0
    if kind == k.KFD_IOC_ALLOC_MEM_FLAGS_VRAM and vram_in_use(kfd, node) + size > node.profile.local_mem_size:
        raise fail(errno.ENOMEM, f"{what}: {size:#x} bytes of VRAM exceed what is left on gpu_id {a.gpu_id:#x}")
    if kind in (k.KFD_IOC_ALLOC_MEM_FLAGS_GTT, k.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) and size > SYSTEM_MEMORY:
        raise fail(errno.ENOMEM, f"{what}: {size:#x} bytes of system memory exceed the machine's {SYSTEM_MEMORY:#x}")
    if kind == k.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR:
        host, offset = a.mmap_offset, a.mmap_offset
        if host % PAGE:
            raise fail(errno.EINVAL, f"{what}: userptr {host:#x} is not page-aligned")
        if not kfd.kernel.user_mapped(host, size, PROT_READ | PROT_WRITE):
            # get_user_pages (write access: KFD's userptr BOs are never read-only) fails on any page that is
            # not mapped readable and writable
            raise fail(errno.EFAULT, f"{what}: userptr [{host:#x}, +{size:#x}) is not all mapped read-write")
    elif kind == k.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL:
        if a.size != KFD_DOORBELL_PROCESS_SLICE:
            raise fail(errno.EINVAL, f"{what}: doorbell allocations are {KFD_DOORBELL_PROCESS_SLICE:#x} bytes")
        host = kfd.doorbells(pdd).memory.addr
    elif kind == k.KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP:
        if a.size != PAGE:
            raise fail(errno.EINVAL, f"{what}: MMIO remap allocations are one page")
        host = kfd.mmio(pdd).addr
        offset = KFD_MMAP_TYPE_MMIO | a.gpu_id << KFD_MMAP_GPU_ID_SHIFT
    else:
        memory = SharedMemory(size, f"kfd-bo-{a.va_addr:#x}")
        host = memory.addr
    handle = make_handle(a.gpu_id, p.next_idr)
    p.next_idr += 1
    alloc = Allocation(handle, node, a.va_addr, size, a.flags, host, memory, offset, asked=a.size)
    if kind in (k.KFD_IOC_ALLOC_MEM_FLAGS_VRAM, k.KFD_IOC_ALLOC_MEM_FLAGS_GTT, k.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL):
        alloc.mmap_offset = kfd.new_mmap_offset(alloc)
    p.allocations[handle] = alloc
    a.handle, a.mmap_offset = handle, alloc.mmap_offset


def _lookup(p: KfdProcess, handle: int, what: str, missing: int) -> Allocation:
    if (handle >> 32) not in p.devices:
        raise fail(errno.EINVAL, f"{what}: handle {handle:#x} names no GPU")
    alloc = p.allocations.get(handle)
    if alloc is None:
        raise fail(missing, f"{what}: no allocation with handle {handle:#x}")
    return alloc


def free_memory_of_gpu(kfd, p: KfdProcess, a: k.kfd_ioctl_free_memory_of_gpu_args) -> None:
    what = "AMDKFD_IOC_FREE_MEMORY_OF_GPU"
    alloc = _lookup(p, a.handle, what, errno.EINVAL)
    if p.event_page is not None and p.event_page.allocation is alloc:
        raise fail(errno.EPERM, f"{what}: {a.handle:#x} is the event page")
    if alloc.mapped_on:
        raise fail(errno.EBUSY, f"{what}: {a.handle:#x} is still mapped on {len(alloc.mapped_on)} GPU(s)")
    release(kfd, p, alloc)


def release(kfd, p: KfdProcess, alloc: Allocation) -> None:
    for gpu_id in list(alloc.mapped_on):
        _gpu_unmap(p, alloc, gpu_id)
    alloc.mapped_on.clear()
    kfd.by_mmap_offset.pop(alloc.mmap_offset, None)
    del p.allocations[alloc.handle]
    if alloc.memory is not None:
        alloc.memory.release()


def _devices(kfd, p: KfdProcess, a, what: str) -> list[int]:
    if a.n_devices == 0 or a.n_success > a.n_devices:
        raise fail(errno.EINVAL, f"{what}: n_devices {a.n_devices}, n_success {a.n_success}")
    if a.n_devices > MAX_MAP_DEVICES:
        raise fail(errno.ENOMEM, f"{what}: {a.n_devices} devices")
    raw = kfd.kernel.copy_from_user(a.device_ids_array_ptr, 4 * a.n_devices)
    ids = list(struct.unpack(f"<{a.n_devices}I", raw))
    for gpu_id in ids[a.n_success:]:
        p.device(gpu_id, what)
    return ids


def map_memory_to_gpu(kfd, p: KfdProcess, a: k.kfd_ioctl_map_memory_to_gpu_args) -> None:
    what = "AMDKFD_IOC_MAP_MEMORY_TO_GPU"
    alloc = _lookup(p, a.handle, what, errno.ENOMEM)
    ids = _devices(kfd, p, a, what)
    for i in range(a.n_success, a.n_devices):
        pdd = p.device(ids[i], what, bound=True)
        if ids[i] not in alloc.mapped_on:
            if not alloc.evicted:
                _gpu_map(pdd, alloc)
            alloc.mapped_on.add(ids[i])
        a.n_success = i + 1


def _gpu_map(pdd, alloc: Allocation) -> None:
    writable = bool(alloc.flags & k.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE) or alloc.flags & _TYPES in (
        k.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL, k.KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)
    # what the ioctl asked for bounds the buffer (memcheck); VRAM no CPU maps holds nothing defined until
    # something writes it (initcheck)
    undefined = alloc.flags & (k.KFD_IOC_ALLOC_MEM_FLAGS_VRAM | k.KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC) == \
        k.KFD_IOC_ALLOC_MEM_FLAGS_VRAM
    pdd.node.gpu.mem.map(alloc.va, alloc.size, alloc.host_addr, writable=writable, name=f"bo {alloc.handle:#x}",
                         extent=alloc.asked or None, undefined=bool(undefined))


def _gpu_unmap(p: KfdProcess, alloc: Allocation, gpu_id: int) -> None:
    if not alloc.evicted:
        p.devices[gpu_id].node.gpu.mem.unmap(alloc.va)


def revalidate_userptrs(kfd, p: KfdProcess) -> None:
    """What KFD's MMU notifier and restore worker do, checked whenever the GPU is about to run: a USERPTR
    buffer whose pages the user unmapped or protected is evicted from every GPU page table, so a GPU access
    faults (KFD too leaves such a buffer invalid: "it will fail later with a VM fault"); it is mapped again
    once its pages are back. The emulated GPU thus never reaches host pages it may not touch."""
    maps = None                          # /proc/self/maps, read once for every buffer checked
    for alloc in p.allocations.values():
        if not (alloc.flags & k.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR and alloc.mapped_on):
            continue
        if maps is None:
            maps = usermem.read_maps()
        ok = kfd.kernel.user_mapped(alloc.host_addr, alloc.size, PROT_READ | PROT_WRITE, maps)
        if ok == alloc.evicted:
            for gpu_id in alloc.mapped_on:
                if ok:
                    _gpu_map(p.devices[gpu_id], alloc)
                else:
                    _gpu_unmap(p, alloc, gpu_id)
            alloc.evicted = not ok


def unmap_memory_from_gpu(kfd, p: KfdProcess, a: k.kfd_ioctl_unmap_memory_from_gpu_args) -> None:
    what = "AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU"
    alloc = _lookup(p, a.handle, what, errno.ENOMEM)
    ids = _devices(kfd, p, a, what)
    for i in range(a.n_success, a.n_devices):
        if ids[i] not in alloc.mapped_on:
            raise fail(errno.EINVAL, f"{what}: {a.handle:#x} is not mapped on gpu_id {ids[i]:#x}")
        _gpu_unmap(p, alloc, ids[i])
        alloc.mapped_on.discard(ids[i])
        a.n_success = i + 1


class RenderNode(MockDevice):
    """/dev/dri/renderD<minor>: the DRM file KFD's ACQUIRE_VM takes and through which BOs are mmapped."""

    def __init__(self, kfd, node):
        self.kfd, self.node = kfd, node
        self.open_files = 0

    def open(self, kernel, path, flags):
        self.open_files += 1
        return self

    def close(self, state) -> None:
        self.open_files -= 1

    def mmap(self, state, addr: int, size: int, prot: int, flags: int, offset: int) -> Mapping:
        alloc = self.kfd.by_mmap_offset.get(offset)
        if alloc is None or alloc.node is not self.node:
            raise fail(errno.EINVAL, f"mmap of renderD{self.node.render_minor}: no buffer at offset {offset:#x}")
        if size > alloc.size or not flags & MAP_SHARED:
            raise fail(errno.EINVAL, f"mmap of {size:#x} bytes (flags {flags:#x}) of a {alloc.size:#x}-byte buffer: "
                                     f"must be MAP_SHARED and fit")
        if alloc.flags & k.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL:
            pdd = self.kfd.process.devices[self.node.gpu_id]
            return self.kfd.doorbells(pdd).map(addr, size, prot, flags)
        return Mapping(alloc.memory.map_at(addr, size, prot, flags), size)

