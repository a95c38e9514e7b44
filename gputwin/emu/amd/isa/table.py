"""Loading the generated instruction tables (tables/<arch>.json, written by tools/gen_isa.py)."""
from __future__ import annotations

import dataclasses
import functools
import json
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass

from . import cdna3_formats, rdna3_formats, rdna4_formats
from .rdna3_formats import Format

TABLE_DIR = pathlib.Path(__file__).with_name("tables")
# Architectures with tables, and the format family their encodings follow.
ARCHES = {"gfx1100": "rdna3", "gfx1200": "rdna4", "gfx942": "cdna3"}
FAMILIES = {"rdna3": rdna3_formats, "rdna4": rdna4_formats, "cdna3": cdna3_formats}
# Processors that use another's table: gfx1201 has gfx1200's encodings (one ISA version in LLVM 19).
SAME_TABLE = {"gfx1201": "gfx1200"}
ARCHES.update({alias: ARCHES[base] for alias, base in SAME_TABLE.items()})
# the tables that carry the image / pixel-shader format facts (tools/gen_isa_image.py, gen_isa_pixel.py):
# RDNA only, CDNA3 has neither format; a listed table that is missing is an error, never an empty table
_FORMAT_FACT_TABLES = ("gfx1100", "gfx1200")


def format_facts(arch: str, kind: str, none: dict) -> dict:
    """The `<table>_<kind>.json` facts of arch's table (`kind` is image or pixel), or `none` for an arch
    without those formats."""
    base = SAME_TABLE.get(arch, arch)
    if base not in _FORMAT_FACT_TABLES:
        return none
    return json.loads((TABLE_DIR / f"{base}_{kind}.json").read_text())


@dataclass(frozen=True, slots=True)
class Slot:
    """One printed operand: its Inst.operands role, the field it comes from and its size."""

    def for_wave64(self) -> "Slot":
        """This slot as wave64 code has it."""
        if self.w64 is None:
            return self
        count, ptype = self.w64
        field = "=vcc" if self.field == "=vcc_lo" else self.field
        return dataclasses.replace(self, count=count, ptype=ptype or self.ptype, field=field, w64=None)

    role: str
    field: str            # format field, or "=vcc_lo" / "=literal" / "=off" for fixed text
    count: int            # dwords
    kind: str             # src (9-bit source), ssrc (8-bit scalar source), v, s, imp, lit, off, or an imm kind
    allowed: str = ""     # sources: which kinds LLVM accepts: v(gpr) s(calar) c(onstant) l(iteral)
    ptype: str | None = None  # sources: data type constants are read and printed as (see operands.py)
    lo: int = 0
    width: int = 0
    w64: tuple | None = None  # (dwords, ptype) in wave64 where they differ: lane masks (an SGPR pair,
    #                           VCC for VCC_LO), WMMA accumulators (half as many VGPRs)


@dataclass(frozen=True, slots=True)
class OpInfo:
    name: str             # printed mnemonic, e.g. v_add_f32_e32
    op: str               # base mnemonic (Inst.op)
    enc: str              # Inst.encoding
    fmt: Format
    opcode: int
    literal: bool         # always followed by a literal (v_fmamk_f32, s_setreg_imm32_b32)
    slots: tuple[Slot, ...]
    rtn_slots: tuple[Slot, ...] | None
    mods: dict
    dpp: tuple[str, ...]
    t16: bool = False     # has true16 (.l/.h) operands
    hidden_vdst: int = -1  # VOP3 without a destination operand: the VDST value LLVM encodes (else -1)
    reject: int = 0       # word bits LLVM refuses for this instruction (outside opcode and operand fields)
    need: int = 0         # word bits it cannot do without (GDS of the GWS ops, ds_ordered_count)
    w64: "OpInfo | None" = None   # the entry as wave64 code has it, where its modifiers or refused bits
    #                               differ (gfx12 v_swmmac_*: a 2-bit index_key); see for_wave64()

    def for_wave64(self) -> "OpInfo":
        return self.w64 or self


def _slots(fmt: Format, raw: list, w64: dict | None = None) -> tuple[Slot, ...]:
    out = []
    for i, s in enumerate(raw):
        role, field, count, kind = s[:4]
        allowed = s[4] if len(s) > 4 else ("vscl" if kind == "src" else "")
        ptype = s[5] if len(s) > 5 else ("b32" if kind == "src" else None)
        lo, width = fmt.fields.get(field, (0, 0))
        wave64 = (w64 or {}).get(str(i))
        out.append(Slot(role, field, count, kind, allowed, ptype, lo, width, tuple(wave64) if wave64 else None))
    return tuple(out)


