"""Comparison family (setp/selp/set/slct, NaN ordering) and cvt (rounding, saturation, NaN -> 0)."""
import numpy as np
import pytest

from tests.emu.nv.ptx.oprig import f32b, run_op, u32
from tests.emu.nv.ptx.rig import fr, round_exact

NAN = 0x7FC00000


@pytest.mark.parametrize("cmp,ref", [
    ("eq", lambda a, b: a == b), ("ne", lambda a, b: a != b and not (np.isnan(a) or np.isnan(b))),
    ("lt", lambda a, b: a < b), ("ge", lambda a, b: a >= b),
    ("equ", lambda a, b: a == b or np.isnan(a) or np.isnan(b)), ("neu", lambda a, b: not a == b),
    ("ltu", lambda a, b: not a >= b), ("geu", lambda a, b: not a < b),
    ("num", lambda a, b: not (np.isnan(a) or np.isnan(b))), ("nan", lambda a, b: np.isnan(a) or np.isnan(b)),
])
def test_setp_float_nan_ordering(cmp, ref):
    a = np.array([f32b(1.0)[0], NAN, f32b(-0.0)[0], f32b(2.0)[0], NAN], np.uint32)
    b = np.array([f32b(1.0)[0], f32b(1.0)[0], f32b(0.0)[0], f32b(1.0)[0], NAN], np.uint32)
    got = run_op(f"setp.{cmp}.f32 %p, %a, %b; selp.u32 %d, 1, 0, %p;", "f32", "u32", a, b).tolist()
    av, bv = a.view(np.float32), b.view(np.float32)
    assert got == [int(bool(ref(x, y))) for x, y in zip(av, bv)]


def test_setp_unsigned_signed_and_boolean_combination():
    a, b = u32(-1, 1, 5), u32(1, -1, 5)
    assert run_op("setp.lt.s32 %p, %a, %b; selp.u32 %d, 1, 0, %p;", "s32", "u32", a, b).tolist() == [1, 0, 0]
    assert run_op("setp.lo.u32 %p, %a, %b; selp.u32 %d, 1, 0, %p;", "u32", "u32", a, b).tolist() == [0, 1, 0]
    body = "setp.eq.s32 %q, %a, 5; setp.ne.and.s32 %p|%q, %a, %b, %q; selp.u32 %d, 1, 0, %q;"
    assert run_op(body, "s32", "u32", a, b).tolist() == [0, 0, 1]   # q = !(a != b) & q_in
    body = "setp.gt.s32 %q, %a, 0; setp.ne.or.s32 %p, %a, %b, %q; selp.u32 %d, 1, 0, %p;"
    assert run_op(body, "s32", "u32", a, b).tolist() == [1, 1, 1]


def test_set_and_slct():
    got = run_op("set.lt.u32.s32 %d, %a, %b;", "s32", "u32", u32(-1, 3), u32(0, 3)).tolist()
    assert got == [0xFFFFFFFF, 0]
    got = run_op("set.lt.f32.s32 %d, %a, %b;", "s32", "f32", u32(-1, 3), u32(0, 3)).tolist()
    assert got == f32b(1.0, 0.0).tolist()
    got = run_op("slct.u32.f32 %d, %a, %b, %c;", "u32", "u32", u32(1, 1, 1), u32(2, 2, 2),
                 f32b(0.0, -0.0, -1.0), tc="f32").tolist()
    assert got == [1, 1, 2]                                  # -0.0 >= 0


@pytest.mark.parametrize("rnd,py", [("rni", None), ("rzi", np.trunc), ("rmi", np.floor), ("rpi", np.ceil)])
def test_cvt_float_to_int_rounds_saturates_and_nan_is_zero(rnd, py):
    v = f32b(2.5, -2.5, 3.5, -0.5, 3e9, -3e9, np.inf)
    v = np.append(v, np.uint32(NAN))
    got = run_op(f"cvt.{rnd}.s32.f32 %d, %a;", "f32", "s32", v).view(np.int32).tolist()
    vals = [2.5, -2.5, 3.5, -0.5, 3e9, -3e9, np.inf]
    rounded = [float(np.rint(x)) if py is None else float(py(x)) for x in vals]
    assert got == [int(max(-2**31, min(2**31 - 1, r))) for r in rounded] + [0]
    got = run_op(f"cvt.{rnd}.u32.f32 %d, %a;", "f32", "u32", v).tolist()
    assert got == [int(max(0, min(2**32 - 1, r))) for r in rounded] + [0]


