"""v_cvt_norm_i16_f16 / v_cvt_norm_u16_f16 on every f16 bit pattern, against exact fractions: clamp to
[-1, 1] / [0, 1], NaN -> 0, scale by 32767 / 65535, round half to even (docs: cvt.py; the tie rule is a
DECISION in fidelity.py). Words: llvm-mc-19 -mcpu=gfx1100 encodings (v_cvt_norm_i16_f16_e32 v1, v2 is
0x7e02c702; _u16_ 0x7e02c902), the high-half variants with bit 7 of the VGPR fields set."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tests.emu.amd.helpers import run

ALL = np.arange(1 << 16, dtype=np.uint32).reshape(2048, 32)


def _want(bits: int, signed: bool) -> int:
    h = np.uint16(bits).view(np.float16)
    if np.isnan(h):
        return 0
    x = Fraction(float(h)) if np.isfinite(h) else Fraction(int(np.sign(h)) * 2)   # inf clamps like 2
    lo, scale = (Fraction(-1), 32767) if signed else (Fraction(0), 65535)
    x = min(max(x, lo), Fraction(1)) * scale
    n = x.numerator // x.denominator                  # floor
    r = x - n
    if r > Fraction(1, 2) or r == Fraction(1, 2) and n % 2:
        n += 1
    return n & 0xFFFF


@pytest.mark.parametrize("signed,op", [(True, 99), (False, 100)])
def test_every_f16_pattern_converts_exactly(signed, op):
    word = 0x7E000000 | 1 << 17 | op << 9 | 256 + 2              # v_cvt_norm_*16_f16_e32 v1, v2
    g = run(f".long {word:#x}", n=2048, vgprs={2: ALL, 1: 0xABCD0000}, mode=0x3F0)
    got = g.vgpr(1)
    want = np.array([_want(b, signed) for b in range(1 << 16)], np.uint32).reshape(2048, 32)
    assert np.array_equal(got & 0xFFFF, want)
    assert np.all(got >> 16 == 0xABCD)                            # a .l result keeps the high half


def test_ties_round_to_even_and_high_halves_under_exec():
    # 0.5 * 32767 = 16383.5 -> 16384; -0.5 -> -16384; denormal 2^-24 * 65535 ~ 0.0039 -> 0
    vals = np.array([0x3800, 0xB800, 0x0001, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00], np.uint32)
    src = np.resize(vals, 32) << 16 | 0x1111
    exec_mask = np.ones((1, 32), bool)
    exec_mask[0, 1::2] = False
    word = 0x7E000000 | 0x81 << 17 | 99 << 9 | 256 + 0x82        # v_cvt_norm_i16_f16_e32 v1.h, v2.h
    g = run(f".long {word:#x}", n=1, vgprs={2: src, 1: 0x00002222}, exec_mask=exec_mask, mode=0x3F0)
    want = np.resize(np.array([16384, (-16384) & 0xFFFF, 0, 32767, (-32767) & 0xFFFF, 32767, (-32767) & 0xFFFF, 0],
                              np.uint32), 32)
    got = g.vgpr(1)[0]
    assert np.array_equal(got[0::2], want[0::2] << 16 | 0x2222)
    assert np.all(got[1::2] == 0x2222)
