"""Each checker against a kernel with a planted bug, on every MOCKAMD target and
MOCKUSBAMD, and the same kernel run
correctly reporting nothing (fixtures/amd/sanitize/sanitize.cl: the bug is switched on by an argument)."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import gputwin
from gputwin.errors import SanitizerError

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "amd" / "sanitize"
# (device spec, code object, lanes per wave)
TARGETS = {"gfx1100-w32": ("MOCKAMD", "gfx1100", 32), "gfx1100-w64": ("MOCKAMD", "gfx1100.w64", 64),
           "gfx1201": ("MOCKAMD:gfx1201", "gfx1201", 32), "gfx942": ("MOCKAMD:gfx942", "gfx942", 64),
           # the AM driver over the emulated USB bridge: it owns VRAM and the page tables
           "usb-gfx1100-w32": ("MOCKUSBAMD", "gfx1100", 32), "usb-gfx1100-w64": ("MOCKUSBAMD", "gfx1100.w64", 64),
           "usb-gfx1201": ("MOCKUSBAMD:gfx1201", "gfx1201", 32)}


@pytest.fixture(params=sorted(TARGETS))
def target(request, monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE", "all")
    monkeypatch.delenv("GPUTWIN_SANITIZE_REPORT", raising=False)
    spec, image, lanes = TARGETS[request.param]
    return spec, (FIXTURES / f"sanitize.{image}.hsaco").read_bytes(), lanes


def _filled(dev, n):
    b = dev.alloc(4 * n)
    dev.copyin(b, np.arange(n, dtype=np.uint32))
    return b


def run_sanitized(spec, image, name, make_args, block, grid=(1, 1, 1), **launch):
    """Run kernel `name` of `image` on a fresh device; returns the SanitizerError or None."""
    dev = gputwin.open_device(spec)
    try:
        dev.load(image, name)(*make_args(dev), grid=grid, block=block, **launch)
        try:
            dev.synchronize()
        except SanitizerError as e:
            return e
        return None
    finally:
        try:
            dev.close()
        except SanitizerError:   # a lost device reports its error again
            pass


def _run(target, name, make_args, block, grid=(1, 1, 1)):
    spec, image, _ = target
    return run_sanitized(spec, image, name, make_args, block, grid)


# --- memcheck --------------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel,write", [("shift_read", False), ("shift_write", True)])
def test_off_by_one_global_access_names_the_lane_and_the_allocation(target, kernel, write):
    lanes = target[2]
    bufs = {}

    def args(dev, k):
        bufs["out"], bufs["in"] = _filled(dev, 64), _filled(dev, 64)
        return bufs["out"], bufs["in"], 64, k
    assert _run(target, kernel, lambda d: args(d, 0), (64, 1, 1)) is None
    e = _run(target, kernel, lambda d: args(d, 1), (64, 1, 1))
    assert isinstance(e, SanitizerError) and e.kind == "sanitizer"
    past = bufs["out" if write else "in"]
    assert e.address == past.va + 256 and e.write is write
    assert e.kernel == kernel and e.instruction.startswith("global_store" if write else "global_load")
    assert 0 < e.kernel_offset < 0x200                   # inside the kernel, not an absolute address
    assert e.wave == 64 // lanes - 1                     # work-item 63: the last lane of the last wave
    msg = str(e)
    assert f"memcheck: invalid {'write' if write else 'read'} of 4 bytes of global memory" in msg
    assert f"lane {lanes - 1} of workgroup (0, 0, 0)" in msg
    assert f"0 bytes past the end of a 256-byte allocation at {past.va:#x}" in msg
    assert f"pc offset {e.kernel_offset:#x}" in msg


def test_lds_overflow_is_past_the_group_segment(target):
    args = lambda k: lambda d: (_filled(d, 128), _filled(d, 128), k)   # noqa: E731
    assert _run(target, "lds_shift", args(0), (128, 1, 1)) is None
    e = _run(target, "lds_shift", args(1), (128, 1, 1))
    assert isinstance(e, SanitizerError)
    assert e.address == 512 and e.write is True and e.instruction.startswith("ds_")
    assert "0 bytes past the end of the workgroup's 512-byte group segment" in str(e)
    assert f"lane {target[2] - 1} " in str(e)


# --- initcheck -------------------------------------------------------------------------------------
def test_read_of_memory_nothing_wrote(target):
    def args(half):
        def make(dev):
            src = dev.alloc(256)
            dev.copyin(src, np.ones(32 if half else 64, np.uint32))
            return _filled(dev, 64), src, 64, 0
        return make
    assert _run(target, "shift_read", args(False), (64, 1, 1)) is None
    e = _run(target, "shift_read", args(True), (64, 1, 1))
    assert isinstance(e, SanitizerError) and e.write is False
    assert "initcheck: uninitialised read of 4 bytes" in str(e)
    assert "128 bytes into a 256-byte allocation" in str(e)
    assert "(32 lanes)" in str(e)            # work-items 32..63 read the half nothing wrote


def store_then_load(spec, image) -> np.ndarray:
    """shift_write into a buffer nothing else wrote, then shift_read of it (the AMD and NV fixtures both
    have the pair): what the second kernel read."""
    dev = gputwin.open_device(spec)
    try:
        mid, out = dev.alloc(256), dev.alloc(256)
        dev.load(image, "shift_write")(mid, _filled(dev, 64), 64, 0, grid=(1, 1, 1), block=(64, 1, 1))
        dev.load(image, "shift_read")(out, mid, 64, 0, grid=(1, 1, 1), block=(64, 1, 1))
        dev.synchronize()
        got = np.zeros(64, np.uint32)
        dev.copyout(got, out)
        return got
    finally:
        dev.close()


def test_memory_freed_and_allocated_again_is_uninitialised_again(target):
    def args(dev):
        old = _filled(dev, 64)
        dev.synchronize()
        dev.free(old)
        return _filled(dev, 64), dev.alloc(256), 64, 0    # the new 256 bytes may reuse the old ones
    e = _run(target, "shift_read", args, (64, 1, 1))
    assert isinstance(e, SanitizerError) and "initcheck: uninitialised read of 4 bytes" in str(e)
    assert "0 bytes into a 256-byte allocation" in str(e) and "(64 lanes)" in str(e)   # every work-item


def test_a_kernel_store_initialises_what_a_later_kernel_reads(target):
    assert (store_then_load(*target[:2]) == np.arange(64)).all()


# --- racecheck -------------------------------------------------------------------------------------
def test_missing_barrier_in_an_lds_reduction(target):
    args = lambda sync: lambda d: (_filled(d, 1), _filled(d, 256), sync)   # noqa: E731
    assert _run(target, "reduce_lds", args(1), (256, 1, 1)) is None
    e = _run(target, "reduce_lds", args(0), (256, 1, 1))
    assert isinstance(e, SanitizerError)
    msg = str(e)
    assert "racecheck: LDS read-after-write race" in msg and "with no barrier in between" in msg
    other = int(msg.split("wave ")[2].split()[0])        # "... by wave W lane L ...: wave O wrote it"
    assert other != e.wave and e.instruction.startswith("ds_")


# --- synccheck -------------------------------------------------------------------------------------
def test_divergent_barrier(target):
    args = lambda limit: lambda d: (_filled(d, 64), limit)   # noqa: E731
    assert _run(target, "diverge_barrier", args(64), (64, 1, 1)) is None
    e = _run(target, "diverge_barrier", args(16), (64, 1, 1))
    assert isinstance(e, SanitizerError) and e.wave == 0
    assert "synccheck: divergent barrier" in str(e) and "barrier" in e.instruction
    assert f"{target[2] - 16} of the wave's {target[2]} work-items are not active" in str(e)


def test_report_all_lists_every_finding_of_the_dispatch(target, monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE_REPORT", "all")
    e = _run(target, "diverge_barrier", lambda d: (_filled(d, 128), 16), (64, 1, 1), grid=(2, 1, 1))
    assert isinstance(e, SanitizerError)
    missing = 2 * (target[2] - 16)           # lanes of wave 0 not at the barrier, in both workgroups
    assert "divergent barrier" in e.findings[0] and f"({missing} lanes)" in e.findings[0]
    if target[2] == 32:       # each workgroup's second wave never reaches it: the first waits on an ended wave
        assert len(e.findings) == 2 and "barrier not reached by the whole workgroup" in e.findings[1]
        assert "1 of its 2 waves had ended instead" in e.findings[1]
    else:
        assert len(e.findings) == 1


def test_lds_overflow_inside_the_allocation_granule_is_past_the_declared_size(target):
    # the driver's NOP marker gives the emulated CP the kernel's exact group segment (400 bytes)
    args = lambda k: lambda d: (_filled(d, 100), _filled(d, 100), k)   # noqa: E731
    assert _run(target, "lds_small", args(0), (100, 1, 1)) is None
    e = _run(target, "lds_small", args(1), (100, 1, 1))
    assert isinstance(e, SanitizerError) and e.address == 400
    assert "0 bytes past the end of the workgroup's 400-byte group segment" in str(e)
