"""Every error path of the mock KFD gives the errno the real driver gives (kfd_chardev.c), as OSError."""
import ctypes
import errno
import os
import re

import pytest

from gputwin.abi import kfd_ioctl as k
from gputwin.abi.ioctl import IOWR
from gputwin.drivers.kernel import MAP_PRIVATE, MAP_SHARED
from tests.mock.kfd_rig import GTT_RW, RW, VRAM_RW, KfdRig


@pytest.fixture
def rig():
    r = KfdRig()
    yield r
    r.close()


def expect(code, rig, request, args):
    with pytest.raises(OSError, match=re.escape(os.strerror(code))) as e:
        rig.ioctl(request, args)
    assert e.value.errno == code, e.value
    return str(e.value)


def alloc_args(rig, **kw):
    base = dict(va_addr=rig.reserve(0x2000), size=0x1000, gpu_id=rig.gpu_id, flags=VRAM_RW)
    return k.kfd_ioctl_alloc_memory_of_gpu_args(**{**base, **kw})


def test_unknown_ioctl_is_enotty(rig):
    expect(errno.ENOTTY, rig, IOWR(ord("K"), 0x7F, k.kfd_ioctl_get_version_args), k.kfd_ioctl_get_version_args())
    expect(errno.ENOTTY, rig, IOWR(ord("Q"), 0x01, k.kfd_ioctl_get_version_args), k.kfd_ioctl_get_version_args())


def test_known_but_unmodelled_ioctl_is_enotty_naming_it(rig):
    msg = expect(errno.ENOTTY, rig, k.AMDKFD_IOC_SET_TRAP_HANDLER, k.kfd_ioctl_set_trap_handler_args())
    assert "AMDKFD_IOC_SET_TRAP_HANDLER" in msg


def test_argument_smaller_than_the_request_is_efault(rig):
    with pytest.raises(OSError, match=r"ioctl 0x[0-9a-f]+ \(type K, nr 0x2, size 88\) with a 8-byte argument") as e:
        rig.kfd.ioctl(k.AMDKFD_IOC_CREATE_QUEUE, k.kfd_ioctl_get_version_args())
    assert e.value.errno == errno.EFAULT


def test_bad_gpu_id_is_einval_everywhere(rig):
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, alloc_args(rig, gpu_id=0x1))
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_ACQUIRE_VM, k.kfd_ioctl_acquire_vm_args(drm_fd=rig.render.fd, gpu_id=1))
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_AVAILABLE_MEMORY, k.kfd_ioctl_get_available_memory_args(gpu_id=1))
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_SET_SCRATCH_BACKING_VA, k.kfd_ioctl_set_scratch_backing_va_args(gpu_id=1))
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_CREATE_QUEUE, k.kfd_ioctl_create_queue_args(gpu_id=1, ring_size=4096))


def test_clock_counters_of_an_unknown_gpu_read_zero(rig):
    c = rig.ioctl(k.AMDKFD_IOC_GET_CLOCK_COUNTERS, k.kfd_ioctl_get_clock_counters_args(gpu_id=1))
    assert c.gpu_clock_counter == 0 and c.system_clock_counter > 0


def test_alloc_before_acquire_vm_is_einval():
    r = KfdRig(acquire=False)
    assert "ACQUIRE_VM" in expect(errno.EINVAL, r, k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, alloc_args(r))
    r.close()


def test_acquire_vm_with_no_render_node_open_is_einval():
    r = KfdRig(acquire=False)
    r.render.close()
    expect(errno.EINVAL, r, k.AMDKFD_IOC_ACQUIRE_VM, k.kfd_ioctl_acquire_vm_args(drm_fd=5, gpu_id=r.gpu_id))
    r.kfd.close()


def test_acquire_vm_twice_with_another_fd_is_einval(rig):
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_ACQUIRE_VM, k.kfd_ioctl_acquire_vm_args(drm_fd=rig.render.fd + 1,
                                                                                 gpu_id=rig.gpu_id))
    rig.ioctl(k.AMDKFD_IOC_ACQUIRE_VM, k.kfd_ioctl_acquire_vm_args(drm_fd=rig.render.fd, gpu_id=rig.gpu_id))


@pytest.mark.parametrize("change", [
    dict(size=0), dict(flags=k.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE),
    dict(flags=k.KFD_IOC_ALLOC_MEM_FLAGS_VRAM | k.KFD_IOC_ALLOC_MEM_FLAGS_GTT),
    dict(flags=k.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL), dict(flags=k.KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP, size=0x2000),
    dict(va_addr=1 << 47)])
def test_bad_allocation_requests_are_einval(rig, change):
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, alloc_args(rig, **change))


def test_unaligned_va_is_einval(rig):
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, alloc_args(rig, va_addr=rig.reserve(0x2000) + 8))


