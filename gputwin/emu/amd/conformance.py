"""Coverage of the AMD ISA tables by the emulator, and what each instruction is verified against
(`gputwin conformance`, docs/conformance.md).

Nothing here is a hand-kept list of what works: for every table entry the emulator itself is asked. A
few instances of the entry are encoded from its table slots, decoded by gputwin's decoder and handed to
program.build_handler; an IllegalInstruction raised while building means "not modelled" (with the
emulator's own reason), any other exception is a bug reported in the entry's row. Evidence:
- "llvm-mc encoding": the tables are generated from llvm-mc-19 and every entry is differentially tested
  against it (tests/emu/amd/isa/test_*_llvm.py);
- "clang fixture": the entry occurs in a committed clang-19 code object that the test suite runs and
  checks bit for bit (found by decoding those objects with gputwin's decoder, conformance_sources.py);
- "unit test": an emulator test source names the mnemonic (conformance_sources.py says how);
- "hardware fixture": results recorded on silicon; none exist yet, so no entry has this.
"""
from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass, field

from gputwin.emu.amd import fidelity, program
from gputwin.emu.amd.isa.decode import decoder
from gputwin.emu.amd.isa.table import OpInfo, load
from gputwin.errors import GpuFault, IllegalInstruction

REPORT_ARCHES = ("gfx1100", "gfx1201", "gfx942")       # `--arch all`; gfx1200 shares gfx1201's table
FAMILY_ORDER = ("SOP1", "SOP2", "SOPK", "SOPC", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD", "VOP3P",
                "VOPD", "DS", "FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF")
IMPLEMENTED, PARTIAL, UNMODELLED, ERROR, UNDECODABLE = "implemented", "partial", "unmodelled", "error", "undecodable"
LLVM, FIXTURE, UNIT, HARDWARE = "llvm-mc encoding", "clang fixture", "unit test", "hardware fixture"
RANDOM_PROBES = 12     # extra random instances tried when the canonical one is refused or undecodable


@dataclass
class Entry:
    arch: str
    family: str            # the encoding (Inst.encoding); VOPD halves are "VOPD"
    name: str              # printed mnemonic as LLVM spells it (VOPD halves: "v_dual_... (X)")
    op: str                # base mnemonic in the table
    status: str            # implemented / partial / unmodelled / error / undecodable
    note: str = ""         # the emulator's reason (unmodelled, partial), or the bug (error)
    runs_as: str = ""      # the name the emulator runs it under (Inst.op of the decoded instance)
    verified: list[str] = field(default_factory=list)
    fidelity: str = ""
    fidelity_note: str = ""


class _Refused(Exception):
    def __init__(self, fault: GpuFault):
        super().__init__(str(fault))
        self.fault = fault


@contextlib.contextmanager
def _strict_build():
    """build_handler turns a fault raised while building into a handler that raises it when executed
    (program._raiser). While probing, make it propagate instead, so faults from nested builds (CDNA3
    v_cmpx / SDWA / AGPR wrappers, which build the underlying instruction) are seen too."""
    saved = program._raiser

    def refuse(exc):
        raise _Refused(exc)
    program._raiser = refuse
    try:
        yield
    finally:
        program._raiser = saved


# ---- instances of a table entry ----------------------------------------------------------------------------
def _saddr_off(family: str) -> int:
    return 0x7F if family == "cdna3" else 124


def _fields(info: OpInfo, family: str, src_choice, imm16: int) -> dict[str, int]:
    """Field values for one instance: `src_choice(slot)` picks each source operand's code."""
    fmt = info.fmt
    vals = {"op": info.opcode}
    if fmt.name == "FLAT":
        vals["seg"] = {"FLAT": 0, "SCRATCH": 1, "GLOBAL": 2}[info.enc]
        vals["saddr"] = _saddr_off(family)
        if info.enc == "SCRATCH" and "sve" in fmt.fields:
            vals["sve"] = 1                          # address from the VGPR (SADDR off)
    if fmt.name == "SMEM" and "imm" in fmt.fields:
        vals["imm"] = 1                              # GFX9: OFFSET is an immediate
    for s in info.slots:
        if s.field.startswith("=") or s.field not in fmt.fields or s.field in vals:
            continue
        if s.kind in ("src", "ssrc", "src16"):
            vals[s.field] = src_choice(s)
        elif s.kind == "simm16" or s.field == "simm16":
            vals[s.field] = imm16
        else:
            vals[s.field] = 0
    if "simm16" in fmt.fields:
        vals.setdefault("simm16", imm16)
    return vals


def _zero_src(s) -> int:
    allowed = s.allowed or "v"
    return 256 if "v" in allowed or "w" in allowed else 0 if "s" in allowed else 128 if "c" in allowed else 255


def _minus_one_src(s) -> int:
    return 193 if "c" in (s.allowed or "") else _zero_src(s)   # inline constant -1


def _random_fields(info: OpInfo, rng: random.Random, family: str) -> dict[str, int]:
    vals = _fields(info, family, _zero_src, 0)
    for name, (lo, width) in info.fmt.fields.items():
        if name not in ("op", "seg", "imm") and rng.random() < 0.7:
            vals[name] = rng.getrandbits(width)
    return vals


