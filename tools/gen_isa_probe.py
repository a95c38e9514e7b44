"""Probing one encoding format through the LLVM oracle: which opcodes exist, their mnemonics, and
which field each printed operand comes from (helper of tools/gen_isa.py)."""
from __future__ import annotations

import itertools
import re
import struct

from gputwin.emu.amd.isa import asm
from gputwin.emu.amd.isa.rdna3_formats import Format

# The formats of the architecture being generated (filled by gen_isa.select_arch).
FORMATS: dict[str, Format] = {}
TOP9: list = []
FLAT_SEGMENTS: dict[int, str] = {}

TAIL = struct.pack("<II", 0x12345678, 0x0BADF00D)   # bytes after the probe: a literal if one is read

# Probe values per field: tried in order (first valid combination wins). Register numbers are distinct
# per field and aligned to 4 so that a printed register identifies its field and any range is legal.
V = lambda n: 256 + n   # noqa: E731  (VGPR in a 9-bit source field)
PROBES: dict[str, dict[str, list[int]]] = {
    "SOP2": {"sdst": [20, 0], "ssrc0": [40, 0], "ssrc1": [60, 0]},
    "SOP1": {"sdst": [20, 0], "ssrc0": [40, 0]},
    "SOPC": {"ssrc0": [40, 0], "ssrc1": [60, 0]},
    "SOPK": {"sdst": [20, 0], "simm16": [0x1234, 0]},
    "SOPP": {"simm16": [0x12, 0]},
    "SMEM": {"sdata": [20, 0], "sbase": [20, 0], "offset": [0x10, 0], "soffset": [60, 124]},
    "VOP1": {"vdst": [10, 0], "src0": [V(20), 40, 0]},
    "VOP2": {"vdst": [10, 0], "src0": [V(20), 40, 0], "vsrc1": [60, 0]},
    "VOPC": {"src0": [V(20), 40, 0], "vsrc1": [60, 0]},
    "VOP3": {"vdst": [10, 0], "src0": [V(20), 40, 0], "src1": [V(60), 80, 0], "src2": [V(120), 64, 0]},
    "VOP3P": {"vdst": [10, 0], "src0": [V(20), 40, 0], "src1": [V(60), 80, 0], "src2": [V(120), 64, 0],
              "op_sel_hi": [3], "op_sel_hi2": [1]},
    "DS": {"addr": [10, 0], "data0": [60, 0], "data1": [120, 0], "vdst": [180, 0]},
    "FLAT": {"addr": [10, 0], "data": [60, 0], "saddr": [20, 124, 0], "vdst": [120, 0], "sve": [1, 0]},
    "MUBUF": {"vaddr": [10, 0], "vdata": [60, 0], "srsrc": [5, 0], "soffset": [40, 128]},
    "MTBUF": {"vaddr": [10, 0], "vdata": [60, 0], "srsrc": [5, 0], "soffset": [40, 128], "format": [1]},
}
# gfx12 VBUFFER: one format for buffer and tbuffer, RSRC an unscaled SGPR number, 7-bit SOFFSET.
PROBES_GFX12 = dict(PROBES, MUBUF={"vaddr": [10, 0], "vdata": [60, 0], "rsrc": [20, 0], "soffset": [40, 124],
                                   "format": [1]})
# Values a probe register field prints as: field -> register number (SGPRs probe 4-aligned values).
_SGPR_FIELDS = {"sdst", "ssrc0", "ssrc1", "sdata", "soffset", "saddr"}

REG_RE = re.compile(r"^(?P<neg>-?)(?P<abs>\|?)(?P<kind>v|s|ttmp)(?:(?P<one>\d+)|\[(?P<lo>\d+):(?P<hi>\d+)\])(?P<half>\.[lh])?\|?$")


def parse_reg(tok: str):
    """'v[10:11]' -> ('v', 10, 2); 's20' -> ('s', 20, 1); 'v1.l' -> ('v16', 1, 1); else None."""
    m = REG_RE.match(tok)
    if not m:
        return None
    if m["half"]:
        return "v16", int(m["one"]) + (128 if m["half"] == ".h" else 0), 1
    if m["one"] is not None:
        return m["kind"], int(m["one"]), 1
    return m["kind"], int(m["lo"]), int(m["hi"]) - int(m["lo"]) + 1


def split_top(text: str, sep: str) -> list[str]:
    """Split on sep outside () and [] (the assembler's own splitter, without column offsets)."""
    return [piece for piece, _ in asm.split_top(text, sep)]


def split_text(text: str) -> tuple[str, list[str], list[str]]:
    """'global_load_b32 v1, v2, off offset:16 glc' -> (mnemonic, operands, trailing modifiers)."""
    parts = text.split(" ", 1)
    if len(parts) == 1:
        return parts[0], [], []
    ops = split_top(parts[1], ", ")
    tail = split_top(ops[-1], " ")
    ops[-1] = tail[0]
    mods = tail[1:]
    if (":" in ops[-1] or ops[-1] == "gds") and len(ops) == 1 and not ops[0].startswith(("v[", "s[", "ttmp[")):
        mods, ops = [ops[0]] + mods, []
    return parts[0], ops, mods


def word_bytes(fmt: Format, word: int) -> bytes:
    return word.to_bytes(fmt.size, "little")


def find_base(dis, fmt: Format, fixed: dict[str, int], probes: dict[str, list[int]]):
    """First combination of probe values that LLVM accepts: (values, size, text) or None."""
    names = list(probes)
    for combo in itertools.product(*(probes[n] for n in names)):
        values = dict(zip(names, combo), **fixed)
        size, text = dis(word_bytes(fmt, fmt.pack(**values)) + TAIL)
        if size:
            return values, size, text
    return None
