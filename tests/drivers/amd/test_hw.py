"""The AMD driver on a real GPU: `pytest --gputwin-dev AMD tests/drivers/amd/test_hw.py` on an RDNA3 (gfx1100)
machine with /dev/kfd. Same fixtures, same driver calls as the MOCKAMD tests in test_device.py."""
import numpy as np
import pytest

import gputwin
from gputwin.drivers.hcq import DeviceLost
from tests.drivers.amd.test_device import run_saxpy

pytestmark = pytest.mark.hw


@pytest.fixture
def hw(dev_spec):
    d = gputwin.open_device(dev_spec)
    if getattr(d, "arch", None) != "gfx1100":
        d.close()
        pytest.skip(f"the fixtures are gfx1100 code objects; {dev_spec} is {getattr(d, 'arch', '?')}")
    yield d
    d.close()


@pytest.mark.parametrize("which", ["v5", "v4", "w64"])
def test_saxpy_is_bit_exact_on_hardware(hw, hsaco, which):
    out, want = run_saxpy(hw, hsaco[which], n=100_000, block=64 if which == "w64" else 256)
    assert out.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def test_hidden_arguments_on_hardware(hw, hsaco):
    o = hw.alloc(64)
    hw.load(hsaco["v5"], "hidden")(o, grid=(3, 2, 4), block=(8, 2, 1))
    got = np.empty(13, np.uint32)
    hw.copyout(got, o)
    assert got.tolist() == [3, 2, 4, 8, 2, 1, 0, 0, 0, 3, 0, 0, 0]


def test_scratch_lds_and_relocations_on_hardware(hw, hsaco):
    o = hw.alloc(4 * 256)
    hw.load(hsaco["v5"], "scratch")(o, 7, grid=4, block=64)
    got = np.empty(256, np.uint32)
    hw.copyout(got, o)
    g = np.arange(256, dtype=np.uint32)
    assert (got == ((g * 7 + 7) & 63) * 7 + g).all()
    hw.load(hsaco["v5"], "reloc")(o, grid=1, block=64)
    hw.copyout(got[:64], o)
    assert (got[:64] == np.tile([11, 22, 33, 44], 16)).all()


@pytest.mark.parametrize("size,offset", [(1, 0), (3, 1), (4097, 4093), (5 << 20, 13)])
def test_odd_copies_on_hardware(hw, size, offset):
    data = np.random.default_rng(size).integers(0, 256, size, np.uint8)
    buf = hw.alloc(size + offset)
    hw.copyin(buf, data, offset)
    out = np.empty(size, np.uint8)
    hw.copyout(out, buf, offset)
    assert (out == data).all()


def test_fault_on_hardware_then_a_fresh_device(dev_spec, hsaco):
    d = gputwin.open_device(dev_spec)
    buf = d.alloc(4096)
    d.load(hsaco["v5"], "fault")(buf, 1 << 36, grid=1, block=32)
    with pytest.raises(gputwin.GpuFault, match="memory fault") as e:
        d.synchronize()
    # amdkfd reports the faulting page
    assert e.value.address is not None and e.value.address >> 12 == (buf.va + (1 << 36)) >> 12
    with pytest.raises(DeviceLost, match="earlier error"):
        d.alloc(16)
    d.close()
    with gputwin.open_device(dev_spec) as fresh:
        out, want = run_saxpy(fresh, hsaco["v5"])
        assert out.tobytes() == want.tobytes()


def test_hang_on_hardware_then_a_fresh_device(dev_spec, hsaco, monkeypatch):
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "2")
    d = gputwin.open_device(dev_spec)
    flag = d.alloc(4)
    d.copyin(flag, np.zeros(1, np.uint32))
    d.load(hsaco["v5"], "spin")(flag, grid=1, block=32)
    with pytest.raises(gputwin.GpuHang, match=r"(?i)hang|hung|watchdog"):
        d.synchronize()
    d.close()   # DESTROY_QUEUE preempts the spinning wave
    monkeypatch.delenv("GPUTWIN_WATCHDOG_S")
    with gputwin.open_device(dev_spec) as fresh:
        out, want = run_saxpy(fresh, hsaco["v5"])
        assert out.tobytes() == want.tobytes()
