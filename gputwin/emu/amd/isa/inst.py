"""The decoded form of one AMD instruction: what the decoder produces and the emulator consumes.

Operands keep the hardware's own numbering so the emulator can index register files directly:
- `Operand.kind == "vgpr"`: `index` is the VGPR number (0..255), `count` dwords.
- `"sgpr"`: `index` is the scalar-operand encoding (0..105 SGPRs, 106/107 VCC_LO/HI, 108..123 TTMP,
  124 NULL, 125 M0, 126/127 EXEC_LO/HI), `count` dwords.
- `"const"`: an inline constant; `index` is its encoding (128..208 integers, 240..248 floats); its value
  depends on the operand's type (1.0 is 0x3f800000 as f32, 0x3c00 as f16, 0x3ff0000000000000 as f64).
- `"special"`: other source encodings read as values (235 src_shared_base, 236 src_shared_limit,
  237 src_private_base, 238 src_private_limit, 251 src_vccz, 252 src_execz, 253 src_scc, 254 lds_direct).
- `"literal"`: a 32-bit literal that followed the instruction; `value` holds it.
- `"imm"`: an immediate field of the encoding (SOPK simm16, SOPP simm16, offsets); `value` holds it.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Operand:
    kind: str
    index: int = 0
    count: int = 1
    value: int | None = None


@dataclass(frozen=True, slots=True)
class Dpp:
    kind: str                 # "dpp16" or "dpp8"
    ctrl: int = 0             # dpp16: the 9-bit DPP_CTRL field
    row_mask: int = 0xF
    bank_mask: int = 0xF
    bound_ctrl: bool = False
    fi: bool = False
    sel: tuple[int, ...] = () # dpp8: eight 3-bit lane selects


@dataclass(frozen=True, slots=True)
class Inst:
    op: str                   # base mnemonic, e.g. "v_add_f32", "s_load_b64", "global_store_b32"
    encoding: str             # SOP1 SOP2 SOPK SOPC SOPP SMEM VOP1 VOP2 VOPC VOP3 VOP3SD VOP3P VOPD DS FLAT GLOBAL SCRATCH MUBUF MTBUF ...
    opcode: int
    size: int                 # bytes, literal included
    operands: dict[str, Operand] = field(default_factory=dict)  # by field role: vdst sdst src0 src1 src2 vaddr vdata saddr sbase soffset addr data0 data1 ...
    abs: tuple[bool, bool, bool] = (False, False, False)
    neg: tuple[bool, bool, bool] = (False, False, False)
    neg_hi: tuple[bool, bool, bool] = (False, False, False)
    op_sel: tuple[bool, bool, bool, bool] = (False, False, False, False)   # src0 src1 src2 dst
    op_sel_hi: tuple[bool, bool, bool] = (True, True, True)
    clamp: bool = False
    omod: int = 0             # 0 none, 1 *2, 2 *4, 3 /2
    dpp: Dpp | None = None
    offset: int = 0           # memory offset (signed where the encoding is)
    offset0: int = 0          # DS two-address forms
    offset1: int = 0
    glc: bool = False
    slc: bool = False
    dlc: bool = False
    gds: bool = False
    simm16: int | None = None # SOPP/SOPK immediate (SOPP branches: signed dword offset)
    vopd: tuple["Inst", "Inst"] | None = None  # VOPD: the X and Y halves, each a VOP2-like Inst
    extra: dict[str, int] = field(default_factory=dict)  # any other encoding field by its LLVM name (e.g. format, idxen, offen, wait_exp)
