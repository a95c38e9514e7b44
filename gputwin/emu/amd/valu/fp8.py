"""8-bit float conversions (CDNA3 v_cvt_*fp8* / *bf8*): the formats, f32 -> 8-bit with round to nearest
even or stochastic rounding, and 8-bit -> f32, vectorised on bit patterns.

gfx942 uses the FNUZ formats (CDNA3 ISA; the same as ml_dtypes float8_e4m3fnuz / float8_e5m2fnuz):
fp8 = E4M3 bias 8, bf8 = E5M2 bias 16, no infinities, no negative zero, 0x80 the only NaN.
- f32 -> 8-bit (v_cvt_pk_*8_f32): round to nearest even at the 8-bit precision, subnormals kept; a
  result past the largest finite value (240 / 57344), an infinity or a NaN gives 0x80 (NaN); zero of
  either sign gives 0x00. The hardware does not saturate: libraries clamp the input first (CK's
  amd_assembly_cvt_pk_fp8_f32, HIP's saturating casts), and LLVM refuses clamp on these forms.
- stochastic rounding (v_cvt_sr_*8_f32, S1 = 32 random bits): the f32 significand M (with its
  implicit bit) loses d low bits at the 8-bit precision; the result is (M + (S1 & (2^d - 1))) >> d,
  as the ROCm fp8 conversion reference implementations compute it (for d >= 32 all of S1 is added).
  Overflow, infinities and NaN as above.
- 8-bit -> f32 (v_cvt_f32_*8, v_cvt_pk_f32_*8) is exact; 0x80 gives the canonical quiet NaN 0x7fc00000.
  DECISION: the NaN's f32 bits are not documented (ml_dtypes gives 0xffc00000); to confirm on hardware.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from gputwin.errors import IllegalInstruction

U32, U64 = np.uint32, np.uint64
QNAN32 = 0x7FC00000


@dataclass(frozen=True)
class Fp8:
    ebits: int
    mbits: int
    bias: int

    @property
    def emin(self) -> int:                  # exponent of the smallest normal
        return 1 - self.bias

    @property
    def max_finite(self) -> float:          # FNUZ: the all-ones exponent is an ordinary one
        return (2.0 - 2.0 ** -self.mbits) * 2.0 ** ((1 << self.ebits) - 1 - self.bias)

    @cached_property
    def to_f32(self) -> np.ndarray:
        """uint32 f32 bits of each of the 256 codes."""
        code = np.arange(256)
        e, m = (code >> self.mbits) & ((1 << self.ebits) - 1), code & ((1 << self.mbits) - 1)
        mag = np.where(e == 0, m * 2.0 ** (self.emin - self.mbits),
                       (1 + m / 2.0 ** self.mbits) * 2.0 ** (e - self.bias))
        val = np.where(code >> 7, -mag, mag).astype(np.float32).view(U32)
        val[0x80] = QNAN32
        return val

    def encode(self, bits: np.ndarray, rng: np.ndarray | None = None) -> np.ndarray:
        """f32 bits -> uint32 8-bit codes, nearest even (rng None) or stochastic with 32-bit rng."""
        bits = np.asarray(bits, U32)
        with np.errstate(invalid="ignore"):                 # signalling NaNs are fine here
            a = np.abs(bits.view(np.float32).astype(np.float64))
        _, ex = np.frexp(a)                                  # a = m * 2^ex, m in [0.5, 1)
        e = np.maximum(ex - 1, self.emin)                    # the 8-bit exponent the value lands in
        q = np.ldexp(1.0, e - self.mbits)                    # its quantum
        if rng is None:
            with np.errstate(invalid="ignore"):
                r = np.rint(a / q) * q
        else:
            r = self._stochastic(bits, e, rng) * q
        bad = ~np.isfinite(a) | (r > self.max_finite)
        _, ex_r = np.frexp(r)
        er = np.maximum(ex_r - 1, self.emin)
        normal = (r >= 2.0 ** self.emin)
        with np.errstate(invalid="ignore"):
            mant = np.where(normal, r / np.ldexp(1.0, er - self.mbits) - (1 << self.mbits),
                            r / 2.0 ** (self.emin - self.mbits))
            field = np.where(normal, er + self.bias, 0)
            code = (field << self.mbits) | np.nan_to_num(mant).astype(np.int64)
        code = np.where(code != 0, code | ((bits >> 31).astype(np.int64) << 7), 0)   # no negative zero
        return np.where(bad, 0x80, code).astype(U32)

    def _stochastic(self, bits: np.ndarray, e: np.ndarray, rng) -> np.ndarray:
        """(M + (rng & (2^d - 1))) >> d as float64, where M is the f32 significand and d the bits dropped."""
        fexp = ((bits >> 23) & 0xFF).astype(np.int64)
        sig = (bits & 0x7FFFFF).astype(np.int64) | np.where(fexp > 0, 1 << 23, 0)
        ulp_exp = np.maximum(fexp, 1) - 127 - 23              # f32 quantum of the value
        d = np.clip(e - self.mbits - ulp_exp, 0, 40)
        low = np.asarray(rng, U32).astype(np.int64) & np.where(d >= 32, 0xFFFFFFFF, (1 << np.minimum(d, 31)) - 1)
        return ((sig + low) >> d).astype(np.float64)


FP8_FNUZ, BF8_FNUZ = Fp8(4, 3, 8), Fp8(5, 2, 16)


# --- the CDNA3 instructions, under internal names (gfx12 has the same mnemonics with OCP formats) -------
def _old(c):
    return c.group.vgpr(c.inst.operands["vdst"].index)


def _to_f32(spec: Fp8):
    return lambda c, a: spec.to_f32[np.asarray(a, U32) & U32(0xFF)]


def _pk_to_f32(spec: Fp8):
    """D.f32[0] = byte 0, D.f32[1] = byte 1 of S0 (SDWA WORD_1 selects bytes 2 and 3)."""
    def fn(c, a):
        a = np.asarray(a, U32)
        return spec.to_f32[a & U32(0xFF)].astype(U64) | (spec.to_f32[(a >> U32(8)) & U32(0xFF)].astype(U64) << U64(32))
    return fn


def _no_fp16_ovfl(c):
    """On later parts MODE bit 23 also makes f32 -> 8-bit float conversions saturate (Triton sets it for
    that on RDNA4); the CDNA3 guide says nothing of gfx942's: fail closed rather than guess (docs/mode.md)."""
    if c.mode.fp16_ovfl:
        raise IllegalInstruction(f"{c.inst.op}: MODE.FP16_OVFL (bit 23) on an 8-bit float conversion is not modelled")


