"""Movement ops on the device under test (gputwin/tensor/movement.py): views read by kernels, pad,
cat, stack, and their errors."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gputwin.tensor import ShapeError, Tensor, cat, stack
from tests.tensor.bitcheck import assert_bits

X = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) - 7.5


def launches(ctx):
    return sum(s.launches for s in ctx.stats.kernels.values())


def test_views_need_no_kernel_and_read_back_exactly(tdev):
    t = Tensor(X, device=tdev)
    before = launches(tdev)
    cases = [(t.permute(2, 0, 1), X.transpose(2, 0, 1)), (t[:, ::-2, 1:], X[:, ::-2, 1:]),
             (t.flip(1), np.flip(X, 1)), (t[1, None, ..., 2], X[1, None, ..., 2]),
             (t.reshape(6, 4), X.reshape(6, 4)), (t.T, X.T),
             (t[:, :1].expand(2, 5, 4), np.broadcast_to(X[:, :1], (2, 5, 4))),
             (t.reshape(-1)[::5], X.reshape(-1)[::5]), (t.swapaxes(0, -1), X.swapaxes(0, -1)),
             (t.unsqueeze(0).squeeze(0), X)]
    for got, ref in cases:
        assert_bits(got.numpy(), ref)
    assert launches(tdev) == before


def test_kernels_read_strided_views(tdev):
    t = Tensor(X, device=tdev)
    got = (t.permute(2, 0, 1)[::-1, :, 1:] * 2 + t.flip(0)[:, 0, 1:3].T[None]).numpy()
    ref = X.transpose(2, 0, 1)[::-1, :, 1:] * 2 + np.flip(X, 0)[:, 0, 1:3].T[None]
    assert_bits(got, ref)


def test_reshape_of_a_transposed_view_copies_when_numpy_would(tdev):
    t = Tensor(X, device=tdev)
    assert_bits(t.permute(0, 2, 1).reshape(2, 12).numpy(), X.transpose(0, 2, 1).reshape(2, 12))
    assert_bits((t * 1).permute(1, 0, 2).reshape(3, 8).numpy(), X.transpose(1, 0, 2).reshape(3, 8))


def test_pad_is_numpy_constant_pad_and_fuses(tdev):
    t = Tensor(X[0], device=tdev)
    assert_bits(t.pad(((1, 2), (0, 3)), value=-1.0).numpy(), np.pad(X[0], ((1, 2), (0, 3)), constant_values=-1.0))
    assert_bits((t[:, ::2].pad(1) + 1).numpy(), np.pad(X[0][:, ::2], 1) + 1)
    assert_bits(t.pad(1)[1:, :-1].numpy(), np.pad(X[0], 1)[1:, :-1])


def test_cat_and_stack_promote_and_match_numpy(tdev):
    a, b = X[0], (X[1] * 3).astype(np.int32)
    ta, tb = Tensor(a, device=tdev), Tensor(b, device=tdev)
    assert_bits(cat([ta, tb, ta], axis=1).numpy(), np.concatenate([a, b, a], axis=1).astype(np.float32))
    assert_bits(cat([ta[:, 1:], tb[:, :0]], -1).numpy(), np.concatenate([a[:, 1:], b[:, :0]], -1).astype(np.float32))
    assert_bits(stack([ta, ta.flip(0)], axis=1).numpy(), np.stack([a, np.flip(a, 0)], axis=1))


@pytest.mark.parametrize("make,exc,msg", [
    (lambda t: t.reshape(5, 5), ShapeError, "cannot reshape"),
    (lambda t: t.permute(0, 0, 1), ShapeError, "permutation"),
    (lambda t: t.expand(2, 4, 4), ShapeError, "cannot broadcast"),
    (lambda t: t[2], IndexError, "out of bounds"),
    (lambda t: t[0, 0, 0, 0], IndexError, "too many indices"),
    (lambda t: t[[0, 5]], IndexError, "out of bounds"),
    (lambda t: t.pad(-1), ShapeError, "non-negative"),
    (lambda t: cat([t, t[:, :2, :3]], 1), ShapeError, "differ off that axis"),
    (lambda t: stack([t, t[:1]]), ShapeError, "equal shapes"),
    (lambda t: t.sum(axis=3), ShapeError, "out of range"),
], ids=["reshape", "permute", "expand", "index", "too-many", "advanced", "pad", "cat", "stack", "axis"])
def test_bad_movement_raises_before_any_kernel(tdev, make, exc, msg):
    t = Tensor(X, device=tdev) + 1  # lazy: a kernel would run if the check came late
    before = launches(tdev)
    with pytest.raises(exc, match=msg):
        make(t)
    assert launches(tdev) == before


@st.composite
def movement_chains(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    steps = []
    cur = shape
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["permute", "flip", "slice", "reshape", "expand", "pad"]))
        if kind == "permute":
            steps.append((kind, tuple(draw(st.permutations(range(len(cur)))))))
        elif kind == "flip":
            steps.append((kind, draw(st.integers(0, len(cur) - 1))))
        elif kind == "slice":
            ax, step = draw(st.integers(0, len(cur) - 1)), draw(st.sampled_from([1, 2, -1, -2]))
            steps.append((kind, (slice(None),) * ax + (slice(None, None, step),)))
        elif kind == "reshape":
            steps.append((kind, (-1,) if len(cur) > 1 else (1, cur[0])))
        elif kind == "expand":
            steps.append((kind, (2,) + cur))
        else:
            steps.append((kind, draw(st.integers(0, 2))))
        arr = _apply_np(np.zeros(cur), steps[-1])
        cur = arr.shape
    return shape, steps


def _apply_np(a, step):
    kind, arg = step
    return {"permute": lambda: a.transpose(arg), "flip": lambda: np.flip(a, arg), "slice": lambda: a[arg],
            "reshape": lambda: a.reshape(arg), "expand": lambda: np.broadcast_to(a, arg),
            "pad": lambda: np.pad(a, arg, constant_values=-7)}[kind]()


def _apply_t(t, step):
    kind, arg = step
    return {"permute": lambda: t.permute(*arg), "flip": lambda: t.flip(arg), "slice": lambda: t[arg],
            "reshape": lambda: t.reshape(*arg), "expand": lambda: t.expand(*arg),
            "pad": lambda: t.pad(arg, value=-7)}[kind]()


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])   # a timing check on a shared CI box, not a property
@given(chain=movement_chains())
def test_random_movement_chains_match_numpy(tdev, chain):
    shape, steps = chain
    ref = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    t = Tensor(ref, device=tdev)
    for step in steps:
        ref, t = _apply_np(ref, step), _apply_t(t, step)
    assert_bits((t * 3 + 1).numpy(), ref * 3 + 1)  # through a kernel reading the final view
    assert_bits(t.numpy(), ref)
