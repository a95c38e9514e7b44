"""numpy indexing on the device under test: integer-array and boolean-mask reads (lazy gathers),
assignment in place, nonzero, copy (gputwin/tensor/indexing.py)."""
import numpy as np
import pytest

from gputwin.tensor import ShapeError, Tensor, zeros
from gputwin.tensor import dtypes as D
from tests.tensor.bitcheck import assert_bits

X = (np.arange(60, dtype=np.float32).reshape(3, 4, 5) - 30) * np.float32(0.5)


def launches(tdev) -> int:
    return sum(s.launches for s in tdev.stats.kernels.values())


KEYS = {
    "int-list": [2, 0, -1, 2],
    "int-array-2d": np.array([[0, 1], [2, -3]]),
    "slice-then-array": (slice(None), [1, 3]),
    "arrays-apart": ([0, 2], slice(1, 3), [4, -5]),          # not adjacent: the broadcast dims go first
    "int-and-array": (0, slice(None), [1, 2]),               # an int counts as an index array
    "adjacent-with-int": (slice(None), 1, [0, 4]),
    "broadcast-arrays": (np.array([[0], [2]]), [1, 3]),
    "mask-full": X > 5,
    "mask-leading": (X[:, 0, 0] > -20,),
    "mask-middle": (slice(None), X[0, :, 0] > -28),
    "none-ellipsis": (None, [1], Ellipsis, 2),
    "ellipsis-mask": (Ellipsis, np.array([True, False, True, False, True])),
    "empty": ([],),
}


@pytest.mark.parametrize("key", KEYS.values(), ids=KEYS.keys())
def test_advanced_indexing_matches_numpy(tdev, key):
    t = Tensor(X, device=tdev)
    assert_bits(t[key].numpy(), X[key])


def test_index_tensors_on_the_device_and_of_a_lazy_source(tdev):
    t = Tensor(X, device=tdev) * 2 + 1
    idx = Tensor(np.array([2, -1, 0], np.int32), device=tdev)
    mask = t > 10
    assert_bits(t[idx, 1].numpy(), (X * 2 + 1)[[2, -1, 0], 1])
    assert_bits(t[mask].numpy(), (X * 2 + 1)[(X * 2 + 1) > 10])
    assert_bits(t[idx].argsort(axis=0).numpy(), np.argsort((X * 2 + 1)[[2, -1, 0]], axis=0, kind="stable"))


def test_a_gather_fuses_with_what_follows(tdev):
    t = Tensor(X, device=tdev)
    idx = Tensor(np.array([1, 0], np.int64), device=tdev)
    before = launches(tdev)
    got = (t[idx] * 3 - 1).numpy()
    assert launches(tdev) == before + 3   # the index's min and max (bounds check), then one fused kernel
    assert_bits(got, X[[1, 0]] * 3 - 1)


@pytest.mark.parametrize("key, words", [
    ([0, 3], "index 3 is out of bounds for axis 0 with size 3"),
    ((slice(None), [-5]), "index -5 is out of bounds for axis 1 with size 4"),
    ((np.zeros(4, bool),), "boolean index of shape (4,) does not match"),
    ([0.5], "integer (or boolean) type"),
], ids=["high", "low", "mask-shape", "float"])
def test_bad_host_indices_raise_before_any_kernel(tdev, key, words):
    t = Tensor(X, device=tdev) + 1
    before = launches(tdev)
    with pytest.raises(IndexError, match=words.replace("(", r"\(").replace(")", r"\)")):
        t[key]
    assert launches(tdev) == before


def test_bad_device_index_is_found_before_the_gather(tdev):
    t = Tensor(X, device=tdev)
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 3"):
        t[Tensor(np.array([0, 7]), device=tdev)]


@pytest.mark.parametrize("dtype", [D.float32, D.int32, D.bool_, D.float16])
def test_nonzero_matches_numpy(tdev, dtype):
    x = (X > 0) if dtype == D.bool_ else (X * (X > 3)).astype(dtype)
    got = Tensor(x, device=tdev).nonzero()
    want = np.nonzero(x)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_bits(g.numpy(), w.astype(np.int64))


def test_long_mask_selects_through_a_chunked_prefix_sum(tdev):
    x = np.random.default_rng(3).standard_normal(1500).astype(np.float32)
    t = Tensor(x, device=tdev)
    assert_bits(t[t > 0.5].numpy(), x[x > 0.5])


