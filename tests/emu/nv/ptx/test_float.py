"""Floating-point family: canonical NaN, signed zeros, .ftz, .sat, rounding modes, fma single rounding,
min/max ordering, f64 fma, and the half formats."""
import numpy as np
import pytest

from tests.emu.nv.ptx.oprig import f32b, run_op
from tests.emu.nv.ptx.rig import fr, round_exact

NAN_PAYLOAD = 0x7FC12345
CANON = 0x7FFFFFFF
SUB = 1e-40          # an f32 subnormal


def test_arithmetic_nan_results_are_canonical():
    a = np.array([NAN_PAYLOAD, 0x7F800000, 0xFFC00001], np.uint32)
    b = f32b(1.0, -np.inf, 2.0)
    assert run_op("add.f32 %d, %a, %b;", "f32", "f32", a, b).tolist() == [CANON, CANON, CANON]
    assert run_op("mul.rn.f32 %d, %a, %b;", "f32", "f32", a, b).tolist() == [CANON, 0xFF800000, CANON]


def test_abs_neg_keep_the_nan_payload():
    a = np.array([NAN_PAYLOAD, 0x80000000], np.uint32)
    assert run_op("neg.f32 %d, %a;", "f32", "f32", a).tolist() == [NAN_PAYLOAD | 0x80000000, 0]
    assert run_op("abs.f32 %d, %a;", "f32", "f32", a | np.uint32(0x80000000)).tolist() == [NAN_PAYLOAD, 0]


def test_signed_zero_sums_per_rounding_mode():
    a, b = f32b(1.0, -0.0, 0.0), f32b(-1.0, -0.0, -0.0)
    assert run_op("add.rn.f32 %d, %a, %b;", "f32", "f32", a, b).tolist() == [0, 0x80000000, 0]
    assert run_op("add.rm.f32 %d, %a, %b;", "f32", "f32", a, b).tolist() == [0x80000000, 0x80000000, 0x80000000]
    assert run_op("add.rz.f32 %d, %a, %b;", "f32", "f32", a, b).tolist() == [0, 0x80000000, 0]


def test_ftz_flushes_inputs_and_results():
    a, b = f32b(SUB, 1e-20, -SUB), f32b(1.0, 1e-20, 0.0)
    plain = run_op("mul.f32 %d, %a, %b;", "f32", "f32", a, b)
    ftz = run_op("mul.ftz.f32 %d, %a, %b;", "f32", "f32", a, b)
    assert plain[0] == f32b(np.float32(SUB))[0] and plain[1] == f32b(np.float32(1e-20) * np.float32(1e-20))[0]
    assert ftz.tolist() == [0, 0, 0x80000000]               # subnormal in, subnormal out, sign kept


def test_sat_clamps_and_nan_is_zero():
    a = np.array([f32b(2.0)[0], f32b(-3.0)[0], NAN_PAYLOAD, f32b(0.25)[0]], np.uint32)
    got = run_op("add.sat.f32 %d, %a, %b;", "f32", "f32", a, f32b(0.5, 0.5, 0.5, 0.5))
    assert got.tolist() == f32b(1.0, 0.0, 0.0, 0.75).tolist()


def test_fma_rounds_once_where_two_roundings_differ():
    # (1 + 2^-23)^2 - 1 = 2^-22 + 2^-46 exactly: a product rounded first would lose the 2^-46
    a = f32b(np.float32(1 + 2**-23), np.float32(1 + 2**-23))
    b = f32b(np.float32(1 + 2**-23), np.float32(1 - 2**-24))
    c = f32b(-1.0, -1.0)
    got = run_op("fma.rn.f32 %d, %a, %b, %c;", "f32", "f32", a, b, c)
    for i in range(2):
        va, vb, vc = (np.array(x[i], np.uint32).view(np.float32) for x in (a, b, c))
        assert got[i] == round_exact(fr(va) * fr(vb) + fr(vc)).view(np.uint32)
    # the midpoint case: x*y + z exactly between two floats but the f64 sum is inexact
    x = np.float32(1 + 2**-12)
    y = np.float32(1 + 2**-12)                # x*y = 1 + 2^-11 + 2^-24: exactly a float32 midpoint...
    z = np.float32(2**-60)                    # ... pushed above it by z: RN must round up
    got = run_op("fma.rn.f32 %d, %a, %b, %c;", "f32", "f32", f32b(x), f32b(y), f32b(z))
    assert got[0] == round_exact(fr(x) * fr(y) + fr(z)).view(np.uint32)
    assert got[0] != np.float32(np.float64(x) * np.float64(y) + np.float64(z)).view(np.uint32)