def _pk_from_f32(spec: Fp8):
    """D.b16[OPSEL[3]] = {cvt(S1), cvt(S0)}; the other half of D is kept."""
    def fn(c, a, b):
        _no_fp16_ovfl(c)
        pair = spec.encode(a) | (spec.encode(b) << U32(8))
        shift = U32(16 if c.inst.op_sel[3] else 0)
        return (_old(c) & ~(U32(0xFFFF) << shift)) | (pair << shift)
    return fn


def _sr_from_f32(spec: Fp8):
    """D.byte[OPSEL[3:2]] = stochastic cvt(S0) with S1 as the random bits; the other bytes are kept."""
    def fn(c, a, b):
        _no_fp16_ovfl(c)
        shift = U32(8 * (int(c.inst.op_sel[2]) | int(c.inst.op_sel[3]) << 1))
        return (_old(c) & ~(U32(0xFF) << shift)) | (spec.encode(a, b) << shift)
    return fn


def cdna3_ops():
    """{internal name: Op} and {gfx942 mnemonic: internal name}."""
    from .table import Op
    ops, names = {}, {}
    for short, spec in (("fp8", FP8_FNUZ), ("bf8", BF8_FNUZ)):
        table = {f"v_cvt_f32_{short}": Op(_to_f32(spec), ("u32",), "f32", flush=False, nan=False),
                 f"v_cvt_pk_f32_{short}": Op(_pk_to_f32(spec), ("u32",), "b64"),
                 f"v_cvt_pk_{short}_f32": Op(_pk_from_f32(spec), ("f32", "f32"), "b32", flush=False),
                 f"v_cvt_sr_{short}_f32": Op(_sr_from_f32(spec), ("f32", "u32"), "b32", flush=False)}
        for name, op in table.items():
            ops[name + ".fnuz"] = op
            names[name] = name + ".fnuz"
    return ops, names
