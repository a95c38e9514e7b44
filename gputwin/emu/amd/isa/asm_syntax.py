"""LLVM-syntax rules beyond the instruction tables: the older mnemonics LLVM 19 still accepts for gfx11, and
the order it demands of optional operands. Both were measured against llvm-mc-19 (tools/gen_isa_aliases.py,
tools/llvm_mc_vectors.py); the assembler applies them."""
from __future__ import annotations

import json

from .asm_mods import DPP_CTRL, Fail
from .inst import Inst
from .table import SAME_TABLE, TABLE_DIR, OpInfo

# LLVM 19 (gfx11) takes the optional operands only in its printing order; the cache bits in any order.
_RANK = {"format": 0, "idxen": 1, "offen": 2, "offset": 3, "offset0": 4, "offset1": 5, "glc": 6, "slc": 6,
         "dlc": 6, "gds": 7, "tfe": 8, "op_sel": 10, "op_sel_hi": 11, "neg_lo": 12, "neg_hi": 13, "clamp": 14,
         "mul": 15, "div": 15, "row_mask": 17, "bank_mask": 18, "bound_ctrl": 19, "fi": 20}


# gfx11's s_waitcnt_{vm,exp,lgkm,vs}cnt: llvm-mc-19 assembles only `null` as the SGPR (its disassembler prints
# whatever SGPR the word holds, and so does gputwin's).
NULL_SDST = frozenset({"s_waitcnt_vmcnt", "s_waitcnt_expcnt", "s_waitcnt_lgkmcnt", "s_waitcnt_vscnt"})

# Checks llvm-mc-19 makes only when assembling (its disassembler prints such words): the messages of
# gputwin's assembler for them, so a round trip from disassembly can tell them from a defect.
ASM_ONLY_RULES = ("src0 must be null", "execz and vccz", "lds_direct is not", "register not available",
                  "invalid VOPD", "VOPD halves", "VOPD destinations", "TFE modifier has no meaning",
                  "invalid operand (violates constant bus", "invalid op_sel operand")
# Source names llvm-mc-19's gfx11/gfx12 assembler refuses, by encoding (its disassembler prints them).
NOT_ON_RDNA = {251: "execz and vccz are not supported on this GPU", 252: "execz and vccz are not supported on this GPU",
               254: "lds_direct is not supported on this GPU", 239: "register not available on this GPU"}


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


# VOPD's register-bank rule as llvm-mc-19's assembler checks it (its disassembler does not): the X and Y
# halves' VGPRs in the same operand position must differ in bank, compared as index & mask per position
# [DST, SRC0, SRC1, SRC2]. SRC2 is the accumulator (the destination) of fmac/dot2acc and v_fmamk's VSRC1
# (its SRC1 is the literal). gfx12 checks only DST when both halves are v_dual_mov_b32.
_VOPD_BANK_MASKS = (1, 3, 3, 1)
_VOPD_ACC = frozenset({"v_fmac_f32", "v_dot2acc_f32_f16", "v_dot2acc_f32_bf16"})


def _vopd_regs(h: Inst) -> tuple:
    vgpr = {r: o.index for r, o in h.operands.items() if o.kind == "vgpr"}
    src1, src2 = vgpr.get("src1"), None
    if h.op == "v_fmamk_f32":
        src1, src2 = None, src1
    elif h.op in _VOPD_ACC:
        src2 = vgpr.get("vdst")
    return vgpr.get("vdst"), vgpr.get("src0"), src1, src2


def vopd_bank_conflict(x: Inst, y: Inst, gfx12: bool) -> str | None:
    """The first operand position where the halves share a bank, or None."""
    only_dst = gfx12 and x.op == y.op == "v_mov_b32"
    for pos, (a, b, mask) in enumerate(zip(_vopd_regs(x), _vopd_regs(y), _VOPD_BANK_MASKS)):
        if a is not None and b is not None and a & mask == b & mask and (pos == 0 or not only_dst):
            return ("vdst", "src0", "src1", "src2")[pos]
    return None
