"""Tensor basics on the device under test (gputwin/tensor/tensor.py, creation.py): numpy interop,
creation, dtypes through the device, device moves and bad input."""
import ml_dtypes
import numpy as np
import pytest

import gputwin.tensor as gt
from gputwin.tensor import DTypeError, Tensor
from tests.tensor.bitcheck import assert_bits

ALL = [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.int64, np.uint8, np.bool_]


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: np.dtype(d).name)
def test_round_trip_keeps_bits_and_dtype(tdev, dtype):
    x = (np.random.default_rng(0).standard_normal((3, 5)) * 100).astype(dtype)
    t = Tensor(x, device=tdev)
    assert t.dtype == np.dtype(dtype) and t.shape == (3, 5) and t.device == tdev.spec
    assert_bits(t.numpy(), x)
    assert_bits(t.contiguous().numpy(), x)  # through a copy kernel


def test_python_data_takes_numpys_dtypes_without_float64(tdev):
    assert Tensor([1, 2], device=tdev).dtype == np.int64
    assert Tensor([[1.5, 2]], device=tdev).dtype == np.float32
    assert Tensor(True, device=tdev).tolist() is True
    assert Tensor([[1, 2], [3, 4]], device=tdev, dtype="float16").tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert Tensor(np.zeros((0, 3)), device=tdev).numpy().shape == (0, 3)


def test_constants_are_lazy_and_fuse(tdev):
    before = sum(s.launches for s in tdev.stats.kernels.values())
    z = gt.zeros(2, 3, device=tdev) + gt.full((3,), 2.5, device=tdev) * gt.ones(3, dtype="int32", device=tdev)
    assert sum(s.launches for s in tdev.stats.kernels.values()) == before
    assert_bits(z.numpy(), np.full((2, 3), 2.5, np.float32))
    assert gt.full((2,), 7, device=tdev).dtype == np.int64
    assert gt.full((2,), True, device=tdev).numpy().tolist() == [True, True]


def test_host_made_creation_equals_numpy(tdev):
    assert_bits(gt.arange(3, 20, 4, device=tdev).numpy(), np.arange(3, 20, 4))
    assert_bits(gt.arange(0.5, 2, 0.25, dtype="float32", device=tdev).numpy(),
                np.arange(0.5, 2, 0.25).astype(np.float32))
    assert_bits(gt.eye(3, 4, k=1, dtype="int32", device=tdev).numpy(), np.eye(3, 4, 1, dtype=np.int32))
    assert_bits(gt.rand(4, 5, seed=3, device=tdev).numpy(), np.random.default_rng(3).random((4, 5), dtype=np.float32))
    assert_bits(gt.randn(6, seed=4, device=tdev).numpy(), np.random.default_rng(4).standard_normal(6, dtype=np.float32))
    gt.manual_seed(5)
    a = gt.randn(3, device=tdev).numpy()
    gt.manual_seed(5)
    assert_bits(gt.randn(3, device=tdev).numpy(), a)


def test_to_cpu_and_back(tdev):
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    t = Tensor(x, device=tdev)[:, ::2]
    c = t.to("CPU")
    assert c.device == "CPU"
    assert_bits(c.to(tdev).numpy(), x[:, ::2])


def test_an_opened_device_object_can_hold_tensors(tdev, dev):
    x = np.arange(5, dtype=np.int32)
    t = Tensor(x, device=dev)
    assert t.ctx.dev is dev
    assert_bits((t * 2).numpy(), x * 2)
    with pytest.raises(TypeError, match="DEV spec string or an opened device"):
        Tensor(x, device=42)


def test_numpy_operators_and_array_protocol(tdev):
    x = np.arange(4, dtype=np.float32)
    t = Tensor(x, device=tdev)
    assert_bits(np.asarray(x + t), x + x)  # ndarray + Tensor defers to the Tensor
    assert float(t.sum().item()) == 6.0 and len(t) == 4


@pytest.mark.parametrize("make,exc,msg", [
    (lambda d: Tensor([[1, 2], [3]], device=d), (DTypeError, ValueError), "(?i)shape|ragged"),
    (lambda d: Tensor(np.zeros(2, np.complex64), device=d), DTypeError, "complex64"),
    (lambda d: Tensor([1], device=d, dtype="float64x"), DTypeError, "supported"),
    (lambda d: Tensor([1], device="MOCKXYZ"), ValueError, "valid spellings"),
    (lambda d: gt.rand(2, dtype="int32", device=d), DTypeError, "float"),
    (lambda d: bool(Tensor([1, 2], device=d)), ValueError, "ambiguous"),
], ids=["ragged", "complex", "dtype-name", "device", "rand-int", "truth"])
def test_bad_input_raises_clear_errors(tdev, make, exc, msg):
    with pytest.raises(exc, match=msg):
        make(tdev)


def test_tensors_on_different_devices_do_not_mix(tdev):
    if tdev.spec == "CPU":
        pytest.skip("needs a device under test other than CPU to mix with CPU")
    with pytest.raises(ValueError, match="different devices"):
        Tensor([1.0], device=tdev) + Tensor([1.0], device="CPU")
