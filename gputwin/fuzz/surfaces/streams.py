"""PM4 and SDMA command streams through the mock KFD: well-formed packets a driver would write, mutated
(bit flips, replaced dwords, wrong counts, truncation, junk between packets), submitted on a compute or
SDMA queue of an emulated gfx1100/gfx1201/gfx942 and waited on with WAIT_EVENTS.

Packets point into a data buffer, an indirect buffer (PM4) and a code buffer holding s_endpgm, so
well-formed ones do real work. Nothing may escape the doorbell write or WAIT_EVENTS; what the GPU reports
(memory faults, PacketError, hangs) is counted by kind, and the error inside each report must be a gputwin
error. After the run, a fresh well-formed submission on a new queue must still complete: a fault stops
one queue, never the device.
"""
from __future__ import annotations

import ctypes
import random
from types import SimpleNamespace

from gputwin.abi import amd_pm4 as pm4
from gputwin.abi import amd_sdma as sdma
from gputwin.abi import kfd_ioctl as k
from gputwin.drivers.amd.pm4 import AMDComputeQueue
from gputwin.drivers.amd.sdma import AMDCopyQueue
from gputwin.fuzz.surface import Recorder, Surface, register
from gputwin.fuzz.surfaces.kfd import GTT_RW, PAGE, Rig, record_gpu_events

ARCHES = ("gfx1100", "gfx1201", "gfx942")
S_ENDPGM = {"gfx1100": 0xBFB00000, "gfx1201": 0xBFB00000, "gfx942": 0xBF810000}
DATA, RING = 16 * PAGE, 4 * PAGE


