"""The mock KFD end to end through raw ioctls: memory shared by CPU and GPU, PM4 and SDMA queues rung
through mmapped doorbells, signal events fired by the GPU, faults and hangs as memory/hw-exception events."""
import ctypes

import pytest

from gputwin.abi import amd_pm4 as pm4
from gputwin.abi import amd_regs as regs
from gputwin.abi import amd_sdma as sdma
from gputwin.abi import kfd_ioctl as k
from gputwin.drivers.kernel import MAP_PRIVATE, PROT_READ, PROT_WRITE
from tests.emu.amd.gpu_rig import release_mem, set_sh, wait_reg_mem, write_data
from tests.mock.kfd_rig import GTT_RW, KfdRig


@pytest.fixture
def rig():
    r = KfdRig()
    yield r
    r.close()


def test_get_version_reports_the_header_version(rig):
    v = rig.ioctl(k.AMDKFD_IOC_GET_VERSION, k.kfd_ioctl_get_version_args())
    assert (v.major_version, v.minor_version) == (1, 16)


def test_cpu_writes_are_seen_by_the_gpu_and_gpu_writes_by_the_cpu(rig):
    buf = rig.alloc(0x2000)
    buf.write_u32(5, 0x1234)
    gpu = rig.mock.nodes[0].gpu
    assert gpu.mem.read_u32(buf.va + 20) == 0x1234
    gpu.mem.write_u32(buf.va + 0x1004, 0xBEEF)
    assert buf.u32(0x401) == [0xBEEF]


def test_userptr_maps_the_users_own_memory(rig):
    host = rig.kernel.mmap(0, 0x1000, PROT_READ | PROT_WRITE, MAP_PRIVATE)
    va = rig.reserve(0x1000)
    args = rig.ioctl(k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, k.kfd_ioctl_alloc_memory_of_gpu_args(
        va_addr=va, size=0x1000, gpu_id=rig.gpu_id, mmap_offset=host.addr,
        flags=k.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | k.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE))
    rig.map(args.handle)
    ctypes.c_uint32.from_address(host.addr + 8).value = 77
    gpu = rig.mock.nodes[0].gpu
    assert gpu.mem.read_u32(va + 8) == 77
    gpu.mem.write_u32(va + 12, 78)
    assert ctypes.c_uint32.from_address(host.addr + 12).value == 78


def test_pm4_queue_runs_on_doorbell_and_reports_rptr(rig):
    q = rig.queue()
    out = rig.alloc(0x1000)
    pkt = write_data(out.va, 1, 2, 3)
    q.submit(*pkt)
    assert out.u32(0, 3) == [1, 2, 3] and q.rptr == q.wptr


def test_release_mem_interrupt_signals_the_event_whose_slot_it_wrote(rig):
    page = rig.alloc(0x8000, GTT_RW)
    ev = rig.event(page_handle=page.handle)
    other = rig.event()
    q = rig.queue()
    assert rig.wait(ev.event_id)[0] == k.KFD_IOC_WAIT_RESULT_TIMEOUT
    q.submit(*release_mem(page.va + 8 * ev.event_slot_index, ev.event_id, int_sel=2, ctx=ev.event_trigger_data))
    result, data = rig.wait(ev.event_id, timeout=1000)
    assert result == k.KFD_IOC_WAIT_RESULT_COMPLETE
    assert rig.wait(ev.event_id)[0] == k.KFD_IOC_WAIT_RESULT_TIMEOUT    # auto-reset consumed it
    assert rig.wait(other.event_id)[0] == k.KFD_IOC_WAIT_RESULT_TIMEOUT
    assert page.u64(ev.event_slot_index) == 0xFFFFFFFFFFFFFFFF          # slot re-armed


def test_interrupt_without_a_slot_write_signals_nothing(rig):
    rig.alloc(0x8000, GTT_RW)
    ev = rig.event()
    q = rig.queue()
    q.submit(*release_mem(0, 0, data_sel=0, int_sel=1, ctx=ev.event_id))
    assert rig.wait(ev.event_id)[0] == k.KFD_IOC_WAIT_RESULT_TIMEOUT


