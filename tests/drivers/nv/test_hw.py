"""The NV driver on a real GPU: `pytest --dev NV tests/drivers/nv/test_hw.py` on a Hopper or Ampere machine
with nvidia.ko 580.105.08 and `pip install 'gputwin[nv]'` (PTX -> cubin). The same calls as the MOCKNV tests."""
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


def test_saxpy_from_ptx_is_bit_exact_on_hardware(hw, ptx):
    n = 1000
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    bx, by = hw.alloc(4 * n), hw.alloc(4 * n)
    hw.copyin(bx, x)
    hw.copyin(by, y)
    hw.load(ptx[hw.arch], "saxpy")(by, bx, np.float32(1.5), n, grid=(8, 1, 1), block=(128, 1, 1), wait=True)
    out = np.empty(n, np.float32)
    hw.copyout(out, by)
    # the PTX has fma.rn.f32: one rounding. 1.5*x + y is exact in float64 for these magnitudes (a 2-bit factor,
    # exponents within a few dozen), so rounding it to f32 once is the fused result
    fma = (np.float64(1.5) * x.astype(np.float64) + y).astype(np.float32)
    assert np.array_equal(out.view(np.uint32), fma.view(np.uint32))
