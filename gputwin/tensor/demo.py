"""`gputwin demo`: a small real workload on one device, checked against numpy.

A two-layer MLP forward pass (matmul + bias + gelu + matmul + bias) and one softmax attention block
(q k^T / sqrt(d), softmax, @ v). Every op runs as compiled kernels through the device API; the
result is compared with a float64 numpy evaluation of the same math.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from gputwin.device import emulated_gpu
from gputwin.tensor import get_context, randn

BATCH, D_IN, D_HIDDEN, D_OUT = 32, 64, 128, 16
SEQ, D_HEAD = 16, 32
TOLERANCE = 1e-4  # relative to the largest reference magnitude: float32 + the documented ULP bounds


def _gelu(x):
    return x / (1.0 + np.exp(-2 * 0.7978845608028654 * (x + 0.044715 * x ** 3)))  # = 0.5 x (1 + tanh(z))


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@dataclass
class DemoResult:
    seconds: float
    errors: dict[str, float]

    @property
    def ok(self) -> bool:
        return all(e <= TOLERANCE for e in self.errors.values())


def run(device=None, seed: int = 0) -> DemoResult:
    """Run both blocks once; returns wall time and each output's error relative to numpy."""
    ctx = get_context(device)
    t0 = time.perf_counter()
    x, w1, w2 = (randn(*s, seed=seed + i, device=ctx) for i, s in
                 enumerate([(BATCH, D_IN), (D_IN, D_HIDDEN), (D_HIDDEN, D_OUT)]))
    b1, b2 = randn(D_HIDDEN, seed=seed + 3, device=ctx), randn(D_OUT, seed=seed + 4, device=ctx)
    w1, w2 = w1 * (1 / np.sqrt(D_IN)), w2 * (1 / np.sqrt(D_HIDDEN))
    mlp = ((x @ w1 + b1).gelu() @ w2 + b2).numpy()

    q, k, v = (randn(SEQ, D_HEAD, seed=seed + 5 + i, device=ctx) for i in range(3))
    attn = ((q @ k.T) * (1 / np.sqrt(D_HEAD))).softmax(-1) @ v
    attn_np = attn.numpy()
    seconds = time.perf_counter() - t0

    f = {name: t.numpy().astype(np.float64) for name, t in
         dict(x=x, w1=w1, w2=w2, b1=b1, b2=b2, q=q, k=k, v=v).items()}
    ref_mlp = _gelu(f["x"] @ f["w1"] + f["b1"]) @ f["w2"] + f["b2"]
    ref_attn = _softmax((f["q"] @ f["k"].T) / np.sqrt(D_HEAD)) @ f["v"]
    errors = {name: float(np.abs(got - ref).max() / np.abs(ref).max())
              for name, got, ref in (("mlp", mlp, ref_mlp), ("attention", attn_np, ref_attn))}
    return DemoResult(seconds, errors)


def report(device=None, seed: int = 0, out=print) -> int:
    """What `gputwin demo` prints: timings and the per-kernel table; 0 when both outputs match numpy."""
    out("step 1/3: opening the device")
    ctx = get_context(device)
    out(f"device: {ctx.spec} ({getattr(ctx.dev, 'name', '?')}, arch {getattr(ctx.dev, 'arch', '?')})")
    out(f"mlp {BATCH}x{D_IN} -> {D_HIDDEN} -> {D_OUT}, attention seq {SEQ} x d {D_HEAD}")
    out("step 2/3: cold run (compiles and loads every kernel)")
    cold = run(ctx, seed)
    before = {name: (s.launches, s.seconds) for name, s in ctx.stats.kernels.items()}
    out("step 3/3: warm run (programs cached), then the check against numpy")
    warm = run(ctx, seed)
    out(f"cold run (compiles): {cold.seconds:.3f} s; warm run: {warm.seconds:.3f} s")
    out(f"programs built: {ctx.stats.programs_built}, reused: {ctx.stats.program_hits}, "
        f"compile+load time {ctx.stats.compile_seconds:.3f} s, host<->device copies {ctx.stats.copy_seconds:.3f} s")
    out("per-kernel time in the warm run (launches, total ms):")
    rows = sorted(((s.seconds - before.get(n, (0, 0.0))[1], s.launches - before.get(n, (0, 0))[0], n)
                   for n, s in ctx.stats.kernels.items()), reverse=True)
    for sec, launches, name in rows:
        if launches:
            out(f"  {name:<40} {launches:>3}  {sec * 1e3:8.2f}")
    gpu = emulated_gpu(ctx.dev)
    if gpu is not None:
        st = gpu.stats
        if hasattr(st, "dispatches"):     # AMD: dispatches of waves
            out(f"emulator ({gpu.arch}), both runs: {st.dispatches} dispatches, {st.waves} waves, "
                f"{st.wave_insts} wave-instructions, {st.lane_ops} lane-operations")
        else:                             # NV: QMD launches of warps
            out(f"emulator ({gpu.arch}), both runs: {st.launches} launches, {st.warps} warps, "
                f"{st.warp_insts} warp-instructions, {st.lane_ops} lane-operations")
    for name, err in warm.errors.items():
        out(f"{name}: max error vs numpy (relative) {err:.2e} ({'ok' if err <= TOLERANCE else 'MISMATCH'})")
    return 0 if cold.ok and warm.ok else 1

