"""gfx942 8-bit float conversions (gputwin/emu/amd/valu/fp8.py) against ml_dtypes' float8_e4m3fnuz /
float8_e5m2fnuz: every byte code to f32, f32 edge cases (NaN, infinities, signed zero, f32 denormals,
fp8 subnormals, ties, overflow) and random values back, the packed and byte-selected forms, and
stochastic rounding against an integer model of the rounding rule."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from gputwin.emu.amd.valu.fp8 import BF8_FNUZ, FP8_FNUZ
from tests.emu.amd.test_gfx942_ops import loads, run, stores

FORMATS = {"fp8": (FP8_FNUZ, ml_dtypes.float8_e4m3fnuz), "bf8": (BF8_FNUZ, ml_dtypes.float8_e5m2fnuz)}


def _edge_f32(dt) -> np.ndarray:
    """f32 bit patterns around every 8-bit value: the codes themselves, the midpoints between neighbours
    and one f32 ulp either side of them, plus NaN, infinities, zeros, f32 denormals, huge values."""
    vals = np.arange(256, dtype=np.uint8).view(dt).astype(np.float64)
    pos = np.unique(vals[np.isfinite(vals) & (vals >= 0)])
    mids = (pos[:-1] + pos[1:]) / 2
    last = pos[-1] + (pos[-1] - pos[-2]) / 2                 # the tie just past the largest finite value
    x = np.concatenate([pos, mids, [last, pos[-1] * 2, pos[1] / 2, pos[1] / 4]]).astype(np.float32)
    near = np.concatenate([x.view(np.uint32).astype(np.int64) + d for d in (-1, 0, 1)]) & 0xFFFFFFFF
    special = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00001, 1, 0x807FFFFF,
                        0x7F7FFFFF], np.uint32)
    bits = np.concatenate([near, special]).astype(np.uint32)
    return np.concatenate([bits, bits | np.uint32(0x80000000)])


@pytest.mark.parametrize("fmt", ["fp8", "bf8"])
def test_encode_and_decode_match_ml_dtypes_bit_for_bit(fmt):
    spec, dt = FORMATS[fmt]
    rng = np.random.default_rng(1)
    bits = np.concatenate([_edge_f32(dt), rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32),
                           (rng.standard_normal(20000) * np.exp2(rng.integers(-24, 18, 20000)))
                           .astype(np.float32).view(np.uint32)])
    with np.errstate(invalid="ignore"):
        ref = bits.view(np.float32).astype(dt).view(np.uint8).astype(np.uint32)
    assert (spec.encode(bits) == ref).all()
    ref32 = np.arange(256, dtype=np.uint8).view(dt).astype(np.float32)
    finite = ~np.isnan(ref32)
    assert (spec.to_f32[finite] == ref32[finite].view(np.uint32)).all()
    assert spec.to_f32[0x80] == 0x7FC00000 and finite.sum() == 255      # 0x80 is the only NaN


def _sr_model(bits: int, rng: int, mbits: int, bias: int) -> float:
    """Stochastic rounding spelled out on Python integers: exact value * 2^k, add the random low bits
    below the 8-bit quantum, truncate."""
    sign, exp, man = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    sig = man | (1 << 23) if exp else man
    e_f32 = max(exp, 1) - 127 - 23                     # value = sig * 2^e_f32
    e_val = (sig.bit_length() - 1) + e_f32              # floor(log2(value))
    quantum = max(e_val, 1 - bias) - mbits
    d = quantum - e_f32
    low = rng if d >= 32 else rng & ((1 << d) - 1)
    mag = ((sig + low) >> d) * 2.0 ** quantum
    return -mag if sign else mag


@pytest.mark.parametrize("fmt", ["fp8", "bf8"])
def test_stochastic_rounding_adds_the_random_bits_below_the_quantum(fmt):
    spec, dt = FORMATS[fmt]
    rng = np.random.default_rng(2)
    finite = (rng.standard_normal(3000) * np.exp2(rng.integers(-22, 14, 3000))).astype(np.float32)
    bits = finite.view(np.uint32)
    r = rng.integers(0, 2 ** 32, bits.size, dtype=np.uint64).astype(np.uint32)
    r[:8] = [0, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0, 0xFFFFFFFF, 1, 2]
    got = spec.encode(bits, r)
    with np.errstate(over="ignore"):
        ref = np.array([_sr_model(int(b), int(x), spec.mbits, spec.bias) for b, x in zip(bits, r)], np.float32)
        ref_codes = ref.astype(dt).view(np.uint8)           # exact: ref is an 8-bit value or out of range
    assert (got == ref_codes).all()
    # rng 0 truncates toward zero; all-ones rounds every inexact value away from zero
    zero = spec.encode(bits, np.zeros_like(r)).astype(np.uint8).view(dt).astype(np.float64)
    assert (np.abs(zero) <= np.abs(finite) + 0.0)[np.isfinite(zero)].all()
    assert (spec.encode(np.array([0x7F800000, 0x7FC00000], np.uint32), np.array([5, 5], np.uint32)) == 0x80).all()


# --- the instructions on the emulated gfx942 ---------------------------------------------------------
@pytest.mark.parametrize("fmt", ["fp8", "bf8"])
def test_instructions_convert_select_bytes_and_keep_the_rest_of_vdst(fmt):
    spec, dt = FORMATS[fmt]
    rng = np.random.default_rng(3)
    f = (rng.standard_normal((2, 64)) * 20).astype(np.float32)
    f[0, :4] = [np.nan, np.inf, -0.0, 1e30]
    packed = rng.integers(0, 2 ** 32, 64, dtype=np.uint64).astype(np.uint32)
    old = np.full(64, 0xA5A5A5A5, np.uint32)
    sr_bits = rng.integers(0, 2 ** 32, 64, dtype=np.uint64).astype(np.uint32)
    rows = np.stack([f[0].view(np.uint32), f[1].view(np.uint32), packed, old, sr_bits])
    body = loads(10, 5) + f"""
