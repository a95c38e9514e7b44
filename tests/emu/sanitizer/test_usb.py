"""The sanitizers on MOCKUSBAMD beyond the planted bugs (test_planted_bugs.py runs those there too): what
the host writes through the bridge initialises VRAM, and memcheck bounds a buffer by its exact size even
where the AM driver's allocations sit in neighbouring pages (one run of the page walk)."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import gputwin
from gputwin.errors import SanitizerError

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "amd" / "sanitize"
SPECS = {"gfx1100": "MOCKUSBAMD", "gfx1201": "MOCKUSBAMD:gfx1201"}


@pytest.fixture(params=sorted(SPECS))
def dev(request, monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE", "all")   # before the board powers on: it keeps VRAM's record
    monkeypatch.delenv("GPUTWIN_SANITIZE_REPORT", raising=False)
    d = gputwin.open_device(SPECS[request.param])
    d.image = (FIXTURES / f"sanitize.{request.param}.hsaco").read_bytes()
    yield d
    try:
        d.close()
    except SanitizerError:   # a lost device reports its error again
        pass


def _shift_read(dev, src, n=64):
    out = dev.alloc(4 * n)
    dev.load(dev.image, "shift_read")(out, src, n, 0, grid=(1, 1, 1), block=(n, 1, 1))
    try:
        dev.synchronize()
    except SanitizerError as e:
        return e
    return None


def test_a_host_write_through_the_bridge_initialises_exactly_what_it_wrote(dev):
    src = dev.alloc(256)
    src.write(0, np.arange(48, dtype=np.uint32))      # not copyin: the driver's own path to VRAM
    e = _shift_read(dev, src)
    assert isinstance(e, SanitizerError) and "initcheck: uninitialised read" in str(e)
    assert e.address == src.va + 192 and "(16 lanes)" in str(e)


def test_buffers_in_neighbouring_pages_are_bounded_by_their_own_size(dev):
    src, after = dev.alloc(200), dev.alloc(4096)
    assert after.va == src.va + 4096                  # adjacent: the GMC's walk sees one run of pages
    dev.copyin(src, np.arange(50, dtype=np.uint32))
    dev.copyin(after, np.zeros(1024, np.uint32))
    assert _shift_read(dev, src, 50) is None
    e = _shift_read(dev, src, 64)                     # work-items 50..63 read past the 200 bytes
    assert isinstance(e, SanitizerError) and "memcheck: invalid read of 4 bytes of global memory" in str(e)
    assert e.address == src.va + 200 and f"0 bytes past the end of a 200-byte allocation at {src.va:#x}" in str(e)
