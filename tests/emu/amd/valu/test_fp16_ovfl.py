"""MODE.FP16_OVFL (bit 23): an f16 VALU result that overflows becomes +-MAX_FP16 (65504) whatever the round
mode; infinities from infinite inputs stay infinite, NaNs stay NaN (RDNA3/RDNA4/CDNA3 guides, MODE table).

Each case is a small kernel assembled here (gputwin.emu.amd.isa.assemble) and run through run_dispatch:
it sets the bit with s_setreg_imm32_b32 (or the kernel descriptor's RSRC1.FP16_OVFL), loads four dwords
per lane, runs one instruction into v6 and stores v6. The expected bits come from numpy: the exact result
in float64 rounded by numpy's float16 conversion (nearest-even, overflow to inf), then saturated where the
result is infinite and no input is. With the bit clear the same kernel must give the infinities."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from gputwin.emu.amd import gfx12
from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.isa import assemble
from gputwin.emu.amd.standalone import Arena
from gputwin.emu.amd.valu import execute
from gputwin.errors import IllegalInstruction
from tests.emu.amd.test_gfx12 import run12
from tests.emu.amd.valu.helpers import MODE, V, fill, group, inst
from tests.emu.amd.valu.test_wmma import _pack_ab as _pack_ab_lanes
from tests.emu.amd.valu.test_wmma12 import _pack_ab, _pack_cd, _unpack_cd

H = np.float16
MAX16 = 0x7BFF
LANES = {"gfx1100": 32, "gfx1200": 32, "gfx942": 64}
FLOAT_MODE_KEEP_DENORMALS = 0xF0 << 12          # RSRC1.FLOAT_MODE: denormals kept, nearest-even
RSRC1_FP16_OVFL = 1 << 26


def _kernel(arch: str, body: str, ovfl: bool | None) -> str:
    setreg = "" if ovfl is None else f"s_setreg_imm32_b32 hwreg(HW_REG_MODE, 23, 1), {int(ovfl)}\n"
    if arch == "gfx942":
        load, store, wait = "global_load_dwordx4 v[2:5], v1, s[0:1]", "global_store_dword v7, v6, s[2:3]", \
            "s_waitcnt vmcnt(0)"
    else:
        load, store = "global_load_b128 v[2:5], v1, s[0:1]", "global_store_b32 v7, v6, s[2:3]"
        wait = "s_wait_loadcnt 0x0" if arch == "gfx1200" else "s_waitcnt vmcnt(0)"
    return (f"{setreg}v_lshlrev_b32 v1, 4, v0\n{load}\nv_lshlrev_b32 v7, 2, v0\nv_mov_b32 v6, 0\n{wait}\n"
            f"{body}\n{store}\ns_endpgm\n")


def run(body: str, words, *, ovfl: bool | None, arch="gfx1100", rsrc1=0, lanes=None) -> np.ndarray:
    """v6 of every lane after `body`, with v2..v5 = words[lane] (uint32 (rows, 4), repeated to fill the
    lanes: one wave unless `lanes` asks for a larger workgroup)."""
    wave = LANES[arch]
    lanes = lanes or wave
    words = np.resize(np.asarray(words, np.uint32), (lanes, 4))
    arena = Arena()
    src, dst = arena.alloc(words.nbytes, words), arena.alloc(4 * lanes)
    code = assemble(_kernel(arch, body, ovfl), arch)
    run_dispatch(arena.mem, Dispatch(code_address=0x40000, code=code, block=(lanes, 1, 1), wave64=wave == 64,
                                     user_sgprs=[src & 0xFFFFFFFF, src >> 32, dst & 0xFFFFFFFF, dst >> 32],
                                     rsrc1=FLOAT_MODE_KEEP_DENORMALS | rsrc1, rsrc2=4 << 1), arch=arch)
    return arena.array(dst, np.uint32, lanes)


def h16(values) -> np.ndarray:
    return np.asarray(values, H).view(np.uint16).astype(np.uint32)


def ref16(exact, inputs, ovfl: bool) -> np.ndarray:
    """float64 exact results -> f16 bits: nearest-even; with ovfl, infinities of finite inputs -> +-65504."""
    exact = np.asarray(exact, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        r = exact.astype(H)
    if ovfl:
        inf_in = np.zeros(exact.shape, bool)
        for x in inputs:
            inf_in |= np.isinf(np.asarray(x, np.float64))
        r = np.where(np.isinf(r) & ~inf_in, np.copysign(H(65504), r), r).astype(H)
    return r.view(np.uint16).astype(np.uint32)


def same(got, want):
    """Bit-equal on the first len(want) lanes, except that NaN lanes only need to be NaN in both (payload
    rules are tested elsewhere)."""
    want = np.asarray(want, np.uint32)
    got16, want16 = (np.asarray(x, np.uint32)[:want.size] & 0xFFFF for x in (got, want))
    nan_got, nan_want = (((x & 0x7FFF) > 0x7C00) for x in (got16, want16))
    assert np.array_equal(nan_got, nan_want)
    assert np.array_equal(got16[~nan_got], want16[~nan_want])


# Operands chosen so that float64 holds every exact result: |x| in [2^-4, 65504], plus the specials.
A = H([60000, -60000, 65504, 65504, 32768, 65504, np.inf, -np.inf, np.nan, 1.5, 40000, -65504, 0.0625, 300, 2, 7])
B = H([60000, -60000, 16, 15, 32768, -60000, 1, 5, 1, 2.5, 2, -2, 0.25, 300, np.inf, -3])
C = H([1, -1, 0, 0, 2, 0, 3, -np.inf, 0, 1, -20000, 1, 1, 65504, 1, -65504])


def _words(*cols):
    n = max(len(c) for c in cols)
    w = np.zeros((n, 4), np.uint32)
    for i, c in enumerate(cols):
        w[:, i] = c
    return w


BINARY = {"v_add_f16": np.add, "v_sub_f16": np.subtract, "v_mul_f16": np.multiply}


@pytest.mark.parametrize("ovfl", [True, False])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_f16_arithmetic(name, ovfl):
    a, b = A.astype(np.float64), B.astype(np.float64)
    with np.errstate(invalid="ignore"):
        exact = BINARY[name](a, b)
    got = run(f"{name} v6, v2, v3", _words(h16(A), h16(B)), ovfl=ovfl)
    same(got, ref16(exact, (a, b), ovfl))
    assert (ref16(exact, (a, b), True) != ref16(exact, (a, b), False)).any()   # the data overflows somewhere


@pytest.mark.parametrize("ovfl", [True, False])
@pytest.mark.parametrize("body", ["v_fma_f16 v6, v2, v3, v4", "v_mov_b32 v6, v4\nv_fmac_f16 v6, v2, v3"])
def test_fma_and_fmac_f16(body, ovfl):
    a, b, c = (x.astype(np.float64) for x in (A, B, C))
    with np.errstate(invalid="ignore"):
        exact = a * b + c
    same(run(body, _words(h16(A), h16(B), h16(C)), ovfl=ovfl), ref16(exact, (a, b, c), ovfl))


@pytest.mark.parametrize("ovfl", [True, False])
def test_cvt_f16_f32_and_from_u16(ovfl):
    x = np.float32([65519.0, 65520.0, -65520.0, 1e6, -3.4e38, np.inf, -np.inf, np.nan, 1.0, 65504.0])
    got = run("v_cvt_f16_f32 v6, v2", _words(x.view(np.uint32)), ovfl=ovfl)
    same(got[:10], ref16(x.astype(np.float64), (x,), ovfl))
    u = np.uint32([65535, 65520, 65519, 65504, 1000])
    got = run("v_cvt_f16_u16 v6, v2", _words(u), ovfl=ovfl)
    same(got[:5], ref16(u.astype(np.float64), (), ovfl))


@pytest.mark.parametrize("ovfl", [True, False])
def test_ldexp_f16_overflow_from_a_finite_input(ovfl):
    a = H([1.0, -1.5, np.inf, 1.0, 2.0])
    e = np.int16([16, 20, 3, 15, -3])
    got = run("v_ldexp_f16 v6, v2, v3", _words(h16(a), e.view(np.uint16).astype(np.uint32)), ovfl=ovfl)
    same(got[:5], ref16(np.ldexp(a.astype(np.float64), e), (a,), ovfl))


@pytest.mark.parametrize("ovfl", [True, False])
@pytest.mark.parametrize("name,fn", [("v_pk_add_f16", lambda a, b, c: a + b), ("v_pk_mul_f16", lambda a, b, c: a * b),
                                     ("v_pk_fma_f16", lambda a, b, c: a * b + c)])
def test_packed_f16_each_half(name, fn, ovfl):
    lo, hi = (A, B, C), (B, C, A)              # both halves, different data
    words = _words(*(h16(l) | h16(h) << 16 for l, h in zip(lo, hi)))
    srcs = "v6, v2, v3, v4" if name == "v_pk_fma_f16" else "v6, v2, v3"
    got = run(f"{name} {srcs}", words, ovfl=ovfl)
    for half, ops in ((0, lo), (16, hi)):
        xs = [o.astype(np.float64) for o in ops]
        with np.errstate(invalid="ignore"):
            same(got[:16] >> half, ref16(fn(*xs), xs if name == "v_pk_fma_f16" else xs[:2], ovfl))


@pytest.mark.parametrize("ovfl", [True, False])
def test_fma_mix_f16_result_of_f32_sources(ovfl):
    a = np.float32([300.0, -300.0, 256.0, np.inf, 2.0, 1e5])
    b = np.float32([300.0, 300.0, 256.0, 2.0, np.nan, 1.0])
    c = np.float32([0.0, -5.0, -1.0, 1.0, 0.0, -1e5 + 1])
    got = run("v_fma_mixlo_f16 v6, v2, v3, v4", _words(*(x.view(np.uint32) for x in (a, b, c))), ovfl=ovfl)
    xs = [x.astype(np.float64) for x in (a, b, c)]
    with np.errstate(invalid="ignore"):
        same(got[:6], ref16(xs[0] * xs[1] + xs[2], xs, ovfl))


@pytest.mark.parametrize("ovfl", [True, False])
def test_dot2_f16_f16_inputs_in_both_packed_halves(ovfl):
    a_lo, a_hi = H([256, 256, np.inf, 2, 100]), H([256, -256, 1, 3, 100])
    b_lo, b_hi = H([256, 256, 1, 2, 200]), H([1, 256, 1, np.inf, 200])
    c = H([1, 0, 0, 0, 65504])
    words = _words(h16(a_lo) | h16(a_hi) << 16, h16(b_lo) | h16(b_hi) << 16, h16(c))
    got = run("v_dot2_f16_f16 v6, v2, v3, v4", words, ovfl=ovfl)
    xs = [x.astype(np.float64) for x in (a_lo, a_hi, b_lo, b_hi, c)]
    with np.errstate(invalid="ignore"):
        same(got[:5], ref16(xs[0] * xs[2] + xs[1] * xs[3] + xs[4], xs, ovfl))


@pytest.mark.parametrize("ovfl", [True, False])
def test_transcendentals_overflow_and_divide_by_zero(ovfl):
    """v_exp_f16(16) overflows; v_rcp_f16(+-0) and v_log_f16(0) divide by zero, from finite inputs, so they
    saturate too (docs/mode.md); exp of +inf stays +inf."""
    x = H([16.0, 20.0, 15.0, np.inf, -np.inf, np.nan, 0.0])
    same(run("v_exp_f16 v6, v2", _words(h16(x)), ovfl=ovfl)[:7],
         ref16(np.exp2(x.astype(np.float64)), (x,), ovfl))
    z = H([0.0, -0.0, np.inf, 2.0])
    with np.errstate(divide="ignore"):
        same(run("v_rcp_f16 v6, v2", _words(h16(z)), ovfl=ovfl)[:4], ref16(1.0 / z.astype(np.float64), (z,), ovfl))
        same(run("v_log_f16 v6, v2", _words(h16(z)), ovfl=ovfl)[:4],
             ref16(np.log2(np.abs(z.astype(np.float64))), (z,), ovfl))


@pytest.mark.parametrize("ovfl", [True, False])
def test_cvt_pkrtz_never_overflows_and_keeps_infinities(ovfl):
    a = np.float32([1e6, -1e6, np.inf, np.nan, 65536.0])
    b = np.float32([-np.inf, 70000.0, 1.0, -1e30, 0.5])
    got = run("v_cvt_pk_rtz_f16_f32 v6, v2, v3", _words(a.view(np.uint32), b.view(np.uint32)), ovfl=ovfl)
    rtz = lambda x: np.where(np.isfinite(x), np.clip(x, -65504, 65504), x)   # toward zero: never past MAX
    with np.errstate(invalid="ignore"):
        same(got[:5], ref16(rtz(a.astype(np.float64)), (), False))
        same(got[:5] >> 16, ref16(rtz(b.astype(np.float64)), (), False))


@pytest.mark.parametrize("ovfl", [True, False])
def test_omod_overflow_saturates_and_halving_starts_from_max(ovfl):
    a, b = H([200, 300, -300, np.inf]), H([200, 300, 300, 1])
    words = _words(h16(a), h16(b))
    prod = a.astype(np.float64) * b.astype(np.float64)          # 40000, 90000 (overflows), -90000, inf
    got = run("v_mul_f16_e64 v6, v2, v3 mul:2", words, ovfl=ovfl)
    first = ref16(prod, (a, b), ovfl).astype(np.uint16).view(H).astype(np.float64)
    same(got[:4], ref16(first * 2, (a, b), ovfl))
    got = run("v_mul_f16_e64 v6, v2, v3 div:2", words, ovfl=ovfl)
    same(got[:4], ref16(first / 2, (a, b), ovfl))
    if ovfl:
        assert got[1] == h16(H(32752))              # MAX / 2: saturated before omod


@pytest.mark.parametrize("ovfl", [True, False])
def test_directed_rounding_saturates_regardless_of_round_mode(ovfl):
    """FP_ROUND for f16 = +inf (s_round_mode 0x4): 65504 + 1 rounds up past MAX."""
    a, b = H([65504, -65504, 60000]), H([1, -1, 60000])
    got = run("s_round_mode 0x4\nv_add_f16 v6, v2, v3", _words(h16(a), h16(b)), ovfl=ovfl)
    want = [MAX16 if ovfl else 0x7C00, 0xFBFF, MAX16 if ovfl else 0x7C00]   # -65505 rounds up to -MAX anyway
    assert list(got[:3]) == want


def test_kernel_descriptor_sets_the_bit_without_s_setreg():
    got = run("v_add_f16 v6, v2, v3", _words(h16(A), h16(B)), ovfl=None, rsrc1=RSRC1_FP16_OVFL)
    a, b = A.astype(np.float64), B.astype(np.float64)
    with np.errstate(invalid="ignore"):
        same(got, ref16(a + b, (a, b), True))


def test_bf16_results_are_not_affected():
    """The guides name FP16 results only; bf16 has f32's range: v_dot2_bf16_bf16 still overflows to inf."""
    big = ml_dtypes.bfloat16(3e38)
    one = np.array([big, big], ml_dtypes.bfloat16).view(np.uint16).astype(np.uint32)
    words = _words([one[0] | one[1] << 16], [one[0] | one[1] << 16], [0])
    got = run("v_dot2_bf16_bf16 v6, v2, v3, v4", words, ovfl=True)
    assert got[0] & 0xFFFF == 0x7F80