def test_overlapping_va_ranges_are_einval(rig):
    a = rig.ioctl(k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, alloc_args(rig, size=0x2000))
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, alloc_args(rig, va_addr=a.va_addr + 0x1000))


def test_vram_beyond_the_device_is_enomem(rig):
    expect(errno.ENOMEM, rig, k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, alloc_args(rig, va_addr=1 << 44, size=25 << 30))


def test_userptr_to_unmapped_memory_is_efault(rig):
    gone = rig.reserve(0x1000)
    rig.kernel.munmap(rig.reservations.pop())
    expect(errno.EFAULT, rig, k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, alloc_args(
        rig, flags=k.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, mmap_offset=gone))


def test_free_of_mapped_memory_is_ebusy_and_bad_handles_einval(rig):
    buf = rig.alloc(0x1000, cpu=False)
    expect(errno.EBUSY, rig, k.AMDKFD_IOC_FREE_MEMORY_OF_GPU, k.kfd_ioctl_free_memory_of_gpu_args(handle=buf.handle))
    free = k.kfd_ioctl_free_memory_of_gpu_args
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_FREE_MEMORY_OF_GPU, free(handle=buf.handle + 99))
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_FREE_MEMORY_OF_GPU, k.kfd_ioctl_free_memory_of_gpu_args(handle=7))


def test_free_of_the_event_page_is_eperm(rig):
    page = rig.alloc(0x8000, GTT_RW)
    rig.event(page_handle=page.handle)
    rig.unmap(page.handle)
    expect(errno.EPERM, rig, k.AMDKFD_IOC_FREE_MEMORY_OF_GPU, k.kfd_ioctl_free_memory_of_gpu_args(handle=page.handle))


def test_map_errors(rig):
    buf = rig.alloc(0x1000, map_gpu=False, cpu=False)
    ids = (ctypes.c_uint32 * 2)(rig.gpu_id, 0x1)
    ptr = ctypes.addressof(ids)

    def m(**kw):
        return k.kfd_ioctl_map_memory_to_gpu_args(**{**dict(handle=buf.handle, device_ids_array_ptr=ptr), **kw})
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_MAP_MEMORY_TO_GPU, m(n_devices=0))
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_MAP_MEMORY_TO_GPU, m(n_devices=1, n_success=2))
    expect(errno.EFAULT, rig, k.AMDKFD_IOC_MAP_MEMORY_TO_GPU, m(device_ids_array_ptr=8, n_devices=1))
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_MAP_MEMORY_TO_GPU, m(n_devices=2))
    expect(errno.ENOMEM, rig, k.AMDKFD_IOC_MAP_MEMORY_TO_GPU, m(handle=buf.handle + 50, n_devices=1))
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, k.kfd_ioctl_unmap_memory_from_gpu_args(
        handle=buf.handle, device_ids_array_ptr=ptr, n_devices=1))


def test_map_reports_partial_success_in_n_success(rig):
    buf = rig.alloc(0x1000, map_gpu=False, cpu=False)
    ids = (ctypes.c_uint32 * 2)(rig.gpu_id, 0x1)
    args = k.kfd_ioctl_map_memory_to_gpu_args(handle=buf.handle, device_ids_array_ptr=ctypes.addressof(ids),
                                              n_devices=2)
    with pytest.raises(OSError, match="AMDKFD_IOC_MAP_MEMORY_TO_GPU: no GPU with gpu_id 0x1"):
        rig.kfd.ioctl(k.AMDKFD_IOC_MAP_MEMORY_TO_GPU, args)
    assert rig.mock.nodes[0].gpu.mem.find(buf.va) is None   # the bad id is found before mapping anything


def queue_args(rig, **kw):
    ring, ptrs = rig.alloc(0x1000, GTT_RW), rig.alloc(0x1000, GTT_RW)
    base = dict(ring_base_address=ring.va, ring_size=0x1000, gpu_id=rig.gpu_id, queue_percentage=100,
                read_pointer_address=ptrs.va, write_pointer_address=ptrs.va + 8)
    return k.kfd_ioctl_create_queue_args(**{**base, **kw})


@pytest.mark.parametrize("change", [dict(queue_percentage=101), dict(queue_priority=16), dict(ring_size=0x1800),
                                    dict(queue_type=k.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL), dict(queue_type=9),
                                    dict(ring_size=0x2000), dict(read_pointer_address=0x10),
                                    dict(write_pointer_address=0x10)])
def test_bad_queue_requests_are_einval(rig, change):
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_CREATE_QUEUE, queue_args(rig, **change))


def test_read_pointer_in_read_only_memory_is_einval(rig):
    ro = rig.alloc(0x1000, k.KFD_IOC_ALLOC_MEM_FLAGS_GTT)
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_CREATE_QUEUE, queue_args(rig, read_pointer_address=ro.va))


