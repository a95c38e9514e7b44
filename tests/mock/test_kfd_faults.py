"""The mock KFD's fault reporting: memory-exception / hw-exception event data as amdkfd fills it, plus the
gputwin fault record (gputwin.abi.kfd_fault_record) behind kfd_event_data_ext, which a real KFD never
touches."""
import ctypes
import errno

import pytest

from gputwin.abi import amd_pm4 as pm4
from gputwin.abi import amd_regs as regs
from gputwin.abi import kfd_ioctl as k
from gputwin.abi.kfd_fault_record import (FACT_ADDRESS, FACT_OPCODE, FACT_PC, FACT_RING_OFFSET, FACT_WAVE,
                                          FACT_WRITE, GPUTWIN_FAULT_MAGIC, GPUTWIN_FAULT_VERSION,
                                          gputwin_fault_record)
from gputwin.emu.amd.isa import assemble
from tests.emu.amd.gpu_rig import set_sh, write_data
from tests.mock.kfd_rig import KfdRig


@pytest.fixture
def rig():
    r = KfdRig()
    yield r
    r.close()


def _record(magic=GPUTWIN_FAULT_MAGIC):
    return gputwin_fault_record(magic=magic, size=ctypes.sizeof(gputwin_fault_record), version=GPUTWIN_FAULT_VERSION)


def _wait(rig, event_id, ext: int):
    data = (k.kfd_event_data * 1)()
    data[0].event_id, data[0].kfd_event_data_ext = event_id, ext
    args = rig.ioctl(k.AMDKFD_IOC_WAIT_EVENTS, k.kfd_ioctl_wait_events_args(
        events_ptr=ctypes.addressof(data), num_events=1, timeout=0))
    return args.wait_result, data[0]


def test_rejected_packet_fills_the_record_with_opcode_ring_offset_and_queue(rig):
    hev = rig.event(k.KFD_IOC_EVENT_HW_EXCEPTION)
    q = rig.queue()
    q.submit(pm4.PACKET3(pm4.PACKET3_NOP, 0), 0, pm4.PACKET3(0xEE, 0), 0)
    rec = _record()
    result, d = _wait(rig, hev.event_id, ctypes.addressof(rec))
    assert result == k.KFD_IOC_WAIT_RESULT_COMPLETE and d.hw_exception_data.gpu_id == rig.gpu_id
    assert rec.valid == 1 and rec.exception_code == k.EC_QUEUE_PACKET_UNSUPPORTED and rec.kind == b"packet"
    assert rec.facts == FACT_OPCODE | FACT_RING_OFFSET and (rec.opcode, rec.ring_offset) == (0xEE, 8)
    assert (rec.gpu_id, rec.queue_id, rec.arch) == (rig.gpu_id, q.args.queue_id, b"gfx1100")
    assert b"0xee" in rec.message
    assert d.kfd_event_data_ext == ctypes.addressof(rec)   # the pointer itself is left as it was


def test_memory_fault_of_a_packet_is_a_device_memory_violation(rig):
    mev = rig.event(k.KFD_IOC_EVENT_MEMORY, auto_reset=0)
    rig.queue().submit(*write_data(0x5555_0000, 1))
    rec = _record()
    _, d = _wait(rig, mev.event_id, ctypes.addressof(rec))
    assert d.memory_exception_data.va == 0x5555_0000
    assert rec.exception_code == k.EC_DEVICE_MEMORY_VIOLATION and rec.kind == b"memory"
    assert rec.facts == FACT_ADDRESS | FACT_WRITE and (rec.address, rec.write) == (0x5555_0000, 1)


def test_memory_fault_of_a_wave_carries_pc_and_wave(rig):
    code = assemble("v_mov_b32 v1, 0\nglobal_load_b32 v2, v1, s[0:1]\ns_endpgm", "gfx1100")
    buf = rig.alloc(0x1000)
    ctypes.memmove(buf.va, code, len(code))
    mev = rig.event(k.KFD_IOC_EVENT_MEMORY, auto_reset=0)
    initiator = regs.COMPUTE_DISPATCH_INITIATOR__COMPUTE_SHADER_EN(1) | regs.COMPUTE_DISPATCH_INITIATOR__CS_W32_EN(1)
    rig.queue().submit(*set_sh(regs.regCOMPUTE_PGM_LO, buf.va >> 8, buf.va >> 40),
                       *set_sh(regs.regCOMPUTE_PGM_RSRC1, 0, regs.COMPUTE_PGM_RSRC2__USER_SGPR(2)),
                       *set_sh(regs.regCOMPUTE_NUM_THREAD_X, 32, 1, 1),
                       *set_sh(regs.regCOMPUTE_USER_DATA_0, 0x40, 0),     # s[0:1]: the address 0x40
                       pm4.PACKET3(pm4.PACKET3_DISPATCH_DIRECT, 3), 1, 1, 1, initiator)
    rec = _record()
    _wait(rig, mev.event_id, ctypes.addressof(rec))
    assert rec.exception_code == k.EC_QUEUE_WAVE_MEMORY_VIOLATION
    assert rec.facts & (FACT_PC | FACT_WAVE) == FACT_PC | FACT_WAVE
    assert (rec.pc, rec.wave, rec.address, rec.write, rec.code_address) == (buf.va + 4, 0, 0x40, 0, buf.va)


def test_a_record_without_the_magic_is_left_alone_as_real_kfd_does(rig):
    hev = rig.event(k.KFD_IOC_EVENT_HW_EXCEPTION)
    rig.queue().submit(pm4.PACKET3(0xEE, 0), 0)
    rec = _record(magic=0)
    result, _ = _wait(rig, hev.event_id, ctypes.addressof(rec))
    assert result == k.KFD_IOC_WAIT_RESULT_COMPLETE and rec.valid == 0 and rec.kind == b""


def test_a_record_pointer_into_unmapped_memory_is_efault(rig):
    hev = rig.event(k.KFD_IOC_EVENT_HW_EXCEPTION)
    rig.queue().submit(pm4.PACKET3(0xEE, 0), 0)
    with pytest.raises(OSError) as e:
        _wait(rig, hev.event_id, 0x10)
    assert e.value.errno == errno.EFAULT