def test_kfd_allocated_event_page_is_mmapped_through_dev_kfd(rig):
    ev = rig.event()
    page = rig.kfd.mmap(0, k.KFD_SIGNAL_EVENT_LIMIT * 8, PROT_READ | PROT_WRITE, 1, ev.event_page_offset)
    assert page.read64(8 * ev.event_slot_index) == 0xFFFFFFFFFFFFFFFF


def test_set_event_and_reset_event_and_last_event_age(rig):
    ev = rig.event(auto_reset=0)
    rig.ioctl(k.AMDKFD_IOC_SET_EVENT, k.kfd_ioctl_set_event_args(event_id=ev.event_id))
    result, data = rig.wait(ev.event_id)
    assert result == k.KFD_IOC_WAIT_RESULT_COMPLETE
    age = data[0].signal_event_data.last_event_age
    assert rig.wait(ev.event_id)[0] == k.KFD_IOC_WAIT_RESULT_COMPLETE   # manual reset: still set
    rig.ioctl(k.AMDKFD_IOC_RESET_EVENT, k.kfd_ioctl_reset_event_args(event_id=ev.event_id))
    assert rig.wait(ev.event_id)[0] == k.KFD_IOC_WAIT_RESULT_TIMEOUT
    assert age > 1


def test_wait_for_all_needs_every_event(rig):
    a, b = rig.event(), rig.event()
    rig.ioctl(k.AMDKFD_IOC_SET_EVENT, k.kfd_ioctl_set_event_args(event_id=a.event_id))
    assert rig.wait(a.event_id, b.event_id, wait_for_all=1)[0] == k.KFD_IOC_WAIT_RESULT_TIMEOUT
    assert rig.wait(a.event_id, b.event_id)[0] == k.KFD_IOC_WAIT_RESULT_COMPLETE


def test_wait_retries_a_queue_parked_on_memory_the_cpu_wrote(rig):
    flag, out = rig.alloc(0x1000), rig.alloc(0x1000)
    q = rig.queue()
    q.submit(*wait_reg_mem(flag.va, 1), *write_data(out.va, 5))
    assert out.u32() == [0]
    flag.write_u32(0, 1)
    rig.wait(rig.event().event_id)
    assert out.u32() == [5]


def test_sdma_queue_copies_and_fills(rig):
    src, dst = rig.alloc(0x1000), rig.alloc(0x1000)
    src.write_u32(0, 10, 20, 30, 40)
    q = rig.queue(k.KFD_IOC_QUEUE_TYPE_SDMA)
    q.submit(sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_COPY), 15, 0, src.va & 0xFFFFFFFF, src.va >> 32,
             dst.va & 0xFFFFFFFF, dst.va >> 32,
             sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_CONST_FILL) | sdma.SDMA_PKT_CONSTANT_FILL_HEADER_fillsize(2),
             (dst.va + 16) & 0xFFFFFFFF, (dst.va + 16) >> 32, 0x7, 7)
    assert dst.u32(0, 7) == [10, 20, 30, 40, 7, 7, 0] and q.rptr == q.wptr


def test_sdma_trap_signals_the_event(rig):
    ev = rig.event()
    page = rig.kfd.mmap(0, k.KFD_SIGNAL_EVENT_LIMIT * 8, PROT_READ | PROT_WRITE, 1, ev.event_page_offset)
    q = rig.queue(k.KFD_IOC_QUEUE_TYPE_SDMA)
    slot = page.addr + 8 * ev.event_slot_index
    rig.mock.nodes[0].gpu.mem.map(page.addr, 0x8000, page.addr)     # the page as the GPU would see it
    q.submit(sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_FENCE), slot & 0xFFFFFFFF, slot >> 32, 1,
             sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_TRAP), ev.event_id)
    assert rig.wait(ev.event_id)[0] == k.KFD_IOC_WAIT_RESULT_COMPLETE


def _kernel(rig, code: bytes, user=()):
    buf = rig.alloc(0x1000)
    ctypes.memmove(buf.va, code, len(code))
    return [*set_sh(regs.regCOMPUTE_PGM_LO, buf.va >> 8, buf.va >> 40),
            *set_sh(regs.regCOMPUTE_PGM_RSRC1, 0, regs.COMPUTE_PGM_RSRC2__USER_SGPR(len(user))),
            *set_sh(regs.regCOMPUTE_NUM_THREAD_X, 64, 1, 1),
            *(set_sh(regs.regCOMPUTE_USER_DATA_0, *user) if user else []),
            pm4.PACKET3(pm4.PACKET3_DISPATCH_DIRECT, 3), 1, 1, 1,
            regs.COMPUTE_DISPATCH_INITIATOR__COMPUTE_SHADER_EN(1) | regs.COMPUTE_DISPATCH_INITIATOR__CS_W32_EN(1)]