def test_small_rings_are_clamped_to_the_minimum(rig):
    q = rig.ioctl(k.AMDKFD_IOC_CREATE_QUEUE, queue_args(rig, ring_size=64))
    assert q.ring_size == k.KFD_MIN_QUEUE_RING_SIZE


def test_queue_id_errors(rig):
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_DESTROY_QUEUE, k.kfd_ioctl_destroy_queue_args(queue_id=5))
    expect(errno.EFAULT, rig, k.AMDKFD_IOC_UPDATE_QUEUE, k.kfd_ioctl_update_queue_args(queue_id=5, ring_size=4096))
    q = rig.ioctl(k.AMDKFD_IOC_CREATE_QUEUE, queue_args(rig))
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_UPDATE_QUEUE, k.kfd_ioctl_update_queue_args(
        queue_id=q.queue_id, ring_size=4096, queue_percentage=101))
    expect(errno.EEXIST, rig, k.AMDKFD_IOC_RUNTIME_ENABLE, k.kfd_ioctl_runtime_enable_args(mode_mask=1))


def test_event_errors(rig):
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_CREATE_EVENT, k.kfd_ioctl_create_event_args(event_type=9))
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_CREATE_EVENT, k.kfd_ioctl_create_event_args(event_page_offset=0x1234))
    vram = rig.alloc(0x8000)
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_CREATE_EVENT, k.kfd_ioctl_create_event_args(event_page_offset=vram.handle))
    rig.event()
    page = rig.alloc(0x8000, GTT_RW)
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_CREATE_EVENT, k.kfd_ioctl_create_event_args(event_page_offset=page.handle))
    for req, s in ((k.AMDKFD_IOC_DESTROY_EVENT, k.kfd_ioctl_destroy_event_args),
                   (k.AMDKFD_IOC_SET_EVENT, k.kfd_ioctl_set_event_args),
                   (k.AMDKFD_IOC_RESET_EVENT, k.kfd_ioctl_reset_event_args)):
        expect(errno.EINVAL, rig, req, s(event_id=4000))
    mem = rig.event(k.KFD_IOC_EVENT_MEMORY)
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_SET_EVENT, k.kfd_ioctl_set_event_args(event_id=mem.event_id))


def test_wait_errors(rig):
    expect(errno.EFAULT, rig, k.AMDKFD_IOC_WAIT_EVENTS, k.kfd_ioctl_wait_events_args(events_ptr=16, num_events=1))
    data = (k.kfd_event_data * 1)()
    data[0].event_id = 3
    expect(errno.EINVAL, rig, k.AMDKFD_IOC_WAIT_EVENTS, k.kfd_ioctl_wait_events_args(
        events_ptr=ctypes.addressof(data), num_events=1))


def test_signal_events_run_out_with_enospc(rig):
    page = rig.alloc(0x1000, GTT_RW)      # a one-page event page holds 512 slots
    rig.event(page_handle=page.handle)
    for _ in range(511):
        rig.event()
    expect(errno.ENOSPC, rig, k.AMDKFD_IOC_CREATE_EVENT, k.kfd_ioctl_create_event_args())


def test_mmap_errors(rig):
    def mmap_fails(code, f, size, flags, offset):
        with pytest.raises(OSError, match=r"mmap of .*: " + re.escape(os.strerror(code))) as e:
            f.mmap(0, size, RW, flags, offset)
        assert e.value.errno == code
    mmap_fails(errno.EINVAL, rig.render, 0x1000, MAP_SHARED, 0x1234000)
    buf = rig.alloc(0x1000, cpu=False)
    mmap_fails(errno.EINVAL, rig.render, 0x2000, MAP_SHARED, rig.mock.process.allocations[buf.handle].mmap_offset)
    mmap_fails(errno.EINVAL, rig.render, 0x1000, MAP_PRIVATE, rig.mock.process.allocations[buf.handle].mmap_offset)
    mmap_fails(errno.EINVAL, rig.kfd, 0x1000, MAP_SHARED, (3 << 62) | rig.gpu_id << 46)    # doorbells: 8 KiB
    mmap_fails(errno.EINVAL, rig.kfd, 0x1000, MAP_SHARED, 2 << 62)                         # no event page yet
    mmap_fails(errno.EINVAL, rig.kfd, 0x1000, MAP_SHARED, 1 << 62)


def test_acquire_vm_with_a_non_render_fd_is_einval():
    r = KfdRig(acquire=False)
    expect(errno.EINVAL, r, k.AMDKFD_IOC_ACQUIRE_VM, k.kfd_ioctl_acquire_vm_args(drm_fd=r.kfd.fd, gpu_id=r.gpu_id))
    r.close()