@pytest.mark.parametrize("lanes", [32, 29])          # a whole warp (fast path) and a partial one (masked)
def test_fma_rn_subnormal_results_nan_and_infinity(lanes):
    rng = np.random.default_rng(61)
    x = (rng.standard_normal(lanes) * np.exp2(rng.integers(-75, -60, lanes))).astype(np.float32)
    y = (rng.standard_normal(lanes) * np.exp2(rng.integers(-75, -60, lanes))).astype(np.float32)
    z = (rng.standard_normal(lanes) * np.exp2(rng.integers(-150, -125, lanes))).astype(np.float32)
    x[:3], y[:3], z[:3] = [np.inf, 0.0, 1.0], [0.0, 2.0, 3.0], [1.0, np.nan, -np.inf]
    # exactly 2^-130 + 2^-150 + 2^-196: the f64 sum drops 2^-196 and lands on a subnormal f32 midpoint
    x[3], y[3], z[3] = -2.0**-75 * (1 + 2.0**-23), 2.0**-75 * (1 - 2.0**-23), 2.0**-130 + 2.0**-149
    got = run_op("fma.rn.f32 %d, %a, %b, %c;", "f32", "f32", x.view(np.uint32), y.view(np.uint32),
                 z.view(np.uint32))
    assert got[:3].tolist() == [CANON, CANON, 0xFF800000]     # inf*0 and NaN in: the canonical NaN
    ref = [round_exact(fr(a) * fr(b) + fr(c)).view(np.uint32) for a, b, c in zip(x[3:], y[3:], z[3:])]
    assert got[3:].tolist() == [int(v) for v in ref]
    assert any(0 < (v & 0x7FFFFFFF) < 0x00800000 for v in got[3:])   # the subnormal range was exercised


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_add_mul_fma_in_every_rounding_mode(mode):
    rng = np.random.default_rng(60)
    x = (rng.standard_normal(32) * np.exp2(rng.integers(-30, 30, 32))).astype(np.float32)
    y = (rng.standard_normal(32) * np.exp2(rng.integers(-30, 30, 32))).astype(np.float32)
    z = (rng.standard_normal(32) * np.exp2(rng.integers(-30, 30, 32))).astype(np.float32)
    for body, f in ((f"add.{mode}.f32 %d, %a, %b;", lambda a, b, c: a + b),
                    (f"mul.{mode}.f32 %d, %a, %b;", lambda a, b, c: a * b),
                    (f"fma.{mode}.f32 %d, %a, %b, %c;", lambda a, b, c: a * b + c)):
        nin = 3 if body.startswith("fma") else 2
        got = run_op(body, "f32", "f32", *(x.view(np.uint32), y.view(np.uint32), z.view(np.uint32))[:nin])
        ref = [round_exact(f(fr(a), fr(b), fr(c)), "f32", mode).view(np.uint32) for a, b, c in zip(x, y, z)]
        assert got.tolist() == [int(v) for v in ref], body