@pytest.mark.parametrize("arch", ["gfx1200", "gfx942"])
def test_other_archs_add_and_packed_mul(arch):
    a, b = A.astype(np.float64), B.astype(np.float64)
    with np.errstate(invalid="ignore"):
        same(run("v_add_f16 v6, v2, v3", _words(h16(A), h16(B)), ovfl=True, arch=arch)[:16], ref16(a + b, (a, b), True))
        got = run("v_pk_mul_f16 v6, v2, v3", _words(h16(A) | h16(B) << 16, h16(B) | h16(A) << 16), ovfl=True,
                  arch=arch)
        same(got[:16], ref16(a * b, (a, b), True))
        same(got[:16] >> 16, ref16(a * b, (a, b), True))


def test_gfx942_fp8_conversion_fails_closed_under_the_bit():
    words = _words(np.float32([1e6]).view(np.uint32), np.float32([1.0]).view(np.uint32))
    run("v_cvt_pk_fp8_f32 v6, v2, v3", words, ovfl=False, arch="gfx942")
    with pytest.raises(IllegalInstruction, match="FP16_OVFL"):
        run("v_cvt_pk_fp8_f32 v6, v2, v3", words, ovfl=True, arch="gfx942")


@pytest.mark.parametrize("ovfl", [True, False])
def test_interp_p2_f16_result(ovfl):
    """v_interp_p2_f16_f32: P20 (f16) * J + P2 rounded to f16; every lane holds the same inputs."""
    for p20, j, p2 in ((256.0, 300.0, 0.0), (-256.0, 300.0, 1.0), (np.inf, 2.0, 0.0), (100.0, 2.0, 1.0)):
        words = _words(h16([p20]), np.float32([j]).view(np.uint32), np.float32([p2]).view(np.uint32))
        got = run("v_interp_p2_f16_f32 v6, v2, v3, v4", words, ovfl=ovfl)
        same(got[:1], ref16([p20 * j + p2], ([p20],), ovfl))


