"""The SDMA engine (gputwin.emu.amd.sdma) driven through a hand-built ring and doorbell."""
import numpy as np
import pytest

from gputwin.abi import amd_sdma as s
from gputwin.errors import PacketError
from tests.emu.amd.gpu_rig import DATA, Rig


def copy_linear(dst, src, n):
    return [s.SDMA_PKT_HEADER(s.SDMA_OP_COPY, s.SDMA_SUBOP_COPY_LINEAR), s.SDMA_PKT_COPY_LINEAR_COUNT_count(n - 1), 0,
            src & 0xFFFFFFFF, src >> 32, dst & 0xFFFFFFFF, dst >> 32]


def fill(dst, value, n, fillsize=2):
    return [s.SDMA_PKT_HEADER(s.SDMA_OP_CONST_FILL) | s.SDMA_PKT_CONSTANT_FILL_HEADER_fillsize(fillsize),
            dst & 0xFFFFFFFF, dst >> 32, value, s.SDMA_PKT_CONSTANT_FILL_COUNT_count(n - 1)]


def fence(addr, value):
    return [s.SDMA_PKT_HEADER(s.SDMA_OP_FENCE) | s.SDMA_PKT_FENCE_HEADER_mtype(3), addr & 0xFFFFFFFF, addr >> 32, value]


def poll(addr, ref, func=3, mask=0xFFFFFFFF):
    return [s.SDMA_PKT_HEADER(s.SDMA_OP_POLL_REGMEM) | s.SDMA_PKT_POLL_REGMEM_HEADER_mem_poll(1)
            | s.SDMA_PKT_POLL_REGMEM_HEADER_func(func), addr & 0xFFFFFFFF, addr >> 32, ref, mask,
            s.SDMA_PKT_POLL_REGMEM_DW5_interval(10) | s.SDMA_PKT_POLL_REGMEM_DW5_retry_count(0xFFF)]


def test_copy_linear_copies_bytes_and_pointers_count_bytes():
    r = Rig("sdma")
    r.data[:100] = np.arange(100, dtype=np.uint8)
    pkt = copy_linear(DATA + 0x1001, DATA + 3, 77)
    r.submit(*pkt)
    assert r.data[0x1001:0x1001 + 77].tolist() == list(range(3, 80))
    assert r.data[0x1001 + 77] == 0 and r.rptr == 4 * len(pkt) and r.gpu.mem.read_u64(0x20_0000) == 4 * len(pkt)


def test_copy_linear_overlapping_ranges_behave_as_memmove():
    r = Rig("sdma")
    r.data[:16] = np.arange(16, dtype=np.uint8)
    r.submit(*copy_linear(DATA + 4, DATA, 12))
    assert r.data[:16].tolist() == [0, 1, 2, 3] + list(range(12))


def test_copy_linear_crosses_from_one_mapping_into_the_next():
    r = Rig("sdma")
    r.gpu.mem.map(DATA + 0x10000, 0x1000)
    r.data[-8:] = np.arange(1, 9, dtype=np.uint8)
    r.gpu.mem.write(DATA + 0x10000, bytes([9, 10]))
    r.submit(*copy_linear(DATA, DATA + 0x10000 - 8, 10))
    assert r.data[:10].tolist() == list(range(1, 11))


@pytest.mark.parametrize("fillsize,expect", [(2, [0x44, 0x33, 0x22, 0x11] * 2 + [0x44, 0x33]), (0, [0x44] * 10)])
def test_constant_fill_repeats_the_pattern(fillsize, expect):
    r = Rig("sdma")
    r.submit(*fill(DATA + 8, 0x11223344, 10, fillsize))
    assert r.data[8:18].tolist() == expect and r.data[18] == 0 and r.data[7] == 0


def test_fence_writes_its_value_and_trap_reports_the_context():
    r = Rig("sdma")
    r.submit(*fence(DATA + 0x20, 0xCAFE), s.SDMA_PKT_HEADER(s.SDMA_OP_TRAP), 0x5)
    assert r.u32(0x20)[0] == 0xCAFE
    assert [(e.kind, e.ctx_id) for e in r.events] == [("interrupt", 5)]


def test_poll_regmem_parks_until_memory_matches():
    r = Rig("sdma")
    r.submit(*poll(DATA, 3, func=5), *fence(DATA + 4, 1))
    assert r.q.parked and r.u32(4)[0] == 0
    r.u32(0)[0] = 2
    r.gpu.run()
    assert r.q.parked
    r.u32(0)[0] = 3
    r.gpu.run()
    assert not r.q.parked and r.u32(4)[0] == 1


def test_timestamp_and_nop_with_payload():
    r = Rig("sdma")
    r.submit(s.SDMA_PKT_HEADER(s.SDMA_OP_NOP) | s.SDMA_PKT_NOP_HEADER_count(2), 0xFFFFFFFF, 0xFFFFFFFF,
             s.SDMA_PKT_HEADER(s.SDMA_OP_TIMESTAMP, s.SDMA_SUBOP_TIMESTAMP_GET_GLOBAL), DATA + 8, 0)
    assert int(r.data[8:16].view(np.uint64)[0]) > 0 and not r.events


def test_write_linear_and_gcr_req():
    r = Rig("sdma")
    r.submit(s.SDMA_PKT_HEADER(s.SDMA_OP_GCR_REQ), 0, 0, 0, 0,
             s.SDMA_PKT_HEADER(s.SDMA_OP_WRITE), DATA + 12, 0, 1, 0xA, 0xB)
    assert r.u32(12, 2).tolist() == [0xA, 0xB]


def test_unknown_sdma_opcode_names_it_and_the_ring_offset():
    r = Rig("sdma")
    r.submit(*fence(DATA, 1), s.SDMA_PKT_HEADER(s.SDMA_OP_ATOMIC), *fence(DATA + 4, 2))
    (event,) = r.events
    assert isinstance(event.error, PacketError) and "ATOMIC" in str(event.error)
    assert "ring offset 0x10" in str(event.error) and r.q.stopped and r.u32(4)[0] == 0
    assert event.error.opcode == s.SDMA_OP_ATOMIC and event.error.ring_offset == 0x10


def test_copy_from_unmapped_memory_is_a_memory_fault_with_address():
    r = Rig("sdma")
    r.submit(*copy_linear(DATA, 0x9000_0000, 16))
    (event,) = r.events
    assert event.kind == "memory_fault" and event.error.address == 0x9000_0000
