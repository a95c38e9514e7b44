"""8-bit float conversions (v_cvt_*fp8* / *bf8*) for both 8-bit float families, vectorised on bit patterns:
the formats, f32 -> 8-bit with round to nearest even or stochastic rounding, and 8-bit -> f32.

gfx942 (CDNA3 ISA) uses the FNUZ formats (ml_dtypes float8_e4m3fnuz / float8_e5m2fnuz): fp8 = E4M3 bias 8,
bf8 = E5M2 bias 16, no infinities, no negative zero, 0x80 the only NaN.
- f32 -> 8-bit: nearest even at the 8-bit precision, subnormals kept; past the largest finite value (240 /
  57344), an infinity or a NaN gives 0x80; zero of either sign gives 0x00. The hardware does not saturate:
  libraries clamp the input first (CK's amd_assembly_cvt_pk_fp8_f32, HIP's saturating casts), and LLVM
  refuses clamp on these forms.
- stochastic rounding (S1 = 32 random bits): the f32 significand M loses d low bits at the 8-bit
  precision; the result is (M + (S1 & (2^d - 1))) >> d, as the ROCm fp8 reference code computes it.
- 8-bit -> f32 is exact; 0x80 gives 0x7fc00000. DECISION: the NaN's f32 bits are not documented.

gfx12 (RDNA4) uses the OCP formats (ml_dtypes float8_e4m3fn / float8_e5m2): fp8 = E4M3 bias 7 with no
infinities (S.1111.111 is NaN, max 448), bf8 = E5M2 bias 15, IEEE-like (infinities, max 57344).
- f32 -> 8-bit: nearest even, subnormals kept, the sign kept (-0 too). Past the largest finite value the
  result is the overflow code (E4M3: S.1111.111 NaN, E5M2: S.11111.00 infinity), unless MODE.FP16_OVFL
  (bit 23) is set: then a finite input saturates to +-max while an infinity still gives the overflow code.
  Sources: Triton's AMD backend sets FP16_OVFL around fp8 downcasts to get saturation (triton-lang/triton
  PR 7337), hipBLASLt "Enable hardware saturation for FP8/BF8 on gfx12+" (ROCm/rocm-libraries PR 7455);
  LLVM 19 refuses clamp on the gfx12 forms (probed with llvm-mc-19). A NaN input gives 0xFF (fp8) /
  0xFE (bf8) whatever its sign (gfx1201 captures published by a peer RDNA4 emulator). DECISION.
- stochastic rounding: the value truncated to k = 23 - mbits bits below the 8-bit quantum (f32 bits
  further down, which only fp8 subnormals have, are dropped), plus the top k bits of S1, truncated to
  the quantum (the same peer's gfx1201 captures; CDNA3's rule above adds the low bits instead). DECISION.
- 8-bit -> f32 is exact; a NaN code gives a quiet NaN of the same sign (0x7fc00000 | sign). DECISION.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np

from gputwin.errors import IllegalInstruction

U32, U64 = np.uint32, np.uint64
QNAN32 = 0x7FC00000


@dataclass(frozen=True)
class Fp8:
    ebits: int
    mbits: int
    bias: int
    ocp: bool = False                       # OCP (gfx12) rather than FNUZ (gfx942): see the module docstring

    @property
    def has_inf(self) -> bool:              # only OCP E5M2 keeps IEEE infinities
        return self.ocp and self.ebits == 5

    @property
    def emin(self) -> int:                  # exponent of the smallest normal
        return 1 - self.bias

    @property
    def max_code(self) -> int:              # code of the largest finite value
        if not self.ocp:                    # FNUZ: the all-ones exponent is an ordinary one
            return 0x7F
        return 0x7F - (1 << self.mbits) if self.has_inf else 0x7E

    @property
    def overflow_code(self) -> int:         # OCP, before the sign: E4M3 NaN, E5M2 infinity
        return 0x7F if not self.has_inf else 0x80 - (1 << self.mbits)

    @property
    def nan_code(self) -> int:              # what a NaN input converts to
        return (0xFF if not self.has_inf else 0xFE) if self.ocp else 0x80

    @cached_property
    def max_finite(self) -> float:
        return float(self._values()[self.max_code])

    def _values(self) -> np.ndarray:
        """float64 value of each of the 256 codes (NaN codes NaN, the FNUZ 0x80 included)."""
        code = np.arange(256)
        e, m = (code >> self.mbits) & ((1 << self.ebits) - 1), code & ((1 << self.mbits) - 1)
        mag = np.where(e == 0, m * 2.0 ** (self.emin - self.mbits),
                       (1 + m / 2.0 ** self.mbits) * 2.0 ** (e - self.bias))
        if self.has_inf:
            mag = np.where(e == (1 << self.ebits) - 1, np.where(m == 0, np.inf, np.nan), mag)
        elif self.ocp:
            mag = np.where((code & 0x7F) == 0x7F, np.nan, mag)
        val = np.where(code >> 7, -mag, mag)
        if not self.ocp:
            val[0x80] = np.nan
        return val

    @cached_property
    def to_f32(self) -> np.ndarray:
        """uint32 f32 bits of each of the 256 codes."""
        val = self._values()
        bits = np.where(np.isnan(val), 0.0, val).astype(np.float32).view(U32)
        sign = (np.arange(256, dtype=U32) >> U32(7)) << U32(31)
        nan_bits = U32(QNAN32) | (sign if self.ocp else U32(0))           # FNUZ: one NaN, 0x7fc00000
        return np.where(np.isnan(val), nan_bits, bits).astype(U32)

    def encode(self, bits: np.ndarray, rng: np.ndarray | None = None, saturate: bool = False) -> np.ndarray:
        """f32 bits -> uint32 8-bit codes, nearest even (rng None) or stochastic with 32-bit rng; saturate:
        OCP finite overflow gives +-max (MODE.FP16_OVFL)."""
        bits = np.asarray(bits, U32)
        with np.errstate(invalid="ignore"):                 # signalling NaNs are fine here
            a = np.abs(bits.view(np.float32).astype(np.float64))
        _, ex = np.frexp(a)                                  # a = m * 2^ex, m in [0.5, 1)
        e = np.maximum(ex - 1, self.emin)                    # the 8-bit exponent the value lands in
        q = np.ldexp(1.0, e - self.mbits)                    # its quantum
        with np.errstate(invalid="ignore", over="ignore"):
            if rng is None:
                r = np.rint(a / q) * q
            elif self.ocp:
                r = self._stochastic_top(bits, e, rng) * q
            else:
                r = self._stochastic_low(bits, e, rng) * q
        nan, inf = np.isnan(a), np.isinf(a)
        over = inf | (r > self.max_finite)
        _, ex_r = np.frexp(r)
        er = np.maximum(ex_r - 1, self.emin)
        normal = (r >= 2.0 ** self.emin)
        with np.errstate(invalid="ignore"):
            mant = np.where(normal, r / np.ldexp(1.0, er - self.mbits) - (1 << self.mbits),
                            r / 2.0 ** (self.emin - self.mbits))
            field = np.where(normal, er + self.bias, 0)
            code = (field << self.mbits) | np.nan_to_num(mant).astype(np.int64)
        sign = (bits >> 31).astype(np.int64) << 7
        if not self.ocp:
            code = np.where(code != 0, code | sign, 0)            # no negative zero
            return np.where(over | nan, 0x80, code).astype(U32)
        top = np.where(saturate & ~inf, self.max_code, self.overflow_code)
        code = np.where(over, top, code) | sign
        return np.where(nan, self.nan_code, code).astype(U32)

    @staticmethod
    def _significand(bits: np.ndarray):
        """(M, u): the f32 significand with its implicit bit and the exponent of its last bit."""
        fexp = ((bits >> 23) & 0xFF).astype(np.int64)
        sig = (bits & 0x7FFFFF).astype(np.int64) | np.where(fexp > 0, 1 << 23, 0)
        return sig, np.maximum(fexp, 1) - 127 - 23

    def _stochastic_low(self, bits: np.ndarray, e: np.ndarray, rng) -> np.ndarray:
        """CDNA3: (M + (rng & (2^d - 1))) >> d as float64, d the bits dropped."""
        sig, ulp_exp = self._significand(bits)
        d = np.clip(e - self.mbits - ulp_exp, 0, 40)
        low = np.asarray(rng, U32).astype(np.int64) & np.where(d >= 32, 0xFFFFFFFF, (1 << np.minimum(d, 31)) - 1)
        return ((sig + low) >> d).astype(np.float64)

    def _stochastic_top(self, bits: np.ndarray, e: np.ndarray, rng) -> np.ndarray:
        """RDNA4: (trunc(value in quantum / 2^k) + rng[31:32-k]) >> k as float64, k = 23 - mbits."""
        k = 23 - self.mbits
        sig, ulp_exp = self._significand(bits)
        units = sig >> np.clip(e - self.mbits - k - ulp_exp, 0, 63)
        return ((units + (np.asarray(rng, U32).astype(np.int64) >> (32 - k))) >> k).astype(np.float64)


FP8_FNUZ, BF8_FNUZ = Fp8(4, 3, 8), Fp8(5, 2, 16)
FP8_OCP, BF8_OCP = Fp8(4, 3, 7, ocp=True), Fp8(5, 2, 15, ocp=True)


# --- the instructions: one set of semantics, per-arch operand selection --------------------------------
def _none(c) -> int:
    return 0


@dataclass(frozen=True)
class Select:
    """Where an arch's encoding says which bytes / halves an instruction reads and writes, and whether it
    saturates. gfx942 selects source bytes with SDWA (applied before these functions run: cdna3._sdwa)."""
    src_byte: Callable = _none      # v_cvt_f32_*8: byte of S0
    src_word: Callable = _none      # v_cvt_pk_f32_*8: 16-bit half of S0
    saturate: Callable = _none      # f32 -> 8-bit: finite overflow gives +-max


def _vop3_sel(c, bit: int) -> int:
    return int(c.inst.encoding == "VOP3" and c.inst.op_sel[bit])


# gfx12 VOP3: byte_sel:N is OPSEL[0] = N[1], OPSEL[1] = N[0] on v_cvt_f32_*8 (llvm-mc-19 encodes byte_sel:1
# as bit 12, byte_sel:2 as bit 11), op_sel:[1,0] picks the high word of v_cvt_pk_f32_*8.
GFX12 = Select(src_byte=lambda c: 2 * _vop3_sel(c, 0) + _vop3_sel(c, 1),
               src_word=lambda c: _vop3_sel(c, 0),
               saturate=lambda c: c.mode.fp16_ovfl)


def _no_fp16_ovfl(c) -> bool:
    """gfx942: RDNA4 makes MODE bit 23 saturate f32 -> 8-bit float conversions too (GFX12 above); the CDNA3
    guide says nothing of gfx942's, so a set bit fails closed rather than guess (docs/mode.md)."""
    if c.mode.fp16_ovfl:
        raise IllegalInstruction(f"{c.inst.op}: MODE.FP16_OVFL (bit 23) on an 8-bit float conversion is not modelled")
    return False