def _vopd_word(fmt, x: OpInfo, y: OpInfo) -> bytes:
    """X and Y halves reading VGPRs of different banks (v0/v1 and v2/v3), as VOPD requires."""
    vals = {"opx": x.opcode, "opy": y.opcode, "srcx0": 256, "vsrcx1": 2, "srcy0": 257, "vsrcy1": 3,
            "vdstx": 0, "vdsty": 0}
    return fmt.pack(**vals).to_bytes(8, "little") + bytes(4)


def _words(info: OpInfo, family: str, seed: str):
    """Encodings of `info`: canonical (v0 / s0 / zero immediates), with -1 constants and all-ones
    immediates, then seeded random fields. A zero literal dword follows (ignored when not needed)."""
    fmt = info.fmt
    yield fmt.pack(**_fields(info, family, _zero_src, 0)).to_bytes(fmt.size, "little") + bytes(4)
    yield fmt.pack(**_fields(info, family, _minus_one_src, 0xFFFF)).to_bytes(fmt.size, "little") + bytes(4)
    rng = random.Random(seed)
    for _ in range(RANDOM_PROBES):
        yield fmt.pack(**_random_fields(info, rng, family)).to_bytes(fmt.size, "little") + bytes(4)


# ---- asking the emulator -------------------------------------------------------------------------------
def _build(inst, arch: str):
    """None when a handler was built; else (status, note)."""
    try:
        with _strict_build():
            h = program.build_handler(inst, arch)
    except _Refused as e:
        kind = UNMODELLED if isinstance(e.fault, IllegalInstruction) else ERROR
        return kind, f"{type(e.fault).__name__}: {e.fault.reason}" if kind == ERROR else e.fault.reason
    except IllegalInstruction as e:        # raised outside build_handler's own catch (cannot today)
        return UNMODELLED, e.reason
    except Exception as e:   # noqa: BLE001 - a crash while building is a bug to report, not to propagate
        return ERROR, f"{type(e).__name__}: {e}"
    if not callable(h):
        return ERROR, f"build_handler returned {type(h).__name__}, not a handler"
    return None


def _probe(instances, arch: str) -> tuple[str, str, str]:
    """(status, note, runs_as) over decoded instances (None = undecodable); the first is canonical."""
    first, runs_as = None, ""
    for i, inst in enumerate(instances):
        if inst is None:
            continue
        runs_as = runs_as or inst.op
        res = _build(inst, arch)
        if res is None:
            if first is None:
                return (IMPLEMENTED if i == 0 else PARTIAL), "", inst.op
            return PARTIAL, f"some forms: {first[1]}", inst.op
        if res[0] == ERROR:
            return ERROR, res[1], inst.op
        first = first or res
    if first is None:
        return UNDECODABLE, "no encoding of this entry decodes with gputwin's decoder", ""
    return first[0], first[1], runs_as


def _decoded(dec, word: bytes, want: OpInfo, key):
    try:
        inst = dec.decode(word, 0)
    except Exception:   # noqa: BLE001 - a refused probe encoding: try the next one
        return None
    return inst if key(inst) is want else None


def probe_arch(arch: str) -> list[Entry]:
    """One Entry per table entry of `arch`, with its implementation status (no evidence yet)."""
    t = load(arch)
    wave64 = t.family == "cdna3"          # gfx942 runs wave64 only
    dec = decoder(arch, wave64)
    entries = []

    def table_key(inst):
        try:
            return t.by_enc["VOP3" if inst.encoding == "VOP3SD" else inst.encoding][inst.opcode]
        except KeyError:
            return None
    for enc, ops in sorted(t.by_enc.items()):
        if enc.startswith("VOPD"):
            continue
        for info in ops.values():
            words = _words(info, t.family, f"{arch}:{info.name}")
            status, note, runs_as = _probe((_decoded(dec, w, info, table_key) for w in words), arch)
            entries.append(Entry(arch, info.enc, info.name, info.op, status, note, runs_as))
    entries += _probe_vopd(arch, t, dec)
    for e in entries:
        if e.status in (IMPLEMENTED, PARTIAL):
            e.fidelity, e.fidelity_note, _ = fidelity.level(e.op, e.runs_as, e.name)
    return entries


def _probe_vopd(arch: str, t, dec) -> list[Entry]:
    """Each VOPD half, paired with v_dual_mov_b32 in the other slot (modelled wherever VOPD is)."""
    xs, ys = t.by_enc.get("VOPDX", {}), t.by_enc.get("VOPDY", {})
    if not xs:
        return []
    fmt = next(iter(xs.values())).fmt
    mov_x = next(i for i in xs.values() if i.name == "v_dual_mov_b32")
    mov_y = next(i for i in ys.values() if i.name == "v_dual_mov_b32")
    out = []
    for side, table, pair in (("X", xs, lambda i: (i, mov_y)), ("Y", ys, lambda i: (mov_x, i))):
        for info in table.values():
            try:
                inst = dec.decode(_vopd_word(fmt, *pair(info)), 0)
                half = inst.vopd[0 if side == "X" else 1]
            except Exception:   # noqa: BLE001 - reported as undecodable
                inst = half = None
            status, note, _ = _probe([inst], arch)
            out.append(Entry(arch, "VOPD", f"{info.name} ({side})", info.op, status, note,
                             half.op if half is not None else ""))
    return out
