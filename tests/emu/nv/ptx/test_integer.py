"""Integer instruction family: wrap, widths, .hi/.wide, division by zero, shifts past the width, bit ops."""
import numpy as np
import pytest

from tests.emu.nv.ptx.oprig import run_op, u32

M32 = 0xFFFFFFFF


def s(v):
    return v - (1 << 32) if v >> 31 else v


def test_add_sub_wrap_and_saturate():
    a, b = u32(0x7FFFFFFF, -1, 5), u32(1, 1, -9)
    assert run_op("add.s32 %d, %a, %b;", "s32", "s32", a, b).tolist() == [0x80000000, 0, (5 - 9) & M32]
    assert run_op("add.sat.s32 %d, %a, %b;", "s32", "s32", a, b).tolist() == [0x7FFFFFFF, 0, (5 - 9) & M32]
    assert run_op("sub.sat.s32 %d, %a, %b;", "s32", "s32", u32(-0x80000000, 3), u32(1, 5)).tolist() == \
        [0x80000000, (3 - 5) & M32]


def test_mul_hi_wide_and_24():
    a, b = u32(-3, 0x12345678, 0xFFFFFFFF), u32(7, 0x9ABCDEF0, 0xFFFFFFFF)
    av, bv = [s(int(x)) for x in a], [s(int(x)) for x in b]
    assert run_op("mul.hi.s32 %d, %a, %b;", "s32", "s32", a, b).tolist() == [((x * y) >> 32) & M32 for x, y in zip(av, bv)]
    assert run_op("mul.hi.u32 %d, %a, %b;", "u32", "u32", a, b).tolist() == [(int(x) * int(y)) >> 32 for x, y in zip(a, b)]
    assert run_op("mul.wide.s32 %d, %a, %b;", "s32", "s64", a, b).tolist() == [(x * y) & (2**64 - 1) for x, y in zip(av, bv)]
    # mul24: the low 24 bits of each operand (sign-extended for .s32), low/high 32 of the 48-bit product
    x24 = [((int(x) & 0xFFFFFF) ^ 0x800000) - 0x800000 for x in a]
    y24 = [((int(y) & 0xFFFFFF) ^ 0x800000) - 0x800000 for y in b]
    assert run_op("mul24.lo.s32 %d, %a, %b;", "s32", "s32", a, b).tolist() == [(x * y) & M32 for x, y in zip(x24, y24)]
    assert run_op("mul24.hi.s32 %d, %a, %b;", "s32", "s32", a, b).tolist() == [((x * y) >> 16) & M32 for x, y in zip(x24, y24)]


def test_mul_hi_64():
    a = np.array([2**64 - 1, 0x123456789ABCDEF0, 2**63], np.uint64)
    b = np.array([2**64 - 1, 0x0FEDCBA987654321, 2**63 - 1], np.uint64)
    got = run_op("mul.hi.u64 %d, %a, %b;", "u64", "u64", a, b).tolist()
    assert got == [(int(x) * int(y)) >> 64 for x, y in zip(a, b)]
    sv = [int(x) - (1 << 64) if int(x) >> 63 else int(x) for x in a]
    tv = [int(y) - (1 << 64) if int(y) >> 63 else int(y) for y in b]
    got = run_op("mul.hi.s64 %d, %a, %b;", "s64", "s64", a, b).tolist()
    assert got == [((x * y) >> 64) & (2**64 - 1) for x, y in zip(sv, tv)]


def test_division_by_zero_and_overflow_decisions():
    a, b = u32(7, -7, -0x80000000, 100, -100), u32(0, 0, -1, 7, 7)
    assert run_op("div.s32 %d, %a, %b;", "s32", "s32", a, b).tolist() == [M32, M32, 0x80000000, 14, (-14) & M32]
    assert run_op("rem.s32 %d, %a, %b;", "s32", "s32", a, b).tolist() == [7, (-7) & M32, 0, 2, (-2) & M32]
    assert run_op("div.u32 %d, %a, %b;", "u32", "u32", u32(7, 9), u32(0, 2)).tolist() == [M32, 4]
    assert run_op("rem.u32 %d, %a, %b;", "u32", "u32", u32(7, 9), u32(0, 2)).tolist() == [7, 1]


@pytest.mark.parametrize("op,ref", [
    ("shl.b32", lambda x, n: (x << n) & M32 if n < 32 else 0),
    ("shr.u32", lambda x, n: x >> n if n < 32 else 0),
    ("shr.s32", lambda x, n: (s(x) >> min(n, 31)) & M32),
])
def test_shifts_clamp_at_the_width(op, ref):
    x = u32(0x80000001, 0xF0F0F0F0, 1, -1, 0x12345678)
    n = u32(1, 31, 32, 33, 0xFFFFFFFF)
    got = run_op(f"{op} %d, %a, %b;", "b32", "b32", x, n, tb="u32").tolist()
    assert got == [ref(int(a), int(b)) for a, b in zip(x, n)]