def test_f64_fma_and_directed_add():
    rng = np.random.default_rng(61)
    x, y, z = (rng.standard_normal(16) * np.exp2(rng.integers(-60, 60, 16)) for _ in range(3))
    got = run_op("fma.rn.f64 %d, %a, %b, %c;", "f64", "f64", x, y, z, dtype=np.float64)
    assert [v.view(np.uint64) for v in got] == [round_exact(fr(a) * fr(b) + fr(c), "f64").view(np.uint64)
                                                for a, b, c in zip(x, y, z)]
    for mode in ("rz", "rm", "rp"):
        got = run_op(f"add.{mode}.f64 %d, %a, %b;", "f64", "f64", x, y, dtype=np.float64)
        assert [v.view(np.uint64) for v in got] == [round_exact(fr(a) + fr(b), "f64", mode).view(np.uint64)
                                                    for a, b in zip(x, y)]


def test_min_max_order_signed_zeros_and_nans():
    a = np.array([f32b(-0.0)[0], f32b(0.0)[0], NAN_PAYLOAD, NAN_PAYLOAD, f32b(1.0)[0]], np.uint32)
    b = np.array([f32b(0.0)[0], f32b(-0.0)[0], f32b(2.0)[0], 0xFFC00000, f32b(-1.0)[0]], np.uint32)
    assert run_op("min.f32 %d, %a, %b;", "f32", "f32", a, b).tolist() == \
        [0x80000000, 0x80000000, f32b(2.0)[0], CANON, f32b(-1.0)[0]]
    assert run_op("max.f32 %d, %a, %b;", "f32", "f32", a, b).tolist() == \
        [0, 0, f32b(2.0)[0], CANON, f32b(1.0)[0]]
    assert run_op("max.NaN.f32 %d, %a, %b;", "f32", "f32", a, b).tolist()[2] == CANON


def test_div_sqrt_rcp_special_values():
    a, b = f32b(1.0, -1.0, 0.0, np.inf, 1.0), f32b(0.0, 0.0, 0.0, np.inf, 3.0)
    got = run_op("div.rn.f32 %d, %a, %b;", "f32", "f32", a, b).tolist()
    assert got == [0x7F800000, 0xFF800000, CANON, CANON, round_exact(fr(1.0) / 3).view(np.uint32)]
    got = run_op("sqrt.rn.f32 %d, %a;", "f32", "f32", f32b(-1.0, -0.0, np.inf, 2.0))
    assert got.tolist() == [CANON, 0x80000000, 0x7F800000, f32b(np.sqrt(np.float64(2.0)))[0]]
    got = run_op("rcp.rn.f32 %d, %a;", "f32", "f32", f32b(3.0, -0.0))
    assert got.tolist() == [round_exact(fr(1.0) / 3).view(np.uint32), 0xFF800000]


def test_copysign_and_testp():
    # copysign d, a, b: b's magnitude with a's sign
    assert run_op("copysign.f32 %d, %a, %b;", "f32", "f32", f32b(-1.0, 2.0), f32b(3.0, -4.0)).tolist() == \
        f32b(-3.0, 4.0).tolist()
    v = np.array([f32b(SUB)[0], f32b(1.0)[0], 0x7F800000, NAN_PAYLOAD, 0], np.uint32)
    body = "testp.{} %p, %a; selp.u32 %d, 1, 0, %p;"
    expect = {"subnormal": [1, 0, 0, 0, 0], "normal": [0, 1, 0, 0, 0], "infinite": [0, 0, 1, 0, 0],
              "notanumber": [0, 0, 0, 1, 0], "finite": [1, 1, 0, 0, 1], "number": [1, 1, 1, 0, 1]}
    for k, ref in expect.items():
        assert run_op(body.format(k + ".f32"), "f32", "u32", v).tolist() == ref, k