v_cvt_f32_{fmt} v20, v12
v_cvt_f32_{fmt}_sdwa v21, v12 src0_sel:BYTE_2
v_cvt_pk_f32_{fmt} v[22:23], v12
v_cvt_pk_f32_{fmt}_sdwa v[24:25], v12 src0_sel:WORD_1
v_mov_b32 v26, v13
v_cvt_pk_{fmt}_f32 v26, v10, -v11 op_sel:[0,0,1]
v_mov_b32 v27, v13
v_cvt_sr_{fmt}_f32 v27, v10, v14 op_sel:[0,0,1,0]
v_cvt_f32_{fmt}_e64 v28, v12 mul:2
""" + stores(20, 9)
    out = run(body, rows, 9)
    byte = lambda k: (packed >> np.uint32(8 * k)) & np.uint32(0xFF)      # noqa: E731
    dec = lambda b: spec.to_f32[b]                                       # noqa: E731
    ref_dec = lambda b: b.astype(np.uint8).view(dt).astype(np.float32)  # noqa: E731
    assert np.array_equal(out[0].view(np.float32), ref_dec(byte(0)), equal_nan=True)
    assert (out[0] == dec(byte(0))).all() and (out[1] == dec(byte(2))).all()
    assert (out[2] == dec(byte(0))).all() and (out[3] == dec(byte(1))).all()
    assert (out[4] == dec(byte(2))).all() and (out[5] == dec(byte(3))).all()
    with np.errstate(invalid="ignore", over="ignore"):
        lo = f[0].astype(dt).view(np.uint8).astype(np.uint32)
        hi = (-f[1]).astype(dt).view(np.uint8).astype(np.uint32)
    assert (out[6] == (old & np.uint32(0xFFFF)) | (lo | hi << np.uint32(8)) << np.uint32(16)).all()
    assert (out[7] == (old & np.uint32(0xFFFF00FF)) | spec.encode(rows[0], sr_bits) << np.uint32(8)).all()
    two = dec(byte(0)).view(np.float32) * np.float32(2)
    assert np.array_equal(out[8].view(np.float32), two, equal_nan=True)
