"""The SDMA copy-queue builder, run on a bare emulated GPU's SDMA engine."""
from types import SimpleNamespace

import numpy as np
import pytest

from gputwin.abi import amd_sdma as sdma
from gputwin.drivers.amd.sdma import AMDCopyQueue

RING, PTRS, SIG, DATA = 0x2000_0000, 0x2001_0000, 0x2003_0000, 0x3000_0000


@pytest.fixture
def engine():
    from gputwin.emu.amd.gpu import GPU
    gpu = GPU("gfx1100")
    events = []
    gpu.listener = events.append
    for va, n in ((RING, 1 << 16), (PTRS, 4096), (SIG, 4096), (DATA, 1 << 20)):
        gpu.mem.map(va, n)
    q = gpu.create_sdma_queue(RING, 1 << 16, PTRS, PTRS + 8)
    state = SimpleNamespace(gpu=gpu, q=q, events=events, put=0)

    def run(cmds):
        gpu.mem.write(RING + state.put, np.asarray(cmds, np.uint32))
        state.put += 4 * len(cmds)
        gpu.ring_doorbell(q, state.put)   # SDMA pointers count bytes
    state.run = run
    return state


@pytest.mark.parametrize("src_off,dst_off,size", [(0, 0, 4096), (1, 3, 1), (7, 0x801, 4093), (3, 5, 65537)])
def test_copy_linear_moves_odd_sizes_and_offsets(engine, src_off, dst_off, size):
    rng = np.random.default_rng(size)
    src = rng.integers(0, 256, size, np.uint8)
    before = rng.integers(0, 256, 0x30000, np.uint8)
    engine.gpu.mem.write(DATA + 0x40000, before)
    engine.gpu.mem.write(DATA + src_off, src)
    engine.run(AMDCopyQueue().copy(DATA + 0x40000 + dst_off, DATA + src_off, size).cmds)
    got = np.frombuffer(engine.gpu.mem.read(DATA + 0x40000, 0x30000), np.uint8)
    want = before.copy()
    want[dst_off:dst_off + size] = src
    assert (got == want).all() and not engine.events


def test_copy_is_split_at_the_count_field_limit():
    q = AMDCopyQueue().copy(0x1000, 0x9000_0000, sdma.SDMA_COPY_LINEAR_MAX_BYTES + 10)
    assert len(q.cmds) == 2 * sdma.SDMA_PKT_COPY_LINEAR_DWORDS
    assert [q.cmds[1], q.cmds[8]] == [sdma.SDMA_COPY_LINEAR_MAX_BYTES - 1, 9]
    assert q.cmds[10] == (0x9000_0000 + sdma.SDMA_COPY_LINEAR_MAX_BYTES) & 0xFFFFFFFF


def test_fence_then_trap_signals_and_interrupts(engine):
    engine.gpu.mem.write_u64(SIG + 64, 2 ** 64 - 1)   # an unsignalled event slot
    engine.run(AMDCopyQueue(event=(9, SIG + 64)).signal(SimpleNamespace(va=SIG), 1234).cmds)
    assert engine.gpu.mem.read_u64(SIG) == 1234
    assert engine.gpu.mem.read_u64(SIG + 64) == 0xFFFFFFFF_00000009   # mailbox written, no longer all-ones
    assert [(e.kind, e.ctx_id) for e in engine.events] == [("interrupt", 9)]


def test_poll_regmem_waits_for_the_signal(engine):
    engine.run(AMDCopyQueue().wait(SimpleNamespace(va=SIG), 3).signal(SimpleNamespace(va=SIG + 8), 1).cmds)
    assert engine.gpu.mem.read_u64(SIG + 8) == 0
    engine.gpu.mem.write_u64(SIG, 3)
    engine.gpu.run()
    assert engine.gpu.mem.read_u64(SIG + 8) == 1


def test_signal_value_must_fit_the_fence():
    with pytest.raises(ValueError, match="32 bits"):
        AMDCopyQueue().signal(SimpleNamespace(va=SIG), 1 << 32)
