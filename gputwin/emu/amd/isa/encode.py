"""Inst -> bytes for RDNA3 (gfx11): the exact inverse of decode.py, driven by the same tables."""
from __future__ import annotations

from .inst import Inst, Operand
from .rdna3_formats import FORMATS, SRC_DPP8, SRC_DPP8_FI, SRC_DPP16, SRC_LITERAL
from .table import OpInfo, Table, load

_SEG = {"FLAT": 0, "SCRATCH": 1, "GLOBAL": 2}
_SCALE = {"sbase": 2, "srsrc": 4}
_TABLE_KEY = {"VOP3SD": "VOP3"}


class EncodeError(ValueError):
    pass


def src_field(op: Operand) -> int:
    """A source operand's 9-bit encoding (VGPRs at 256+)."""
    if op.kind == "vgpr":
        return 256 + op.index
    if op.kind == "literal":
        return SRC_LITERAL
    return op.index


def _b(x: bool) -> int:
    return 1 if x else 0


class Encoder:
    def __init__(self, arch: str):
        self.table: Table = load(arch)

    def info(self, inst: Inst, key: str | None = None) -> OpInfo:
        key = key or _TABLE_KEY.get(inst.encoding, inst.encoding)
        try:
            return self.table.by_enc[key][inst.opcode]
        except KeyError:
            raise EncodeError(f"no {inst.encoding} instruction with opcode {inst.opcode}") from None

    def encode(self, inst: Inst) -> bytes:
        if inst.encoding in ("EXP", "LDSDIR", "VDSDIR", "VINTERP"):
            from . import pixel
            return pixel.encode(self.table.arch, inst)
        if inst.encoding in ("MIMG", "VIMAGE", "VSAMPLE"):
            from . import image
            return image.encode(self.table.arch, inst)
        if inst.encoding == "VOPD":
            return self._vopd(inst)
        info = self.info(inst)
        fmt = info.fmt
        vals: dict[str, int] = {"op": inst.opcode}
        if fmt.name == "FLAT":
            vals["seg"] = _SEG[inst.encoding]
        lit = self._slots(info, inst, vals)
        enc = inst.encoding
        tail = b""
        if enc in ("SOPK", "SOPP") and inst.simm16 is not None:
            vals["simm16"] = inst.simm16 & 0xFFFF
        elif enc == "VOP3":
            hidden = info.hidden_vdst
            if hidden >= 0:
                vals["vdst"] = inst.extra.get("vdst", hidden)
            vals.update(clamp=_b(inst.clamp), omod=inst.omod, abs=sum(_b(a) << i for i, a in enumerate(inst.abs)),
                        neg=sum(_b(a) << i for i, a in enumerate(inst.neg)),
                        op_sel=sum(_b(a) << i for i, a in enumerate(inst.op_sel)))
        elif enc == "VOP3SD":
            vals.update(clamp=_b(inst.clamp), omod=inst.omod, neg=sum(_b(a) << i for i, a in enumerate(inst.neg)))
        elif enc == "VOP3P":
            vals.update(clamp=_b(inst.clamp), neg=sum(_b(a) << i for i, a in enumerate(inst.neg)),
                        neg_hi=sum(_b(a) << i for i, a in enumerate(inst.neg_hi)),
                        op_sel=sum(_b(a) << i for i, a in enumerate(inst.op_sel[:3])),
                        op_sel_hi=_b(inst.op_sel_hi[0]) | _b(inst.op_sel_hi[1]) << 1, op_sel_hi2=_b(inst.op_sel_hi[2]))
        elif enc in self.MEMORY:
            self._memory(inst, info, vals)
        if inst.dpp is not None:
            tail = self._dpp(inst, vals)
        word = fmt.pack(**vals).to_bytes(fmt.size, "little")
        if lit is not None and inst.dpp is None:
            tail = (lit & 0xFFFFFFFF).to_bytes(4, "little")
        return word + tail

    MEMORY = ("SMEM", "FLAT", "GLOBAL", "SCRATCH", "DS", "MUBUF", "MTBUF")

    def _memory(self, inst: Inst, info: OpInfo, vals: dict) -> None:
        """The memory formats' own fields (RDNA3 layouts; RDNA4 overrides)."""
        enc = inst.encoding
        if enc == "SMEM":
            vals.update(offset=inst.offset & 0x1FFFFF, glc=_b(inst.glc), dlc=_b(inst.dlc))
            if any(s.role == "soffset" for s in info.slots):
                vals.setdefault("soffset", 124)
        elif enc in ("FLAT", "GLOBAL", "SCRATCH"):
            vals.update(offset=inst.offset & 0x1FFF, glc=_b(inst.glc), slc=_b(inst.slc), dlc=_b(inst.dlc))
            if "saddr" not in inst.operands:
                vals["saddr"] = 124
            if enc == "SCRATCH":
                vals["sve"] = inst.extra.get("sve", _b("vaddr" in inst.operands))
                if "addr" in inst.extra:
                    vals["addr"] = inst.extra["addr"]
        elif enc == "DS":
            vals.update(offset0=inst.offset0, offset1=inst.offset1, gds=_b(inst.gds))
        elif enc in ("MUBUF", "MTBUF"):
            x = inst.extra
            vals.update(offset=inst.offset, glc=_b(inst.glc), slc=_b(inst.slc), dlc=_b(inst.dlc),
                        offen=x.get("offen", 0), idxen=x.get("idxen", 0), tfe=x.get("tfe", 0))
            if enc == "MTBUF":
                vals["format"] = x.get("format", 1)
            if "vaddr" in inst.operands:
                vals["vaddr"] = inst.operands["vaddr"].index
            if "soffset" in inst.operands:
                vals["soffset"] = src_field(inst.operands["soffset"])

    def _slots(self, info: OpInfo, inst: Inst, vals: dict, slots=None) -> int | None:
        """Operand fields into vals; returns the literal (if any)."""
        lit = None
        slots = slots or (info.rtn_slots if info.rtn_slots and "vdst" in inst.operands else info.slots)
        ops = inst.operands
        for s in slots:
            op = ops.get(s.role)
            if op is None or s.kind in ("imp", "off") or s.role == "simm16":
                continue
            if s.kind == "lit":
                lit = op.value
            elif s.kind in ("src", "ssrc", "src16"):
                v = src_field(op)
                if op.kind == "literal":
                    lit = op.value
                if s.kind == "src16" and op.kind == "vgpr":
                    v |= 128 * _b(inst.op_sel[{"src0": 0, "src1": 1, "src2": 2}[s.role]])
                vals[s.field] = inst.extra.get(f"{s.role}_field", v)   # a misaligned WMMA SGPR range
            elif s.kind == "v16":
                vals[s.field] = op.index | 128 * _b(inst.op_sel[3])
            elif s.kind == "v":
                vals[s.field] = op.index
            elif s.kind == "s":
                vals[s.field] = op.index // _SCALE.get(s.field, 1)
            else:   # an immediate printed in an operand position (sendmsg id, s_atc_probe)
                vals[s.field] = op.value
        return lit

    @staticmethod
    def _dpp(inst: Inst, vals: dict) -> bytes:
        d = inst.dpp
        src0 = vals["src0"] - 256
        if d.kind == "dpp8":
            vals["src0"] = SRC_DPP8_FI if d.fi else SRC_DPP8
            word = src0 | sum(s << (8 + 3 * i) for i, s in enumerate(d.sel))
        else:
            vals["src0"] = SRC_DPP16
            if inst.encoding in ("VOP1", "VOP2", "VOPC"):
                negabs = _b(inst.neg[0]) | _b(inst.abs[0]) << 1 | _b(inst.neg[1]) << 2 | _b(inst.abs[1]) << 3
            else:
                negabs = inst.extra.get("dpp_negabs", 0)
            word = (src0 | d.ctrl << 8 | _b(d.fi) << 18 | _b(d.bound_ctrl) << 19 | negabs << 20
                    | d.bank_mask << 24 | d.row_mask << 28)
        return word.to_bytes(4, "little")

    def _vopd(self, inst: Inst) -> bytes:
        x, y = inst.vopd
        xi, yi = self.info(x, "VOPDX"), self.info(y, "VOPDY")
        vals = {"opx": x.opcode, "opy": y.opcode}
        lx = self._slots(xi, x, vals)
        ly = self._slots(yi, y, vals, tuple(s for s in yi.slots if s.role != "vdst"))
        vals["vdsty"] = y.operands["vdst"].index >> 1
        word = FORMATS["VOPD"].pack(**vals).to_bytes(8, "little")
        lit = lx if lx is not None else ly
        return word + ((lit & 0xFFFFFFFF).to_bytes(4, "little") if lit is not None else b"")


_ENCODERS: dict[str, Encoder] = {}


def encoder(arch: str) -> Encoder:
    if arch not in _ENCODERS:
        cls = Encoder
        if load(arch).family == "rdna4":
            from .encode_rdna4 import Rdna4Encoder   # RDNA4's memory formats
            cls = Rdna4Encoder
        if load(arch).family == "cdna3":
            from .encode_cdna3 import Cdna3Encoder   # GFX9 formats, SDWA, MAI; undoes the normalisation
            cls = Cdna3Encoder
        _ENCODERS[arch] = cls(arch)
    return _ENCODERS[arch]


def encode(inst: Inst, arch: str = "gfx1100") -> bytes:
    """The bytes of one instruction (literal / DPP dword included)."""
    return encoder(arch).encode(inst)
