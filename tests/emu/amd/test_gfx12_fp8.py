"""gfx12 (RDNA4) OCP 8-bit float conversions (gputwin/emu/amd/valu/fp8.py) against ml_dtypes'
float8_e4m3fn / float8_e5m2 plus the rules ml_dtypes does not know (written out here): a NaN input gives
0xff / 0xfe, a NaN code gives a quiet NaN of its sign, MODE.FP16_OVFL saturates finite overflow, and
stochastic rounding adds S1's top bits (an integer model). Then every instruction form LLVM 19 accepts
(VOP1, VOP3 byte_sel / op_sel, DPP16, DPP8, modifiers) on the emulated gfx1201, and clang-19 kernels
using the builtins on gfx1201 (also through MOCKAMD:gfx1201) and gfx942 (fixtures/amd/fp8/)."""
from __future__ import annotations

import hashlib

import ml_dtypes
import numpy as np
import pytest

from gputwin.emu.amd.standalone import Arena, load_kernel
from gputwin.emu.amd.valu.fp8 import BF8_FNUZ, BF8_OCP, FP8_FNUZ, FP8_OCP
from gputwin.errors import IllegalInstruction
from tests.emu.amd.device_rig import device_kernel
from tests.emu.amd.helpers import FIXTURES
from tests.emu.amd.test_gfx12 import run12

U32, F32 = np.uint32, np.float32
OCP = {"fp8": (FP8_OCP, ml_dtypes.float8_e4m3fn, 3, 0xFF), "bf8": (BF8_OCP, ml_dtypes.float8_e5m2, 2, 0xFE)}
QNAN = 0x7FC00000


def _max_code(dt) -> int:
    return int(np.array(ml_dtypes.finfo(dt).max, dt).view(np.uint8))


def _sweep(dt, n: int = 30000, seed: int = 1) -> np.ndarray:
    """f32 bits around every 8-bit value (the values, midpoints, one f32 ulp either side), specials
    (zeros, infinities, NaN payloads, f32 denormals, huge values), random bit patterns and random
    magnitudes across the 8-bit range, both signs."""
    vals = np.arange(256, dtype=np.uint8).view(dt).astype(np.float64)
    pos = np.unique(vals[np.isfinite(vals) & (vals >= 0)])
    mids = (pos[:-1] + pos[1:]) / 2
    step = pos[-1] - pos[-2]
    x = np.concatenate([pos, mids, [pos[-1] + step / 2, pos[-1] + step, pos[-1] * 2, pos[1] / 2, pos[1] / 4]])
    near = np.concatenate([x.astype(F32).view(U32).astype(np.int64) + d for d in (-1, 0, 1)]) & 0xFFFFFFFF
    special = np.array([0, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FFFFFFF, 0x7FA00000, 1, 0x007FFFFF,
                        0x7F7FFFFF, 0x00800000], U32)
    rng = np.random.default_rng(seed)
    rand = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(U32)
    mags = (rng.standard_normal(n) * np.exp2(rng.integers(-26, 18, n))).astype(F32).view(U32)
    bits = np.concatenate([near.astype(U32), special, mags])
    return np.concatenate([bits, bits | U32(0x80000000), rand])


def _encode_ref(bits: np.ndarray, dt, nan_code: int, saturate: bool) -> np.ndarray:
    """ml_dtypes' nearest-even cast, with the hardware's NaN code and, when saturating, +-max for a
    finite input ml_dtypes sends past the largest finite value."""
    f = bits.view(F32)
    with np.errstate(invalid="ignore", over="ignore"):
        code = f.astype(dt).view(np.uint8).astype(U32)
        past = ~np.isfinite(code.astype(np.uint8).view(dt).astype(np.float64))
    if saturate:
        code = np.where(past & np.isfinite(f), (code & U32(0x80)) | U32(_max_code(dt)), code)
    return np.where(np.isnan(f), U32(nan_code), code)


@pytest.mark.parametrize("fmt", ["fp8", "bf8"])
def test_every_code_decodes_as_ml_dtypes_and_nan_keeps_its_sign(fmt):
    spec, dt, _, _ = OCP[fmt]
    ref = np.arange(256, dtype=np.uint8).view(dt).astype(F32)
    nan = np.isnan(ref)
    assert (spec.to_f32[~nan] == ref[~nan].view(U32)).all()          # infinities and -0 included
    sign = (np.arange(256) >> 7).astype(U32) << U32(31)
    assert (spec.to_f32[nan] == (U32(QNAN) | sign[nan])).all()
    assert nan.sum() == (2 if fmt == "fp8" else 6)


