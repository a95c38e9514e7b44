"""The pushbuffers the NV driver emits, decoded method by method and run on an emulated GPU (no RM)."""
import numpy as np

from gputwin.abi import nv_methods as m
from gputwin.drivers.hcq import TimelineSignal
from gputwin.drivers.nv.queues import NVComputeQueue, NVCopyQueue
from tests.emu.nv.frontend.rig import MEM_VA, Rig, inc


def methods(dwords):
    """(subchannel, method, data) per data dword, decoding the driver's (incrementing) headers."""
    out, i = [], 0
    while i < len(dwords):
        op, sub, method, count = m.decode_header(dwords[i])
        assert op == m.SEC_OP_INC_METHOD
        for j in range(count):
            out.append((sub, method + 4 * j, dwords[i + 1 + j]))
        i += 1 + count
    return out


class FakeSignal(TimelineSignal):
    def __init__(self, va):
        self.va = va


def test_copy_queue_methods():
    sig = FakeSignal(0x12_3456_7000)
    q = NVCopyQueue().wait(sig, 5).copy(0xAA_0000_1000, 0xBB_0000_2000, 4097).signal(sig, 6)
    got = methods(q.cmds)
    assert got[:5] == [(0, m.NVC56F_SEM_ADDR_LO, 0x3456_7000), (0, m.NVC56F_SEM_ADDR_HI, 0x12),
                       (0, m.NVC56F_SEM_PAYLOAD_LO, 5), (0, m.NVC56F_SEM_PAYLOAD_HI, 0),
                       (0, m.NVC56F_SEM_EXECUTE, m.SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ | m.SEM_EXECUTE_ACQUIRE_SWITCH_TSG
                        | m.SEM_EXECUTE_PAYLOAD_SIZE_64BIT)]
    copy = dict(((s, meth), d) for s, meth, d in got[5:12])
    S = m.SUBCHANNEL_COPY
    assert copy == {(S, m.COPY_OFFSET_IN_UPPER): 0xBB, (S, m.COPY_OFFSET_IN_LOWER): 0x2000,
                    (S, m.COPY_OFFSET_OUT_UPPER): 0xAA, (S, m.COPY_OFFSET_OUT_LOWER): 0x1000,
                    (S, m.COPY_LINE_LENGTH_IN): 4097, (S, m.COPY_LINE_COUNT): 1,
                    (S, m.COPY_LAUNCH_DMA): m.LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED | m.LAUNCH_DMA_FLUSH_ENABLE
                    | m.LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH | m.LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH}
    assert got[-1] == (0, m.NVC56F_SEM_EXECUTE, m.SEM_EXECUTE_OPERATION_RELEASE | m.SEM_EXECUTE_RELEASE_WFI
                       | m.SEM_EXECUTE_PAYLOAD_SIZE_64BIT)


def test_compute_queue_launch_methods():
    got = methods(NVComputeQueue().launch(0x12_3456_7800).cmds)
    S = m.SUBCHANNEL_COMPUTE
    assert got == [(S, m.COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI, 0), (S, m.COMPUTE_SEND_PCAS_A, 0x12_3456_78),
                   (S, m.COMPUTE_SEND_SIGNALING_PCAS2_B, m.PCAS2_B_ACTION_INVALIDATE_COPY_SCHEDULE)]


def test_driver_pushbuffers_run_on_the_emulated_gpu():
    """wait(0) / copy / signal(1), then a second submission that waits on 1: the timeline and data move."""
    r = Rig()
    sig = FakeSignal(MEM_VA + 0x1000)
    r.mem[0x2000:0x2010] = np.arange(16, dtype=np.uint8)
    r.submit(inc(m.SUBCHANNEL_COPY, m.NVC56F_SET_OBJECT, r.gpu.profile.copy_class)
             + NVCopyQueue().wait(sig, 0).copy(MEM_VA + 0x3003, MEM_VA + 0x2000, 16).signal(sig, 1).cmds)
    assert r.u64(0x1000) == 1 and r.mem[0x3003:0x3013].tolist() == list(range(16))
    r.submit(NVCopyQueue().wait(sig, 2).signal(sig, 3).cmds)
    assert r.u64(0x1000) == 1 and r.ch.runnable()           # parked on the acquire
    r.gpu.mem.write_u64(MEM_VA + 0x1000, 2)
    r.gpu.run()
    assert r.u64(0x1000) == 3