GFX942 = Select(saturate=_no_fp16_ovfl)


def _old(c):
    return c.group.vgpr(c.inst.operands["vdst"].index)


def _to_f32(spec: Fp8, sel: Select):
    def fn(c, a):
        return spec.to_f32[(np.asarray(a, U32) >> U32(8 * sel.src_byte(c))) & U32(0xFF)]
    return fn


def _pk_to_f32(spec: Fp8, sel: Select):
    """D.f32[0] = byte 0, D.f32[1] = byte 1 of the selected 16-bit half of S0."""
    def fn(c, a):
        a = np.asarray(a, U32) >> U32(16 * sel.src_word(c))
        return spec.to_f32[a & U32(0xFF)].astype(U64) | (spec.to_f32[(a >> U32(8)) & U32(0xFF)].astype(U64) << U64(32))
    return fn


def _pk_from_f32(spec: Fp8, sel: Select):
    """D.b16[OPSEL[3]] = {cvt(S1), cvt(S0)}; the other half of D is kept."""
    def fn(c, a, b):
        sat = sel.saturate(c)
        pair = spec.encode(a, saturate=sat) | (spec.encode(b, saturate=sat) << U32(8))
        shift = U32(16 if c.inst.op_sel[3] else 0)
        return (_old(c) & ~(U32(0xFFFF) << shift)) | (pair << shift)
    return fn


