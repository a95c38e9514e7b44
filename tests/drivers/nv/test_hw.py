"""The NV driver on a real GPU: `pytest --dev NV tests/drivers/nv/test_hw.py` on a Hopper or Ampere machine
with nvidia.ko 580.105.08. The same calls as the MOCKNV tests; the copy path runs today, kernel launches
need the PTX-to-SASS step the driver does not have yet (they are expected to raise NotImplementedError)."""
import numpy as np
import pytest

pytestmark = pytest.mark.hw


@pytest.fixture
def hw(dev_spec):
    import gputwin
    d = gputwin.open_device(dev_spec)
    if not d.name.startswith("NV"):
        d.close()
        pytest.skip(f"needs an NVIDIA GPU: --dev NV (selected {dev_spec})")
    yield d
    d.close()


@pytest.mark.parametrize("size,offset", [(1, 0), (3, 5), (4097, 3), (3 << 20, 1)])
def test_odd_copies_on_hardware(hw, size, offset):
    data = np.random.default_rng(size).integers(0, 256, size, np.uint8)
    buf = hw.alloc(size + offset)
    hw.copyin(buf, data, offset)
    out = np.zeros(size, np.uint8)
    hw.copyout(out, buf, offset)
    assert np.array_equal(out, data)


def test_reports_a_modelled_arch_on_hardware(hw):
    assert hw.arch in ("sm_90", "sm_80", "sm_89") and hw.sm_count > 0


def test_ptx_launch_says_what_is_missing_on_hardware(hw, ptx):
    with pytest.raises(NotImplementedError, match="PTX-to-SASS"):
        hw.load(ptx["sm_90"], "empty")
