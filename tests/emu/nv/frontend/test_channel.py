import numpy as np
import pytest

from gputwin.abi import nv_methods as m
from gputwin.emu.nv.channel import MethodError
from tests.emu.nv.frontend.rig import MEM_VA, Rig, immd, inc, non_inc, one_inc, sem_acquire, sem_release


def test_semaphore_release_32_and_64_bit_payloads():
    r = Rig()
    r.submit(sem_release(MEM_VA + 0x10, 0x1234_5678_9ABC_DEF0) + sem_release(MEM_VA + 0x20, 0xFEDC_BA98_7654_3210, wide=True))
    assert r.u64(0x10) == 0x9ABC_DEF0          # a 32-bit release writes the low payload word only
    assert r.u64(0x20) == 0xFEDC_BA98_7654_3210
    assert int(r.userd.view(np.uint32)[m.USERD_GP_GET // 4]) == 1


def test_release_with_timestamp_writes_deterministic_gpu_time_after_payload():
    stamps = []
    for _ in range(2):
        r = Rig()
        r.submit(sem_release(MEM_VA + 0x40, 7, timestamp=True))
        stamps.append(r.u64(0x48))
    assert stamps[0] == stamps[1] > 0          # deterministic: the same methods give the same time
    assert Rig().gpu.timestamp_ns() == 0


def test_acquire_parks_until_released_from_another_submission():
    r = Rig()
    r.submit(sem_acquire(MEM_VA, 5, m.SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ) + sem_release(MEM_VA + 8, 1))
    assert r.u32(8) == 0 and r.ch.runnable()
    r.gpu.mem.write_u32(MEM_VA, 5)
    r.gpu.run()
    assert r.u32(8) == 1


@pytest.mark.parametrize("value,payload,expect", [
    (0x00000002, 0xFFFFFFFE, True),    # wrapped past the payload
    (0xFFFFFFFE, 0x00000002, False),   # before it, across the wrap
    (5, 5, True), (4, 5, False),
])
def test_circular_acquire_is_wrap_aware(value, payload, expect):
    r = Rig()
    r.gpu.mem.write_u32(MEM_VA, value)
    r.submit(sem_acquire(MEM_VA, payload, m.SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ) + sem_release(MEM_VA + 8, 9))
    assert (r.u32(8) == 9) is expect


def test_acquire_equal_and_and_nor_64_bit():
    r = Rig()
    r.gpu.mem.write_u64(MEM_VA, 1 << 40)
    r.submit(sem_acquire(MEM_VA, 1 << 40, m.SEM_EXECUTE_OPERATION_ACQUIRE, wide=True) + sem_release(MEM_VA + 8, 1)
             + sem_acquire(MEM_VA, 1 << 40, m.SEM_EXECUTE_OPERATION_ACQ_AND, wide=True) + sem_release(MEM_VA + 12, 2))
    assert (r.u32(8), r.u32(12)) == (1, 2)


def test_non_incrementing_and_increment_once_methods():
    r = Rig()
    r.submit(non_inc(0, m.NVC56F_SEM_ADDR_LO, MEM_VA + 0x100, MEM_VA + 0x80)       # the last write wins
             + inc(0, m.NVC56F_SEM_ADDR_HI, 0)
             + one_inc(0, m.NVC56F_SEM_PAYLOAD_LO, 11, 0)                             # LO then HI, HI, ...
             + immd(0, m.NVC56F_SEM_EXECUTE, m.SEM_EXECUTE_OPERATION_RELEASE))
    assert r.u32(0x80) == 11 and r.u32(0x100) == 0


def test_segment_end_inside_a_method_is_an_error_naming_the_method():
    r = Rig()
    r.gpu.listener = lambda e: None
    r.submit([m.method_header(m.SEC_OP_INC_METHOD, 0, m.NVC56F_SEM_ADDR_LO, 3), MEM_VA])
    assert r.ch.stopped
    with pytest.raises(MethodError, match="2 data dwords of the method 0x5c header missing"):
        raise r.ch.error


def test_unknown_host_method_fails_closed():
    r = Rig()
    r.gpu.listener = lambda e: None
    r.submit(inc(0, 0x0C, 1))
    assert isinstance(r.ch.error, MethodError) and "host method 0xc" in str(r.ch.error)


def test_method_on_unbound_subchannel_and_set_object_of_unknown_class():
    r = Rig()
    r.gpu.listener = lambda e: None
    r.submit(inc(3, 0x300, 0))
    assert "subchannel 3" in str(r.ch.error)
    r = Rig()
    r.gpu.listener = lambda e: None
    r.submit(inc(1, m.NVC56F_SET_OBJECT, 0xB197))
    assert "SET_OBJECT of class 0xb197" in str(r.ch.error)


def test_without_listener_a_fault_raises_to_the_doorbell():
    r = Rig()
    with pytest.raises(Exception, match="unmapped"):
        r.submit(sem_release(0xDEAD0000, 1))
    assert r.ch.stopped


def test_gpfifo_wraps_and_reports_gp_get():
    r = Rig()
    for i in range(40):                       # 16 entries: wraps twice
        r.submit(sem_release(MEM_VA + 0x200, i + 1))
        assert r.u32(0x200) == i + 1
    assert int(r.userd.view(np.uint32)[m.USERD_GP_GET // 4]) == 40 % 16


def test_zero_length_entry_is_a_nop_and_subroutine_entries_are_refused():
    r = Rig()
    r.gpu.listener = lambda e: None
    r.gpu.mem.write(0x10000, np.array([0, 0], "<u4").tobytes())        # LENGTH 0
    r.userd.view(np.uint32)[m.USERD_GP_PUT // 4] = 1
    r.gpu.doorbell(r.ch.token)
    assert r.ch.gp_get == 1 and not r.ch.stopped
    r.gpu.mem.write(0x10008, np.array([0x20000, 1 << 10 | m.GP_ENTRY1_LEVEL_SUBROUTINE], "<u4").tobytes())
    r.userd.view(np.uint32)[m.USERD_GP_PUT // 4] = 2
    r.gpu.doorbell(r.ch.token)
    assert r.ch.stopped and "SUBROUTINE" in str(r.ch.error)


def test_non_stall_interrupt_is_reported():
    r = Rig()
    events = []
    r.gpu.listener = events.append
    r.submit(inc(0, m.NVC56F_NON_STALL_INTERRUPT, 0))
    assert [e.kind for e in events] == ["nonstall"] and not r.ch.stopped


def test_end_pb_segment_ends_the_entry_early():
    r = Rig()
    r.submit(sem_release(MEM_VA, 1) + [m.SEC_OP_END_PB_SEGMENT << 29] + sem_release(MEM_VA, 2))
    assert r.u32(0) == 1 and r.ch.gp_get == 1


@pytest.mark.parametrize("arch,kept", [("sm_80", 0xFF), ("sm_90", 0x1FFFFFF)])
def test_semaphore_upper_address_bits_per_class(arch, kept):
    """SEM_ADDR_HI keeps bits 7:0 on AMPERE_CHANNEL_GPFIFO_A and 24:0 on HOPPER_CHANNEL_GPFIFO_A."""
    r = Rig(arch)
    r.gpu.listener = lambda e: None
    r.submit(inc(0, m.NVC56F_SEM_ADDR_LO, MEM_VA + 0x40, 0x100, 5, 0, m.SEM_EXECUTE_OPERATION_RELEASE))
    if kept == 0xFF:
        assert r.u32(0x40) == 5 and not r.ch.stopped          # bit 40 dropped: the write lands at MEM_VA + 0x40
    else:
        assert r.ch.stopped and r.ch.error.address == (0x100 << 32) + MEM_VA + 0x40
