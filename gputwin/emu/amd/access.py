"""Vectorised memory primitives on (byte buffer, byte offsets): gathers, scatters and atomics.

The instruction families (vmem.py, lds.py) translate lane addresses into a backing uint8 buffer (a
mapped region, the LDS of the workgroups, private scratch) plus one byte offset per active lane, then
call these. Dword accesses use a uint32 view when everything is 4-byte aligned (the common case) and a
byte gather otherwise. Offsets are one start per lane (N,), or, for layouts where a lane's bytes are not
contiguous (swizzled scratch, scratch.py), one offset per dword or per byte of the access (N, pieces).
Lanes are processed in (wave, lane) order: where several lanes store to the same
address the last one wins, and atomics on one address apply one after another in that order.
"""
from __future__ import annotations

import numpy as np

U32, U64 = np.uint32, np.uint64


def _words(buf: np.ndarray, offs: np.ndarray, dtype):
    """A typed view of `buf` and element indices for `offs`, or None when unaligned."""
    size = np.dtype(dtype).itemsize
    if buf.ctypes.data % size or (np.bitwise_or.reduce(offs) if offs.size else 0) % size:
        return None
    return np.frombuffer(buf, dtype, count=buf.size // size), offs // size


def _rows(buf: np.ndarray, offs: np.ndarray, ndw: int):
    """buf as (rows, ndw) uint32 and each offset's row, when every offset (and buf) is aligned to a row:
    a row gather is one contiguous copy per lane, ~15x faster than gathering an (N, ndw) index grid."""
    size = 4 * ndw
    if ndw not in (2, 4) or buf.ctypes.data % size or buf.size % size:
        return None
    if offs.size and np.bitwise_or.reduce(offs) % size:
        return None
    return np.frombuffer(buf, U32).reshape(-1, ndw), offs >> (size.bit_length() - 1)


def _byte_offsets(offs: np.ndarray, nbytes: int) -> np.ndarray:
    """(N, nbytes): the offset of every byte of each lane's access, from starts (N,) or pieces (N, k)."""
    if offs.ndim == 1:
        return offs[:, None] + np.arange(nbytes)
    piece = nbytes // offs.shape[1]
    return (offs[:, :, None] + np.arange(piece)).reshape(offs.shape[0], nbytes)


def _dword_pieces(buf: np.ndarray, offs: np.ndarray, ndw: int):
    """(uint32 view, (N, ndw) indices) for pieces that are aligned dwords, else None."""
    if offs.shape[1] != ndw or buf.ctypes.data % 4 or (offs.size and np.bitwise_or.reduce(offs.ravel()) % 4):
        return None
    return np.frombuffer(buf, U32, count=buf.size // 4), offs >> 2


def gather(buf: np.ndarray, offs: np.ndarray, ndw: int) -> np.ndarray:
    """uint32 (N, ndw): ndw consecutive dwords at each byte offset."""
    if offs.ndim == 2:
        w = _dword_pieces(buf, offs, ndw)
        if w is not None:
            return np.take(w[0], w[1])
        return np.ascontiguousarray(buf[_byte_offsets(offs, 4 * ndw)]).view("<u4").reshape(-1, ndw)
    rows = _rows(buf, offs, ndw)
    if rows is not None:
        return np.take(rows[0], rows[1], axis=0)
    w = _words(buf, offs, U32)
    if w is not None:
        view, idx = w
        if ndw == 1:
            return np.take(view, idx)[:, None]
        return np.stack([np.take(view, idx + k) for k in range(ndw)], axis=1)
    b = buf[offs[:, None] + np.arange(4 * ndw)]
    return np.ascontiguousarray(b).view("<u4").reshape(-1, ndw)


def scatter(buf: np.ndarray, offs: np.ndarray, data: np.ndarray) -> None:
    """Store uint32 data (N, ndw) at each byte offset."""
    ndw = data.shape[1]
    if offs.ndim == 2:
        w = _dword_pieces(buf, offs, ndw)
        if w is not None:
            w[0][w[1]] = data
        else:
            buf[_byte_offsets(offs, 4 * ndw)] = np.ascontiguousarray(data, "<u4").view(np.uint8).reshape(-1, 4 * ndw)
        return
    rows = _rows(buf, offs, ndw)
    if rows is not None:        # aligned rows never partly overlap: the last lane to a row wins, as below
        rows[0][rows[1]] = data
        return
    w = _words(buf, offs, U32)
    if w is not None:
        view, idx = w
        if ndw == 1:
            view[idx] = data[:, 0]
        else:
            view[idx[:, None] + np.arange(ndw)] = data
        return
    buf[offs[:, None] + np.arange(4 * ndw)] = np.ascontiguousarray(data, "<u4").view(np.uint8).reshape(-1, 4 * ndw)


def gather_bytes(buf: np.ndarray, offs: np.ndarray, nbytes: int) -> np.ndarray:
    """uint32 (N,): an nbytes (1 or 2) little-endian value at each offset, zero-extended."""
    if offs.ndim == 2:          # one offset per byte
        b = buf[offs].astype(U32)
        return b[:, 0] if nbytes == 1 else b[:, 0] | (b[:, 1] << U32(8))
    if nbytes == 1:
        return buf[offs].astype(U32)
    return buf[offs].astype(U32) | (buf[offs + 1].astype(U32) << U32(8))


def scatter_bytes(buf: np.ndarray, offs: np.ndarray, values: np.ndarray, nbytes: int) -> None:
    if offs.ndim == 2:          # one offset per byte
        buf[offs] = ((values[:, None] >> (U32(8) * np.arange(nbytes, dtype=U32))) & U32(0xFF)).astype(np.uint8)
        return
    buf[offs] = (values & U32(0xFF)).astype(np.uint8)
    if nbytes == 2:
        buf[offs + 1] = ((values >> U32(8)) & U32(0xFF)).astype(np.uint8)


# --- atomics ---------------------------------------------------------------------------------------
def _f32(x):
    return x.view(np.float32)


def _inc(old, src):
    return np.where(old >= src, old.dtype.type(0), old + old.dtype.type(1))


def _dec(old, src):
    return np.where((old == 0) | (old > src), src, old - old.dtype.type(1))


def _signed(dt):
    return np.int32 if dt == U32 else np.int64


def _float(x):
    return x.view(np.float32 if x.dtype == U32 else np.float64)


def _fminmax(o, s, want_max: bool):
    """Float atomic min/max on bit patterns, as LLVM's atomicrmw fmin/fmax (minNum/maxNum) that it
    lowers them from: a NaN operand yields the other one (memory is left as is when both are NaN),
    -0 orders below +0, denormals are kept. DECISION: to confirm on hardware."""
    fo, fs = _float(o), _float(s)
    sign_o, sign_s = np.signbit(fo), np.signbit(fs)
    if want_max:
        better = (fs > fo) | ((fs == fo) & sign_o & ~sign_s)
    else:
        better = (fs < fo) | ((fs == fo) & sign_s & ~sign_o)
    return np.where(~np.isnan(fs) & (better | np.isnan(fo)), s, o)


# op -> new value from (old, src, cmp); all typed unsigned (u32 or u64)
ATOMIC_OPS = {
    "swap": lambda o, s, c: s,
    "cmpswap": lambda o, s, c: np.where(o == c, s, o),
    "mskor": lambda o, s, c: (o & ~s) | c,
    "add": lambda o, s, c: o + s,
    "sub": lambda o, s, c: o - s,
    "rsub": lambda o, s, c: s - o,
    "csub": lambda o, s, c: np.where(o > s, o - s, o.dtype.type(0)),
    "min_u": lambda o, s, c: np.minimum(o, s),
    "max_u": lambda o, s, c: np.maximum(o, s),
    "min_i": lambda o, s, c: np.minimum(o.view(_signed(o.dtype)), s.view(_signed(o.dtype))).view(o.dtype),
    "max_i": lambda o, s, c: np.maximum(o.view(_signed(o.dtype)), s.view(_signed(o.dtype))).view(o.dtype),
    "and": lambda o, s, c: o & s,
    "or": lambda o, s, c: o | s,
    "xor": lambda o, s, c: o ^ s,
    "inc": lambda o, s, c: _inc(o, s),
    "dec": lambda o, s, c: _dec(o, s),
    "add_f32": lambda o, s, c: (_f32(o) + _f32(s)).view(U32),
    # float forms (32- or 64-bit by the operand width): compare as floats, so +0 == -0 and NaN != NaN
    "min_f": lambda o, s, c: _fminmax(o, s, False),
    "max_f": lambda o, s, c: _fminmax(o, s, True),
    "cmpswap_f": lambda o, s, c: np.where(_float(o) == _float(c), s, o),
}
# ufuncs that apply duplicates correctly with .at when no lane needs the old value
_AT = {"add": np.add, "sub": np.subtract, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
       "min_u": np.minimum, "max_u": np.maximum}


def atomic(buf: np.ndarray, offs: np.ndarray, op: str, src: np.ndarray, cmp: np.ndarray | None,
           wide: bool, want_old: bool) -> np.ndarray | None:
    """Apply `op` lane by lane at byte offsets `offs`; returns the pre-op values when want_old."""
    dt = U64 if wide else U32
    w = _words(buf, offs, dt)
    if w is None:
        raise ValueError("misaligned atomic")  # the callers fault before this (alignment is checked)
    view, idx = w
    fn = ATOMIC_OPS[op]
    uniq, first, inverse, counts = np.unique(idx, return_index=True, return_inverse=True, return_counts=True)
    if counts.max(initial=0) <= 1:
        old = view[idx]
        view[idx] = fn(old, src, cmp)
        return old if want_old else None
    if not want_old and op in _AT:
        _AT[op].at(view, idx, src)
        return None
    if op in ("add", "sub"):
        # wrapping integer add: old value per lane = base + exclusive running sum within its address
        order = np.argsort(inverse, kind="stable")
        vals = (src if op == "add" else (~src + dt(1)))[order]
        run = np.cumsum(vals, dtype=dt)
        seg = inverse[order]
        start = np.r_[0, np.flatnonzero(np.diff(seg)) + 1]
        before = (run - vals) - np.repeat(run[start] - vals[start], np.diff(np.r_[start, seg.size]))
        old_sorted = view[uniq][seg] + before
        view[uniq] = old_sorted[start] + (run[np.r_[start[1:], seg.size] - 1] - (run[start] - vals[start]))
        old = np.empty_like(old_sorted)
        old[order] = old_sorted
        return old if want_old else None
    # general case: apply in rounds, each round the earliest pending lane of every address
    old = np.empty(idx.size, dt)
    rank = np.empty(idx.size, np.int64)
    order = np.argsort(inverse, kind="stable")
    seg = inverse[order]
    starts = np.r_[0, np.flatnonzero(np.diff(seg)) + 1]
    rank[order] = np.arange(idx.size) - np.repeat(starts, np.diff(np.r_[starts, seg.size]))
    for r in range(int(counts.max())):
        sel = np.flatnonzero(rank == r)
        o = view[idx[sel]]
        old[sel] = o
        view[idx[sel]] = fn(o, src[sel], None if cmp is None else cmp[sel])
    return old if want_old else None