def _wmma_data():
    """A, B (16x16 f16) whose dot products overflow f16 (16 * 256 * 256); row 3 of A and column 5 of B
    hold an infinity, C[7, 7] is -inf, C[0, 0] pulls element (0, 0) back into range."""
    a = np.full((16, 16), 256.0, H)
    b = np.full((16, 16), 256.0, H)
    a[3, 2] = np.inf
    b[9, 5] = np.inf                      # B is (K, N): column 5
    a[10] = 1.0                           # row 10 stays finite and in range
    c = np.zeros((16, 16), H)
    c[7, 7], c[0, 0], c[10, 4] = -np.inf, -65504.0, 65504.0
    exact = a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)
    inf_in = np.isinf(a).any(1)[:, None] | np.isinf(b).any(0)[None, :] | np.isinf(c)
    return a, b, c, exact, inf_in


def _ref_matrix(exact, inf_in, ovfl):
    with np.errstate(over="ignore", invalid="ignore"):
        r = exact.astype(H)
    if ovfl:
        r = np.where(np.isinf(r) & ~inf_in, np.copysign(H(65504), r), r).astype(H)
    return r.view(np.uint16)


@pytest.mark.parametrize("ovfl", [True, False])
def test_wmma_f16_result_gfx11(ovfl):
    a, b, c, exact, inf_in = _wmma_data()
    ra = _pack_ab_lanes(a.view(np.uint16), 16, 32).T                 # (lanes, VGPRs); lane % 16 = row M
    rb = _pack_ab_lanes(b.view(np.uint16).T, 16, 32).T               # lane % 16 = column N
    lane = np.arange(32)
    g = group(1, mode=MODE & ~0x200 | int(ovfl) << 23)
    for j in range(8):
        fill(g, 8 + j, ra[:, j][None])
        fill(g, 16 + j, rb[:, j][None])
        fill(g, 24 + j, c.view(np.uint16)[2 * j + lane // 16, lane % 16].astype(np.uint32)[None])
    execute(g, inst("v_wmma_f16_16x16x16_f16", "VOP3P", vdst=V(24, 8), src0=V(8, 8), src1=V(16, 8), src2=V(24, 8)))
    want = _ref_matrix(exact, inf_in, ovfl)
    got = np.zeros((16, 16), np.uint32)
    for j in range(8):
        got[2 * j + lane // 16, lane % 16] = g.vgpr(24 + j)[0] & 0xFFFF
    same(got.ravel(), want.ravel())
    assert (got == 0x7C00).any() and (got == 0xFC00).any()          # infinite inputs kept in both modes


@pytest.mark.parametrize("ovfl", [True, False])
def test_wmma_f16_result_gfx12(ovfl):
    a, b, c, exact, inf_in = _wmma_data()
    g = run12("v_wmma_f16_16x16x16_f16 v[0:3], v[4:7], v[8:11], v[0:3]", n=1,
              mode=gfx12.initial_mode(0xF0 << 12 | int(ovfl) << 26), vgprs={
                  **{j: v for j, v in _pack_cd(c.view(np.uint16), 16).items()},
                  **{4 + j: v for j, v in _pack_ab(a.view(np.uint16), 16).items()},
                  **{8 + j: v for j, v in _pack_ab(b.view(np.uint16).T, 16).items()}})
    same(_unpack_cd(g, 0, 16).astype(np.uint32).ravel(), _ref_matrix(exact, inf_in, ovfl).ravel())


@pytest.mark.parametrize("ovfl", [True, False])
def test_div_fixup_f16_zero_denominator_and_infinite_numerator(ovfl):
    """v_div_fixup_f16(quotient, denominator, numerator): 1 / 0 is +inf from finite inputs (saturates under
    the bit, docs/mode.md); inf / 3 keeps its infinity; 60000 / 60000 with quotient 60000 is in range."""
    q, den, num = H([1.0, 60000, 2.0]), H([0.0, 60000, 3.0]), H([1.0, 1, np.inf])
    got = run("v_div_fixup_f16 v6, v2, v3, v4", _words(h16(q), h16(den), h16(num)), ovfl=ovfl)
    assert list(got[:3]) == [MAX16 if ovfl else 0x7C00, int(h16(H(60000))), 0x7C00]


@pytest.mark.parametrize("ovfl", [True, False])
def test_gfx942_sdwa_f16_into_the_high_word(ovfl):
    a, b = A.astype(np.float64), B.astype(np.float64)
    got = run("v_add_f16_sdwa v6, v2, v3 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:WORD_0",
              _words(h16(A), h16(B)), ovfl=ovfl, arch="gfx942")
    with np.errstate(invalid="ignore"):
        same(got[:16] >> 16, ref16(a + b, (a, b), ovfl))
    assert (got[:16] & 0xFFFF == 0).all()


def _random_f16(rng, n):
    """f16 values with |x| in [2^-4, 65504] (so float64 holds every fma exactly), both signs, 2% specials."""
    x = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-4, 16, n) * rng.choice([-1, 1], n)).astype(H)
    x[rng.random(n) < 0.02] = np.inf
    x[rng.random(n) < 0.02] = -np.inf
    x[rng.random(n) < 0.01] = np.nan
    return x


@pytest.mark.parametrize("ovfl", [True, False])
def test_random_fma_and_packed_add_over_a_workgroup(ovfl, rng):
    n = 1024
    a, b, c = (_random_f16(rng, n) for _ in range(3))
    xs = [x.astype(np.float64) for x in (a, b, c)]
    with np.errstate(invalid="ignore"):
        exact = xs[0] * xs[1] + xs[2]
        got = run("v_fma_f16 v6, v2, v3, v4", _words(h16(a), h16(b), h16(c)), ovfl=ovfl, lanes=n)
        same(got, ref16(exact, xs, ovfl))
        got = run("v_pk_add_f16 v6, v2, v3", _words(h16(a) | h16(b) << 16, h16(c) | h16(a) << 16), ovfl=ovfl, lanes=n)
        same(got, ref16(xs[0] + xs[2], xs[::2], ovfl))
        same(got >> 16, ref16(xs[1] + xs[0], xs[:2], ovfl))
    assert (ref16(exact, xs, True) != ref16(exact, xs, False)).sum() > 50    # many lanes overflow
