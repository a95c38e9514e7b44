"""f16 VALU throughput with MODE.FP16_OVFL clear and set (python bench/bench_f16_mode.py): one figure per line.

A straight-line kernel of 64 f16 instructions (v_fma_f16, v_add_f16, v_pk_fma_f16 and v_cvt_f16_f32,
16 each) over 256 wave32 waves whose data overflows f16 on a quarter of the lanes; the bit is set by the
kernel descriptor (RSRC1.FP16_OVFL), so the code is identical in both runs.
"""
from __future__ import annotations

import time

import numpy as np

from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.isa import assemble
from gputwin.emu.amd.standalone import Arena

WAVES, LANES = 256, 32
BODY = ["v_fma_f16 v6, v2, v3, v4", "v_add_f16 v7, v2, v3", "v_pk_fma_f16 v8, v2, v3, v4", "v_cvt_f16_f32 v9, v5"]
TEXT = "\n".join(["v_lshlrev_b32 v1, 4, v0", "global_load_b128 v[2:5], v1, s[0:1]", "s_waitcnt vmcnt(0)"]
                 + BODY * 16 + ["global_store_b32 v1, v6, s[2:3]", "s_endpgm"])


def _data() -> np.ndarray:
    n = WAVES * LANES
    rng = np.random.default_rng(5)
    h = rng.uniform(-400, 400, (n, 3)).astype(np.float16)
    h[::4] = np.float16(60000)                               # a quarter of the lanes overflow
    words = np.zeros((n, 4), np.uint32)
    hb = h.view(np.uint16).astype(np.uint32)
    words[:, :3] = hb | hb << 16
    words[:, 3] = rng.uniform(-1e5, 1e5, n).astype(np.float32).view(np.uint32)
    return words


def bench(ovfl: bool, repeat: int = 3) -> float:
    arena = Arena()
    words = _data()
    src, dst = arena.alloc(words.nbytes, words), arena.alloc(words.nbytes)
    d = Dispatch(code_address=0x40000, code=assemble(TEXT, "gfx1100"), grid=(WAVES, 1, 1), block=(LANES, 1, 1),
                 user_sgprs=[src & 0xFFFFFFFF, src >> 32, dst & 0xFFFFFFFF, dst >> 32],
                 rsrc1=0xF0 << 12 | int(ovfl) << 26, rsrc2=4 << 1)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        run_dispatch(arena.mem, d)
        best = min(best, time.perf_counter() - t)
    return len(BODY) * 16 * WAVES * LANES / best / 1e6


if __name__ == "__main__":
    for ovfl in (False, True):
        print(f"f16 ops, FP16_OVFL {'set' if ovfl else 'clear'}: {bench(ovfl):.1f} M lane-ops/s")
