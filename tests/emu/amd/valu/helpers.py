"""Test helpers for the VALU semantics: a real WaveGroup, hand-built Insts and bit conversions."""
from __future__ import annotations

import re
import subprocess
from fractions import Fraction

import ml_dtypes
import numpy as np

from gputwin.emu.amd.isa.inst import Inst, Operand
from gputwin.emu.amd.wave import WaveGroup
from tests.oracles import require_tools

# FP_DENORM = 3 for f32 and f16/f64 (keep denormals), DX10_CLAMP and IEEE set, round to nearest even
MODE = 0x3F0
VCC, EXEC, M0 = 106, 126, 125


def group(n=2, wave64=False, mode=MODE, exec_=None) -> WaveGroup:
    g = WaveGroup(None, np.arange(n), np.zeros(n), wave64=wave64, mode=mode, pc=0)
    L = 64 if wave64 else 32
    g.set_exec(np.ones((n, L), bool) if exec_ is None else exec_)
    return g


def V(i, count=1):
    return Operand("vgpr", i, count)


def S(i, count=1):
    return Operand("sgpr", i, count)


def C(i):
    return Operand("const", i)


def L(value):
    return Operand("literal", 255, 1, value & 0xFFFFFFFF)


def inst(op, encoding="VOP3", **kw) -> Inst:
    operands = {k: kw.pop(k) for k in list(kw) if k in ("vdst", "sdst", "src0", "src1", "src2", "k")}
    return Inst(op=op, encoding=encoding, opcode=0, size=8, operands=operands, **kw)


def fill(g, reg, values):
    """Set VGPR reg of every lane from values broadcastable to (n, L): 2/4-byte values fill one VGPR
    (16-bit ones zero-extended), 8-byte ones a VGPR pair; a plain Python int is a uint32."""
    v = np.asarray(values)
    if isinstance(values, int):
        v = v.astype(np.uint32)
    v = np.broadcast_to(v, (g.n, g.lanes))
    if v.dtype.itemsize == 8:
        b = v.view(np.uint64)
        g.set_vgpr(reg, (b & np.uint64(0xFFFFFFFF)).astype(np.uint32), np.ones((g.n, g.lanes), bool))
        g.set_vgpr(reg + 1, (b >> np.uint64(32)).astype(np.uint32), np.ones((g.n, g.lanes), bool))
        return
    if v.dtype.itemsize == 2:
        v = v.view(np.uint16).astype(np.uint32)
    g.set_vgpr(reg, v.view(np.uint32) if v.dtype.itemsize == 4 else v, np.ones((g.n, g.lanes), bool))


def f32(x):
    return np.asarray(x, np.float32).view(np.uint32)


def f64(x):
    return np.asarray(x, np.float64).view(np.uint64)


def f16(x):
    return np.asarray(x, np.float16).view(np.uint16)


def u64(g, reg):
    return g.vgpr(reg).astype(np.uint64) | (g.vgpr(reg + 1).astype(np.uint64) << np.uint64(32))


def round_frac(q: Fraction, p: int, emin: int, emax: int, mode="rne") -> float:
    """Round rational q to a binary format with p significand bits (denormals below 2^emin)."""
    if q == 0:
        return 0.0
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    ulp = Fraction(2) ** (e - p + 1)
    n, r = divmod(a, ulp)
    n = int(n)
    if mode == "rne":
        if r > ulp / 2 or (r == ulp / 2 and n % 2 == 1):
            n += 1
    elif mode == "rtz":
        pass
    elif mode == "up":
        n += 1 if (r and sign > 0) else 0
    elif mode == "down":
        n += 1 if (r and sign < 0) else 0
    v = n * ulp
    if v >= Fraction(2) ** (emax + 1):
        top = (Fraction(2) ** (emax + 1)) - Fraction(2) ** (emax - p + 1)
        inf = mode == "rne" or (mode == "up" and sign > 0) or (mode == "down" and sign < 0)
        return sign * (float("inf") if inf else float(top))
    return sign * float(v)


def asm_many(lines, wave64=False) -> dict[str, bytes]:
    """Assemble many single-instruction lines with one llvm-mc run."""
    require_tools("llvm-mc-19", why="to assemble test instructions")
    attr = ["-mattr=+wavefrontsize64"] if wave64 else []
    r = subprocess.run(["llvm-mc-19", "-triple=amdgcn", "-mcpu=gfx1100", "-show-encoding", *attr],
                       input="\n".join(lines), capture_output=True, text=True, check=True)
    enc = [bytes(int(x, 16) for x in m.split(",")) for m in re.findall(r"encoding: \[(.*)\]", r.stdout)]
    assert len(enc) == len(lines), r.stderr
    return dict(zip(lines, enc))


def bf16(x):
    return np.asarray(x, ml_dtypes.bfloat16).view(np.uint16)
