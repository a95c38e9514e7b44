"""LLVM-syntax rules beyond the instruction tables: the older mnemonics LLVM 19 still accepts for gfx11, and
the order it demands of optional operands. Both were measured against llvm-mc-19 (tools/gen_isa_aliases.py,
tools/llvm_mc_vectors.py); the assembler applies them."""
from __future__ import annotations

import json

from .asm_mods import DPP_CTRL, Fail
from .table import SAME_TABLE, TABLE_DIR, OpInfo

# LLVM 19 (gfx11) takes the optional operands only in its printing order; the cache bits in any order.
_RANK = {"format": 0, "idxen": 1, "offen": 2, "offset": 3, "offset0": 4, "offset1": 5, "glc": 6, "slc": 6,
         "dlc": 6, "gds": 7, "tfe": 8, "op_sel": 10, "op_sel_hi": 11, "neg_lo": 12, "neg_hi": 13, "clamp": 14,
         "mul": 15, "div": 15, "row_mask": 17, "bank_mask": 18, "bound_ctrl": 19, "fi": 20}


# gfx11's s_waitcnt_{vm,exp,lgkm,vs}cnt: llvm-mc-19 assembles only `null` as the SGPR (its disassembler prints
# whatever SGPR the word holds, and so does gputwin's).
NULL_SDST = frozenset({"s_waitcnt_vmcnt", "s_waitcnt_expcnt", "s_waitcnt_lgkmcnt", "s_waitcnt_vscnt"})


def check_order(mods: dict) -> None:
    last, last_name = -1, ""
    for name, (_, col) in mods.items():
        is_ctrl = name in ("quad_perm", "dpp8", "row_mirror", "row_half_mirror") or name in DPP_CTRL
        rank = 16 if is_ctrl else _RANK.get(name)
        if rank is None:
            continue
        if rank < last:
            raise Fail(f"{name!r} must come before {last_name!r}", col)
        last, last_name = rank, name


_FORMS = ("", "_e32", "_e64", "_dpp", "_e64_dpp")


def add_aliases(idx: dict[str, list[tuple[OpInfo, bool]]], arch: str) -> None:
    """The other mnemonics LLVM accepts (tables/<arch>_aliases.json, tools/gen_isa_aliases.py): each base
    name names the same entries as its canonical one, in every form (LLVM strips _e32/_e64/_dpp/_e64_dpp
    before it applies an alias)."""
    path = TABLE_DIR / f"{SAME_TABLE.get(arch, arch)}_aliases.json"
    if not path.exists():
        return
    for alias, canon in json.loads(path.read_text()).items():
        for suf in _FORMS:
            if canon + suf in idx:
                idx.setdefault(alias + suf, idx[canon + suf])