@pytest.mark.parametrize("saturate", [False, True], ids=["overflow", "fp16_ovfl"])
@pytest.mark.parametrize("fmt", ["fp8", "bf8"])
def test_nearest_even_encode_is_bit_exact_over_the_sweep(fmt, saturate):
    spec, dt, _, nan_code = OCP[fmt]
    bits = _sweep(dt)
    assert (spec.encode(bits, saturate=saturate) == _encode_ref(bits, dt, nan_code, saturate)).all()


@pytest.mark.parametrize("fmt", ["fp8", "bf8"])
def test_overflow_and_special_values_spelled_out(fmt):
    spec, dt, _, nan_code = OCP[fmt]
    mx = _max_code(dt)
    over = 0x7F if fmt == "fp8" else 0x7C                    # E4M3: NaN; E5M2: infinity
    big = np.array([1e30, -1e30, np.inf, -np.inf, -0.0, 1e-30, -1e-30, np.nan, -np.nan], F32).view(U32)
    assert spec.encode(big).tolist() == [over, 0x80 | over, over, 0x80 | over, 0x80, 0, 0x80, nan_code, nan_code]
    assert spec.encode(big, saturate=True).tolist()[:4] == [mx, 0x80 | mx, over, 0x80 | over]
    top = float(np.array(mx, np.uint8).view(dt).astype(np.float64))
    ulp = top - float(np.array(mx - 1, np.uint8).view(dt).astype(np.float64))
    tie, past = np.array([top + ulp / 2, np.nextafter(F32(top + ulp / 2), F32(np.inf))], F32).view(U32)
    assert spec.encode(np.array([tie, past])).tolist() == [mx if fmt == "fp8" else over, over]


def _sr_model(bits: int, rng: int, mbits: int, bias: int) -> float:
    """RDNA4 stochastic rounding on Python integers: the magnitude truncated to k = 23 - mbits bits below
    the 8-bit quantum, plus the top k bits of rng, truncated to the quantum."""
    sign, exp, man = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    sig = man | (1 << 23) if exp else man
    e_f32 = max(exp, 1) - 127 - 23                          # magnitude = sig * 2^e_f32
    e_val = sig.bit_length() - 1 + e_f32 if sig else 1 - bias
    quantum = max(e_val, 1 - bias) - mbits
    k = 23 - mbits
    units = sig >> (quantum - k - e_f32)
    mag = ((units + (rng >> (32 - k))) >> k) * 2.0 ** quantum
    return -mag if sign else mag


@pytest.mark.parametrize("saturate", [False, True], ids=["overflow", "fp16_ovfl"])
@pytest.mark.parametrize("fmt", ["fp8", "bf8"])
def test_stochastic_rounding_adds_the_top_random_bits(fmt, saturate):
    spec, dt, mbits, nan_code = OCP[fmt]
    rng = np.random.default_rng(2)
    finite = (rng.standard_normal(4000) * np.exp2(rng.integers(-24, 18, 4000))).astype(F32)
    finite[:6] = [0.0, -0.0, 1e-40, -3e-39, 1e30, -70000.0]
    bits = finite.view(U32)
    r = rng.integers(0, 2 ** 32, bits.size, dtype=np.uint64).astype(U32)
    r[6:14] = [0, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0xFFF, 0x1000, 1 << 31, 0xFFFFF000]
    ref = np.array([_sr_model(int(b), int(x), mbits, spec.bias) for b, x in zip(bits, r)])
    # the model's value is an 8-bit value or past the range; the overflow / saturation rule as above
    want = _encode_ref(ref.astype(F32).view(U32), dt, nan_code, saturate)
    assert (spec.encode(bits, r, saturate=saturate) == want).all()
    zero = spec.encode(bits, np.zeros_like(r)).astype(np.uint8).view(dt).astype(np.float64)
    assert (np.abs(zero) <= np.abs(finite))[np.isfinite(zero)].all()          # rng 0 truncates
    specials = np.array([0x7F800000, 0xFF800000, 0x7FC00001], U32)
    over = 0x7F if fmt == "fp8" else 0x7C
    assert spec.encode(specials, np.full(3, 5, U32), saturate=saturate).tolist() == [over, 0x80 | over, nan_code]


