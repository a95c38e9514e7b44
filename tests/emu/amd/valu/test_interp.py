"""VINTERP on gfx1100 (and gfx1201's identical encoding) against exact fractions rounded once (the guide's
fma): quad-lane reads that ignore EXEC, f16 halves by OPSEL, NEG, CLAMP, round-toward-zero forms, NaN.
Words are llvm-mc-19's encodings (v_interp_p10_f32 v42, -v10, v20, v30 clamp is cd00802a 247a290a; the
opcode is bits [22:16], OPSEL [14:11]), built here field by field."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.isa import decode
from gputwin.emu.memory import AddressSpace
from gputwin.errors import IllegalInstruction
from tests.emu.amd.helpers import run
from tests.emu.amd.valu.helpers import round_frac

OPS = {"p10_f32": 0, "p2_f32": 1, "p10_f16_f32": 2, "p2_f16_f32": 3, "p10_rtz_f16_f32": 4, "p2_rtz_f16_f32": 5}
MODE = 0x3F0
LANE = np.arange(32)
F32 = (24, -126, 127)
F16 = (11, -14, 15)


def _word(op, vdst, s0, s1, s2, *, neg=0, opsel=0, clamp=0):
    d0 = 0xCD000000 | OPS[op] << 16 | clamp << 15 | opsel << 11 | vdst
    d1 = s0 | s1 << 9 | s2 << 18 | neg << 29
    return f".long {d0:#x}, {d1:#x}"


def _bits(x, fmt):
    return int(np.asarray(x, np.float32 if fmt is F32 else np.float16).view(np.uint32 if fmt is F32 else np.uint16))


def _fma(a, b, c, fmt, rtz=False):
    """Bits of fma(a, b, c) rounded once to fmt (finite inputs)."""
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    if exact == 0:
        neg = (np.signbit(a) ^ np.signbit(b)) and np.signbit(c)
        return _bits(-0.0 if neg else 0.0, fmt)
    return _bits(round_frac(exact, *fmt, mode="rtz" if rtz else "rne"), fmt)


def _rand_f32(rng, shape, lo=-8, hi=8):
    return (rng.standard_normal(shape) * 2.0 ** rng.integers(lo, hi, shape)).astype(np.float32)


def test_p10_and_p2_f32_read_quad_lanes_even_where_exec_is_off():
    rng = np.random.default_rng(21)
    p, i, j = _rand_f32(rng, 32), _rand_f32(rng, 32), _rand_f32(rng, 32)
    p[5] = np.float32(2.0 ** -130)                                  # a denormal P10 (kept: MODE keeps them)
    exec_mask = np.ones((1, 32), bool)
    exec_mask[0, 1::4] = False                                      # the P10 lanes themselves are off
    g = run("\n".join([_word("p10_f32", 4, 256 + 1, 256 + 2, 256 + 3),
                       _word("p2_f32", 5, 256 + 1, 256 + 6, 256 + 4)]), n=1, mode=MODE, exec_mask=exec_mask,
            vgprs={1: p.view(np.uint32), 2: i.view(np.uint32), 3: p.view(np.uint32), 6: j.view(np.uint32),
                   4: 0x7777, 5: 0x5555})
    q = LANE & ~3
    for lane in range(32):
        if not exec_mask[0, lane]:
            assert g.vgpr(4)[0, lane] == 0x7777 and g.vgpr(5)[0, lane] == 0x5555
            continue
        tmp = _fma(p[q[lane] + 1], i[lane], p[q[lane]], F32)
        assert g.vgpr(4)[0, lane] == tmp, lane
        want = _fma(p[q[lane] + 2], j[lane], np.uint32(tmp).view(np.float32), F32)
        assert g.vgpr(5)[0, lane] == want, lane


def test_f16_forms_pick_halves_negate_and_round_toward_zero():
    rng = np.random.default_rng(22)
    lo = rng.standard_normal(32).astype(np.float16)
    hi = (rng.standard_normal(32) * 4).astype(np.float16)
    packed = lo.view(np.uint16).astype(np.uint32) | hi.view(np.uint16).astype(np.uint32) << 16
    i, j = _rand_f32(rng, 32, -2, 3), _rand_f32(rng, 32, -2, 3)
    q = LANE & ~3
    text = "\n".join([
        _word("p10_f16_f32", 4, 256 + 1, 256 + 2, 256 + 1, opsel=0b0001, neg=0b100),   # P10 = hi, P0 = -lo
        _word("p10_rtz_f16_f32", 5, 256 + 1, 256 + 2, 256 + 1, opsel=0b0100),          # P10 = lo, P0 = hi
        _word("p2_f16_f32", 6, 256 + 1, 256 + 3, 256 + 4, opsel=0b1001),               # P20 = hi, D.h
        _word("p2_rtz_f16_f32", 7, 256 + 1, 256 + 3, 256 + 5, neg=0b010)])             # -J, D.l
    g = run(text, n=1, mode=MODE, vgprs={1: packed, 2: i.view(np.uint32), 3: j.view(np.uint32),
                                          6: 0x0000ABCD, 7: 0x12340000})
    for lane in range(32):
        a, b = q[lane] + 1, q[lane]
        t4 = _fma(hi[a], i[lane], -lo[b], F32)
        t5 = _fma(lo[a], i[lane], hi[b], F32, rtz=True)
        assert (g.vgpr(4)[0, lane], g.vgpr(5)[0, lane]) == (t4, t5), lane
        d6 = _fma(hi[q[lane] + 2], j[lane], np.uint32(t4).view(np.float32), F16)
        d7 = _fma(lo[q[lane] + 2], -j[lane], np.uint32(t5).view(np.float32), F16, rtz=True)
        assert g.vgpr(6)[0, lane] == d6 << 16 | 0xABCD, lane
        assert g.vgpr(7)[0, lane] == 0x12340000 | d7, lane


def test_clamp_nan_and_a_scalar_barycentric():
    p = np.resize(np.array([3.0, np.nan, 0.25, -1.0], np.float32), 32)
    p[8:12] = [0.5, 4.0, np.nan, 1.0]
    # v_interp_p10_f32 v4, v1, s0, v1 clamp with s0 = 2.0 (LLVM takes only VGPRs; the hardware reads s0)
    g = run(_word("p10_f32", 4, 256 + 1, 0, 256 + 1, clamp=1), n=1, mode=MODE | 0x100,   # DX10_CLAMP
            sgprs={0: 0x40000000}, vgprs={1: p.view(np.uint32)})
    got = g.vgpr(4)[0]
    # quad 0: NaN * 2 + 3 -> NaN -> clamped to +0 under DX10_CLAMP; quad 2: 4 * 2 + 0.5 = 8.5 -> 1.0
    assert (got[0:4] == 0).all() and (got[8:12] == 0x3F800000).all()
    g = run(_word("p10_f32", 4, 256 + 1, 0, 256 + 1), n=1, mode=MODE, sgprs={0: 0x40000000},
            vgprs={1: p.view(np.uint32)})
    assert (g.vgpr(4)[0, 0:4] == (p.view(np.uint32)[1] | 0x400000)).all()       # the NaN source, quieted


def test_cross_lane_sources_must_be_vgprs_and_llvm_mode_takes_only_vgpr_sources():
    word = bytes.fromhex("2a8000cd0a297a24")          # v_interp_p10_f32 v42, -v10, v20, v30 clamp
    assert decode(word, strict=False).op == "v_interp_p10_f32"
    assert decode(word, "gfx1201", strict=False).operands["src2"].index == 30
    assert decode(word) == decode(word, strict=False)   # strict (LLVM) decodes the VGPR form alike
    sgpr_p0 = bytes.fromhex("2a8000cd0a810220")       # src2 = s0: P0 comes from another lane
    with pytest.raises(IllegalInstruction, match="src2: source encoding 0 is not a VGPR"):
        decode(sgpr_p0)                               # LLVM's register class is VGPRs only
    with pytest.raises(IllegalInstruction, match="src2 is read from another lane"):
        run_dispatch(AddressSpace(), Dispatch(0x1000, code=sgpr_p0 + bytes.fromhex("0000b0bf"), block=(32, 1, 1)))
