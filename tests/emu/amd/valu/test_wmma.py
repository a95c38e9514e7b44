"""gfx1100 WMMA (valu/wmma.py) in wave32 and wave64 against numpy matmul.

The registers are packed here from the AMD Matrix Instruction Calculator's formulas (`-a rdna3 -w L`):
A[i][k] in lanes i + 16 g (every 16-lane group g), VGPR k // e, element k % e (e = 2 / 4 / 8 for 16-bit /
iu8 / iu4); B[k][j] likewise with j; C/D[i][j] in VGPR i // (L / 16), lane 16 (i % (L / 16)) + j. The
reference sums in float64 with matmul and rounds once (the model's documented approximation), so special
values (NaN, inf, denormals, -0) are compared bit for bit where the result is a number and by NaN-ness
where it is NaN."""
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from gputwin.emu.amd.valu import execute
from gputwin.errors import IllegalInstruction

from .helpers import V, fill, group, inst, round_frac

WAVES = [pytest.param(False, id="wave32"), pytest.param(True, id="wave64")]
_DT = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}


def _pack_ab(codes, bits: int, lanes: int) -> np.ndarray:
    """codes (16 rows-or-columns, 16 K) of `bits`-bit fields -> (VGPRs, lanes) uint32."""
    per = 32 // bits
    k = np.arange(16)
    words = np.zeros((16, 16 // per), np.uint64)
    np.add.at(words, (slice(None), k // per), codes.astype(np.uint64) << (bits * (k % per)).astype(np.uint64))
    return words[np.arange(lanes) % 16].T.astype(np.uint32)


def _cd_place(lanes: int):
    """(M, N) -> (VGPR, lane) index arrays of C/D."""
    per = lanes // 16
    i, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    return i // per, 16 * (i % per) + j


def _pack_cd(words, lanes: int) -> np.ndarray:
    reg, lane = _cd_place(lanes)
    out = np.zeros((256 // lanes, lanes), np.uint32)
    out[reg, lane] = words
    return out


def _unpack_cd(g, base: int, wave: int, lanes: int) -> np.ndarray:
    reg, lane = _cd_place(lanes)
    regs = np.stack([g.vgpr(base + r)[wave] for r in range(256 // lanes)])
    return regs[reg, lane]


def _load(g, base: int, per_wave) -> None:
    """per_wave: list over waves of (VGPRs, lanes) arrays."""
    for r in range(per_wave[0].shape[0]):
        fill(g, base + r, np.stack([w[r] for w in per_wave]))


def _specials(rng, dt, shape):
    """Random values with NaN, +-inf, denormals and -0 sprinkled in."""
    v = rng.standard_normal(shape).astype(dt)
    flat = v.reshape(-1)
    tiny = np.finfo(dt).smallest_subnormal
    picks = rng.choice(flat.size, 12, replace=False)
    flat[picks] = np.array([np.nan, np.inf, -np.inf, tiny, -tiny, 3 * tiny, -0.0, -0.0, 0.0, tiny, -tiny,
                            np.finfo(dt).max], dt)
    return v


def _run(wave64, op, a_regs, b_regs, c_regs, nregs_ab, **mods):
    """Execute op on one group of len(a_regs) waves: A in v8.., B in v24.., C and D in v40..."""
    g = group(len(a_regs), wave64=wave64)
    _load(g, 8, a_regs)
    _load(g, 24, b_regs)
    _load(g, 40, c_regs)
    ncd = c_regs[0].shape[0]
    execute(g, inst(op, "VOP3P", vdst=V(40, ncd), src0=V(8, nregs_ab), src1=V(24, nregs_ab), src2=V(40, ncd),
                    **mods))
    return g


def _same_or_both_nan(got_bits, want, dt):
    got = got_bits.view(dt).astype(np.float64)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got_bits[~nan], np.asarray(want, dt)[~nan].view(got_bits.dtype))


@pytest.mark.approx_model
@pytest.mark.parametrize("wave64", WAVES)
@pytest.mark.parametrize("kind", ["f16", "bf16"])
def test_f32_result_with_special_values_per_wave(wave64, kind, rng):
    lanes = 64 if wave64 else 32
    dt = _DT[kind]
    mats = [(_specials(rng, dt, (16, 16)), _specials(rng, dt, (16, 16)), _specials(rng, np.float32, (16, 16)))
            for _ in range(2)]
    g = _run(wave64, f"v_wmma_f32_16x16x16_{kind}", [_pack_ab(a.view(np.uint16), 16, lanes) for a, _, _ in mats],
             [_pack_ab(b.T.view(np.uint16), 16, lanes) for _, b, _ in mats],
             [_pack_cd(c.view(np.uint32), lanes) for _, _, c in mats], 8)
    for w, (a, b, c) in enumerate(mats):
        with np.errstate(all="ignore"):
            want = (a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)
        _same_or_both_nan(_unpack_cd(g, 40, w, lanes), want, np.float32)


def _round16(x, kind):
    """float64 -> 16-bit result, rounded once to nearest even (Fractions for bf16; numpy's f16 cast is
    correctly rounded from float64)."""
    if kind == "f16":
        return x.astype(np.float16)
    finite = np.isfinite(x) & (x != 0)
    out = x.copy()
    out[finite] = [round_frac(Fraction(float(v)), 8, -126, 127) for v in x[finite]]
    return out.astype(ml_dtypes.bfloat16)


@pytest.mark.approx_model
@pytest.mark.parametrize("wave64", WAVES)
@pytest.mark.parametrize("hi", [False, True], ids=["op_sel0", "op_sel1"])
@pytest.mark.parametrize("kind", ["f16", "bf16"])
def test_16bit_result_in_the_op_sel_half_keeps_the_other(wave64, hi, kind, rng):
    lanes = 64 if wave64 else 32
    dt = _DT[kind]
    a, b, c = (_specials(rng, dt, (16, 16)) for _ in range(3))
    other = rng.integers(0, 1 << 16, (16, 16)).astype(np.uint32)
    cw = c.view(np.uint16).astype(np.uint32)
    words = (cw << 16) | other if hi else (other << 16) | cw
    op = "v_wmma_f16_16x16x16_f16" if kind == "f16" else "v_wmma_bf16_16x16x16_bf16"
    g = _run(wave64, op, [_pack_ab(a.view(np.uint16), 16, lanes)], [_pack_ab(b.T.view(np.uint16), 16, lanes)],
             [_pack_cd(words, lanes)], 8, op_sel=(False, False, hi, False))
    got = _unpack_cd(g, 40, 0, lanes)
    with np.errstate(all="ignore"):
        want = _round16(a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float64), kind)
    np.testing.assert_array_equal(got & 0xFFFF if hi else got >> 16, other)
    _same_or_both_nan((got >> 16 if hi else got & 0xFFFF).astype(np.uint16), want.astype(np.float64), dt)


@pytest.mark.approx_model
@pytest.mark.parametrize("wave64", WAVES)
def test_float_neg_lo_hi_negate_even_and_odd_k_and_c(wave64, rng):
    """NEG[i] / NEG_HI[i] flip the low / high halves (even / odd K) of A and B; NEG[2] subtracts C and
    NEG_HI[2] takes |C| (AMD Matrix Instruction Calculator, NEG notes)."""
    lanes = 64 if wave64 else 32
    a, b = (rng.integers(-8, 9, (16, 16)).astype(np.float16) for _ in range(2))
    c = rng.integers(-100, 101, (16, 16)).astype(np.float32)
    even = np.arange(16) % 2 == 0
    sa = np.where(even, -1, 1)                   # A: neg_lo only
    sb = np.where(even, 1, -1)                   # B: neg_hi only
    g = _run(wave64, "v_wmma_f32_16x16x16_f16", [_pack_ab(a.view(np.uint16), 16, lanes)],
             [_pack_ab(b.T.view(np.uint16), 16, lanes)], [_pack_cd(c.view(np.uint32), lanes)], 8,
             neg=(True, False, True), neg_hi=(False, True, True))
    want = ((a.astype(np.float64) * sa) @ (b.astype(np.float64) * sb[:, None]) - np.abs(c)).astype(np.float32)
    np.testing.assert_array_equal(_unpack_cd(g, 40, 0, lanes), want.view(np.uint32))


@pytest.mark.parametrize("wave64", WAVES)
@pytest.mark.parametrize("bits", [8, 4], ids=["iu8", "iu4"])
@pytest.mark.parametrize("signed_a,signed_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("clamp", [False, True], ids=["wrap", "clamp"])
def test_integer_signedness_by_neg_bits_and_clamp(wave64, bits, signed_a, signed_b, clamp, rng):
    lanes = 64 if wave64 else 32
    top = 1 << bits
    a_codes, b_codes = (rng.integers(0, top, (16, 16)) for _ in range(2))
    val = lambda codes, s: codes - (codes >= top // 2) * top if s else codes
    c = rng.integers(-2 ** 31, 2 ** 31, (16, 16)).astype(np.int64)
    c[:8] = np.where(c[:8] < 0, -2 ** 31, 2 ** 31 - 1)           # rows 0..7 sit at the rails: overflow
    g = _run(wave64, f"v_wmma_i32_16x16x16_iu{bits}", [_pack_ab(a_codes, bits, lanes)],
             [_pack_ab(b_codes.T, bits, lanes)], [_pack_cd(c.astype(np.int32).view(np.uint32), lanes)],
             16 * bits // 32, neg=(signed_a, signed_b, False), clamp=clamp)
    exact = val(a_codes, signed_a) @ val(b_codes, signed_b) + c
    want = np.clip(exact, -2 ** 31, 2 ** 31 - 1) if clamp else (exact + 2 ** 31) % 2 ** 32 - 2 ** 31
    np.testing.assert_array_equal(_unpack_cd(g, 40, 0, lanes).view(np.int32), want)


@pytest.mark.parametrize("wave64", WAVES)
def test_lanes_outside_exec_keep_d_and_only_lanes_0_15_of_a_b_are_read(wave64, rng):
    """As every VALU write: D lanes outside EXEC are kept. A/B lanes 16.. (copies) are not read."""
    lanes = 64 if wave64 else 32
    ex = np.ones((1, lanes), bool)
    ex[0, 5] = ex[0, lanes - 1] = False
    a, b = (rng.integers(0, 256, (16, 16)) for _ in range(2))
    ra, rb = _pack_ab(a, 8, lanes), _pack_ab(b.T, 8, lanes)
    ra[:, 16:] ^= 0xFFFFFFFF                                        # garbage in the repeated lanes
    g = group(1, wave64=wave64, exec_=ex)
    _load(g, 8, [ra])
    _load(g, 24, [rb])
    old = rng.integers(0, 1 << 32, (256 // lanes, lanes), dtype=np.uint32)
    for r in range(old.shape[0]):
        fill(g, 40 + r, old[r][None])
    ncd = old.shape[0]
    execute(g, inst("v_wmma_i32_16x16x16_iu8", "VOP3P", vdst=V(40, ncd), src0=V(8, 4), src1=V(24, 4),
                    src2=V(40, ncd)))
    got = np.stack([g.vgpr(40 + r)[0] for r in range(ncd)])
    reg, lane = _cd_place(lanes)
    want = old.copy()
    want[reg, lane] = ((a @ b + old.view(np.int32)[reg, lane]) % 2 ** 32).astype(np.uint32)
    want[:, ~ex[0]] = old[:, ~ex[0]]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("wave64", WAVES)
@pytest.mark.parametrize("op,mods,what", [
    ("v_wmma_f32_16x16x16_f16", {"op_sel": (False, False, True, False)}, "op_sel"),
    ("v_wmma_f16_16x16x16_f16", {"op_sel": (True, False, False, False)}, "op_sel"),
    ("v_wmma_f32_16x16x16_bf16", {"clamp": True}, "clamp"),
    ("v_wmma_i32_16x16x16_iu8", {"neg_hi": (True, False, False)}, "neg_hi"),
    ("v_wmma_i32_16x16x16_iu4", {"neg": (False, False, True)}, "neg"),
])
def test_undefined_modifier_bits_fail_closed(wave64, op, mods, what):
    g = group(1, wave64=wave64)
    n = 8 if "16x16x16_f" in op or "bf16" in op else 2
    with pytest.raises(IllegalInstruction, match=what):
        execute(g, inst(op, "VOP3P", vdst=V(40, 4), src0=V(8, n), src1=V(24, n), src2=V(40, 4), **mods))