# --- the instructions on the emulated gfx1201 --------------------------------------------------------
def _lanes(seed: int):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(32) * 40).astype(F32)
    b = (rng.standard_normal(32) * 3000).astype(F32)
    a[:5] = [np.nan, np.inf, -0.0, 1e6, 465.0]
    b[:3] = [-np.inf, 70000.0, 1e-42]
    packed = rng.integers(0, 2 ** 32, 32, dtype=np.uint64).astype(U32)
    packed[:4] = [0x7F7FFF80, 0xFEFD7C7B, 0x01800080, 0xFC7C0000]       # NaN, inf, -0, subnormal codes
    sr = rng.integers(0, 2 ** 32, 32, dtype=np.uint64).astype(U32)
    return a.view(U32), b.view(U32), packed, sr


def _dec(fmt: str, codes) -> np.ndarray:
    return OCP[fmt][0].to_f32[np.asarray(codes, U32) & U32(0xFF)]


def _enc(fmt: str, bits, rng=None, saturate=False) -> np.ndarray:
    _, dt, mbits, nan_code = OCP[fmt]
    if rng is None:
        return _encode_ref(np.asarray(bits, U32), dt, nan_code, saturate)
    with np.errstate(over="ignore"):          # the model's value past f32 range is an overflow all the same
        vals = np.array([_sr_model(int(b), int(x), mbits, OCP[fmt][0].bias) for b, x in zip(bits, rng)])
        out = _encode_ref(vals.astype(F32).view(U32), dt, nan_code, saturate)
    return np.where(np.isnan(np.asarray(bits, U32).view(F32)), U32(nan_code), out)


OLD = 0xA5A5A5A5
ABS = 0x7FFFFFFF


@pytest.mark.parametrize("fmt", ["fp8", "bf8"])
def test_every_gfx12_form_selects_bytes_and_keeps_the_rest_of_vdst(fmt):
    a, b, packed, sr = _lanes(3)
    body = f"""
v_cvt_f32_{fmt} v10, v3
v_cvt_f32_{fmt}_e64 v11, v3 byte_sel:1
v_cvt_f32_{fmt}_e64 v12, v3 byte_sel:2
v_cvt_f32_{fmt}_e64 v13, s3 byte_sel:3
v_cvt_pk_f32_{fmt} v[14:15], v3
v_cvt_pk_f32_{fmt}_e64 v[16:17], v3 op_sel:[1,0]
v_cvt_pk_{fmt}_f32 v18, v1, -|v2|
v_cvt_pk_{fmt}_f32 v19, -v1, v2 op_sel:[0,0,1]
v_cvt_sr_{fmt}_f32 v20, v1, v4
v_cvt_sr_{fmt}_f32 v21, -|v2|, v4 byte_sel:1
v_cvt_sr_{fmt}_f32 v22, v1, v4 byte_sel:2
v_cvt_sr_{fmt}_f32 v23, v2, s4 byte_sel:3
"""
    g = run12(body, sgprs={3: 0x3C80B8F8, 4: 0x12345678},
              vgprs={1: a, 2: b, 3: packed, 4: sr, **{r: OLD for r in range(18, 24)}})
    out = {r: g.vgpr(r)[0] for r in range(10, 24)}
    byte = lambda v, k: (v >> U32(8 * k)) & U32(0xFF)                   # noqa: E731
    assert (out[10] == _dec(fmt, byte(packed, 0))).all()
    assert (out[11] == _dec(fmt, byte(packed, 1))).all() and (out[12] == _dec(fmt, byte(packed, 2))).all()
    assert (out[13] == _dec(fmt, 0x3C)).all()
    assert (out[14] == _dec(fmt, byte(packed, 0))).all() and (out[15] == _dec(fmt, byte(packed, 1))).all()
    assert (out[16] == _dec(fmt, byte(packed, 2))).all() and (out[17] == _dec(fmt, byte(packed, 3))).all()
    old = U32(OLD)
    assert (out[18] == (old & U32(0xFFFF0000)) | _enc(fmt, a) | _enc(fmt, b | U32(0x80000000)) << U32(8)).all()
    assert (out[19] == (old & U32(0xFFFF)) | (_enc(fmt, a ^ U32(0x80000000)) | _enc(fmt, b) << U32(8)) << U32(16)).all()
    assert (out[20] == (old & U32(0xFFFFFF00)) | _enc(fmt, a, sr)).all()
    assert (out[21] == (old & U32(0xFFFF00FF)) | _enc(fmt, b | U32(0x80000000), sr) << U32(8)).all()
    assert (out[22] == (old & U32(0xFF00FFFF)) | _enc(fmt, a, sr) << U32(16)).all()
    assert (out[23] == (old & U32(0x00FFFFFF)) | _enc(fmt, b, np.full(32, 0x12345678, U32)) << U32(24)).all()


