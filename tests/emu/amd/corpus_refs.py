"""Inputs and independent numpy references for the coverage-gate corpus (fixtures/amd/corpus/corpus.cl,
corpus.hip). Every kernel is (out, in, n): `in` and `out` are WORDS 32-bit words; a Spec gives the input
words, the initial output words and a check that asserts on the output words. References follow the C
source operation by operation (each float operation rounded to its type: numpy's IEEE float32/float64/
float16 arithmetic and conversions, exact rationals for fma); nothing here calls gputwin.
Float results compare as bits; where the reference is NaN the result must be a NaN (the payload of a
generated NaN is the hardware's, not numpy's)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

WORDS, N = 1024, 64
U32, I32, U64, I64, F32, F64, F16 = np.uint32, np.int32, np.uint64, np.int64, np.float32, np.float64, np.float16
INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1


@dataclass
class Spec:
    inputs: Callable[[np.random.Generator], np.ndarray]       # -> WORDS uint32
    check: Callable[[np.ndarray, np.ndarray], None]          # (in words, out words)
    out_init: Callable[[], np.ndarray] = lambda: np.zeros(WORDS, U32)
    one_wave: bool = False                                   # one wave (32 or 64 lanes), else N work-items


def words(*parts) -> np.ndarray:
    """Concatenate arrays (any dtype) as bytes into WORDS uint32 words, zero-padded."""
    raw = b"".join(np.ascontiguousarray(p).tobytes() for p in parts)
    return np.frombuffer(raw.ljust(4 * WORDS, b"\0"), U32).copy()


def same_bits(got, expect) -> None:
    """Bit equality, except that a NaN reference asks only for a NaN."""
    got, expect = np.asarray(got), np.asarray(expect)
    assert got.dtype == expect.dtype and got.shape == expect.shape
    if expect.dtype.kind == "f":
        nan = np.isnan(expect)
        assert np.isnan(got[nan]).all(), f"expected NaN at {np.flatnonzero(nan & ~np.isnan(got))[:8]}"
        ib = {2: np.uint16, 4: U32, 8: U64}[expect.dtype.itemsize]
        g, e = got.view(ib)[~nan], expect.view(ib)[~nan]
    else:
        g, e = got, expect
    bad = np.flatnonzero(g != e)
    assert bad.size == 0, f"{bad.size} mismatches, first at {bad[:8]}: got {g[bad[:4]]} expected {e[bad[:4]]}"


def finite_f32(rng, n, lo=-30, hi=30) -> np.ndarray:
    """Random normals scaled by 2^[lo, hi), with signed zeros, denormals and the largest finite values."""
    x = (rng.standard_normal(n) * 2.0 ** rng.integers(lo, hi, n)).astype(F32)
    x[:8] = np.array([0.0, -0.0, 1e-45, -1e-40, 1.17549435e-38, 3.4e38, -3.4e38, 1.0], F32)
    rng.shuffle(x)
    return x


def finite_f16_bits(rng, n) -> np.ndarray:
    """Random half bit patterns without infinities/NaN (exponent 31 replaced), denormals included."""
    h = rng.integers(0, 1 << 16, n, dtype=np.uint16)
    return np.where((h & 0x7C00) == 0x7C00, h & 0x83FF, h).astype(np.uint16)


def fma_exact(a, b, c, ftype):
    """fma rounded once to `ftype` (F32 or F64): exact rational sum, correctly rounded."""
    out = np.empty(len(a), ftype)
    for i, (x, y, z) in enumerate(zip(map(float, a), map(float, b), map(float, c))):
        if not all(map(math.isfinite, (x, y, z))) or (x * y == 0 and z == 0):
            with np.errstate(all="ignore"):   # specials and signed zeros: the IEEE f64 result is exact here
                out[i] = ftype(np.float64(x) * np.float64(y) + np.float64(z))
            continue
        out[i] = round_rational(Fraction(x) * Fraction(y) + Fraction(z), ftype)
    return out


def round_rational(q: Fraction, ftype):
    """q rounded to nearest even in `ftype` (F32 or F64); overflow to infinity."""
    if q == 0:
        return ftype(0.0)
    info = np.finfo(ftype)
    e = max(math.floor(math.log2(abs(q))) if abs(q) >= Fraction(float(info.smallest_normal)) else info.minexp,
            info.minexp)
    # the exponent estimate from log2 may be off by one: fix it exactly
    while abs(q) >= Fraction(2) ** (e + 1):
        e += 1
    while e > info.minexp and abs(q) < Fraction(2) ** e:
        e -= 1
    ulp = Fraction(2) ** (e - info.nmant)
    m = q / ulp
    r = math.floor(m)
    if m - r > Fraction(1, 2) or (m - r == Fraction(1, 2) and r % 2):
        r += 1
    v = r * ulp
    if abs(v) > Fraction(float(info.max)):
        return ftype(math.copysign(math.inf, q))
    return ftype(float(v))


def bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bits, round to nearest even (finite inputs; overflow carries into infinity)."""
    b = np.asarray(x, F32).view(U32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_to_f32(h: np.ndarray) -> np.ndarray:
    return (h.astype(U32) << 16).view(F32)


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def wrap(v: int, bits: int, signed: bool) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


# ---- corpus.cl -------------------------------------------------------------------------------------------------
def _vec_float_in(rng):
    return words(finite_f32(rng, 4 * N, -20, 20), finite_f32(rng, 4 * N, -20, 20))


def _vec_float_check(inp, out):
    a, b = inp[:256].view(F32).reshape(N, 4), inp[256:512].view(F32).reshape(N, 4)
    with np.errstate(all="ignore"):
        r = a * a[:, ::-1] + np.array([1, 2, 3, 4], F32) - b[:, [0, 0, 1, 1]]
        c = a[:, :2] * b[:, 2:] - a[:, 2:]
    d = fma_exact(c[:, ::-1].ravel(), b[:, :2].ravel(), c.ravel(), F32)
    same_bits(out[:256].view(F32), r.ravel())
    same_bits(out[256:384].view(F32), d)


def _vec_int_check(inp, out):
    a, b = inp[:256].view(I32).reshape(N, 4), inp[256:512].view(I32).reshape(N, 4)
    same_bits(out[:256].view(I32), (a * b + (a >> (b & 31))).ravel())
    same_bits(out[256:512].view(I32), np.where(a < b, a - b, b[:, [1, 0, 3, 2]] ^ a).ravel())
    same_bits(out[512:768].view(I32), (np.maximum(a, b) + np.minimum(a, b[:, ::-1]) + np.abs(a)).ravel())


def _half_in(rng):
    return words(finite_f16_bits(rng, 4 * N), finite_f32(rng, N, -30, 20))


def _half_check(inp, out):
    a, b = inp[:64].view(F16).astype(F64).reshape(N, 2), inp[64:128].view(F16).astype(F64).reshape(N, 2)
    with np.errstate(over="ignore"):
        p = (a * b).astype(F16).astype(F64)                    # products and sums of halves are exact in f64
        s = (p + a).astype(F16)
        same_bits(out[:64].view(F16), s.ravel())
        same_bits(out[64:128].view(F16), (a - b).astype(F16).ravel())
        same_bits(out[128:192], inp[128:192].view(F32).astype(F16).view(np.uint16).astype(U32))
    same_bits(out[192:256].view(F32), a[:, 0].astype(F32) + b[:, 1].astype(F32))


def _bf16_in(rng):
    return words(finite_f32(rng, N, -100, 100), finite_f32(rng, N, -100, 100))


def _bf16_check(inp, out):
    f, g = inp[:64].view(F32), inp[64:128].view(F32)
    x, y = bf16(f), bf16(g)
    with np.errstate(over="ignore"):
        s = bf16(bf16_to_f32(x) + bf16_to_f32(y))
        same_bits(out[:64], x.astype(U32) | s.astype(U32) << 16)
        same_bits(out[64:128].view(F32), bf16_to_f32(y) * F32(2))


def _i64_in(rng):
    a = rng.integers(-(1 << 63), (1 << 63) - 1, N, dtype=I64)
    b = rng.integers(-(1 << 63), (1 << 63) - 1, N, dtype=I64)
    b[::3] = rng.integers(-40000, 40000, b[::3].size)          # small divisors: large quotients
    b[::5] = a[::5] >> rng.integers(1, 40, b[::5].size)        # a / (a >> k): quotients near 2^k
    b[b == 0] = 7
    b[(b == -1) & (a == -(1 << 63))] = 3
    return words(a, b)


def _i64_check(inp, out):
    a, b = inp[:128].view(I64).tolist(), inp[128:256].view(I64).tolist()
    w = lambda v: wrap(v, 64, True)                             # noqa: E731
    exp = [w(x * y + (x >> (y & 63))) for x, y in zip(a, b)]
    exp += [w(trunc_div(x, y)) for x, y in zip(a, b)]
    exp += [w(x - trunc_div(x, y) * y) for x, y in zip(a, b)]
    exp += [w((x % (1 << 64)) // (y % (1 << 64)) ^ ((x % (1 << 64)) << (y & 63))) for x, y in zip(a, b)]
    same_bits(out[:512].view(I64), np.array(exp, I64))


def _f64_in(rng):
    a = rng.standard_normal(N) * 2.0 ** rng.integers(-300, 300, N)
    b = rng.standard_normal(N) * 2.0 ** rng.integers(-300, 300, N)
    c = rng.uniform(-1.5e8, 1.5e8, N) * 1e300 * 2.0 ** rng.integers(-4, 1, N)   # c * 1e-300 fits an int
    a[:6] = [0.0, -0.0, 5e-324, -2.2250738585072014e-308, 1e300, 3e38]
    b[:6] = [1.0, 3.0, 0.5, 1e-300, -1e-10, 7.0]
    return words(a, b, c)


def _f64_check(inp, out):
    a, b, c = (inp[i:i + 128].view(F64) for i in (0, 128, 256))
    with np.errstate(all="ignore"):
        same_bits(out[:128].view(F64), a + b * c)
        same_bits(out[256:384].view(F64), a / b)
        same_bits(out[384:512].view(F64), a.astype(F32).astype(F64) + (c * 1e-300).astype(I32).astype(F64))
    same_bits(out[128:256].view(F64), fma_exact(a, b, c, F64))


def _atomics_int_init():
    o = np.zeros(WORDS, U32)
    o[16], o[17] = np.array([INT_MIN, INT_MAX], I32).view(U32)
    return o


def _atomics_int_check(inp, out):
    v = inp[:N]
    exp = _atomics_int_init()
    exp[:16] = np.bincount(v & 15, minlength=16)
    exp[16], exp[17] = np.array([v.view(I32).max(), v.view(I32).min()], I32).view(U32)
    exp[18] = np.bitwise_or.reduce(U32(1) << (v & 31))
    exp[19] = np.bitwise_xor.reduce(v)
    exp[20] = N
    exp[21] = int((v & 7).sum())
    assert sorted(out[64:128].tolist()) == list(range(N)), "returned tickets are not a permutation"
    exp[64:128] = out[64:128]
    same_bits(out, exp)


def _atomics_float_in(rng):
    v = rng.integers(-20, 21, N).astype(F32)
    v[v == 0] = 5.0                                 # no zeros: max/min of +-0 is not what this checks
    return words(v)


def _atomics_float_init():
    return words(np.array([0, 0, 0, 0, -np.inf, np.inf], F32))


def _atomics_float_check(inp, out):
    v = inp[:N].view(F32)
    exp = np.zeros(WORDS, F32)
    exp[:4] = [v[j::4].astype(F64).sum() for j in range(4)]    # small integers: exact in any order
    exp[4], exp[5] = v.max(), v.min()
    same_bits(out.view(F32), exp)


def _lds_in(rng):
    f = finite_f32(rng, N, -20, 20)
    f[f == 0] = 1.5
    return words(rng.integers(0, 1 << 32, N, dtype=U32), f)


def _lds_check(inp, out):
    exp = np.zeros(WORDS, U32)
    exp[0] = int(inp[:N].astype(U64).sum()) & 0xFFFFFFFF
    exp[1] = inp[N:2 * N].view(F32).max().view(U32)
    exp[64:128] = inp[:N][::-1] * U32(3)
    same_bits(out, exp)


def _collatz(x: int) -> int:
    steps = 0
    while x != 1:
        x, steps = (3 * x + 1 if x & 1 else x // 2), steps + 1
    return steps


def _bitloop(v: int) -> int:
    acc = 0
    for k in range(32):
        if not (v >> k) & 1:
            continue
        acc += k * k
        if acc > 300:
            break
    return acc


def _loops_check(inp, out):
    exp = np.zeros(WORDS, U32)
    exp[:N] = [_collatz(x % 100 + 1) for x in inp[:N].tolist()]
    exp[N:2 * N] = [_bitloop(v) for v in inp[N:2 * N].tolist()]
    same_bits(out, exp)


def _switch_case(a: int, b: int) -> int:
    case = (a % (1 << 32)) % 7
    r = [a + b, a - b, a * b, a ^ b, (a & 0xFFFF) * (b >> 16), trunc_div(a, b) if b else -1, ~a][min(case, 6)]
    return wrap(r, 32, True)


def _switchy_in(rng):
    v = rng.integers(INT_MIN, INT_MAX, 2 * N, dtype=I32)
    v[N::4] = rng.integers(-50, 50, v[N::4].size)              # small and zero divisors
    v[N:][(v[N:] == -1) & (v[:N] == INT_MIN)] = 2
    return words(v)


def _switchy_check(inp, out):
    a, b = inp[:N].view(I32).tolist(), inp[N:2 * N].view(I32).tolist()
    exp = np.zeros(WORDS, I32)
    exp[:N] = [_switch_case(x, y) for x, y in zip(a, b)]
    same_bits(out.view(I32), exp)


def _calls_in(rng):
    return words(rng.integers(0, 1 << 32, 2 * N, dtype=U32), finite_f32(rng, N, -10, 10))


def _calls_check(inp, out):
    exp = np.zeros(WORDS, U32)
    t = inp[:N].tolist()
    for i in range(N):
        k, r = int(inp[N + i]), 0
        for j in range(8):
            r = (r * 31 + t[(i + (j + k) % 8) % N]) & 0xFFFFFFFF
        exp[i] = r
    x = inp[2 * N:3 * N].view(F32)
    with np.errstate(over="ignore"):
        exp[N:2 * N] = ((x * F32(0.5) + F32(1.25)) * x - F32(3.0)).view(U32)
    same_bits(out[:2 * N], exp[:2 * N])
    same_bits(out[2 * N:], exp[2 * N:])


def _matrix_in(rng):
    """Small integers: every product and partial sum is exact, so any summation order gives the same
    f32 (float WMMA/MFMA is documented approximate in fidelity.py only for inexact sums)."""
    a, b = (rng.integers(-4, 5, 256).astype(F16) for _ in range(2))
    c = rng.integers(-100, 101, 256).astype(F32)
    return words(a, b, c)


def _matrix_check(inp, out):
    a = inp[:128].view(F16).astype(F64).reshape(16, 16)
    b = inp[128:256].view(F16).astype(F64).reshape(16, 16)
    c = inp[256:512].view(F32).astype(F64).reshape(16, 16)
    exp = np.zeros(WORDS, F32)
    exp[:256] = (a @ b + c).astype(F32).ravel()
    same_bits(out.view(F32), exp)


def _u32_in(rng):
    return rng.integers(0, 1 << 32, WORDS, dtype=U32)


CL = {
    "vec_float": Spec(_vec_float_in, _vec_float_check),
    "vec_int": Spec(_u32_in, _vec_int_check),
    "half_ops": Spec(_half_in, _half_check),
    "bf16_ops": Spec(_bf16_in, _bf16_check),
    "i64_ops": Spec(_i64_in, _i64_check),
    "f64_ops": Spec(_f64_in, _f64_check),
    "atomics_int": Spec(_u32_in, _atomics_int_check, _atomics_int_init),
    "atomics_float": Spec(_atomics_float_in, _atomics_float_check, _atomics_float_init),
    "lds_ops": Spec(_lds_in, _lds_check),
    "loops": Spec(_u32_in, _loops_check),
    "switchy": Spec(_switchy_in, _switchy_check),
    "calls": Spec(_calls_in, _calls_check),
    "matrix": Spec(_matrix_in, _matrix_check, one_wave=True),
}


# ---- corpus.hip ------------------------------------------------------------------------------------------------
def _hip_vec_in(rng):
    return words(finite_f32(rng, 4 * N, -20, 20), finite_f32(rng, 4 * N, -20, 20))


def _hip_vec_check(inp, out):
    a, b = inp[:256].view(F32).reshape(N, 4), inp[256:512].view(F32).reshape(N, 4)
    with np.errstate(all="ignore"):
        r = a * b[:, [1, 0, 3, 2]] + np.array([0.5, -0.5, 8.0, -8.0], F32)
        c = np.stack([a[:, 0] * a[:, 2] + b[:, 0], b[:, 1] * a[:, 3] + b[:, 3]], axis=1)
    same_bits(out[:256].view(F32), r.ravel())
    same_bits(out[256:384].view(F32), c.ravel())
    same_bits(out[384:448], inp[:N] * inp[N:2 * N] + U32(12345))


def _hip_half_bf16_in(rng):
    return words(finite_f32(rng, 2 * N, -20, 12))


def _hip_half_bf16_check(inp, out):
    f, g = inp[:N].view(F32), inp[N:2 * N].view(F32)
    with np.errstate(over="ignore"):
        h, k = f.astype(F16), g.astype(F16)
        p = (h.astype(F64) * k.astype(F64)).astype(F16)       # a product of halves is exact in f64
    x = bf16(f)
    same_bits(out[:N], p.view(np.uint16).astype(U32) | x.astype(U32) << 16)
    with np.errstate(invalid="ignore"):
        same_bits(out[N:2 * N].view(F32), h.astype(F32) - bf16_to_f32(x))


def _hip_64_in(rng):
    u = rng.integers(0, 1 << 64, 2 * N, dtype=U64)
    u[N::3] = rng.integers(1, 1000, u[N::3].size)
    d = rng.uniform(-1e9, 1e9, N) * 1e290 * 2.0 ** rng.integers(-8, 1, N)   # d * 1e-290 fits an int64
    e = rng.standard_normal(N) * 2.0 ** rng.integers(-200, 200, N)
    d[:3], e[:3] = [0.0, -0.0, 1e299], [1.0, -3.0, 1e-20]
    return words(u, d, e)


def _hip_64_check(inp, out):
    a, b = inp[:128].view(U64).tolist(), [v | 1 for v in inp[128:256].view(U64).tolist()]
    m = (1 << 64) - 1
    same_bits(out[:128].view(U64), np.array([(x % y + (x << 7) - (x >> 3)) & m for x, y in zip(a, b)], U64))
    d, e = inp[256:384].view(F64), inp[384:512].view(F64)
    with np.errstate(all="ignore"):
        same_bits(out[128:256].view(F64), d * e - d / e)
    same_bits(out[256:384].view(I64), np.array([math.trunc(float(x)) for x in d * 1e-290], I64))


def _hip_atomics_init():
    o = np.zeros(WORDS, U32)
    o[1] = np.array([INT_MIN], I32).view(U32)[0]
    return o


def _hip_atomics_check(inp, out):
    v = inp[:N]
    w = (v & 255).astype(np.int64)
    ret = out[64:128].astype(np.int64)
    order = np.argsort(ret, kind="stable")
    assert ret[order[0]] == 0 and (ret[order][1:] == (ret + w)[order][:-1]).all(), \
        "returned values are not a chain of the fetch_add increments"
    exp = _hip_atomics_init()
    exp[0] = int(w.sum())
    exp[1] = np.array([v.view(I32).max()], I32).view(U32)[0]
    exp[2] = np.array([float((v & 15).sum())], F32).view(U32)[0]
    even, odd = np.flatnonzero(v % 2 == 0), np.flatnonzero(v % 2 == 1)
    assert (out[3] in even.tolist()) if even.size else out[3] == 0
    assert (out[4] in odd.tolist()) if odd.size else out[4] == 0
    exp[3:5], exp[64:128] = out[3:5], out[64:128]
    same_bits(out, exp)


def _hip_shared_check(inp, out):
    exp = np.zeros(WORDS, U32)
    exp[:N] = np.cumsum(inp[:N].astype(np.uint64)) & 0xFFFFFFFF
    same_bits(out, exp)


def _hip_switch(a: int, b: int) -> int:
    case = a & 3
    if case == 0:
        return a >> (b & 31)
    if case == 1:
        return (a << (b & 31)) & 0xFFFFFFFF
    if case == 2:
        return bin(a).count("1") + (32 - (b | 1).bit_length())
    return (a * b) & 0xFFFFFFFF


def _hip_control_check(inp, out):
    a, b = inp[:N].tolist(), inp[N:2 * N].tolist()
    exp = np.zeros(WORDS, U32)
    exp[:N] = [math.gcd(x % 100000 + 1, y % 1000 + 1) for x, y in zip(a, b)]
    exp[N:2 * N] = [_hip_switch(x, y) for x, y in zip(a, b)]
    same_bits(out, exp)


HIP = {
    "hip_vec": Spec(_hip_vec_in, _hip_vec_check),
    "hip_half_bf16": Spec(_hip_half_bf16_in, _hip_half_bf16_check),
    "hip_64": Spec(_hip_64_in, _hip_64_check),
    "hip_atomics": Spec(_u32_in, _hip_atomics_check, _hip_atomics_init),
    "hip_shared": Spec(_u32_in, _hip_shared_check),
    "hip_control": Spec(_u32_in, _hip_control_check),
}
