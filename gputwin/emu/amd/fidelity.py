"""How faithful each modelled AMD instruction is known to be: the machine-readable form of the
"Approximate vs hardware" notes in docs/valu.md, docs/cdna3.md and docs/rdna4.md (the conformance
report, docs/conformance.md, prints it per instruction).

Levels:
- "exact": bit-exact to the ISA guides' semantics as the emulator reads them (not yet checked against
  hardware: no hardware fixtures exist).
- "decision": bit-exact to a documented reading of an under-specified corner (division scaling, frexp of
  inf/NaN, trig_preop) that awaits confirmation on hardware.
- "approximate": known to differ from silicon in the last bits: the emulator rounds once where the
  hardware approximates (transcendental units) or accumulates in an order/precision it does not document
  (float dot products, WMMA, MFMA).
"""
from __future__ import annotations

import re

EXACT, DECISION, APPROXIMATE = "exact", "decision", "approximate"

# (mnemonic pattern, level, why, where it is written down); first match wins.
RULES: tuple[tuple[re.Pattern, str, str, str], ...] = tuple((re.compile(p), level, why, doc) for p, level, why, doc in (
    (r"v_(s_)?(exp|log|rcp|rsq|sqrt|sin|cos)(_legacy|_iflag|_clamp)?_f(16|32|64)", APPROXIMATE,
     "transcendental: hardware is a ~1 ulp approximation, gputwin rounds the float64 value once",
     "docs/valu.md, docs/rdna4.md"),
    (r"v_(dual_)?dot2(acc|c)?_(f32|f16|bf16)_(f16|bf16)", APPROXIMATE,
     "float dot product: exact products summed in float64, one rounding (hardware order not modelled)",
     "docs/valu.md"),
    (r"v_wmma_(f32|f16|bf16)_16x16x16_(f16|bf16|fp8_fp8|fp8_bf8|bf8_fp8|bf8_bf8)", APPROXIMATE,
     "WMMA float: products and C summed in float64, one rounding (hardware order not modelled)", "docs/valu.md"),
    (r"v_mfma_f32_\w+", APPROXIMATE,
     "MFMA float: C + products in k order in float64, one rounding (hardware tree not documented)",
     "docs/cdna3.md"),
    (r"v_div_(scale|fmas|fixup)_f(16|32|64)", DECISION,
     "division helpers: the guide's denormal scaling branch read as 2^-64; a flushed denormal quotient "
     "sets VCC without scaling (RDNA3 recording)", "docs/valu.md"),
    (r"v_frexp_(mant|exp)_\w+", DECISION, "frexp of +-inf / NaN (mant: the input; exp: 0)", "docs/valu.md"),
    (r"v_cvt_norm_[iu]16_f16", DECISION, "f16_to_snorm/unorm: rounding ties to even (the guide says only "
     "'0.5 ULP accuracy, supports rounding')", "gputwin/emu/amd/valu/cvt.py"),
    (r"v_cvt_(sr_|pk_)?(fp8|bf8)_f32(\.fnuz)?|v_cvt_(pk_)?f32_(fp8|bf8)(\.fnuz)?", DECISION,
     "8-bit floats: stochastic rounding's use of S1 and the NaN bits either way (gfx942 FNUZ: no saturation, "
     "the ROCm reference rounding, NaN decodes to 0x7fc00000; gfx12 OCP: NaN encodes to 0xff / 0xfe, S1's top "
     "bits, NaN decodes to a quiet NaN of its sign)", "gputwin/emu/amd/valu/fp8.py"),
    (r"v_mullit_f32", DECISION, "0 * x = +0 (the guide's description; its pseudocode writes a plain multiply)",
     "gputwin/emu/amd/valu/arith.py"),
    (r"v_trig_preop_f64", DECISION, "2/pi bits and scaling as the guide's pseudocode reads", "docs/valu.md"),
    (r"t?buffer_(load|store)_(d16_(hi_)?)?format(_d16(_hi)?)?_(x|xy|xyz|xyzw)", DECISION,
     "typed buffers: stores convert by the D3D11 rules (saturate, nearest), loads round the UNORM/SNORM "
     "quotient once (d16: to f16); the ISA guides give no rounding", "docs/buffers.md"),
))


def level(*names: str) -> tuple[str, str, str]:
    """(level, why, doc) for an instruction known by any of `names` (printed and base mnemonics, and the
    name the emulator runs it under); ("exact", "", "") when no rule marks it."""
    for pattern, lvl, why, doc in RULES:
        if any(pattern.fullmatch(n) for n in names if n):
            return lvl, why, doc
    return EXACT, "", ""
