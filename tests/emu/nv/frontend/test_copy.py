import numpy as np
import pytest

from gputwin.abi import nv_methods as m
from tests.emu.nv.frontend.rig import MEM_VA, Rig, inc

PITCH = m.LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH | m.LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH
S = m.SUBCHANNEL_COPY


def bind(r):
    return inc(S, m.NVC56F_SET_OBJECT, r.gpu.profile.copy_class)


def copy_1d(dst, src, n, launch=0):
    return (inc(S, m.COPY_OFFSET_IN_UPPER, src >> 32, src & 0xFFFFFFFF, dst >> 32, dst & 0xFFFFFFFF)
            + inc(S, m.COPY_LINE_LENGTH_IN, n) + inc(S, m.COPY_LAUNCH_DMA, m.LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED
                                                    | PITCH | launch))


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
@pytest.mark.parametrize("n,src_off,dst_off", [(1, 0, 7), (13, 3, 1), (4099, 5, 0x2001)])
def test_linear_copy_of_odd_sizes_and_offsets(arch, n, src_off, dst_off):
    r = Rig(arch)
    data = np.random.default_rng(n).integers(0, 256, n, np.uint8)
    r.mem[src_off:src_off + n] = data
    before = r.mem.copy()
    r.submit(bind(r) + copy_1d(MEM_VA + 0x40000 + dst_off, MEM_VA + src_off, n))
    assert np.array_equal(r.mem[0x40000 + dst_off:0x40000 + dst_off + n], data)
    rest = np.ones(r.mem.size, bool)
    rest[0x40000 + dst_off:0x40000 + dst_off + n] = False
    assert np.array_equal(r.mem[rest], before[rest])          # nothing else written


def test_pitch_2d_copy():
    r = Rig()
    src = np.arange(64 * 8, dtype=np.uint8).reshape(8, 64)
    r.mem[:src.size] = src.reshape(-1)
    dst = MEM_VA + 0x10000
    r.submit(bind(r) + inc(S, m.COPY_OFFSET_IN_UPPER, 0, MEM_VA + 3, 0, dst)
             + inc(S, m.COPY_PITCH_IN, 64, 100, 10, 5)
             + inc(S, m.COPY_LAUNCH_DMA, m.LAUNCH_DMA_DATA_TRANSFER_TYPE_PIPELINED | PITCH | m.LAUNCH_DMA_MULTI_LINE_ENABLE))
    got = r.mem[0x10000:0x10000 + 500].reshape(5, 100)[:, :10]
    assert np.array_equal(got, src[:5, 3:13])
    assert r.mem[0x10000 + 10] == 0                          # the gap between output lines is untouched


def test_copy_semaphores_32_64_bit_and_timestamp():
    r = Rig("sm_90")
    sem = MEM_VA + 0x800
    r.submit(bind(r) + inc(S, m.COPY_SET_SEMAPHORE_A, 0, sem, 0xAABBCCDD, 0x11223344)
             + copy_1d(MEM_VA + 0x100, MEM_VA, 4, m.LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD))
    assert r.u64(0x800) == 0xAABBCCDD
    r.submit(inc(S, m.COPY_LAUNCH_DMA, m.LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD | m.LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD))
    assert r.u64(0x800) == 0x11223344_AABBCCDD
    r.submit(inc(S, m.COPY_LAUNCH_DMA, m.LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_WITH_TIMESTAMP))
    assert r.u64(0x808) == r.gpu.timestamp_ns() > 0


def test_ampere_has_no_two_word_copy_semaphore():
    r = Rig("sm_80")
    r.gpu.listener = lambda e: None
    r.submit(bind(r) + inc(S, m.COPY_LAUNCH_DMA, m.LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD
                           | m.LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD))
    assert "does not exist on Ampere" in str(r.ch.error)


@pytest.mark.parametrize("bits,what", [(0, "BLOCKLINEAR"), (PITCH | m.LAUNCH_DMA_SRC_TYPE_PHYSICAL, "physical"),
                                       (PITCH | m.LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE, "REDUCTION")])
def test_unmodelled_launch_dma_fields_fail_closed(bits, what):
    r = Rig()
    r.gpu.listener = lambda e: None
    r.submit(bind(r) + inc(S, m.COPY_LAUNCH_DMA, m.LAUNCH_DMA_DATA_TRANSFER_TYPE_PIPELINED | bits))
    assert r.ch.stopped and what in str(r.ch.error)


def test_copy_to_unmapped_memory_is_a_memory_fault_with_the_address():
    r = Rig()
    events = []
    r.gpu.listener = events.append
    r.submit(bind(r) + copy_1d(0x7700_0000, MEM_VA, 16))
    assert [e.kind for e in events] == ["memory_fault"] and events[0].error.address == 0x7700_0000


def test_a_runaway_2d_copy_is_a_hang_not_a_host_hang(monkeypatch):
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "0.2")
    r = Rig()
    events = []
    r.gpu.listener = events.append
    r.submit(bind(r) + inc(S, m.COPY_OFFSET_IN_UPPER, 0, MEM_VA, 0, MEM_VA + 0x1000)
             + inc(S, m.COPY_PITCH_IN, 0, 0, 1, 0xFFFFFFFF)
             + inc(S, m.COPY_LAUNCH_DMA, m.LAUNCH_DMA_DATA_TRANSFER_TYPE_PIPELINED | PITCH | m.LAUNCH_DMA_MULTI_LINE_ENABLE))
    assert [e.kind for e in events] == ["hang"] and "4294967295 lines" in str(events[0].error)