def test_dpp_forms_read_the_permuted_lane():
    a, b, packed, sr = _lanes(4)
    perm = np.array([3, 2, 1, 0])
    quad = (np.arange(32) & ~3) | perm[np.arange(32) & 3]
    dpp8 = (np.arange(32) & ~7) | (7 - (np.arange(32) & 7))
    body = """
v_cvt_f32_fp8 v10, v3 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf
v_cvt_f32_bf8 v11, v3 byte_sel:3 dpp8:[7,6,5,4,3,2,1,0]
v_cvt_pk_fp8_f32_e64_dpp v12, -v1, |v2| quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf
v_cvt_sr_bf8_f32_e64_dpp v13, v1, v4 dpp8:[7,6,5,4,3,2,1,0]
v_cvt_sr_fp8_f32 v14, v2, v4 byte_sel:2 quad_perm:[3,2,1,0]
"""
    g = run12(body, vgprs={1: a, 2: b, 3: packed, 4: sr, 12: OLD, 13: OLD, 14: OLD})
    out = {r: g.vgpr(r)[0] for r in range(10, 15)}
    assert (out[10] == _dec("fp8", packed[quad] & U32(0xFF))).all()
    assert (out[11] == _dec("bf8", packed[dpp8] >> U32(24))).all()
    lo, hi = _enc("fp8", a[quad] ^ U32(0x80000000)), _enc("fp8", b & U32(ABS))    # DPP moves src0 only
    assert (out[12] == U32(OLD & 0xFFFF0000) | lo | hi << U32(8)).all()
    assert (out[13] == U32(OLD & 0xFFFFFF00) | _enc("bf8", a[dpp8], sr)).all()
    assert (out[14] == U32(OLD & 0xFF00FFFF) | _enc("fp8", b[quad], sr) << U32(16)).all()


def test_mode_fp16_ovfl_makes_the_conversions_saturate():
    a = np.full(32, F32(1e6)).view(U32)
    a[1], a[2], a[3] = F32(-500.0).view(U32), F32(np.inf).view(U32), F32(-70000.0).view(U32)
    body = """
v_cvt_pk_fp8_f32 v10, v1, v1
v_cvt_pk_bf8_f32 v11, v1, v1
v_cvt_sr_fp8_f32 v12, v1, v1
s_setreg_imm32_b32 hwreg(HW_REG_MODE, 23, 1), 1
v_cvt_pk_fp8_f32 v13, v1, v1
v_cvt_pk_bf8_f32 v14, v1, v1
v_cvt_sr_bf8_f32 v15, v1, v1
"""
    g = run12(body, vgprs={1: a, 12: 0, 15: 0})
    out = [g.vgpr(r)[0, :4] & U32(0xFF) for r in range(10, 16)]
    # -500 overflows E4M3 only (E5M2 rounds it to -512, 0xe0)
    assert out[0].tolist() == [0x7F, 0xFF, 0x7F, 0xFF] and out[1].tolist() == [0x7C, 0xE0, 0x7C, 0xFC]
    assert out[2].tolist() == [0x7F, 0xFF, 0x7F, 0xFF]
    assert out[3].tolist() == [0x7E, 0xFE, 0x7F, 0xFE] and out[4].tolist() == [0x7B, 0xE0, 0x7C, 0xFB]
    assert out[5].tolist()[0] == 0x7B and out[5].tolist()[2] == 0x7C


def test_clamp_or_omod_on_a_packed_f32_pair_is_refused():
    with pytest.raises(IllegalInstruction, match="v_cvt_pk_f32_bf8: clamp"):
        run12("v_cvt_pk_f32_bf8_e64 v[2:3], v3 clamp")


# --- clang-19 kernels using the builtins (fixtures/amd/fp8/fp8.cl) ------------------------------------
KERNELS = FIXTURES.parent / "fp8"
FNUZ = {"fp8": (FP8_FNUZ, ml_dtypes.float8_e4m3fnuz), "bf8": (BF8_FNUZ, ml_dtypes.float8_e5m2fnuz)}