def _pm4_packets(rnd: random.Random, data: int, ib: int, code: int, arch: str) -> list[list[int]]:
    """Well-formed compute packets over the case's buffers."""
    def addr():
        return data + 8 * rnd.randrange(DATA // 8 - 4)
    q = AMDComputeQueue()
    out = []
    for _ in range(rnd.randrange(1, 10)):
        q.cmds = []
        kind = rnd.choice(["write", "release", "wait", "copy", "ib", "dispatch", "nop", "acquire", "event", "sh"])
        if kind == "write":
            n = rnd.randrange(1, 5)
            q.pkt3(pm4.PACKET3_WRITE_DATA, pm4.WRITE_DATA_DST_SEL(pm4.PACKET3_WRITE_DATA__DST_SEL__MEMORY)
                   | pm4.WR_CONFIRM, *divmod(addr(), 1 << 32)[::-1], *(rnd.getrandbits(32) for _ in range(n)))
        elif kind == "release":
            q.release_mem(addr(), rnd.getrandbits(64), rnd.choice([None, 0, 1, rnd.getrandbits(28)]))
        elif kind == "wait":
            q.wait(SimpleNamespace(va=addr()), rnd.choice([0, 1, rnd.getrandbits(32)]))
        elif kind == "copy":
            src, dst = addr(), addr()
            q.pkt3(pm4.PACKET3_COPY_DATA, pm4.PACKET3_COPY_DATA__SRC_SEL(rnd.choice([1, 5, 9]))
                   | pm4.PACKET3_COPY_DATA__DST_SEL(5) | pm4.PACKET3_COPY_DATA__COUNT_SEL(rnd.randrange(2)),
                   src & 0xFFFFFFFF, src >> 32, dst & 0xFFFFFFFF, dst >> 32)
        elif kind == "ib":
            q.pkt3(pm4.PACKET3_INDIRECT_BUFFER, ib & 0xFFFFFFFC, ib >> 32,
                   pm4.INDIRECT_BUFFER_VALID | rnd.randrange(1, 16))
        elif kind == "dispatch":
            wave32 = arch != "gfx942" and rnd.random() < 0.7
            q.dispatch(code, rsrc1=rnd.randrange(8), rsrc2=rnd.choice([0, 0x84, 0x1F80 | 0x10]), rsrc3=0,
                       user_data=[data & 0xFFFFFFFF, data >> 32][:rnd.randrange(3)],
                       grid=(rnd.choice([1, 2, 7]), rnd.choice([1, 3]), 1),
                       block=(rnd.choice([1, 32, 64, 256]), rnd.choice([1, 2]), 1), wave32=wave32)
        elif kind == "nop":
            q.pkt3(pm4.PACKET3_NOP, *(rnd.getrandbits(32) for _ in range(rnd.randrange(1, 4))))
        elif kind == "acquire":
            q.acquire_mem()
        elif kind == "event":
            q.pkt3(pm4.PACKET3_EVENT_WRITE, pm4.EVENT_TYPE(rnd.choice([pm4.CS_PARTIAL_FLUSH, pm4.CACHE_FLUSH,
                                                                       rnd.randrange(64)])) | pm4.EVENT_INDEX(4))
        else:
            q.set_sh_reg(rnd.choice([0x2E00, 0x2E40, 0x2E0C, 0x2C00 + rnd.randrange(0x400)]), rnd.getrandbits(32))
        out.append(q.cmds)
    return out


def _sdma_packets(rnd: random.Random, data: int) -> list[list[int]]:
    def addr():
        return data + 8 * rnd.randrange(DATA // 8 - 64)
    q = AMDCopyQueue()
    out = []
    for _ in range(rnd.randrange(1, 10)):
        q.cmds = []
        kind = rnd.choice(["copy", "fence", "trap", "poll", "fill", "nop", "timestamp", "write"])
        if kind == "copy":
            q.copy(addr(), addr(), rnd.choice([1, 4, 64, 256, 4096]))
        elif kind == "fence":
            q.fence(addr(), rnd.getrandbits(32))
        elif kind == "trap":
            q.q(sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_TRAP), rnd.getrandbits(28))
        elif kind == "poll":
            q.wait(SimpleNamespace(va=addr()), rnd.choice([0, 1, rnd.getrandbits(32)]))
        elif kind == "fill":
            dst = addr()
            q.q(sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_CONST_FILL) | sdma.SDMA_PKT_CONSTANT_FILL_HEADER_fillsize(
                rnd.choice([0, 2, 3])), dst & 0xFFFFFFFF, dst >> 32, rnd.getrandbits(32), rnd.choice([0, 3, 255]))
        elif kind == "nop":
            n = rnd.randrange(3)
            q.q(sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_NOP) | sdma.SDMA_PKT_NOP_HEADER_count(n),
                *(rnd.getrandbits(32) for _ in range(n)))
        elif kind == "timestamp":
            dst = addr()
            q.q(sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_TIMESTAMP, sdma.SDMA_SUBOP_TIMESTAMP_GET_GLOBAL),
                dst & 0xFFFFFFFF, dst >> 32)
        else:
            dst, n = addr(), rnd.randrange(1, 5)
            q.q(sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_WRITE, sdma.SDMA_SUBOP_WRITE_LINEAR), dst & 0xFFFFFFFF, dst >> 32,
                n - 1, *(rnd.getrandbits(32) for _ in range(n)))
        out.append(q.cmds)
    return out


def mutate_stream(rnd: random.Random, packets: list[list[int]]) -> list[int]:
    """Join packets, mutating some: a flipped bit, a replaced dword, a wrong count, truncation, junk."""
    words = []
    for p in packets:
        p = list(p)
        r = rnd.random()
        if r < 0.15:
            i = rnd.randrange(len(p))
            p[i] ^= 1 << rnd.randrange(32)
        elif r < 0.25:
            p[rnd.randrange(len(p))] = rnd.choice([0, 0xFFFFFFFF, rnd.getrandbits(32)])
        elif r < 0.32:
            p[0] = (p[0] & ~(0x3FFF << 16)) | rnd.randrange(0x3FFF) << 16   # PM4 count / SDMA header bits
        elif r < 0.37:
            p = p[:rnd.randrange(1, len(p) + 1)]
        elif r < 0.42:
            p += [rnd.getrandbits(32) for _ in range(rnd.randrange(1, 4))]
        words += p
    return words