def test_dispatch_of_an_assembled_kernel_then_signal(rig):
    # llvm-mc-19 -mcpu=gfx1100: v_mov_b32 v1, 42; v_lshlrev_b32 v2, 2, v0; v_add_nc_u32 v1, v1, v0;
    # global_store_b32 v2, v1, s[0:1]; s_endpgm
    code = bytes([0xaa, 0x02, 0x02, 0x7e, 0x82, 0x00, 0x04, 0x30, 0x01, 0x01, 0x02, 0x4a,
                  0x00, 0x00, 0x6a, 0xdc, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0xb0, 0xbf])
    out = rig.alloc(0x1000)
    page = rig.alloc(0x8000, GTT_RW)
    ev = rig.event(page_handle=page.handle)
    q = rig.queue()
    q.submit(*_kernel(rig, code, (out.va & 0xFFFFFFFF, out.va >> 32)),
             *release_mem(page.va + 8 * ev.event_id, 1, int_sel=2, ctx=ev.event_id))
    assert rig.wait(ev.event_id)[0] == k.KFD_IOC_WAIT_RESULT_COMPLETE
    assert out.u32(0, 64) == [42 + i for i in range(64)]


def test_gpu_memory_fault_signals_memory_event_with_address_and_stops_the_queue(rig):
    mev = rig.event(k.KFD_IOC_EVENT_MEMORY, auto_reset=0)
    q = rig.queue()
    out = rig.alloc(0x1000)
    q.submit(*write_data(0x5555_0000, 1))
    result, data = rig.wait(mev.event_id)
    m = data[0].memory_exception_data
    assert result == k.KFD_IOC_WAIT_RESULT_COMPLETE and m.va == 0x5555_0000 and m.gpu_id == rig.gpu_id
    assert m.failure.NotPresent == 1 and m.ErrorType == k.KFD_MEM_ERR_NO_RAS
    q.submit(*write_data(out.va, 9))
    assert out.u32() == [0]                       # the faulting queue stays stopped
    q2 = rig.queue()                              # ... but the process can go on with a fresh queue
    q2.submit(*write_data(out.va, 9))
    assert out.u32() == [9]


def test_unknown_packet_signals_hw_exception(rig, caplog):
    hev = rig.event(k.KFD_IOC_EVENT_HW_EXCEPTION)
    q = rig.queue()
    q.submit(pm4.PACKET3(0xEE, 0), 0)
    result, data = rig.wait(hev.event_id)
    h = data[0].hw_exception_data
    assert result == k.KFD_IOC_WAIT_RESULT_COMPLETE and h.reset_cause == k.KFD_HW_EXCEPTION_GPU_HANG
    assert h.gpu_id == rig.gpu_id and "0xee" in str(rig.mock.faults[0][1].error)
    assert any("0xee" in r.getMessage() and r.name == "gputwin.mock.kfd" for r in caplog.records)  # the dmesg line


def test_after_a_fault_a_fresh_open_of_the_device_works():
    r = KfdRig()
    q = r.queue()
    q.submit(*write_data(0x5555_0000, 1))
    r.close()
    r2 = KfdRig()
    out = r2.alloc(0x1000)
    r2.queue().submit(*write_data(out.va, 3))
    assert out.u32() == [3]
    r2.close()


def test_two_gpus_each_have_their_own_node_and_address_space():
    r0, = [KfdRig(("gfx1100", "gfx942"))]
    gpu_ids = [int(r0.kernel.read_text(f"/sys/devices/virtual/kfd/kfd/topology/nodes/{i}/gpu_id")) for i in (1, 2)]
    assert len(set(gpu_ids)) == 2 and 0 not in gpu_ids
    buf = r0.alloc(0x1000)
    assert r0.mock.nodes[0].gpu.mem.find(buf.va) is not None and r0.mock.nodes[1].gpu.mem.find(buf.va) is None
    r0.close()


