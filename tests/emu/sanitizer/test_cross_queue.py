"""racecheck across queues on MOCKAMD: a kernel on the compute queue reading what an SDMA copy wrote (and an
SDMA copy reading what a kernel wrote) with no signal/wait chain between them is a finding; the driver's
GPU-side wait, or a host wait it announces, orders them and nothing is reported."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import gputwin
from gputwin.drivers.amd.pm4 import AMDComputeQueue
from gputwin.drivers.amd.sdma import AMDCopyQueue
from gputwin.emu.memory import AddressSpace
from gputwin.emu.sanitizer.queues import QueueRaces
from gputwin.errors import SanitizerError

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "amd" / "sanitize"


@pytest.fixture(params=[("MOCKAMD", "gfx1100"), ("MOCKAMD:gfx942", "gfx942"), ("MOCKUSBAMD", "gfx1100")],
                ids=["gfx1100", "gfx942", "usb-gfx1100"])
def target(request, monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE", "racecheck")
    monkeypatch.delenv("GPUTWIN_SANITIZE_REPORT", raising=False)
    spec, image = request.param
    return spec, (FIXTURES / f"sanitize.{image}.hsaco").read_bytes()


@pytest.fixture
def no_gpu_waits(monkeypatch):
    """The planted bug: a driver whose queues forget the wait on the previous submission."""
    monkeypatch.setattr(AMDComputeQueue, "wait", lambda self, signal, value: self)
    monkeypatch.setattr(AMDCopyQueue, "wait", lambda self, signal, value: self)


def _copy_then_kernel(target, host_wait: bool, bufs: dict | None = None, alloc_between: bool = False):
    """copyin on the SDMA queue, then a kernel on the compute queue reading it; returns what it read.
    alloc_between: an allocation comes between the two (on MOCKUSBAMD it remaps the GPU's address space)."""
    spec, image = target
    bufs = {} if bufs is None else bufs
    dev = gputwin.open_device(spec)
    try:
        kernel = dev.load(image, "shift_read")      # its upload (a copy the host waits for) comes first
        out, src = bufs["out"], bufs["src"] = dev.alloc(256), dev.alloc(256)
        dev.copyin(out, np.zeros(64, np.uint32))
        dev.copyin(src, np.arange(64, dtype=np.uint32))
        if host_wait:
            dev.synchronize()
        if alloc_between:
            bufs["between"] = dev.alloc(1 << 16)
        kernel(out, src, 64, 0, grid=(1, 1, 1), block=(64, 1, 1))
        dev.synchronize()
        got = np.zeros(64, np.uint32)
        dev.copyout(got, out)
        return got
    finally:
        try:
            dev.close()
        except SanitizerError:   # a lost device reports its error again
            pass


def test_copy_then_kernel_ordered_by_the_driver_wait(target):
    got = _copy_then_kernel(target, host_wait=False)
    assert (got == np.arange(64)).all()


def test_copy_then_kernel_without_a_wait_is_a_race(target, no_gpu_waits):
    bufs = {}
    with pytest.raises(SanitizerError) as e:
        _copy_then_kernel(target, False, bufs)
    msg = str(e.value)
    assert "racecheck: cross-queue read-after-write race on 4 bytes of global memory" in msg
    assert e.value.address == bufs["src"].va and e.value.write is False
    assert e.value.instruction.startswith("global_load")
    assert "the SDMA copy of 256 bytes from " in msg and f"to {bufs['src'].va:#x} on queue " in msg
    assert "no signal/wait chain orders the two" in msg


def test_a_race_from_the_middle_of_a_consecutive_access_names_its_first_lane(target, no_gpu_waits):
    """The host waited for the first half of the input; the second half's copy is unordered: the race is at
    lane 32, the first byte the copy wrote (every lane active and consecutive: one range, checked whole)."""
    spec, image = target
    dev = gputwin.open_device(spec)
    try:
        kernel = dev.load(image, "shift_read")
        out, src = dev.alloc(256), dev.alloc(256)
        dev.copyin(out, np.zeros(64, np.uint32))
        dev.copyin(src, np.arange(32, dtype=np.uint32))
        dev.synchronize()
        dev.copyin(src, np.arange(32, 64, dtype=np.uint32), offset=128)
        with pytest.raises(SanitizerError) as e:
            kernel(out, src, 64, 0, grid=(1, 1, 1), block=(64, 1, 1))
            dev.synchronize()
        assert e.value.address == src.va + 128 and e.value.write is False
        assert "cross-queue read-after-write race on 4 bytes of global memory" in str(e.value)
        lanes = 64 if spec.endswith("gfx942") else 32          # CDNA3 runs wave64
        assert f"by wave {32 // lanes} lane {32 % lanes} of workgroup (0, 0, 0)" in str(e.value)
    finally:
        try:
            dev.close()
        except SanitizerError:
            pass


def test_the_record_outlives_an_allocation_between_the_two(target, no_gpu_waits):
    """On MOCKUSBAMD the allocation changes the page tables and the GPU's address space is cut anew: the
    pieces that did not change keep what racecheck recorded of them."""
    bufs = {}
    with pytest.raises(SanitizerError) as e:
        _copy_then_kernel(target, False, bufs, alloc_between=True)
    assert e.value.address == bufs["src"].va and e.value.write is False
    assert "racecheck: cross-queue read-after-write race on 4 bytes of global memory" in str(e.value)


def test_a_host_wait_the_driver_announces_orders_the_queues(target, no_gpu_waits):
    got = _copy_then_kernel(target, host_wait=True)
    assert (got == np.arange(64)).all()


def kernel_then_copy_back(target) -> tuple[SanitizerError, int]:
    """shift_write, then a copy back of what it wrote with no wait between: the error and the buffer's va."""
    spec, image = target
    dev = gputwin.open_device(spec)
    try:
        kernel = dev.load(image, "shift_write")
        out, src = dev.alloc(256), dev.alloc(256)
        dev.copyin(src, np.arange(64, dtype=np.uint32))
        dev.copyin(out, np.zeros(64, np.uint32))
        dev.synchronize()                       # the inputs are in place; the bug is the copy back
        kernel(out, src, 64, 0, grid=(1, 1, 1), block=(64, 1, 1))
        with pytest.raises(SanitizerError) as e:
            dev.copyout(np.zeros(64, np.uint32), out)
        return e.value, out.va
    finally:
        try:
            dev.close()
        except SanitizerError:
            pass


def test_copy_reading_what_a_kernel_wrote_without_a_wait(target, no_gpu_waits):
    e, va = kernel_then_copy_back(target)
    msg = str(e)
    assert f"racecheck: cross-queue read-after-write race at {va:#x}" in msg
    assert e.address == va and e.write is False
    assert "the SDMA copy of 256 bytes from " in msg and "the kernel at 0x" in msg


# --- the vector clocks alone ----------------------------------------------------------------------------
def _region(size=64):
    mem = AddressSpace()
    mem.map(0x10000, size)
    return mem.find(0x10000)


def test_a_wait_on_a_signal_orders_only_what_came_before_the_signal():
    r, races = _region(), QueueRaces()
    races.begin("copy", "copy 1")
    assert races.access(r, slice(0, 16), write=True) is None
    races.end()
    races.release("copy", 0x100, 1)
    races.begin("copy", "copy 2")
    races.access(r, slice(16, 32), write=True)
    races.end()
    races.acquire_last("compute", 0x100)        # saw the signal of copy 1 only
    races.begin("compute", "kernel")
    assert races.access(r, slice(0, 16), write=False) is None
    found = races.access(r, slice(20, 24), write=False)
    assert found.kind == "read-after-write" and found.other.what == "copy 2" and found.index == 0


def test_write_after_read_across_queues_and_the_host_observed_timeline():
    r, races = _region(), QueueRaces()
    races.begin("compute", "kernel")
    races.access(r, np.arange(8), write=False)
    races.end()
    races.release("compute", 0x200, 5, nbytes=8)
    races.begin("copy", "copy")
    found = races.access(r, slice(4, 12), write=True)
    assert found.kind == "write-after-read" and found.other.what == "kernel"
    races.end()
    races.acquire_reached("copy2", 0x200, 5)    # the host saw the timeline reach 5 before submitting
    races.begin("copy2", "copy after the host wait")
    assert races.access(r, slice(0, 4), write=True) is None
    races.end()
    races.acquire_reached("copy3", 0x200, 6)    # a value no write reached orders nothing
    races.begin("copy3", "copy 3")
    assert races.access(r, slice(0, 4), write=False) is not None


def test_first_write_reaching_a_value_on_a_timeline_and_on_any_signal():
    from gputwin.emu.sanitizer.queues import Releases
    timeline, other = Releases(), Releases()
    for v in (1, 2, 5):
        timeline.add(v, {"q": v})
    for v in (7, 3, 9):                 # not monotonic (a mailbox): searched in order
        other.add(v, {"q": v})
    assert timeline.monotonic and not other.monotonic
    assert timeline.first_reaching(3) == {"q": 5} and timeline.first_reaching(6) is None
    assert other.first_reaching(8) == {"q": 9} and other.first_reaching(4) == {"q": 7}
