"""Random pushbuffers never crash or hang the host: each run ends with the channel idle, parked or stopped
with a gputwin error."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gputwin.abi import nv_methods as m
from gputwin.errors import GpuFault, GpuHang
from tests.emu.nv.frontend.rig import MEM_VA, Rig

_HEADERS = st.builds(lambda op, sub, meth, n: m.method_header(op, sub, meth, n),
                     st.sampled_from([1, 3, 4, 5, 7, 0, 2, 6]), st.integers(0, 7),
                     st.sampled_from([0x0, 0x5C, 0x60, 0x64, 0x68, 0x6C, 0x20, 0x100, 0x240, 0x300, 0x400, 0x404,
                                      0x408, 0x40C, 0x410, 0x418, 0x41C, 0x2B4, 0x2C0, 0x1B00, 0x1B0C, 0xFFC]),
                     st.integers(0, 6))
_DATA = st.one_of(st.integers(0, 0xFFFFFFFF), st.sampled_from([MEM_VA, MEM_VA + 0x100, 0xC6B5, 0xC8B5, 0xCBC0, 1, 0x781]))


@settings(max_examples=120, deadline=None)
@given(st.lists(st.one_of(_HEADERS, _DATA), min_size=1, max_size=40), st.sampled_from(["sm_90", "sm_80"]))
def test_random_pushbuffers_end_in_a_known_state(words, arch):
    r = Rig(arch)
    events = []
    r.gpu.listener = events.append
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GPUTWIN_WATCHDOG_S", "0.3")
        r.submit(words)
    for e in events:
        assert e.kind == "nonstall" or isinstance(e.error, (GpuFault, GpuHang))
    if r.ch.stopped:
        assert isinstance(r.ch.error, (GpuFault, GpuHang))
    assert np.asarray(r.userd).size == 0x200
