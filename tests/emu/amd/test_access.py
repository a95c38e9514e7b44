"""access: gathers/scatters at any alignment and atomics that serialise lanes hitting one address."""
from __future__ import annotations

import numpy as np
import pytest

from gputwin.emu.amd import access

U32, U64 = np.uint32, np.uint64


def serial(op, buf_words, idx, src, cmp=None):
    """Reference: apply the atomic lane by lane in order with Python ints."""
    mem = [int(v) for v in buf_words]
    old = []
    for i, (a, s) in enumerate(zip(idx.tolist(), src.tolist())):
        o = mem[a]
        old.append(o)
        c = None if cmp is None else int(cmp[i])
        signed = lambda v: v - (v >> 31 << 32)  # noqa: E731
        mem[a] = {"add": lambda: (o + s) & 0xFFFFFFFF, "sub": lambda: (o - s) & 0xFFFFFFFF,
                  "max_u": lambda: max(o, s), "min_i": lambda: min(signed(o), signed(s)) & 0xFFFFFFFF,
                  "or": lambda: o | s, "swap": lambda: s, "cmpswap": lambda: s if o == c else o,
                  "inc": lambda: 0 if o >= s else o + 1, "dec": lambda: s if o == 0 or o > s else o - 1}[op]()
    return mem, old


@pytest.mark.parametrize("op", ["add", "sub", "max_u", "min_i", "or", "swap", "cmpswap", "inc", "dec"])
@pytest.mark.parametrize("want_old", [True, False])
def test_contended_atomics_match_lane_by_lane_application(op, want_old):
    rng = np.random.default_rng(sum(map(ord, op)))
    n, words = 300, 8
    idx = rng.integers(0, words, n)                            # heavy contention on 8 addresses
    src = rng.integers(0, 2**32, n, dtype=np.uint64).astype(U32)
    cmp = rng.integers(0, 4, n).astype(U32) if op == "cmpswap" else None
    init = rng.integers(0, 4, words).astype(U32)
    buf = init.copy().view(np.uint8)
    old = access.atomic(buf, 4 * idx, op, src, cmp, False, want_old)
    mem, ref_old = serial(op, init, idx, src, cmp)
    assert buf.view(U32).tolist() == mem
    if want_old:
        assert old.tolist() == ref_old
    else:
        assert old is None


def test_64bit_add_carries_and_returns_running_values():
    buf = np.array([0xFFFFFFFF_FFFFFFF0], U64).view(np.uint8).copy()
    old = access.atomic(buf, np.zeros(4, np.int64), "add", np.full(4, 8, U64), None, True, True)
    assert old.tolist() == [0xFFFFFFFF_FFFFFFF0, 0xFFFFFFFF_FFFFFFF8, 0, 8]
    assert buf.view(U64)[0] == 16


def test_unaligned_gather_and_scatter_fall_back_to_bytes():
    buf = np.arange(64, dtype=np.uint8)
    got = access.gather(buf, np.array([1, 6]), 2)
    assert got.view(np.uint8).reshape(2, 8).tolist() == [list(range(1, 9)), list(range(6, 14))]
    access.scatter(buf, np.array([3]), np.array([[0xAABBCCDD]], U32))
    assert buf[3:7].tolist() == [0xDD, 0xCC, 0xBB, 0xAA]
