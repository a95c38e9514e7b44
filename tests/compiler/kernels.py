"""Kernels shared by the compiler tests (CPU, emulator and device runs): reductions, matmul, shared memory."""
from gputwin.compiler import ir


def row_sum(dt=ir.float32):
    k = ir.KernelBuilder("row_sum", local_size=(32, 1, 1))
    x, out = k.buffer("x", dt), k.buffer("out", dt)
    rows, cols = k.scalar("rows", ir.int32), k.scalar("cols", ir.int32)
    r = k.global_id(0)
    with k.if_(r < rows):
        out[r] = k.reduce("add", 0.0, 0, cols, lambda j: x[r * cols + j])
    return k.build()


def col_max():
    """Reduction over the leading axis of a strided view: out[c] = max_r x[r*stride + c]."""
    k = ir.KernelBuilder("col_max", local_size=(32, 1, 1))
    x, out = k.buffer("x", ir.float32), k.buffer("out", ir.float32)
    rows, cols, stride = (k.scalar(s, ir.int32) for s in ("rows", "cols", "stride"))
    c = k.global_id(0)
    with k.if_(c < cols):
        out[c] = k.reduce("max", float("-inf"), 0, rows, lambda r: x[r * stride + c])
    return k.build()


def matmul(batched=False, use_fma=False):
    """C[b, i, j] = sum_k A[b, i, k] * B[b, k, j] in k order; 2-D grid over (j, i), axis 2 = batch."""
    k = ir.KernelBuilder("bmm" if batched else "matmul", local_size=(8, 8, 1))
    a, b, c = k.buffer("a", ir.float32), k.buffer("b", ir.float32), k.buffer("c", ir.float32)
    m, n, kk = k.scalar("m", ir.int32), k.scalar("n", ir.int32), k.scalar("k", ir.int32)
    j, i = k.global_id(0), k.global_id(1)
    bt = k.group_id(2) if batched else 0
    with k.if_((i < m) & (j < n)):
        acc = k.var(ir.float32, 0.0)
        with k.range(kk) as p:
            x, y = a[(bt * m + i) * kk + p], b[(bt * kk + p) * n + j]
            acc.set(ir.fma(x, y, acc.get()) if use_fma else acc.get() + x * y)
        c[(bt * m + i) * n + j] = acc.get()
    return k.build()


def shared_reverse():
    """Each workgroup reverses its 64-element block through shared memory (needs the barrier)."""
    k = ir.KernelBuilder("shared_reverse", local_size=(64, 1, 1))
    x, out = k.buffer("x", ir.int32), k.buffer("out", ir.int32)
    lds = k.shared("lds", ir.int32, 64)
    t, g = k.local_id(0), k.group_id(0)
    lds[t] = x[g * 64 + t] * 3
    k.barrier()
    out[g * 64 + t] = lds[63 - t]
    return k.build()


def fused_chain():
    """A fused elementwise chain over broadcast inputs: out[i, j] = tanh(a[i, j] * s[j] + b[i]) (f16 out)."""
    k = ir.KernelBuilder("fused", local_size=(64, 1, 1))
    a, s, b = k.buffer("a", ir.float32), k.buffer("s", ir.float32), k.buffer("b", ir.bfloat16)
    out = k.buffer("out", ir.float16)
    rows, cols = k.scalar("rows", ir.int32), k.scalar("cols", ir.int32)
    g = k.global_id(0)
    with k.if_(g < rows * cols):
        i, j = g // cols, g % cols
        v = a[g] * s[j] + b[i].cast(ir.float32)
        out[g] = ir.tanh(v).cast(ir.float16)
    return k.build()


def tiled_accumulate(rounds: int = 5):
    """Each workgroup of 64 sums, over `rounds` tiles, tile r reversed and scaled by r + 1: a uniform_range
    whose body fills shared memory, waits at a barrier and reads it, with the accumulator a top-level
    variable that lives through every barrier. out[g*64 + t] = sum_r x[(g*rounds + r)*64 + 63 - t] * (r+1)."""
    k = ir.KernelBuilder("tiled_accumulate", local_size=(64, 1, 1))
    x, out = k.buffer("x", ir.float32), k.buffer("out", ir.float32)
    tile = k.shared("tile", ir.float32, 64)
    t, g = k.local_id(0), k.group_id(0)
    acc = k.var(ir.float32, -0.0)
    with k.uniform_range(rounds) as r:
        tile[t] = x[(g * rounds + r) * 64 + t]
        k.barrier()
        acc.set(acc.get() + tile[63 - t] * (r + 1).cast(ir.float32))
    out[g * 64 + t] = acc.get()
    return k.build()