def test_setitem_basic_advanced_and_masked_writes_like_numpy(tdev):
    y, u = X.copy(), Tensor(X, device=tdev)
    view, pending = u[1], u + 1          # a view sees the writes; a pending result keeps the old values
    y[1, 2] = 7
    u[1, 2] = 7
    y[:, :, 0] = np.arange(4)
    u[:, :, 0] = np.arange(4)
    y[y > 5] = -1
    u[u > 5] = -1
    y[[0, 2], [1, 3], 0] = [100, 200]
    u[[0, 2], [1, 3], 0] = Tensor(np.float32([100, 200]), device=tdev)
    y[1:, 0] = y[:-1, 0]                 # overlapping source and destination
    u[1:, 0] = u[:-1, 0]
    y[..., ::-2] *= 2
    u[..., ::-2] *= 2
    assert_bits(u.numpy(), y)
    assert_bits(view.numpy(), y[1])
    assert_bits(pending.numpy(), X + 1)


def test_setitem_casts_like_numpy_and_checks_shapes(tdev):
    i = Tensor(np.zeros(4, np.int32), device=tdev)
    i[1:3] = Tensor(np.float32([2.7, -2.7]), device=tdev)   # unsafe cast on assignment, as numpy
    i[3] = 9.9
    assert_bits(i.numpy(), np.array([0, 2, -2, 9], np.int32))
    u = Tensor(np.zeros(3, np.uint8), device=tdev)
    with pytest.raises(OverflowError):
        u[0] = 300
    with pytest.raises(ShapeError, match="could not broadcast"):
        u[:2] = np.ones(3, np.uint8)
    with pytest.raises(ValueError, match="read-only"):
        Tensor(np.ones(3, np.float32), device=tdev).broadcast_to((2, 3))[0, 0] = 1


def test_setitem_on_a_lazy_tensor_realizes_it_first(tdev):
    a = Tensor(X, device=tdev)
    b = a * 2
    b[0] = 0
    assert_bits(a.numpy(), X)
    want = X * 2
    want[0] = 0
    assert_bits(b.numpy(), want)
    z = zeros(2, 3, device=tdev)
    z[:, 1] = 5
    assert_bits(z.numpy(), np.array([[0, 5, 0], [0, 5, 0]], np.float32))


def test_ravel_is_a_view_as_in_numpy(tdev):
    t = Tensor(X, device=tdev)
    r = t.ravel()
    r[0] = 42
    assert t.numpy()[0, 0, 0] == 42


def test_copy_has_its_own_storage(tdev):
    a = Tensor(X, device=tdev)
    c = a.copy()
    c[0, 0, 0] = 99
    assert a.numpy()[0, 0, 0] == X[0, 0, 0] and c.numpy()[0, 0, 0] == 99


@pytest.mark.parametrize("make", [
    lambda t: t.astype(t.dtype), lambda t: +t, lambda t: abs(t), lambda t: t.floor(), lambda t: t.round(),
    lambda t: t.sum(axis=()), lambda t: np.positive(t), lambda t: np.reshape(t, (6,), copy=True),
    lambda t: t.flatten(),
], ids=["astype", "pos", "abs", "floor", "round", "sum-no-axes", "np-positive", "reshape-copy", "flatten"])
def test_results_numpy_copies_do_not_alias_their_input(tdev, make):
    """Where numpy returns a copy and there is nothing to compute, writing one must not change the other."""
    u = np.arange(6, dtype=np.uint8).reshape(2, 3)
    t = Tensor(u, device=tdev)
    r = make(t)
    r[...] = 9
    t[0, 0] = 7
    assert_bits(t.numpy(), np.where(np.arange(6).reshape(2, 3) == 0, 7, u).astype(np.uint8))
    assert (r.numpy() == 9).all()


def test_in_place_operators_write_the_storage_like_numpy(tdev):
    y, t = X.copy(), Tensor(X, device=tdev)
    view, yv = t[1], y[1]
    before = launches(tdev)
    t += 1
    y += 1
    assert launches(tdev) == before + 1     # one kernel, reading and writing each element in place
    view *= 3
    yv *= 3
    t[..., ::-2] //= 2
    y[..., ::-2] //= 2
    assert_bits(t.numpy(), y)
    assert_bits(view.numpy(), yv)
    i = Tensor(np.array([1, 2], np.int32), device=tdev)
    with pytest.raises(TypeError, match="same_kind"):
        i += 1.5
    u = Tensor(np.array([250], np.uint8), device=tdev)
    u += 10
    assert_bits(u.numpy(), np.array([4], np.uint8))    # wraps, as numpy
    p = Tensor(X, device=tdev) * 2                     # pending: takes the new expression, no kernel
    alias = p
    p -= 1
    assert alias is p
    assert_bits(alias.numpy(), X * 2 - 1)
