"""The device under test (--dev; MOCKAMD when that is CPU) equals CPU bit for bit: the same tensor programs
on both devices (gputwin/tensor as a whole, through the compiler's gfx1100 / PTX and host back ends)."""
import numpy as np
import pytest

import gputwin.tensor as gt
from tests.tensor.bitcheck import assert_bits

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(21)
X = (RNG.standard_normal((6, 10)) * 3).astype(np.float32)
X[0, :6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]
Y = RNG.standard_normal((10, 4)).astype(np.float32)
I = RNG.integers(-1000, 1000, (6, 10)).astype(np.int32)


@pytest.fixture(scope="module")
def devices(dev_spec):
    other = dev_spec.split(",")[0]                  # the first device --dev names; CPU compares with MOCKAMD
    other = other if other.upper() != "CPU" else "MOCKAMD"
    return gt.get_context("CPU"), gt.get_context(other)


PROGRAMS = {
    "arith": lambda x, y, i: (x * 1.5 - x / 3).maximum(x.flip(1)) + abs(x),
    "transcendental": lambda x, y, i: x.exp() + x.sin() * x.cos() - x.tanh() + abs(x).log() + abs(x).sqrt(),
    "activations": lambda x, y, i: x.sigmoid() + x.gelu() + x.relu() + (abs(x) + 1) ** x.cos(),
    "halves": lambda x, y, i: (x.astype("float16") * 3 + x.astype("bfloat16").exp().astype("float16")),
    "ints": lambda x, y, i: (i * 7 - i.flip(0)).minimum(i) + (i > 0).astype("int32") * i.prod(0),
    "casts": lambda x, y, i: gt.where(x > 0, i.astype("float32"), x.astype("bfloat16").astype("float32")),
    "reduce": lambda x, y, i: gt.cat([x.sum(1, keepdims=True), x.max(1, keepdims=True),
                                      x.argmax(1, keepdims=True).astype("float32"), x.mean(1, keepdims=True)], 1),
    "matmul_softmax": lambda x, y, i: (x[1:] @ y).softmax(-1) + (x[1:] @ y).log_softmax(0),
    "movement": lambda x, y, i: x.pad(((1, 0), (2, 3)), value=2.0)[::2, 1:].T.reshape(-1, 8),
    "numpy_float": lambda x, y, i: (x // 1.7 + (x % -2.5) * x.floor() - x.ceil() + x.rint().clip(-3, 3)
                                    + x.round(1) + x.isnan() + x.sign() + gt.fmod(x, 1.3)),
    "numpy_int": lambda x, y, i: ((i // 7) + (i % -13) + (i ^ 0x55) + (i << (i % 40)) + (i >> (i % 35))
                                  + gt.fmod(i, -9) * i.sign()),
    "numpy_scan_sort": lambda x, y, i: gt.cat([x.cumsum(1), x.sort(1), x.argsort(0).astype("float32"),
                                               x[[5, 0, 2]].var(0, keepdims=True)]),
    "numpy_mask": lambda x, y, i: gt.cat([x[x > 1], gt.linspace(-1, 1, 7, device=x.ctx), x.std(1)]),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_device_equals_cpu_bit_for_bit(devices, name):
    outs = []
    for ctx in devices:
        x, y, i = (gt.Tensor(a, device=ctx) for a in (X, Y, I))
        outs.append(PROGRAMS[name](x, y, i).numpy())
    assert_bits(outs[1], outs[0])
