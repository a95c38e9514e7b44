"""Generate gputwin/emu/amd/isa/tables/<arch>_pixel.json: the pixel-shader formats (EXP, LDSDIR/VDSDIR,
VINTERP) as LLVM 19 decodes them.

    python tools/gen_isa_pixel.py [--arch gfx1100]

Records the export mnemonic(s) llvm-mc-19 takes and prints, the export target names, the LDS/VDS-direct
opcodes (name, whether they name an attribute, their wait-counter operands), the VINTERP opcodes (name,
whether they have op_sel), the width of VINTERP's opcode field as LLVM reads it, and per opcode the bits
LLVM refuses (`reject`, set one at a time on a valid word). Field layouts: gputwin/emu/amd/isa/pixel.py.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from gen_isa import llvm_version  # noqa: E402
from llvm_oracle import Disassembler  # noqa: E402

from gputwin.emu.amd.isa.pixel import DSDIR, EXP, VINTERP  # noqa: E402
from gputwin.emu.amd.isa.table import TABLE_DIR  # noqa: E402


def _dis(d: Disassembler, word: int, size: int) -> str | None:
    n, t = d.dis(word.to_bytes(size, "little") + bytes(8))
    return t if n == size and t and "/*" not in t else None


def _reject(d: Disassembler, fmt, word: int) -> int:
    """Bits LLVM refuses, set one at a time (the opcode and identifier excluded)."""
    size = fmt.size
    skip = fmt.fields_mask("op") | fmt.ident_mask()
    bad = 0
    for bit in range(8 * size):
        if not (word | skip) >> bit & 1 and _dis(d, word | 1 << bit, size) is None:
            bad |= 1 << bit
    return bad


def _accepts(arch: str, line: str) -> bool:
    p = subprocess.run(["llvm-mc-19", "-triple=amdgcn", f"-mcpu={arch}", "-show-encoding"], input=line + "\n",
                       capture_output=True, text=True)
    return not p.stderr


def exports(arch: str, d: Disassembler) -> dict:
    base = EXP.pack(en=15, src0=1, src1=2, src2=3, src3=4)
    targets = {}
    for tgt in range(64):
        t = _dis(d, base | tgt << 4, 8)
        name = t.split()[1]
        if not name.startswith("invalid_target_"):
            targets[str(tgt)] = name
    mnemonic = _dis(d, base, 8).split()[0]
    spellings = [m for m in ("exp", "export") if _accepts(arch, f"{m} mrt0 v1, off, off, off")]
    return {"mnemonic": mnemonic, "spellings": spellings, "targets": targets}


def dsdir(d: Disassembler) -> dict:
    ops = {}
    for op in range(4):
        word = DSDIR.pack(op=op, vdst=9, attr=7, attrchan=2, waitvdst=5)
        t = _dis(d, word, 4)
        if t is None:
            continue
        words = t.replace(",", " ").split()
        ops[str(op)] = {"name": words[0], "param": any(w.startswith("attr") for w in words),
                        "waits": [w.split(":")[0] for w in words if w.startswith("wait_")],
                        "reject": _reject(d, DSDIR, word)}
    return ops


def vinterps(d: Disassembler) -> dict:
    base = VINTERP.pack(vdst=5, src0=257, src1=258, src2=259)
    ops, bits = {}, 7
    for op in range(128):
        t = _dis(d, base | op << 16, 8)
        if t is None:
            continue
        name = t.split()[0]
        if any(e["name"] == name for e in ops.values()):   # the opcode field is narrower than 7 bits
            bits = min(bits, op.bit_length() - 1)
            continue
        word = base | op << 16
        ops[str(op)] = {"name": name, "op_sel": _dis(d, word | 1 << 11, 8) is not None,
                        "reject": _reject(d, VINTERP, word)}
    return {"op_bits": bits, "ops": ops}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="gfx1100")
    a = ap.parse_args(argv)
    d = Disassembler(a.arch)
    doc = {"oracle": llvm_version(), "exp": exports(a.arch, d), "dsdir": dsdir(d), "vinterp": vinterps(d)}
    path = TABLE_DIR / f"{a.arch}_pixel.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{path}: {len(doc['exp']['targets'])} export targets, {len(doc['dsdir'])} LDS-direct ops, "
          f"{len(doc['vinterp']['ops'])} VINTERP ops")
    return 0


if __name__ == "__main__":
    sys.exit(main())
