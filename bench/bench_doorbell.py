"""Doorbell-to-signal latency of the mock KFD + emulated gfx1100, through raw ioctls as a driver does.

Each submission is written to the ring, the doorbell is rung through the mmapped doorbell page, and the
host waits (AMDKFD_IOC_WAIT_EVENTS) on the signal event that the queue's end-of-pipe interrupt fires.
Prints one figure per line (microseconds per submission, median of the runs):
  doorbell_to_signal_empty_dispatch_us <n>   PM4: DISPATCH_DIRECT of an s_endpgm kernel + RELEASE_MEM
  doorbell_to_signal_sdma_copy_us <n>        SDMA: 4 KiB COPY_LINEAR + FENCE to the event slot + TRAP
"""
from __future__ import annotations

import ctypes
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gputwin.abi import amd_pm4 as pm4  # noqa: E402
from gputwin.abi import amd_regs as regs  # noqa: E402
from gputwin.abi import amd_sdma as sdma  # noqa: E402
from gputwin.abi import kfd_ioctl as k  # noqa: E402
from tests.mock.kfd_rig import GTT_RW, KfdRig  # noqa: E402

S_ENDPGM = bytes([0x00, 0x00, 0xB0, 0xBF])   # llvm-mc-19 -mcpu=gfx1100 -show-encoding: s_endpgm
RUNS = 300


def _set_sh(reg: int, *values: int) -> list[int]:
    return [pm4.PACKET3(pm4.PACKET3_SET_SH_REG, len(values)), regs.sh_reg_offset(reg), *values]


def _measure(rig: KfdRig, q, packets: list[int], event_id: int) -> float:
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        q.submit(*packets)
        result, _ = rig.wait(event_id, timeout=1000)
        times.append(time.perf_counter() - t0)
        assert result == k.KFD_IOC_WAIT_RESULT_COMPLETE
    return statistics.median(times) * 1e6


def main() -> None:
    rig = KfdRig()
    page = rig.alloc(0x8000, GTT_RW)
    ev = rig.event(page_handle=page.handle)
    slot = page.va + 8 * ev.event_slot_index

    code = rig.alloc(0x1000)
    ctypes.memmove(code.va, S_ENDPGM, len(S_ENDPGM))
    q = rig.queue(ring_bytes=0x10000)
    q.submit(*_set_sh(regs.regCOMPUTE_PGM_LO, code.va >> 8, code.va >> 40), *_set_sh(regs.regCOMPUTE_PGM_RSRC1, 0, 0),
             *_set_sh(regs.regCOMPUTE_NUM_THREAD_X, 32, 1, 1))
    dispatch = [pm4.PACKET3(pm4.PACKET3_DISPATCH_DIRECT, 3), 1, 1, 1,
                regs.COMPUTE_DISPATCH_INITIATOR__COMPUTE_SHADER_EN(1) | regs.COMPUTE_DISPATCH_INITIATOR__CS_W32_EN(1),
                pm4.PACKET3(pm4.PACKET3_RELEASE_MEM, 6),
                pm4.PACKET3_RELEASE_MEM_EVENT_TYPE(pm4.CACHE_FLUSH_AND_INV_TS_EVENT)
                | pm4.PACKET3_RELEASE_MEM_EVENT_INDEX(pm4.EVENT_INDEX_END_OF_PIPE),
                pm4.PACKET3_RELEASE_MEM_DATA_SEL(pm4.DATA_SEL_64) | pm4.PACKET3_RELEASE_MEM_INT_SEL(2),
                slot & 0xFFFFFFFF, slot >> 32, ev.event_id, 0, ev.event_id]
    print(f"doorbell_to_signal_empty_dispatch_us {_measure(rig, q, dispatch, ev.event_id):.1f}")

    src, dst = rig.alloc(0x1000), rig.alloc(0x1000)
    s = rig.queue(k.KFD_IOC_QUEUE_TYPE_SDMA, ring_bytes=0x10000)
    copy = [sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_COPY), 0x1000 - 1, 0, src.va & 0xFFFFFFFF, src.va >> 32,
            dst.va & 0xFFFFFFFF, dst.va >> 32,
            sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_FENCE), slot & 0xFFFFFFFF, slot >> 32, ev.event_id,
            sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_TRAP), ev.event_id]
    print(f"doorbell_to_signal_sdma_copy_us {_measure(rig, s, copy, ev.event_id):.1f}")
    rig.close()


if __name__ == "__main__":
    main()
