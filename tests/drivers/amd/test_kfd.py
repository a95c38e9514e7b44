"""The KFD interface (drivers/amd/kfd.py) against the mock KFD: topology, memory kinds, doorbells, events."""
import ctypes
import errno

import numpy as np
import pytest

from gputwin.abi import kfd_ioctl as kfd
from gputwin.drivers.amd.device import AMDDevice
from gputwin.drivers.amd.kfd import KFD, KFDGpu
from gputwin.mock.kernel import MockKernel
from gputwin.mock.kfd import install


@pytest.fixture
def kernel():
    k = MockKernel()
    install(k, ["gfx1100", "gfx1100"])
    return k


def test_one_kfd_per_kernel_and_gpus_in_node_order(kernel):
    a, b = KFDGpu(KFD.of(kernel), 0), KFDGpu(KFD.of(kernel), 1)
    try:
        assert a.kfd is b.kfd and a.kfd.version >= (1, 6)
        assert (a.arch, b.arch) == ("gfx1100", "gfx1100") and a.node < b.node and a.gpu_id != b.gpu_id
        assert a.apertures.gpu_id == a.gpu_id and a.apertures.gpuvm_limit > a.apertures.gpuvm_base
    finally:
        a.close()
        b.close()


def test_missing_gpu_is_enodev(kernel):
    with pytest.raises(OSError, match="no AMD GPU 2: the KFD topology lists 2") as e:
        KFDGpu(KFD.of(kernel), 2)
    assert e.value.errno == errno.ENODEV
    KFD.of(kernel).release()


def test_memory_kinds_and_cpu_views(kernel):
    gpu = KFDGpu(KFD.of(kernel), 0)
    try:
        vram, gtt, user = gpu.alloc(5000, "vram"), gpu.alloc(4096, "gtt", cpu_access=True), gpu.alloc(8192, "userptr")
        assert vram.size == 8192 and vram.host_addr is None
        assert gtt.host_addr == gtt.va and user.host_addr == user.va
        assert vram.flags & kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM and user.flags & kfd.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR
        assert len({vram.va, gtt.va, user.va}) == 3
        gpu.free(vram)
        assert vram not in gpu._live
    finally:
        gpu.close()


def test_userptr_memory_is_what_the_gpu_copies(kernel):
    dev = AMDDevice(kernel, 0)
    try:
        user = dev.gpu.alloc(4096, "userptr")
        src = np.ctypeslib.as_array((ctypes.c_uint8 * 4096).from_address(user.host_addr))
        src[:] = np.arange(4096) % 251
        dst = dev._alloc(4096)
        wait, sig = dev._next_value()
        dev._copy_queue().wait(dev.timeline_signal, wait).copy(dst.va, user.va, 4096) \
            .signal(dev.timeline_signal, sig).submit(dev)
        out = np.empty(4096, np.uint8)
        dev.copyout(out, dst)
        assert (out == np.arange(4096) % 251).all()
        dev.gpu.free(user)
    finally:
        dev.close()


def test_signal_events_have_mailboxes_in_the_shared_event_page(kernel):
    d0, d1 = AMDDevice(kernel, 0), AMDDevice(kernel, 1)
    try:
        page = d0.gpu.kfd.event_page
        (e0, m0), (e1, m1) = d0.signal_event, d1.signal_event
        assert e0 != e1 and page.va <= m0 < page.va + page.size and page.va <= m1 < page.va + page.size
        assert d0.gpu.kfd.event_page_on == {d0.gpu.gpu_id, d1.gpu.gpu_id}
    finally:
        d1.close()
        d0.close()
    assert d0.gpu.kfd.fd is None   # the last GPU closed /dev/kfd


def test_doorbell_page_is_mapped_once_per_gpu(kernel):
    dev = AMDDevice(kernel, 0)
    try:
        assert dev.compute_ring.doorbell is dev.copy_ring.doorbell
        assert dev.compute_ring.doorbell_offset != dev.copy_ring.doorbell_offset
    finally:
        dev.close()


def test_a_gpu_binds_its_vm_once_and_can_be_reopened(kernel, hsaco):
    from tests.drivers.amd.test_device import run_saxpy
    a, b = AMDDevice(kernel, 0), AMDDevice(kernel, 0)   # amdkfd would refuse a second ACQUIRE_VM file
    try:
        assert a.gpu.drm is b.gpu.drm and a.gpu.kfd.users == 2
        for d in (a, b):
            out, want = run_saxpy(d, hsaco["v5"])
            assert out.tobytes() == want.tobytes()
    finally:
        a.close()
        b.close()
    c = AMDDevice(kernel, 0)   # the mock process was torn down with its last user: a new one starts
    try:
        out, want = run_saxpy(c, hsaco["v5"])
        assert out.tobytes() == want.tobytes()
    finally:
        c.close()