class _Streams(Surface):
    engine = ""

    def generate(self, rnd: random.Random) -> dict:
        return {"arch": rnd.choice(ARCHES), "seed": rnd.getrandbits(32), "wptr": rnd.choice(["exact"] * 8 + [
            "beyond", "behind", "huge"])}

    def execute(self, case: dict, rec: Recorder) -> None:
        rnd = random.Random(case["seed"])
        rig = Rig([case["arch"]])
        try:
            data = rig.alloc(DATA, GTT_RW)
            ctypes.memmove(data, rnd.randbytes(DATA), DATA)
            ib, code = rig.alloc(PAGE, GTT_RW), rig.alloc(PAGE, GTT_RW)
            ctypes.c_uint32.from_address(code).value = S_ENDPGM[case["arch"]]
            if self.engine == "pm4":
                inner = mutate_stream(rnd, _pm4_packets(rnd, data, ib, code, case["arch"]))[:PAGE // 4]
                (ctypes.c_uint32 * len(inner)).from_address(ib)[:] = inner
                packets, qtype, unit = _pm4_packets(rnd, data, ib, code, case["arch"]), 0, 4
            else:
                packets, qtype, unit = _sdma_packets(rnd, data), k.KFD_IOC_QUEUE_TYPE_SDMA, 1
            words = mutate_stream(rnd, packets)[:RING // 4]
            ring, ptrs = rig.alloc(RING, GTT_RW), rig.alloc(PAGE, GTT_RW)
            (ctypes.c_uint32 * len(words)).from_address(ring)[:] = words
            rig.create_queue(ring, RING, ptrs, qtype)
            events = [rig.ioctl(k.AMDKFD_IOC_CREATE_EVENT, k.kfd_ioctl_create_event_args(
                event_type=t, auto_reset=1)).event_id for t in (k.KFD_IOC_EVENT_SIGNAL, k.KFD_IOC_EVENT_MEMORY,
                                                                 k.KFD_IOC_EVENT_HW_EXCEPTION)]
            wptr = {"exact": 4 * len(words), "beyond": 4 * len(words) + 64, "behind": 4 * (len(words) // 2),
                    "huge": rnd.getrandbits(40)}[case["wptr"]]
            ctypes.c_uint64.from_address(ptrs + 8).value = wptr // unit
            rec.step("doorbell", rig.ring, rig.queues[-1], wptr // unit)
            wait = (k.kfd_event_data * 3)()
            for d, e in zip(wait, events):
                d.event_id = e
            rec.step("wait", rig.ioctl, k.AMDKFD_IOC_WAIT_EVENTS, k.kfd_ioctl_wait_events_args(
                events_ptr=ctypes.addressof(wait), num_events=3, wait_for_all=0, timeout=0))
            record_gpu_events(rec, rig.mock)
            rec.step("fresh queue", self._still_works, rig, qtype, unit, data)
        finally:
            rig.close()

    @staticmethod
    def _still_works(rig: Rig, qtype: int, unit: int, data: int) -> None:
        """A well-formed fence on a new queue completes: the device survived whatever happened before."""
        ring, ptrs = rig.alloc(PAGE, GTT_RW), rig.alloc(PAGE, GTT_RW)
        target = data + DATA - 8
        if qtype == 0:
            words = AMDComputeQueue().release_mem(target, 0x600DF00D).cmds
        else:
            words = AMDCopyQueue().fence(target, 0x600DF00D).cmds
        (ctypes.c_uint32 * len(words)).from_address(ring)[:] = words
        rig.create_queue(ring, PAGE, ptrs, qtype)
        rig.ring(rig.queues[-1], 4 * len(words) // unit)
        got = ctypes.c_uint32.from_address(target).value
        if got != 0x600DF00D:
            raise AssertionError(f"a fresh queue's fence did not land after the fuzzed stream ({got:#x})")


@register
class Pm4(_Streams):
    name, engine = "pm4", "pm4"
    doc = "mutated PM4 compute streams (with an indirect buffer and dispatches) through the mock KFD"


@register
class Sdma(_Streams):
    name, engine = "sdma", "sdma"
    doc = "mutated SDMA streams through the mock KFD"