def test_bit_counting():
    x = u32(0, 1, 0x80000000, 0xFFFFFFFF, 0x00F00000, -2)
    assert run_op("popc.b32 %d, %a;", "b32", "u32", x).tolist() == [bin(int(v)).count("1") for v in x]
    assert run_op("clz.b32 %d, %a;", "b32", "u32", x).tolist() == [32 - int(v).bit_length() for v in x]
    assert run_op("brev.b32 %d, %a;", "b32", "b32", x).tolist() == [int(f"{int(v):032b}"[::-1], 2) for v in x]
    # bfind.u32: the highest set bit, 0xFFFFFFFF for 0; .s32 looks for the highest bit differing from the sign
    assert run_op("bfind.u32 %d, %a;", "u32", "u32", x).tolist() == \
        [int(v).bit_length() - 1 if v else M32 for v in x]
    sx = [s(int(v)) for v in x]
    assert run_op("bfind.s32 %d, %a;", "s32", "u32", x).tolist() == \
        [(v if v >= 0 else ~v).bit_length() - 1 if v not in (0, -1) else M32 for v in sx]
    assert run_op("bfind.shiftamt.u32 %d, %a;", "u32", "u32", x).tolist() == \
        [31 - (int(v).bit_length() - 1) if v else M32 for v in x]


def test_bfe_and_bfi():
    x = u32(0xF0F0ABCD, 0x80000000, 0x12345678, 0xFFFF0000)
    pos, ln = u32(4, 28, 40, 8), u32(8, 8, 4, 0)
    body = "bfe.u32 %d, %a, %b, %c;"
    got = run_op(body, "u32", "u32", x, pos, ln, tb="u32", tc="u32").tolist()
    assert got == [0xBC, 0x8, 0, 0]
    got = run_op("bfe.s32 %d, %a, %b, %c;", "s32", "s32", x, pos, ln, tb="u32", tc="u32").tolist()
    # signed: the field's top bit (or bit 31 when the field runs past it) is replicated; len 0 -> 0
    assert got == [0xFFFFFFBC, 0xFFFFFFF8, 0, 0]
    got = run_op("bfi.b32 %d, %a, %b, 8, 12;", "b32", "b32", u32(0xABC, 0xFFFFFFFF), u32(0, 0x12345678)).tolist()
    assert got == [0x00ABC00, (0x12345678 & ~(0xFFF << 8)) | (0xFFF << 8)]


def test_prmt_and_lop3_and_shf():
    a, b = u32(0x33221100), u32(0x77665544)
    assert run_op("prmt.b32 %d, %a, %b, 0x5140;", "b32", "b32", a, b).tolist() == [0x55114400]
    assert run_op("prmt.b32 %d, %a, %b, 0x8888;", "b32", "b32", u32(0x000080), b).tolist() == [0xFFFFFFFF]
    x, y, z = u32(0xF0F0F0F0), u32(0xCCCCCCCC), u32(0xAAAAAAAA)
    for lut in (0x96, 0xE8, 0x80, 0x01):
        got = run_op(f"lop3.b32 %d, %a, %b, %c, {lut};", "b32", "b32", x, y, z)[0]
        ref = 0
        for bit in range(32):
            i = (((0xF0F0F0F0 >> bit) & 1) << 2) | (((0xCCCCCCCC >> bit) & 1) << 1) | ((0xAAAAAAAA >> bit) & 1)
            ref |= ((lut >> i) & 1) << bit
        assert int(got) == ref, hex(lut)
    lo, hi = u32(0x89ABCDEF, 0x89ABCDEF), u32(0x01234567, 0x01234567)
    n = u32(8, 40)
    got = run_op("shf.l.wrap.b32 %d, %a, %b, %c;", "b32", "b32", lo, hi, n, tc="u32").tolist()
    assert got == [0x23456789, 0x23456789]                   # wrap: 40 & 31 = 8
    got = run_op("shf.r.clamp.b32 %d, %a, %b, %c;", "b32", "b32", lo, hi, n, tc="u32").tolist()
    assert got == [0x6789ABCD, 0x01234567]                   # clamp: 40 -> 32, the whole high word


@pytest.mark.parametrize("mode,table", [
    # (bytes b0..b3 of d as source-byte indices) for selector c = 0..3, from the PTX ISA's prmt table
    ("f4e", [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]]),
    ("b4e", [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]]),
    ("rc8", [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]),
    ("ecl", [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]]),
    ("ecr", [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]]),
    ("rc16", [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]]),
])
def test_prmt_modes(mode, table):
    a, b = 0x33221100, 0x77665544
    src = a | (b << 32)
    got = run_op(f"prmt.b32.{mode} %d, %a, %b, %c;", "b32", "b32", u32(a, a, a, a), u32(b, b, b, b),
                 u32(0, 1, 2, 3)).tolist()
    assert got == [sum(((src >> (8 * sel)) & 0xFF) << (8 * i) for i, sel in enumerate(row)) for row in table]