def test_half_and_bf16_packed_arithmetic():
    h = lambda *v: np.array(v, np.float16).view(np.uint16)
    a = (h(1.5, 65504.0).astype(np.uint32) | (h(-2.0, 6e-8).astype(np.uint32) << 16)).astype(np.uint32)
    b = (h(2.25, 65504.0).astype(np.uint32) | (h(0.5, 0.5).astype(np.uint32) << 16)).astype(np.uint32)
    got = run_op("mul.rn.f16x2 %d, %a, %b;", "b32", "b32", a, b)
    lo = (got & 0xFFFF).astype(np.uint16).view(np.float16)
    hi = (got >> 16).astype(np.uint16).view(np.float16)
    assert lo.tolist() == [3.375, np.inf] and hi.tolist() == [-1.0, 0.0]   # 6e-8 * 0.5 rounds to 0 (tie even)
    bf = lambda x: int(np.array(x, np.float32).view(np.uint32)) >> 16
    a = np.array([bf(1.0) | (bf(3.0) << 16)], np.uint32)
    b = np.array([bf(2.0 ** -8) | (bf(-3.0) << 16)], np.uint32)
    got = int(run_op("add.rn.bf16x2 %d, %a, %b;", "b32", "b32", a, b)[0])
    assert got & 0xFFFF == bf(1.0) and got >> 16 == 0                      # 1 + 2^-8 ties to even; 3 - 3 = +0


@pytest.mark.parametrize("t,ft,ut", [("f32", np.float32, np.uint32), ("f64", np.float64, np.uint64)])
@pytest.mark.parametrize("mode", ["rz", "rm", "rp"])
def test_sqrt_and_div_directed(t, ft, ut, mode):
    rng = np.random.default_rng(62)
    a = (np.abs(rng.standard_normal(24)) * np.exp2(rng.integers(-60, 60, 24))).astype(ft)
    a[:2] = [4.0, 2.0]
    got = run_op(f"sqrt.{mode}.{t} %d, %a;", t, t, a.view(ut)).view(ft)
    for x, r in zip(a, got):
        lo_sq, hi = fr(r) ** 2, fr(np.nextafter(r, ft(np.inf))) ** 2
        below = fr(np.nextafter(r, ft(0))) ** 2
        if mode == "rp":
            assert below < fr(x) <= lo_sq, (x, r)
        else:
            assert lo_sq <= fr(x) < hi, (x, r)
    b = (rng.standard_normal(24) * np.exp2(rng.integers(-30, 30, 24))).astype(ft)
    got = run_op(f"div.{mode}.{t} %d, %a, %b;", t, t, a.view(ut), b.view(ut)).view(ft)
    assert [int(v) for v in got.view(ut)] == [int(round_exact(fr(x) / fr(y), t, mode).view(ut)) for x, y in zip(a, b)]


def test_documented_decisions_f64_nan_and_int64_division_by_zero():
    nan = np.array([0x7FF8000000000123, 0xFFF0000000000001], np.uint64)
    one = np.array([1.0, 2.0]).view(np.uint64)
    assert run_op("add.f64 %d, %a, %b;", "f64", "f64", nan, one).tolist() == [0x7FFFFFFFFFFFFFFF] * 2
    assert run_op("min.f64 %d, %a, %b;", "f64", "f64", nan, nan).tolist() == [0x7FFFFFFFFFFFFFFF] * 2
    a = np.array([5, -5], np.int64).view(np.uint64)
    z = np.zeros(2, np.uint64)
    assert run_op("div.s64 %d, %a, %b;", "s64", "s64", a, z).tolist() == [2**64 - 1] * 2
    assert run_op("rem.s64 %d, %a, %b;", "s64", "s64", a, z).tolist() == a.tolist()
    assert run_op("div.u64 %d, %a, %b;", "u64", "u64", a, z).tolist() == [2**64 - 1] * 2


def test_f16_ftz_flushes_half_subnormals():
    h = lambda *v: np.array(v, np.float16).view(np.uint16)
    a, b = h(6e-5, 1e-4), h(0.5, 0.5)            # 6e-5 is an f16 subnormal; 1e-4 * 0.5 = 5e-5 is one too
    assert run_op("mul.rn.f16 %d, %a, %b;", "f16", "f16", a, b).tolist() == \
        [int(v) for v in h(np.float16(6e-5) * np.float16(0.5), np.float16(1e-4) * np.float16(0.5))]
    assert run_op("mul.rn.ftz.f16 %d, %a, %b;", "f16", "f16", a, b).tolist() == [0, 0]