def test_cvt_narrowing_floats_in_every_mode():
    rng = np.random.default_rng(70)
    x = rng.standard_normal(24) * np.exp2(rng.integers(-140, 130, 24))
    x[:3] = [1e300, 1e-300, -1 - 2**-30]
    for mode in ("rn", "rz", "rm", "rp"):
        got = run_op(f"cvt.{mode}.f32.f64 %d, %a;", "f64", "f32", x.view(np.uint64))
        assert got.tolist() == [int(round_exact(fr(v), "f32", mode).view(np.uint32)) for v in x], mode
    y = (rng.standard_normal(16) * np.exp2(rng.integers(-26, 17, 16))).astype(np.float32)
    for mode in ("rn", "rz", "rm", "rp"):
        got = run_op(f"cvt.{mode}.f16.f32 %d, %a;", "f32", "f16", y.view(np.uint32))
        assert got.tolist() == [int(round_exact(fr(v), "f16", mode).view(np.uint16)) for v in y], mode


def test_cvt_int_to_float_ties_and_64_bit():
    x = np.array([2**24 + 1, 2**24 + 3, -(2**53) - 1, 2**63 - 1, 12345], np.int64)
    for mode in ("rn", "rz", "rm", "rp"):
        got = run_op(f"cvt.{mode}.f32.s64 %d, %a;", "s64", "f32", x.view(np.uint64))
        assert got.tolist() == [int(round_exact(fr(0) + int(v), "f32", mode).view(np.uint32)) for v in x], mode
    got = run_op("cvt.rn.f64.u64 %d, %a;", "u64", "f64", np.array([2**64 - 1, 2**53 + 1], np.uint64), dtype=np.float64)
    assert got.tolist() == [2.0**64, 2.0**53]


def test_cvt_integer_saturation_and_extension():
    assert run_op("cvt.sat.s8.s32 %d, %a;", "s32", "s32", u32(300, -300, 5)).tolist() == [127, (-128) & 0xFFFFFFFF, 5]
    assert run_op("cvt.sat.u8.s32 %d, %a;", "s32", "u32", u32(300, -3, 5)).tolist() == [255, 0, 5]
    assert run_op("cvt.s64.s32 %d, %a;", "s32", "s64", u32(-2, 7)).tolist() == [2**64 - 2, 7]
    assert run_op("cvt.u64.u32 %d, %a;", "u32", "u64", u32(-2, 7)).tolist() == [2**32 - 2, 7]
    assert run_op("cvt.u16.u32 %d, %a;", "u32", "u16", u32(0x12345678)).tolist() == [0x5678]
    assert run_op("cvt.s32.s8 %d, %a;", "s32", "s32", u32(0x1F0)).tolist() == [0xFFFFFFF0]


def test_cvt_float_to_float_same_size_rounds_to_integral():
    v = f32b(2.5, -2.5, 1.5, 0.49999997)
    assert run_op("cvt.rni.f32.f32 %d, %a;", "f32", "f32", v).tolist() == f32b(2.0, -2.0, 2.0, 0.0).tolist()
    assert run_op("cvt.rmi.f32.f32 %d, %a;", "f32", "f32", v).tolist() == f32b(2.0, -3.0, 1.0, 0.0).tolist()


def test_cvt_pack_f16x2_and_tf32():
    got = run_op("cvt.rn.f16x2.f32 %d, %a, %b;", "f32", "b32", f32b(1.0), f32b(-2.0))
    assert int(got[0]) == (0x3C00 << 16) | 0xC000          # d.hi = cvt(a), d.lo = cvt(b)
    got = run_op("cvt.rna.tf32.f32 %d, %a;", "f32", "b32", f32b(1 + 2**-11, 1 + 2**-11 + 2**-12))
    assert got.tolist() == [f32b(1 + 2**-10)[0], f32b(1 + 2**-10)[0]]   # ties away from zero