def _sr_from_f32(spec: Fp8, sel: Select):
    """D.byte[OPSEL[3:2]] = stochastic cvt(S0) with S1 as the random bits; the other bytes are kept."""
    def fn(c, a, b):
        shift = U32(8 * (int(c.inst.op_sel[2]) | int(c.inst.op_sel[3]) << 1))
        return (_old(c) & ~(U32(0xFF) << shift)) | (spec.encode(a, b, saturate=sel.saturate(c)) << shift)
    return fn


def _table(fp8: Fp8, bf8: Fp8, sel: Select) -> dict:
    from .table import Op
    ops = {}
    for short, spec in (("fp8", fp8), ("bf8", bf8)):
        ops.update({f"v_cvt_f32_{short}": Op(_to_f32(spec, sel), ("u32",), "f32", flush=False, nan=False),
                    f"v_cvt_pk_f32_{short}": Op(_pk_to_f32(spec, sel), ("u32",), "b64"),
                    f"v_cvt_pk_{short}_f32": Op(_pk_from_f32(spec, sel), ("f32", "f32"), "b32", flush=False),
                    f"v_cvt_sr_{short}_f32": Op(_sr_from_f32(spec, sel), ("f32", "u32"), "b32", flush=False)})
    return ops


def cdna3_ops():
    """{internal name: Op} and {gfx942 mnemonic: internal name} (gfx12 has the same mnemonics, OCP)."""
    table = _table(FP8_FNUZ, BF8_FNUZ, GFX942)
    return {name + ".fnuz": op for name, op in table.items()}, {name: name + ".fnuz" for name in table}


def rdna4_ops() -> dict:
    """{gfx12 mnemonic: Op}: the OCP formats, VOP3 byte/word selection and MODE.FP16_OVFL saturation."""
    return _table(FP8_OCP, BF8_OCP, GFX12)
