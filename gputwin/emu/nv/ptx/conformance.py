"""`gputwin conformance --arch sm_80|sm_90`: per PTX instruction family, which opcodes the emulator
implements, which nvcc fixtures (fixtures/nv/<arch>) execute them, which unit-test files verify them,
their fidelity levels, and hardware recordings (none yet)."""
from __future__ import annotations

import re
from pathlib import Path

from gputwin.emu.nv.ptx.fidelity import APPROXIMATE, DECISION, level
from gputwin.emu.nv.ptx.ops import OPS

ARCHES = ("sm_80", "sm_90")
ROOT = Path(__file__).resolve().parents[4]

FAMILIES = {
    "integer": ("add", "sub", "mul", "mad", "mul24", "mad24", "div", "rem", "min", "max", "abs", "neg", "addc",
                "subc", "sad", "popc", "clz", "bfind", "brev", "bfe", "bfi", "prmt", "lop3", "shf", "shl", "shr",
                "and", "or", "xor", "not", "cnot"),
    "float": ("fma", "sqrt", "rcp", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh", "copysign", "testp"),
    "compare": ("setp", "set", "selp", "slct"),
    "convert": ("cvt", "mov", "cvta"),
    "memory": ("ld", "ldu", "st", "prefetch", "prefetchu", "isspacep", "cp", "createpolicy", "applypriority",
               "discard"),
    "atomic": ("atom", "red"),
    "control": ("bra", "brx", "call", "ret", "exit", "trap", "brkpt", "bar", "barrier", "membar", "fence",
                "nanosleep", "pmevent"),
    "warp": ("shfl", "vote", "match", "redux", "activemask"),
    "tensor": ("mma", "ldmatrix"),
}
UNIT_TESTS = {
    "integer": "tests/emu/nv/ptx/test_integer.py", "float": "tests/emu/nv/ptx/test_float.py",
    "compare": "tests/emu/nv/ptx/test_compare_convert.py", "convert": "tests/emu/nv/ptx/test_compare_convert.py",
    "memory": "tests/emu/nv/ptx/test_executor.py", "atomic": "tests/emu/nv/ptx/test_warp_atomic.py",
    "control": "tests/emu/nv/ptx/test_executor.py", "warp": "tests/emu/nv/ptx/test_warp_atomic.py",
    "tensor": "tests/emu/nv/ptx/test_tensor.py",
}
_INSTR = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][a-z0-9_]*(?:\.[\w:]+)*)", re.M)


def fixture_mnemonics(arch: str) -> dict[str, set[str]]:
    """{full mnemonic: fixture files} of the committed nvcc fixtures for arch."""
    out: dict[str, set[str]] = {}
    for f in sorted((ROOT / "fixtures" / "nv" / arch).glob("*.ptx")):
        for m in _INSTR.finditer(f.read_text()):
            name = m.group(1)
            if "." in name or name in OPS:          # not a call's argument list spread over lines
                out.setdefault(name, set()).add(f.name)
    return out


_FLOATS = {"f16", "f16x2", "bf16", "bf16x2", "f32", "f64"}


def family_of(mnemonic: str) -> str | None:
    op, *mods = mnemonic.split(".")
    shared = FAMILIES["integer"][:12]
    if op in shared and _FLOATS & set(mods):
        return "float"
    for fam, ops in FAMILIES.items():
        if op in ops:
            return fam
    return None


def report(arches=ARCHES) -> dict:
    rep = {}
    for arch in arches:
        seen = fixture_mnemonics(arch)
        fams = {}
        for fam, ops in FAMILIES.items():
            impl = sorted(o for o in ops if o in OPS)
            run = sorted(m for m in seen if family_of(m) == fam)
            fams[fam] = {
                "implemented": impl,
                "fixture_mnemonics": {m: sorted(seen[m]) for m in run},
                "unit_tests": UNIT_TESTS[fam],
                "approximate": sorted(m for m in run if level(m)[0] == APPROXIMATE),
                "decision": sorted(m for m in run if level(m)[0] == DECISION),
                "hardware_recordings": 0,
            }
        missing = sorted(m for m in seen if m.split(".")[0] not in OPS)
        rep[arch] = {"families": fams, "fixtures": len(list((ROOT / "fixtures" / "nv" / arch).glob("*.ptx"))),
                     "unmodelled_in_fixtures": missing}
    return rep


def format_text(rep: dict, verbose: bool = False) -> str:
    lines = []
    for arch, r in rep.items():
        lines.append(f"{arch} (PTX): {r['fixtures']} nvcc fixtures, all run bit-exact by tests/emu/nv/ptx; "
                     f"hardware recordings: none yet")
        lines.append(f"  {'family':<9}{'opcodes':>8}{'fixture mnemonics':>19}{'approx':>8}{'decision':>10}  verified by")
        for fam, f in r["families"].items():
            lines.append(f"  {fam:<9}{len(f['implemented']):>8}{len(f['fixture_mnemonics']):>19}"
                         f"{len(f['approximate']):>8}{len(f['decision']):>10}  fixtures + {f['unit_tests']}")
            if verbose:
                for m, files in f["fixture_mnemonics"].items():
                    lines.append(f"      {m:<44} {', '.join(files)}")
        if r["unmodelled_in_fixtures"]:
            lines.append(f"  UNMODELLED in fixtures: {', '.join(r['unmodelled_in_fixtures'])}")
    return "\n".join(lines)
