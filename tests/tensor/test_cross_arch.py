"""Every emulated arch equals CPU bit for bit: the cross-device programs plus a few that stress what differs
between archs (wave64 on gfx942, its software bfloat16 conversions, int64/uint8 lowering, two-stage
reductions, partial waves) run on MOCKAMD:gfx1201 (RDNA4), MOCKAMD:gfx942 (CDNA3) and MOCKNV:sm_90 /
MOCKNV:sm_80 (the compiler's PTX on the PTX emulator, through the NV driver) and are compared with the CPU
device's results, computed once per module."""
import numpy as np
import pytest

import gputwin.tensor as gt
from gputwin.tensor import sorting
from tests.tensor.bitcheck import assert_bits
from tests.tensor.test_cross_device import I, PROGRAMS, X, Y

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
DEVICES = ("MOCKAMD:gfx1201", "MOCKAMD:gfx942", "MOCKNV:sm_90", "MOCKNV:sm_80")
RNG = np.random.default_rng(42)
L = RNG.integers(-2**40, 2**40, (5, 13)).astype(np.int64)
L[0, :3] = [2**63 - 1, -2**63, 0]
U = RNG.integers(0, 256, (5, 13)).astype(np.uint8)
F = (RNG.standard_normal((5, 13)) * 4).astype(np.float32)
F[0, :8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-38, 3e38]
LONG = RNG.standard_normal(2100).astype(np.float32)  # >= 1024: two-stage reductions; 33 waves of 64

ARCH_PROGRAMS = {
    "int64": lambda f, l, u, g: ((l * 3 - l.flip(0)).maximum(l) + l.sum(1, keepdims=True) * 5
                                 + l.argmax(1, keepdims=True)),
    "uint8": lambda f, l, u, g: ((u + 7) * u - u.flip(1)).astype("int32") + u.sum(1, keepdims=True).astype("int32"),
    "int_float_casts": lambda f, l, u, g: (l.astype("float32") + u.astype("float16").astype("float32")
                                           + l.astype("bfloat16").astype("float32") + (f * 100).astype("int64")),
    "half_arith": lambda f, l, u, g: ((f.astype("float16") / 3 + f.astype("float16").sqrt() * f.astype("float16"))
                                      .astype("float32")
                                      + (f.astype("bfloat16") / 7 - f.astype("bfloat16") * 1.1).astype("float32")),
    "half_reduce_matmul": lambda f, l, u, g: gt.cat([
        f.astype("bfloat16").mean(0).astype("float32"),
        (f[:, :5].astype("bfloat16") @ f[:5, 2:].astype("bfloat16")).astype("float32").reshape(-1)]),
    "long_reduce": lambda f, l, u, g: gt.cat([
        g.sum(keepdims=True), g.max(keepdims=True), (g * 0.999).prod(keepdims=True),
        (g[:2048].reshape(2, 1024) @ g[:1024].reshape(1024, 1)).reshape(-1)]),
    "long_elementwise": lambda f, l, u, g: (g * 3 + 1).exp().reshape(21, 100)[::4, ::-3],
    "int_numpy_ops": lambda f, l, u, g: ((l // 97) + (l % -1001) + (l >> (l % 70)) + (l ^ 12345)
                                         + ((u << (u % 10)) ^ (u >> 3)).astype("int64") + u.cumsum(1)
                                         + l ** (u % 70).astype("int64")),
    "bitonic": lambda f, l, u, g: (sorting._bitonic_positions(f) * 100 + sorting._bitonic_positions(l)
                                   + sorting._bitonic_positions(u.T).T),   # the network at a small size
}


def _x_y_i(ctx):
    return tuple(gt.Tensor(a, device=ctx) for a in (X, Y, I))


def _f_l_u_long(ctx):
    return tuple(gt.Tensor(a, device=ctx) for a in (F, L, U, LONG))


CASES = {**{name: (prog, _x_y_i) for name, prog in PROGRAMS.items()},
         **{name: (prog, _f_l_u_long) for name, prog in ARCH_PROGRAMS.items()}}


@pytest.fixture(scope="module")
def cpu_results():
    ctx = gt.get_context("CPU")
    return {name: prog(*make(ctx)).numpy() for name, (prog, make) in CASES.items()}


@pytest.mark.parametrize("spec", DEVICES)
@pytest.mark.parametrize("name", list(CASES))
def test_arch_equals_cpu_bit_for_bit(cpu_results, spec, name):
    ctx = gt.get_context(spec)
    assert ctx.dev.arch == spec.split(":")[1]
    prog, make = CASES[name]
    assert_bits(prog(*make(ctx)).numpy(), cpu_results[name])
