"""HCQ runtime pieces that need no GPU: launch-shape checks, the timeline wait and its watchdog."""
import ctypes
import time

import pytest

from gputwin.drivers.hcq import Buffer, DeviceLost, HCQDevice, Program, TimelineSignal, _dims
from gputwin.errors import GpuHang


class FakeDevice(HCQDevice):
    """Host memory for everything; `_sleep` is where a test plays the GPU."""
    name = "FAKE"

    def __init__(self, on_sleep=lambda dev: None):
        self.on_sleep, self.keep = on_sleep, []
        super().__init__()

    def _alloc(self, size, host=False):
        mem = (ctypes.c_uint8 * size)()
        self.keep.append(mem)
        return Buffer(self, ctypes.addressof(mem), size, ctypes.addressof(mem))

    def _new_signal(self):
        return TimelineSignal(self._alloc(8, host=True))

    def _sleep(self, timeout_s):
        time.sleep(min(timeout_s, 0.005))
        self.on_sleep(self)


def test_launch_shapes_are_padded_and_checked():
    assert _dims(4, "grid") == ((4, 1, 1), 1)
    assert _dims((2, 3), "grid") == ((2, 3, 1), 2)
    for bad in [(0, 1, 1), (1, 2, 3, 4), (), 2.0, (True,), (-1,)]:
        with pytest.raises(ValueError, match="grid"):
            _dims(bad, "grid")


def test_a_timeline_that_never_moves_is_a_hang_and_the_device_is_lost(monkeypatch):
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "0.05")
    dev = FakeDevice()
    dev.timeline_value = 2          # one submission outstanding that nothing will complete
    t0 = time.monotonic()
    with pytest.raises(GpuHang, match="stuck at 0"):
        dev.synchronize()
    assert time.monotonic() - t0 < 5
    with pytest.raises(DeviceLost, match="stuck at 0"):
        dev.alloc(16)


def test_the_watchdog_restarts_while_the_timeline_moves(monkeypatch):
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "0.4")

    def progress(dev):   # a step every ~0.1 s: 0.5 s in all, more than the watchdog, never stuck for 0.4 s
        time.sleep(0.1)
        dev.timeline_signal.value += 1
    dev = FakeDevice(progress)
    dev.timeline_value = 6
    t0 = time.monotonic()
    dev.synchronize()
    assert dev.timeline_signal.value == 5 and time.monotonic() - t0 > 0.4


def test_program_pads_grid_and_block_and_counts_dims():
    calls = []

    class Recorder(FakeDevice):
        def _launch(self, program, args, grid, block, dims, lds):
            calls.append((args, grid, block, dims, lds))
    prg = Program(Recorder(), "k")
    prg(1, 2, grid=(8, 2), block=64, lds=100)
    assert calls == [((1, 2), (8, 2, 1), (64, 1, 1), 2, 100)]
    with pytest.raises(ValueError, match="lds"):
        prg(grid=1, lds=-1)