def test_map_to_a_peer_gpu_shares_the_memory():
    r = KfdRig(("gfx1100", "gfx1100"))
    peer = r.mock.nodes[1]
    render1 = r.kernel.open(f"/dev/dri/renderD{peer.render_minor}")
    r.ioctl(k.AMDKFD_IOC_ACQUIRE_VM, k.kfd_ioctl_acquire_vm_args(drm_fd=render1.fd, gpu_id=peer.gpu_id))
    buf = r.alloc(0x1000, map_gpu=False)
    m = r.map(buf.handle, [r.gpu_id, peer.gpu_id])
    assert m.n_success == 2
    buf.write_u32(0, 99)
    assert peer.gpu.mem.read_u32(buf.va) == 99
    render1.close()
    r.close()


def test_apertures_and_clock_counters_and_available_memory(rig):
    n = rig.ioctl(k.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, k.kfd_ioctl_get_process_apertures_new_args())
    assert n.num_of_nodes == 1
    ap = (k.kfd_process_device_apertures * 1)()
    rig.ioctl(k.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, k.kfd_ioctl_get_process_apertures_new_args(
        kfd_process_device_apertures_ptr=ctypes.addressof(ap), num_of_nodes=1))
    assert ap[0].gpu_id == rig.gpu_id and ap[0].gpuvm_base < ap[0].gpuvm_limit and ap[0].lds_base == 1 << 48
    c1 = rig.ioctl(k.AMDKFD_IOC_GET_CLOCK_COUNTERS, k.kfd_ioctl_get_clock_counters_args(gpu_id=rig.gpu_id))
    c2 = rig.ioctl(k.AMDKFD_IOC_GET_CLOCK_COUNTERS, k.kfd_ioctl_get_clock_counters_args(gpu_id=rig.gpu_id))
    assert 0 < c1.gpu_clock_counter <= c2.gpu_clock_counter and c1.system_clock_freq == 10 ** 9
    before = rig.ioctl(k.AMDKFD_IOC_AVAILABLE_MEMORY, k.kfd_ioctl_get_available_memory_args(gpu_id=rig.gpu_id))
    rig.alloc(0x10000)
    after = rig.ioctl(k.AMDKFD_IOC_AVAILABLE_MEMORY, k.kfd_ioctl_get_available_memory_args(gpu_id=rig.gpu_id))
    assert before.available - after.available == 0x10000


def test_runtime_enable_then_busy_then_disable(rig):
    args = k.kfd_ioctl_runtime_enable_args(r_debug=0x1000, mode_mask=k.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK)
    rig.ioctl(k.AMDKFD_IOC_RUNTIME_ENABLE, args)
    with pytest.raises(OSError, match="AMDKFD_IOC_RUNTIME_ENABLE: the runtime is already enabled") as e:
        rig.ioctl(k.AMDKFD_IOC_RUNTIME_ENABLE, args)
    assert e.value.errno == 16   # EBUSY
    rig.ioctl(k.AMDKFD_IOC_RUNTIME_ENABLE, k.kfd_ioctl_runtime_enable_args(mode_mask=0))


def test_free_unmapped_memory_and_destroy_queue(rig):
    buf = rig.alloc(0x1000, cpu=False)
    rig.unmap(buf.handle)
    rig.ioctl(k.AMDKFD_IOC_FREE_MEMORY_OF_GPU, k.kfd_ioctl_free_memory_of_gpu_args(handle=buf.handle))
    assert rig.mock.nodes[0].gpu.mem.find(buf.va) is None
    q = rig.queue()
    rig.ioctl(k.AMDKFD_IOC_DESTROY_QUEUE, k.kfd_ioctl_destroy_queue_args(queue_id=q.args.queue_id))
    assert not rig.mock.nodes[0].gpu.queues


def test_reported_apertures_are_the_ones_the_emulated_gpu_decodes():
    from gputwin.emu.amd.hwreg import PRIVATE_APERTURE_HI, SHARED_APERTURE_HI
    from gputwin.mock.kfd_state import LDS_APP_BASE_V9, SCRATCH_APP_BASE_V9
    assert (LDS_APP_BASE_V9 >> 32, SCRATCH_APP_BASE_V9 >> 32) == (SHARED_APERTURE_HI, PRIVATE_APERTURE_HI)
