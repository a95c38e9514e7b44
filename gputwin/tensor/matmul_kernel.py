"""matmul as one tiled kernel: shared-memory (LDS) tiles and a block of outputs per work-item.

out[b, i, j] = sum over k of a[b, i, k] * b[b, k, j], each output accumulated by one work-item in
k order, so the bits are those of the sequential rule in docs/tensor.md; tiling only decides which
work-item computes which outputs and how operands reach it. A workgroup of TY x TX work-items (16 x 16
for big results) owns a (TY TM) x (TX TN) block of outputs, each work-item TM x TN of them (register
blocking). Per step of
BK k-values the workgroup copies the A tile (rows x BK) and the B tile (BK x cols) into shared memory,
converted to the accumulator dtype, then every work-item reads its TM + TN operands per k from there.
k-positions past the end read as a = -0.0, b = +0.0 (integers: 0): their product is -0.0 (0), which
added to any accumulator leaves it unchanged, so a ragged last tile needs no separate loop. Rows and
columns past the edge are clamped to the last one when loading and never stored.

With `parts` > 1 (long k, few outputs; docs/tensor.md "two stages") the kernel computes the partial
sums of consecutive k-chunks, stored as out[b, i, j, part]; reduce.matmul sums them in order.
Operands are expressions over their own shapes (batch dims broadcast by index, never materialised),
so the M x N x K product space is never a tensor and sizes are bounded only by the operands' and the
result's own element counts (each < 2**31, so int32 element indices suffice).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gputwin.compiler import ir
from gputwin.tensor.lower import Emitter, multi_index
from gputwin.tensor.spec import Node, stable_symbol

THREADS = 16     # work-items per workgroup along an output axis at most (16 x 16 = 256)
BK = 16          # k-values per shared-memory tile


@dataclass(frozen=True)
class MatmulSpec:
    """One matmul kernel: `a` is an expression over a_shape (a_batch + (n, k)), `b` over b_shape
    (b_batch + (k, m)), both already in acc_dtype; out has batch + (n, m) (+ (parts,)) elements."""
    name: str
    a: Node
    b: Node
    a_shape: tuple[int, ...]
    b_shape: tuple[int, ...]
    batch: tuple[int, ...]
    arg_dtypes: tuple[np.dtype, ...]
    acc_dtype: np.dtype
    out_dtype: np.dtype
    ty: int = THREADS              # work-items per workgroup: ty rows x tx columns of them
    tx: int = THREADS
    tm: int = 4                    # outputs per work-item: tm rows x tn columns
    tn: int = 4
    parts: int = 1                 # k split into this many chunks of `chunk` (the last one shorter)
    chunk: int = 0

    @property
    def symbol(self) -> str:
        return stable_symbol(self)

    @property
    def dims(self) -> tuple[int, int, int]:
        return self.a_shape[-2], self.b_shape[-1], self.a_shape[-1]       # n, m, k

    @property
    def tiles(self) -> tuple[int, int]:
        n, m, _ = self.dims
        return -(-n // (self.ty * self.tm)), -(-m // (self.tx * self.tn))   # row tiles, column tiles


def _axis(d: int) -> tuple[int, int]:
    """(work-items, outputs per work-item) along an output axis of extent d: 16 x 4 for big extents, and
    no more than the extent needs below that (a 20-row result gets 16 x 2, a 3-row one 4 x 1)."""
    if d > 2 * THREADS:
        return THREADS, 4
    if d > THREADS:
        return THREADS, 2
    return 1 << (d - 1).bit_length(), 1


def block_shape(n: int, m: int) -> dict[str, int]:
    """The workgroup (ty x tx work-items) and per-work-item (tm x tn outputs) blocking for an n x m result,
    as MatmulSpec fields: big results get 16 x 16 work-items of 4 x 4, small ones no idle workgroup
    lanes beyond a power of two (a batch of 4 x 4 matmuls runs 16 work-items per matrix, not 256)."""
    (ty, tm), (tx, tn) = _axis(n), _axis(m)
    return dict(ty=ty, tx=tx, tm=tm, tn=tn)


def launch_dims(spec: MatmulSpec):
    rows, cols = spec.tiles
    return (rows * cols * math.prod(spec.batch) * spec.parts, 1, 1), (spec.ty * spec.tx, 1, 1)


def _operand_index(bidx: list, shape: tuple[int, ...], batch: tuple[int, ...], last2: list) -> list:
    """Index of an operand whose leading dims broadcast against `batch` (size-1 dims read index 0)."""
    lead = len(batch) - (len(shape) - 2)
    return [0 if s == 1 else bidx[lead + d] for d, s in enumerate(shape[:-2])] + last2


def _clamp(i, hi: int):
    return i if isinstance(i, int) else ir.minimum(i, hi)


def build(spec: MatmulSpec) -> ir.Kernel:
    n, m, kdim = spec.dims
    tm, tn, nthreads = spec.tm, spec.tn, spec.ty * spec.tx
    bm, bn = spec.ty * tm, spec.tx * tn
    acc_dt = ir.dtype(spec.acc_dtype)
    k = ir.KernelBuilder(spec.symbol, local_size=(nthreads, 1, 1))
    out = k.buffer("out", ir.dtype(spec.out_dtype))
    bufs = [k.buffer(f"in{i}", ir.dtype(dt)) for i, dt in enumerate(spec.arg_dtypes)]
    a_tile, b_tile = k.shared("a_tile", acc_dt, BK * bm), k.shared("b_tile", acc_dt, BK * bn)

    rows, cols = spec.tiles
    z, tile_row, tile_col = multi_index(k.group_id(0), (math.prod(spec.batch) * spec.parts, rows, cols))
    *bidx, part = [0] * (len(spec.batch) + 1) if isinstance(z, int) else multi_index(z, spec.batch + (spec.parts,))
    lid = k.local_id(0)
    ty, tx = _div(lid, spec.tx), _mod(lid, spec.tx)
    row0, col0 = tile_row * bm, tile_col * bn
    chunk = spec.chunk if spec.parts > 1 else kdim
    kstart = part * chunk
    kend = ir.where(part.eq(spec.parts - 1), kdim, kstart + chunk) if spec.parts > 1 else kdim
    zero = -0.0 if acc_dt.is_float else 0
    accs = [[k.var(acc_dt, zero, f"acc{r}_{c}") for c in range(tn)] for r in range(tm)]

    em = Emitter(k, bufs, [])

    def fill(tile, expr, shape, count, along_k: bool, pad):
        """Copy this step's tile of an operand into shared memory: `count` elements per work-item."""
        for q in range(count):
            e = lid + q * nthreads
            if along_k:                 # a tile: rows x BK, stored k-major (tile[kk * bm + row])
                other, kk, width = _div(e, BK), _mod(e, BK), bm
                last2 = [_clamp(row0 + other, n - 1), None]
            else:                       # b tile: BK x cols, stored k-major (tile[kk * bn + col])
                kk, other, width = _div(e, bn), _mod(e, bn), bn
                last2 = [None, _clamp(col0 + other, m - 1)]
            kx = k0 + kk
            last2[last2.index(None)] = _clamp(kx, kdim - 1)
            em.idx = _operand_index(bidx, shape, spec.batch, last2)
            value = em.emit(expr)
            tile[kk * width + other] = ir.where(kx < kend, value, ir.const(pad, acc_dt))

    with k.uniform_range(-(-chunk // BK)) as step:
        k0 = kstart + step * BK
        fill(a_tile, spec.a, spec.a_shape, bm * BK // nthreads, True, zero)
        fill(b_tile, spec.b, spec.b_shape, bn * BK // nthreads, False, 0)
        k.barrier()
        for kk in range(BK):
            av = [a_tile[kk * bm + ty * tm + r] for r in range(tm)]
            bv = [b_tile[kk * bn + tx * tn + c] for c in range(tn)]
            for r in range(tm):
                for c in range(tn):
                    accs[r][c].set(accs[r][c].get() + av[r] * bv[c])

    out_dt = ir.dtype(spec.out_dtype)
    for r in range(tm):
        i = row0 + ty * tm + r
        for c in range(tn):
            j = col0 + tx * tn + c
            with k.if_((i < n) & (j < m)):
                flat = (_flat(bidx, spec.batch) * n + i) * m + j
                addr = flat * spec.parts + part if spec.parts > 1 else flat
                out[addr] = accs[r][c].get().cast(out_dt)
    return k.build()


def _div(x, d: int):
    """x // d for a non-negative x and a power-of-two d (tile extents are): a shift."""
    return x >> (d.bit_length() - 1)


def _mod(x, d: int):
    return x & (d - 1)


def _flat(bidx: list, batch: tuple[int, ...]):
    flat = 0
    for i, s in zip(bidx, batch):
        flat = flat * s + i
    return flat
