"""Decode throughput: RDNA3 instructions per second over a 64 KiB code object.

The code object is real compiler output: ~50 generated OpenCL kernels (float/half/double/int/long
arithmetic, LDS, loops) compiled by clang-19 for gfx1100, its .text cut to 64 KiB at an instruction
boundary. Without clang-19/ld.lld-19 a synthetic mix with random registers is used (said on stderr).
Figures, one per line (this process's CPU time, best of 5, so other load on a shared machine distorts
them less):
  decode_insts_per_s           a fresh decoder per run: every distinct word decoded once, repeats
                               served from the decoder's cache (what loading a new kernel costs)
  decode_unique_insts_per_s    the synthetic mix, nearly every word distinct (the slow path alone)
  decode_all_warm_insts_per_s  the same code again with the cache warm (re-running a kernel)
"""
from __future__ import annotations

import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gputwin.emu.amd.isa import decode_all
from gputwin.emu.amd.isa.decode import Decoder
from gputwin.emu.amd.isa.rdna3_formats import FORMATS

SIZE = 64 * 1024


def opencl_source(kernels: int = 56, seed: int = 0) -> str:
    rng = random.Random(seed)
    out = ["#pragma OPENCL EXTENSION cl_khr_fp16 : enable", "#pragma OPENCL EXTENSION cl_khr_fp64 : enable"]
    types = ["float", "int", "uint", "double", "half", "long"]
    for k in range(kernels):
        t = types[k % len(types)]
        ops = "+*-/" if t in ("float", "double", "half") else "+*-^"
        body = [f"    acc = acc {rng.choice(ops)} ({t})(x[(gid * {i + 1} + {rng.randint(1, 999)}) & 1023]"
                f" {'+' if i % 2 else '*'} ({t}){rng.randint(1, 17)});" for i in range(8 + k % 9)]
        if k % 4 == 1:
            body.append(f"    lds[lid] = acc; __builtin_amdgcn_s_barrier(); acc = acc + lds[(lid + {k}) & 63];")
        out.append(f"""__kernel void k{k}(__global {t} *x, __global {t} *y, int n) {{
  __local {t} lds[64];
  int lid = __builtin_amdgcn_workitem_id_x(), gid = __builtin_amdgcn_workgroup_id_x() * 64 + lid;
  {t} acc = ({t})0;
  if (gid < n) {{
{chr(10).join(body)}
    for (int j = 0; j < n % {k % 5 + 2}; j++) acc = acc + x[j & 1023];
    y[gid] = acc;
  }}
}}""")
    return "\n".join(out)


def compiled_text() -> bytes | None:
    if not (shutil.which("clang-19") and shutil.which("ld.lld-19")):
        return None
    from gputwin.abi.code_object import CodeObject
    with tempfile.TemporaryDirectory() as d:
        src, obj, hsaco = Path(d, "k.cl"), Path(d, "k.o"), Path(d, "k.hsaco")
        src.write_text(opencl_source())
        subprocess.run(["clang-19", "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx1100",
                        "-nogpulib", "-O2", "-c", str(src), "-o", str(obj)], check=True)
        subprocess.run(["ld.lld-19", "-shared", str(obj), "-o", str(hsaco)], check=True)
        image = hsaco.read_bytes()
    text = next(s for s in CodeObject.parse(image).sections if s.name == ".text")
    return image[text.offset:text.offset + text.size]


def synthetic(nbytes: int = SIZE, seed: int = 0) -> bytes:
    rng = random.Random(seed)
    F = FORMATS
    out = bytearray()
    while True:
        a, b, c = rng.randrange(100), rng.randrange(100), rng.randrange(100)
        words = [
            (F["SMEM"].pack(op=1, sdata=a & ~1, sbase=b >> 1, soffset=124, offset=rng.randrange(1 << 10) * 4), 8),
            (F["SOPP"].pack(op=9, simm16=rng.randrange(1 << 16)), 4),
            (F["VOP2"].pack(op=3, vdst=a, vsrc1=b, src0=256 + c), 4),
            (F["VOP2"].pack(op=3, vdst=a, vsrc1=b, src0=255) | rng.randrange(1 << 32) << 32, 8),
            (F["VOP3"].pack(op=531, vdst=a, src0=256 + b, src1=256 + c, src2=240 + a % 9), 8),
            (F["VOP1"].pack(op=1, vdst=a, src0=250) | (0xFF0000E4 | b) << 32, 8),
            (F["FLAT"].pack(op=20, seg=2, addr=a, saddr=b & ~1, vdst=c, offset=rng.randrange(1 << 13)), 8),
            (F["DS"].pack(op=14, addr=a, data0=b, data1=c, offset0=4, offset1=8), 8),
            (F["VOPC"].pack(op=18, src0=256 + a, vsrc1=b), 4),
            (F["SOP2"].pack(op=0, sdst=a, ssrc0=b, ssrc1=c), 4),
            (F["SOPP"].pack(op=32, simm16=rng.randrange(1 << 16)), 4),
        ]
        for w, size in words:
            if len(out) + size > nbytes:
                return bytes(out)
            out += w.to_bytes(size, "little")


def cut(code: bytes, nbytes: int = SIZE) -> bytes:
    """The longest prefix of whole instructions within nbytes (repeating the code if it is shorter)."""
    while len(code) < nbytes:
        code += code
    end = 0
    for off, inst in decode_all(code[:nbytes + 12]):
        if off + inst.size > nbytes:
            break
        end = off + inst.size
    return code[:end]


def rate(code: bytes, fresh: bool) -> float:
    n = len(decode_all(code))
    best = 0.0
    for _ in range(5):
        dec = Decoder("gfx1100") if fresh else None
        t = time.process_time()
        if fresh:
            off = 0
            while off < len(code):
                off += dec.decode(code, off).size
        else:
            decode_all(code)
        best = max(best, n / max(time.process_time() - t, 1e-9))
    return best


def main() -> None:
    text = compiled_text()
    if text is None:
        print("bench_decode: clang-19/ld.lld-19 not found: using the synthetic mix", file=sys.stderr)
    real = cut(text) if text is not None else synthetic()
    mix = synthetic()
    print(f"decode_insts_per_s {rate(real, fresh=True):.0f}")
    print(f"decode_unique_insts_per_s {rate(mix, fresh=True):.0f}")
    print(f"decode_all_warm_insts_per_s {rate(real, fresh=False):.0f}")


if __name__ == "__main__":
    main()