class _Ops(Mapping):
    """opcode -> OpInfo of one encoding, each built from its JSON entry on first use: a fresh process
    decoding one kernel touches a few dozen of the ~1400 entries, and building them all took most of
    the first dispatch."""

    __slots__ = ("_raw", "_built", "_formats")

    def __init__(self, raw: dict, formats: dict):
        self._raw = {int(k): v for k, v in raw.items()}
        self._built: dict[int, OpInfo] = {}
        self._formats = formats

    def get(self, opcode, default=None):
        info = self._built.get(opcode)
        if info is None:
            e = self._raw.get(opcode)
            if e is None:
                return default
            info = self._built[opcode] = _info(self._formats, opcode, e)
        return info

    def __getitem__(self, opcode) -> OpInfo:
        info = self.get(opcode)
        if info is None:
            raise KeyError(opcode)
        return info

    def __contains__(self, opcode) -> bool:
        return opcode in self._raw

    def __iter__(self):
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


def _info(formats: dict, opcode: int, e: dict) -> OpInfo:
    enc = e["enc"]
    fmt = formats[enc if enc in formats else "FLAT" if enc in ("GLOBAL", "SCRATCH") else "MUBUF"]
    hidden = -1
    if enc == "VOP3" and not any(s[1] == "vdst" for s in e["slots"]):
        # v_cmpx_*_e64 write EXEC and print no destination; LLVM encodes VDST = 126 (EXEC_LO).
        hidden = 126 if e["name"].startswith("v_cmpx") else 0
    info = OpInfo(e["name"], e["op"], enc, fmt, opcode, e["literal"], _slots(fmt, e["slots"], e.get("w64")),
                  _slots(fmt, e["rtn_slots"]) if "rtn_slots" in e else None, e["mods"],
                  tuple(e.get("dpp", ())), any(s[3] in ("v16", "src16") for s in e["slots"]),
                  hidden_vdst=hidden, reject=e.get("reject", 0), need=e.get("need", 0))
    if "w64_mods" in e or "w64_reject" in e:
        info = dataclasses.replace(info, w64=dataclasses.replace(info, mods=e.get("w64_mods", info.mods),
                                                                 reject=e.get("w64_reject", info.reject)))
    return info


@dataclass(frozen=True)
class Table:
    arch: str
    family: str                             # rdna3 / rdna4: which format module the encodings follow
    by_enc: dict[str, Mapping[int, OpInfo]]  # encoding -> opcode -> OpInfo (built lazily, see _Ops)
    oracle: str
    hwreg: dict[int, str]                   # hwreg id -> name
    sendmsg: dict[int, str]                 # s_sendmsg simm16 (< 256) -> LLVM's text
    buf_format: dict[int, str]              # MTBUF format -> text after "format:" ("" = not printed)
    cpol: dict[str, dict[str, str]]         # rdna4: load/store/atomic -> "TH,SCOPE" -> "th:.. scope:.." text

    @functools.cached_property
    def by_name(self) -> dict[str, list[OpInfo]]:
        """printed mnemonic -> candidates (builds every entry: for the assembler, not the decoder)."""
        out: dict[str, list[OpInfo]] = {}
        for ops in self.by_enc.values():
            for info in ops.values():
                out.setdefault(info.name, []).append(info)
        return out


@functools.cache
def load(arch: str) -> Table:
    if arch not in ARCHES:
        raise ValueError(f"no ISA tables for arch {arch!r}; known: {', '.join(sorted(ARCHES))}")
    doc = json.loads((TABLE_DIR / f"{SAME_TABLE.get(arch, arch)}.json").read_text())
    formats = FAMILIES[ARCHES[arch]].FORMATS
    by_enc = {enc: _Ops(ops, formats) for enc, ops in doc["encodings"].items()}
    sym = doc["symbols"]
    ints = lambda d: {int(k): v for k, v in d.items()}  # noqa: E731
    return Table(arch, ARCHES[arch], by_enc, doc.get("oracle", ""), ints(sym["hwreg"]),
                 ints(sym["sendmsg"]), ints(sym["format"]), sym.get("cpol", {}))
