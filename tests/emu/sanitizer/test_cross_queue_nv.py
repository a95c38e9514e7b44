"""racecheck across channels on MOCKNV (sm_90, sm_80): the NV driver runs copies on the copy channel and
kernels on the compute channel, each submission waiting on the timeline semaphore (SEM_EXECUTE
ACQ_STRICT_GEQ) the one before released. Without that acquire (the planted bug) a kernel reading what a
copy wrote, or a copy reading what a kernel wrote, is a finding; the acquire, or a host wait the driver
announces with its NOP-data marker, orders them and nothing is reported."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

from gputwin.abi import nv_methods as m
from gputwin.abi.nv_sanitizer_report import HOST_OBSERVED, host_observed_marker
from gputwin.drivers.nv.queues import NVComputeQueue, NVCopyQueue
from gputwin.errors import SanitizerError
from tests.emu.sanitizer.test_cross_queue import _copy_then_kernel, kernel_then_copy_back

PTX = (pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "nv" / "sanitize" / "sanitize.ptx").read_text()


@pytest.fixture(params=["MOCKNV:sm_90", "MOCKNV:sm_80"])
def target(request, monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE", "racecheck")
    monkeypatch.delenv("GPUTWIN_SANITIZE_REPORT", raising=False)
    return request.param, PTX


@pytest.fixture
def no_gpu_waits(monkeypatch):
    """The planted bug: a driver whose submissions forget the semaphore acquire of the previous one."""
    monkeypatch.setattr(NVComputeQueue, "wait", lambda self, signal, value: self)
    monkeypatch.setattr(NVCopyQueue, "wait", lambda self, signal, value: self)


def test_copy_then_kernel_ordered_by_the_semaphore_acquire(target):
    assert (_copy_then_kernel(target, host_wait=False) == np.arange(64)).all()


def test_copy_then_kernel_without_an_acquire_is_a_race(target, no_gpu_waits):
    bufs = {}
    with pytest.raises(SanitizerError) as e:
        _copy_then_kernel(target, False, bufs)
    msg = str(e.value)
    assert "racecheck: cross-queue read-after-write race on 4 bytes of global memory" in msg
    assert e.value.address == bufs["src"].va and e.value.write is False
    assert e.value.instruction == "ld.global.u32" and e.value.kernel == "shift_read"
    assert "by warp 0 thread 0 of block (0, 0, 0)" in msg
    assert "the copy engine's copy of 256 bytes from " in msg and f"to {bufs['src'].va:#x} on queue " in msg
    assert " channel 0x" in msg.split("on queue ")[1] and "compute" in e.value.queue
    assert "no signal/wait chain orders the two" in msg


def test_a_host_wait_the_driver_announces_orders_the_channels(target, no_gpu_waits):
    assert (_copy_then_kernel(target, host_wait=True) == np.arange(64)).all()


def test_copy_reading_what_a_kernel_wrote_without_an_acquire(target, no_gpu_waits):
    e, va = kernel_then_copy_back(target)
    msg = str(e)
    assert f"racecheck: cross-queue read-after-write race at {va:#x}" in msg
    assert e.address == va and e.write is False and "copy" in e.queue
    assert "the copy engine's copy of 256 bytes from " in msg and "the kernel shift_write at 0x" in msg


def test_the_marker_is_nop_data():
    """What a real GPU gets: one non-incrementing NOP header whose five data dwords it ignores."""
    words = host_observed_marker(0x12_3456_7890, 0x1_0000_0002)
    assert m.decode_header(words[0]) == (m.SEC_OP_NON_INC_METHOD, 0, m.NVC56F_NOP, 5)
    assert words[1:] == [HOST_OBSERVED, 0x34567890, 0x12, 2, 1]
