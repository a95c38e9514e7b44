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