def test_kernel_objects_are_built_from_the_committed_sources():
    built = dict(ln.split()[::-1] for ln in (KERNELS / "SOURCES.sha256").read_text().splitlines())
    now = {name: hashlib.sha256((KERNELS / name).read_bytes()).hexdigest() for name in built}
    assert set(built) == {"build.sh", "fp8.cl", "../cl/gputwin_cl.h"}
    assert now == built, "fixtures/amd/fp8 sources changed since the objects were built: run sh fixtures/amd/fp8/build.sh"


def _records(n: int) -> np.ndarray:
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(n) * np.exp2(rng.integers(-12, 12, n))).astype(F32)
    b = (rng.standard_normal(n) * 300).astype(F32)
    a[:6] = [np.nan, np.inf, 1e6, -465.0, -0.0, 1e-30]
    b[:4] = [70000.0, -np.inf, 3.0, 2e5]
    packed = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(U32)
    packed[:2] = [0x7F7CFF80, 0x00FB7E01]
    rnd = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(U32)
    return np.stack([a.view(U32), b.view(U32), packed, rnd], axis=1)


def _run(arch: str, name: str, rec: np.ndarray, spec: str | None = None) -> np.ndarray:
    """Run fp8.cl's kernel `name` on the emulator (standalone), or through the driver stack of device
    `spec` (MOCKAMD:...: driver, mock KFD, PM4 command processor, emulator)."""
    image = (KERNELS / f"fp8.{arch}.hsaco").read_bytes()
    if spec is None:
        arena = Arena()
        k = load_kernel(arena, image, name)
    else:
        arena, k = device_kernel(spec, image, name)
    n = rec.shape[0]
    out = arena.alloc(32 * n)
    k(out, arena.alloc(16 * n, rec), grid=(n // 64, 1, 1), block=(64, 1, 1))
    return arena.array(out, U32, 8 * n).reshape(n, 8)


def _kernel_ref(rec, enc, dec) -> np.ndarray:
    """fp8.cl's convert() in numpy, given the two formats' encode(bits, rng) and decode(codes)."""
    a, b, packed, rnd = rec.T
    neg_a = a ^ U32(0x80000000)
    w = enc("fp8", a) | enc("fp8", b) << U32(8)
    s = (packed & U32(0xFFFF00FF)) | enc("fp8", a, rnd) << U32(8)
    byte = lambda k: (packed >> U32(8 * k)) & U32(0xFF)                 # noqa: E731
    return np.stack([w | (enc("bf8", b) | enc("bf8", neg_a) << U32(8)) << U32(16),
                     (s & U32(0x00FFFFFF)) | enc("bf8", b, rnd ^ U32(0x9E3779B9)) << U32(24),
                     dec("fp8", byte(0)), dec("fp8", byte(3)), dec("bf8", byte(2)), dec("fp8", byte(1)),
                     dec("bf8", byte(2)), dec("bf8", byte(3))], axis=1)


@pytest.mark.parametrize("spec", [None, "MOCKAMD:gfx1201"], ids=["standalone", "device"])
@pytest.mark.parametrize("saturate", [False, True], ids=["fp8_convert", "fp8_convert_ovfl"])
def test_gfx1201_kernel_using_the_builtins_matches_the_ocp_reference(saturate, spec):
    rec = _records(256)
    got = _run("gfx1201", "fp8_convert_ovfl" if saturate else "fp8_convert", rec, spec)
    enc = lambda fmt, bits, rng=None: _enc(fmt, bits, rng, saturate)    # noqa: E731
    assert (got == _kernel_ref(rec, enc, _dec)).all()


def test_gfx942_kernel_using_the_builtins_matches_the_fnuz_reference():
    rec = _records(256)
    got = _run("gfx942", "fp8_convert", rec)

    def enc(fmt, bits, rng=None):
        spec, dt = FNUZ[fmt]
        if rng is not None:                  # stochastic rounding: test_gfx942_fp8.py checks the rule
            return spec.encode(bits, rng)
        with np.errstate(invalid="ignore", over="ignore"):
            return bits.view(F32).astype(dt).view(np.uint8).astype(U32)

    def dec(fmt, codes):
        spec, dt = FNUZ[fmt]
        f = codes.astype(np.uint8).view(dt).astype(F32).view(U32)
        return np.where(codes == 0x80, U32(QNAN), f)

    assert (got == _kernel_ref(rec, enc, dec)).all()
