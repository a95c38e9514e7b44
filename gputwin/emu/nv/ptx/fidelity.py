"""How faithful each modelled PTX instruction is known to be (the NV counterpart of
gputwin.emu.amd.fidelity; docs/ptx-emulator.md explains each decision).

Levels:
- "exact": bit-exact to the PTX ISA's definition of the result (not yet checked against hardware: no
  hardware recordings exist).
- "decision": PTX leaves the result open ("unspecified", "undefined", "machine-specific") and gputwin
  picks one documented behaviour; awaiting confirmation on hardware.
- "approximate": the hardware approximates (.approx transcendentals, div.full) or accumulates in an
  undocumented order (mma); gputwin has one documented implementation, known to differ from silicon in
  the last bits.
"""
from __future__ import annotations

import re

EXACT, DECISION, APPROXIMATE = "exact", "decision", "approximate"
DOC = "docs/ptx-emulator.md"

# (pattern over the full mnemonic with modifiers, level, what gputwin does); first match wins
RULES: tuple[tuple[re.Pattern, str, str], ...] = tuple((re.compile(p), lvl, why) for p, lvl, why in (
    (r"(ex2|lg2|sin|cos|tanh|rsqrt)\.approx.*", APPROXIMATE,
     "the float64 function of the (flushed) input, rounded once to the destination"),
    (r"(rcp|sqrt)\.approx.*", APPROXIMATE, "the correctly rounded result"),
    (r"div\.approx.*", APPROXIMATE, "a * (1/b), each rounded to f32"),
    (r"div\.full.*", APPROXIMATE, "the correctly rounded quotient (hardware: within 2 ulp)"),
    (r"mma\..*", APPROXIMATE, "C plus exact products summed in float64 in k order, one rounding to f32"),
    (r"(div|rem)\.[su](8|16|32|64)", DECISION,
     "x/0: all ones (unsigned) or -1 (signed); x%0: x; INT_MIN/-1: INT_MIN, remainder 0"),
    (r"(add|sub|mul|fma|mad|div|sqrt|rcp|cvt)\..*f64.*", DECISION,
     "NaN results are the canonical 0x7fffffffffffffff (f32/f16/bf16 canonical NaNs are exact)"),
    (r"(min|max)\..*f(16|32|64).*", DECISION, "-0.0 orders below +0.0"),
    (r"shfl\..*", DECISION, "a source lane that is not active gives its current register value"),
    (r"(atom|red)\..*", DECISION, "lanes hitting one address are serialised in thread order"),
    (r"(bar|barrier)\..*", DECISION, "a phase completes as soon as its last warp arrives; warps run in "
     "lowest-PC order meanwhile (see barriers.py)"),
    (r"mov\..*%clock.*", DECISION, "%clock/%clock64: 4 x the scheduling steps so far (deterministic)"),
))


def level(mnemonic: str) -> tuple[str, str]:
    """(level, why) for a full mnemonic such as "ex2.approx.ftz.f32"; ("exact", "") if no rule marks it."""
    for pattern, lvl, why in RULES:
        if pattern.fullmatch(mnemonic):
            return lvl, why
    return EXACT, ""
