"""Decode throughput: instructions per second over a 64 KiB RDNA3 code object.

The code is a realistic instruction mix assembled from a compute-kernel-like template (scalar loads,
VALU with literals and DPP, memory, branches), repeated with varying registers to fill 64 KiB.
Prints one figure per line: `decode_insts_per_s <n>` (every word decoded from scratch: a fresh decoder
cache per run) and `decode_all_warm_insts_per_s <n>` (the same code again: what re-running a cached
kernel costs). Times are this process's CPU time (time.process_time), best of 5, so that other load on
a shared machine distorts them less.
"""
from __future__ import annotations

import random
import time

from gputwin.emu.amd.isa import decode_all
from gputwin.emu.amd.isa.decode import Decoder
from gputwin.emu.amd.isa.rdna3_formats import FORMATS


def code_object(nbytes: int = 64 * 1024, seed: int = 0) -> bytes:
    rng = random.Random(seed)
    F = FORMATS
    out = bytearray()
    while len(out) < nbytes:
        a, b, c = rng.randrange(100), rng.randrange(100), rng.randrange(100)
        words = [
            F["SMEM"].pack(op=1, sdata=a & ~1, sbase=b >> 1, soffset=124, offset=rng.randrange(1 << 10) * 4),
            F["SOPP"].pack(op=9, simm16=rng.randrange(1 << 16)),
            F["VOP2"].pack(op=3, vdst=a, vsrc1=b, src0=256 + c),
            F["VOP2"].pack(op=3, vdst=a, vsrc1=b, src0=255) | rng.randrange(1 << 32) << 32,
            F["VOP3"].pack(op=531, vdst=a, src0=256 + b, src1=256 + c, src2=240 + a % 9),
            F["VOP1"].pack(op=1, vdst=a, src0=250) | (0xFF0000E4 | b) << 32,
            F["FLAT"].pack(op=20, seg=2, addr=a, saddr=b & ~1, vdst=c, offset=rng.randrange(1 << 13)),
            F["DS"].pack(op=14, addr=a, data0=b, data1=c, offset0=4, offset1=8),
            F["VOPC"].pack(op=18, src0=256 + a, vsrc1=b),
            F["SOP2"].pack(op=0, sdst=a, ssrc0=b, ssrc1=c),
            F["SOPP"].pack(op=32, simm16=rng.randrange(1 << 16)),
        ]
        sizes = [8, 4, 4, 8, 8, 8, 8, 8, 4, 4, 4]
        for w, size in zip(words, sizes):
            if len(out) + size > nbytes:
                return bytes(out + F["SOPP"].pack(op=0).to_bytes(4, "little") * ((nbytes - len(out)) // 4))
            out += w.to_bytes(size, "little")
    return bytes(out)


def main() -> None:
    code = code_object()
    n = len(decode_all(code))
    best = 0.0
    for _ in range(5):
        dec = Decoder("gfx1100")     # fresh cache: every word decoded from scratch once
        t = time.process_time()
        off = 0
        while off < len(code):
            off += dec.decode(code, off).size
        best = max(best, n / max(time.process_time() - t, 1e-9))
    print(f"decode_insts_per_s {best:.0f}")
    best = 0.0
    for _ in range(5):
        t = time.process_time()
        decode_all(code)
        best = max(best, n / max(time.process_time() - t, 1e-9))
    print(f"decode_all_warm_insts_per_s {best:.0f}")


if __name__ == "__main__":
    main()
