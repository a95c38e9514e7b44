"""Named barriers and warp-level synchronisation under the sanitizers on MOCKNV (sm_90, sm_80), with nvcc's
PTX of fixtures/nv/sanitize/sync.cu: producer/consumer over bar.arrive + bar.sync with thread counts (a
completed phase orders what the arriving warps did before it with what the waiting warps do after), a
count no arrival completes (synccheck), and shared-memory races between lanes of one warp without
__syncwarp (Volta and later schedule a warp's threads independently)."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import gputwin
from gputwin.errors import SanitizerError
from tests.emu.sanitizer.test_planted_bugs import _filled, run_sanitized

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "nv" / "sanitize"


@pytest.fixture(params=["sm_90", "sm_80"])
def target(request, monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE", "all")
    monkeypatch.delenv("GPUTWIN_SANITIZE_REPORT", raising=False)
    arch = request.param
    return f"MOCKNV:{arch}", (FIXTURES / f"sync.{arch}.ptx").read_text()


def _zeros(dev, n):
    b = dev.alloc(4 * n)
    dev.copyin(b, np.zeros(n, np.uint32))
    return b


def _producer_consumer(target, bug, rounds=3):
    spec, ptx = target
    bufs = {}

    def args(dev):
        bufs["out"] = _zeros(dev, 64)
        return bufs["out"], _filled(dev, 64), rounds, bug
    return run_sanitized(spec, ptx, "producer_consumer", args, (128, 1, 1)), bufs


# --- bar.arrive / bar.sync ------------------------------------------------------------------------------
def test_producer_consumer_over_named_barriers_is_clean_and_right(target):
    spec, ptx = target
    dev = gputwin.open_device(spec)
    try:
        out = _zeros(dev, 128)
        dev.load(ptx, "producer_consumer")(out, _filled(dev, 64), 3, 0, grid=(2, 1, 1), block=(128, 1, 1))
        dev.synchronize()
        got = np.zeros(128, np.uint32)
        dev.copyout(got, out)
    finally:
        dev.close()
    # each block adds in[i] + r for r < 3 into its out[i]
    assert (got == np.tile(3 * np.arange(64) + 3, 2)).all()


@pytest.mark.parametrize("bug", [1, 2])
def test_a_side_that_does_not_wait_races(target, bug):
    e, _ = _producer_consumer(target, bug)
    assert isinstance(e, SanitizerError)
    msg = str(e)
    assert "racecheck: shared-memory " in msg and " race on 4 bytes" in msg
    assert "with no barrier in between" in msg
    me, other = int(msg.split(" by warp ")[1].split()[0]), int(msg.split(": warp ")[1].split()[0])
    assert {me < 2, other < 2} == {True, False}          # one producer warp and one consumer warp


def test_a_count_no_arrival_completes_is_reported(target):
    """The producers exit without arriving: the consumers wait at barrier 0 for 128 threads forever."""
    e, _ = _producer_consumer(target, 3, rounds=1)
    assert isinstance(e, SanitizerError) and e.instruction == "bar.sync"
    msg = str(e)
    assert "synccheck: barrier never completes by warp 2 thread 64 of block (0, 0, 0)" in msg
    assert "barrier 0 waits for 128 threads; 64 threads wait there and 0 arrived with bar.arrive" in msg


# --- threads of one warp (independent thread scheduling) -------------------------------------------------
def _warp_kernel(target, name, bug, make):
    spec, ptx = target
    return run_sanitized(spec, ptx, name, lambda dev: make(dev) + (bug,), (64, 1, 1))


def test_lanes_reading_what_their_neighbours_stored_need_a_syncwarp(target):
    args = lambda dev: (_zeros(dev, 64), _filled(dev, 64))    # noqa: E731
    assert _warp_kernel(target, "warp_rotate", 0, args) is None
    e = _warp_kernel(target, "warp_rotate", 1, args)
    assert isinstance(e, SanitizerError) and e.write is False
    msg = str(e)
    assert "racecheck: shared-memory read-after-write race on 4 bytes at 0x4 by warp 0 thread 0 of block" in msg
    assert "`ld.shared.u32`" in msg
    assert "thread 1 of the same warp wrote it with no __syncwarp (bar.warp.sync) or barrier in between" in msg
    assert "(64 lanes)" in msg                                # every thread of both warps


def test_lanes_of_one_store_do_not_race_but_a_later_store_does(target):
    args = lambda dev: (_zeros(dev, 64),)    # noqa: E731
    assert _warp_kernel(target, "warp_same_word", 0, args) is None
    e = _warp_kernel(target, "warp_same_word", 1, args)
    assert isinstance(e, SanitizerError)
    msg = str(e)
    assert "racecheck: shared-memory read-after-write race on 4 bytes at 0x0 by warp 0 thread 1 of block" in msg
    assert "thread 0 of the same warp wrote it with no __syncwarp" in msg


def test_before_volta_lanes_of_a_warp_do_not_race(monkeypatch):
    """sm_60 runs a warp's lanes in step: the emulator's own launch (no driver) of the same PTX retargeted."""
    from gputwin.emu.memory import AddressSpace
    from gputwin.emu.nv.ptx import load_module, run_kernel
    monkeypatch.setenv("GPUTWIN_SANITIZE", "racecheck")
    ptx = (FIXTURES / "sync.sm_80.ptx").read_text()
    mem = AddressSpace()
    mem.map(0x10000, 256)
    mem.map(0x20000, 256)
    params = np.array([0x10000, 0x20000], np.uint64).tobytes() + np.array([1], np.int32).tobytes()
    with pytest.raises(SanitizerError, match="of the same warp"):
        run_kernel(mem, load_module(ptx), "warp_rotate", block=(64, 1, 1), params=params, arch="sm_80")
    old = load_module(ptx.replace(".target sm_80", ".target sm_60"))
    run_kernel(mem, old, "warp_rotate", block=(64, 1, 1), params=params, arch="sm_60")


# --- a barrier orders the warps that take part, not the whole block -----------------------------------------
OUTSIDER = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    .shared .align 4 .b32 s[4];
    mov.u32 %r0, %tid.x;
    setp.lt.u32 %p1, %r0, 64;
    @%p1 bra INSIDE;
    st.shared.u32 [s], %r0;
    ARRIVE
    bra DONE;
INSIDE:
    bar.sync 1, COUNT;
    ld.shared.u32 %r1, [s];
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r0, 4;
    add.u64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r1;
DONE:
    ret;
}
"""


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_a_barrier_orders_only_the_warps_that_take_part(monkeypatch, arch):
    """Warp 2 stores, then warps 0-1 meet at barrier 1 and load it: warp 2 took no part, so the load races
    with its store (a block-wide epoch would have hidden it); when warp 2 arrives at the barrier (a count of
    96), its store is released to them and nothing is reported."""
    from gputwin.emu.memory import AddressSpace
    from gputwin.emu.nv.ptx import load_module, run_kernel
    monkeypatch.setenv("GPUTWIN_SANITIZE", "racecheck")
    monkeypatch.delenv("GPUTWIN_SANITIZE_REPORT", raising=False)
    mem = AddressSpace()
    mem.map(0x10000, 512)
    params = np.array([0x10000], np.uint64).tobytes()

    def run(text):
        run_kernel(mem, load_module(text.replace(".target sm_80", f".target {arch}")), "k", block=(96, 1, 1),
                   params=params, arch=arch)
    with pytest.raises(SanitizerError) as e:
        run(OUTSIDER.replace("ARRIVE", "").replace("COUNT", "64"))
    assert "shared-memory read-after-write race on 4 bytes at 0x0 by warp 0 thread 0" in str(e.value)
    assert "warp 2 wrote it with no barrier in between" in str(e.value)
    run(OUTSIDER.replace("ARRIVE", "bar.arrive 1, 96;").replace("COUNT", "96"))
    got = mem.view(0x10000, 256).view(np.uint32)
    assert (got == got[0]).all() and 64 <= got[0] < 96          # one of warp 2's colliding stores


def test_report_all_lists_the_barrier_then_the_hang(target, monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE_REPORT", "all")
    e, _ = _producer_consumer(target, 3, rounds=1)
    assert isinstance(e, SanitizerError)
    assert e.findings[0].startswith("synccheck: barrier never completes")
    assert "then the dispatch faulted: PTX kernel producer_consumer: bar.sync at PTX line" in str(e)
    assert "(the block hangs on hardware)" in str(e)
