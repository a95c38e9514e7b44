"""Each checker against a PTX kernel with a planted bug on MOCKNV (sm_90 and sm_80), and the same kernel run
correctly reporting nothing (fixtures/nv/sanitize/sanitize.ptx: the bug is switched on by an argument).
The findings travel as on a GPU: the emulator stops the channel, the mock RM hands the report to the NV
driver, which raises SanitizerError at synchronize."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import gputwin
from gputwin.device import emulated_gpu
from gputwin.errors import SanitizerError
from tests.emu.sanitizer.test_planted_bugs import _filled, run_sanitized, store_then_load

PTX = (pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "nv" / "sanitize" / "sanitize.ptx").read_text()


@pytest.fixture(params=["MOCKNV:sm_90", "MOCKNV:sm_80"])
def spec(request, monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE", "all")
    monkeypatch.delenv("GPUTWIN_SANITIZE_REPORT", raising=False)
    return request.param


def _run(spec, name, make_args, block, grid=(1, 1, 1), lds=0):
    return run_sanitized(spec, PTX, name, make_args, block, grid, lds=lds)


# --- memcheck --------------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel,write", [("shift_read", False), ("shift_write", True)])
def test_off_by_one_global_access_names_the_thread_and_the_allocation(spec, kernel, write):
    bufs = {}

    def args(k):
        def make(dev):
            bufs["out"], bufs["in"] = _filled(dev, 64), _filled(dev, 64)
            return bufs["out"], bufs["in"], 64, k
        return make
    assert _run(spec, kernel, args(0), (64, 1, 1)) is None
    e = _run(spec, kernel, args(1), (64, 1, 1))
    assert isinstance(e, SanitizerError) and e.kind == "sanitizer"
    past = bufs["out" if write else "in"]
    assert e.address == past.va + 256 and e.write is write and e.kernel == kernel
    assert e.line == (50 if write else 23)            # the ld/st statement's line in sanitize.ptx
    msg = str(e)
    assert f"memcheck: invalid {'write' if write else 'read'} of 4 bytes of global memory" in msg
    assert "by warp 1 thread 63 of block (0, 0, 0)" in msg
    assert f"`{'st' if write else 'ld'}.global.u32` at PTX line {e.line}" in msg
    assert f"0 bytes past the end of a 256-byte allocation at {past.va:#x}" in msg


@pytest.mark.parametrize("kernel,lds", [("smem_shift", 0), ("dyn_shift", 512)])
def test_shared_overflow_static_and_dynamic(spec, kernel, lds):
    args = lambda k: lambda d: (_filled(d, 128), _filled(d, 128), k)   # noqa: E731
    assert _run(spec, kernel, args(0), (128, 1, 1), lds=lds) is None
    e = _run(spec, kernel, args(1), (128, 1, 1), lds=lds)
    assert isinstance(e, SanitizerError) and e.address == 512 and e.write is True
    assert "invalid write of 4 bytes of shared memory at 0x200 by warp 3 thread 127" in str(e)
    assert "0 bytes past the end of the block's 512 bytes of shared memory (static + dynamic)" in str(e)


# --- initcheck -------------------------------------------------------------------------------------
def test_read_of_memory_nothing_wrote(spec):
    def args(half):
        def make(dev):
            src = dev.alloc(256)
            dev.copyin(src, np.ones(32 if half else 64, np.uint32))
            return _filled(dev, 64), src, 64, 0
        return make
    assert _run(spec, "shift_read", args(False), (64, 1, 1)) is None
    e = _run(spec, "shift_read", args(True), (64, 1, 1))
    assert isinstance(e, SanitizerError) and e.write is False
    assert "initcheck: uninitialised read of 4 bytes of global memory" in str(e)
    assert "by warp 1 thread 32 " in str(e) and "128 bytes into a 256-byte allocation" in str(e)
    assert "(32 lanes)" in str(e)


def test_a_kernel_store_initialises_what_a_later_kernel_reads(spec):
    assert (store_then_load(spec, PTX) == np.arange(64)).all()


# --- racecheck -------------------------------------------------------------------------------------
def test_missing_bar_sync_in_a_shared_reduction(spec):
    args = lambda k: lambda d: (_filled(d, 1), _filled(d, 128), k)   # noqa: E731
    assert _run(spec, "reduce", args(0), (128, 1, 1)) is None
    e = _run(spec, "reduce", args(1), (128, 1, 1))
    assert isinstance(e, SanitizerError)
    msg = str(e)
    assert "racecheck: shared-memory read-after-write race on 4 bytes" in msg
    assert "with no barrier in between" in msg and "`ld.shared.u32`" in msg
    other = int(msg.split(": warp ")[1].split()[0])      # "... by warp W thread T ...: warp O wrote it"
    assert other != e.wave


# --- synccheck -------------------------------------------------------------------------------------
def test_bar_sync_not_reached_by_the_whole_block(spec):
    args = lambda k: lambda d: (_filled(d, 64), k)   # noqa: E731
    assert _run(spec, "diverge", args(0), (64, 1, 1)) is None
    e = _run(spec, "diverge", args(1), (64, 1, 1))
    assert isinstance(e, SanitizerError) and e.instruction == "bar.sync"
    assert "synccheck: barrier not reached by the whole block" in str(e)
    assert "48 of its 64 threads had exited instead" in str(e)


def test_divergent_bar_sync_in_one_warp(spec):
    e = _run(spec, "diverge", lambda d: (_filled(d, 64), 2), (64, 1, 1))
    assert isinstance(e, SanitizerError)
    assert "synccheck: divergent barrier by warp 0 thread 0" in str(e)
    assert "threads of one warp waited at different bar.sync statements (PTX line 169 and PTX line 174; " \
           "thread 16 at the other)" in str(e)


def test_report_all_lists_every_finding_of_the_launch(spec, monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE_REPORT", "all")
    e = _run(spec, "shift_write", lambda d: (d.alloc(256), d.alloc(256), 64, 1), (64, 1, 1))
    assert isinstance(e, SanitizerError)
    assert len(e.findings) == 2
    assert e.findings[0].startswith("initcheck: uninitialised read") and "(64 lanes)" in e.findings[0]
    assert e.findings[1].startswith("memcheck: invalid write") and "thread 63" in e.findings[1]


def test_vram_is_bounded_by_the_size_asked_for_and_tracked_until_written(spec):
    dev = gputwin.open_device(spec)
    try:
        b = dev.alloc(1000)
        r = emulated_gpu(dev).mem.find(b.va)
        assert r.alloc_end - r.base == 1000 and r.data.size == 2 << 20      # RM's huge pages behind it
        assert r.shadow is not None and not r.shadow.any()
        dev.copyin(b, np.ones(10, np.uint32))
        assert r.shadow[:40].all() and not r.shadow[40:].any()
    finally:
        dev.close()


def test_vram_the_cpu_maps_is_the_hosts_and_not_tracked(spec):
    dev = gputwin.open_device(spec)
    try:
        b = dev.alloc(1000)
        r = emulated_gpu(dev).mem.find(b.va)
        assert r.shadow is not None
        memory, _, _, size = b.meta
        dev._cpu_map(memory, size, dev.device)      # NV_ESC_RM_MAP_MEMORY + mmap: the host may write it now
        assert r.shadow is None
        out = dev.alloc(256)
        dev.copyin(out, np.zeros(64, np.uint32))
        dev.load(PTX, "shift_read")(out, b, 64, 0, grid=(1, 1, 1), block=(64, 1, 1))
        dev.synchronize()                           # reading it is no initcheck finding
    finally:
        dev.close()
