"""Views, broadcasting and index checks (gputwin/tensor/shape.py): pure shape logic, no device."""
import numpy as np
import pytest

from gputwin.tensor.shape import ShapeError, View, broadcast_shapes, normalize_axes

BASE = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)


def _materialize(view: View) -> np.ndarray:
    """What a kernel reading `view` from BASE's storage sees."""
    flat = BASE.reshape(-1)
    idx = np.full(view.shape, view.offset)
    for d, st in enumerate(view.strides):
        shape = [1] * len(view.shape)
        shape[d] = view.shape[d]
        idx = idx + np.arange(view.shape[d]).reshape(shape) * st
    return flat[idx]


KEYS = [(slice(None), 1), (Ellipsis, slice(None, None, -2)), (1, None, slice(1, 3), -1),
        (slice(None, None, 2), slice(2, 0, -1)), (0, 0, 0, 0), (slice(5, 9),), (None, Ellipsis, None)]


@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_index_matches_numpy_basic_indexing(key):
    view = View.contiguous(BASE.shape).index(key)
    np.testing.assert_array_equal(_materialize(view), BASE[key])


@pytest.mark.parametrize("key,msg", [((0, 0, 0, 0, 0), "too many indices"), ((3,), "out of bounds"),
                                     ((Ellipsis, Ellipsis), "single ellipsis"), (("a",), "unsupported index"),
                                     ((True,), "unsupported index")])
def test_bad_index_raises_index_error(key, msg):
    with pytest.raises(IndexError, match=msg):
        View.contiguous(BASE.shape).index(key)


def test_flip_and_permute_match_numpy():
    v = View.contiguous(BASE.shape).flip((0, 3)).permute((2, 0, 3, 1))
    np.testing.assert_array_equal(_materialize(v), np.flip(BASE, (0, 3)).transpose(2, 0, 3, 1))


def test_expand_gives_zero_strides():
    v = View.contiguous((3, 1)).expand((2, 3, 4))
    assert v.strides == (0, 1, 0)


RESHAPES = [((1, 0, 2, 3), (3, 2, 20)), ((1, 0, 2, 3), (6, 20)), ((0, 1, 3, 2), (6, 5, 4)),
            ((0, 1, 3, 2), (2, 3, 5, 2, 2)), ((0, 2, 1, 3), (8, 15)), ((0, 1, 2, 3), (1, 120, 1))]


@pytest.mark.parametrize("perm,shape", RESHAPES)
def test_reshape_of_strided_view_is_a_view_or_asks_for_a_copy(perm, shape):
    v = View.contiguous(BASE.shape).permute(perm)
    ref = BASE.transpose(perm)
    out = v.reshape(shape)
    can_view = np.shares_memory(ref.reshape(shape), BASE)  # numpy copies exactly when a view is impossible
    assert (out is not None) == can_view
    if out is not None:
        np.testing.assert_array_equal(_materialize(out), ref.reshape(shape))


def test_broadcast_shapes_matches_numpy_and_names_both_shapes():
    assert broadcast_shapes((3, 1, 5), (4, 1), ()) == np.broadcast_shapes((3, 1, 5), (4, 1), ())
    with pytest.raises(ShapeError, match=r"\(2, 3\) and \(4,\)"):
        broadcast_shapes((2, 3), (4,))


def test_axes_are_checked():
    assert normalize_axes((-1, 0), 3) == (0, 2)
    with pytest.raises(ShapeError, match="out of range"):
        normalize_axes(3, 3)
    with pytest.raises(ShapeError, match="repeated"):
        normalize_axes((1, -2), 3)
