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

import dataclasses
import random
from dataclasses import dataclass, field

from gputwin.emu.amd import conformance_sources as src, fidelity, program
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
    table: str             # the table's encoding key and opcode (VOPDX / VOPDY for VOPD halves)
    opcode: int
    status: str            # implemented / partial / unmodelled / error / undecodable
    note: str = ""         # the emulator's reason (unmodelled, partial), or the bug (error)
    runs_as: str = ""      # the name the emulator runs it under (Inst.op of the decoded instance)
    verified: list[str] = field(default_factory=list)
    fidelity: str = ""
    fidelity_note: str = ""


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
        elif s.field == "simm16":
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


def _symbol_values(slot, table) -> list[int]:
    """Field values naming each hardware register (size 1 and 32 from bit 0) or message the table knows."""
    if slot.kind == "hwreg":
        return [rid | size << 11 for rid in sorted(table.hwreg) for size in (0, 31)]
    if slot.kind == "sendmsg":
        return sorted(table.sendmsg)
    return []


def _words(info: OpInfo, family: str, seed: str, table):
    """Encodings of `info`: canonical (v0 / s0 / zero immediates), with -1 constants and all-ones
    immediates, each hardware register / message id the table names (s_getreg, s_sendmsg), then seeded
    random fields. Bits LLVM refuses for the entry (OpInfo.reject, e.g. SADDR of a GFX9 flat_*) are
    cleared; a zero literal dword follows (ignored when not needed)."""
    fmt = info.fmt

    def word(vals):
        return ((fmt.pack(**vals) & ~info.reject) | info.need).to_bytes(fmt.size, "little") + bytes(4)
    yield word(_fields(info, family, _zero_src, 0))
    yield word(_fields(info, family, _minus_one_src, 0xFFFF))
    for s in info.slots:
        for v in _symbol_values(s, table):
            yield word({**_fields(info, family, _zero_src, 0), s.field: v})
    rng = random.Random(seed)
    for _ in range(RANDOM_PROBES):
        yield word(_random_fields(info, rng, family))


# ---- asking the emulator -------------------------------------------------------------------------------
def _build(inst, arch: str):
    """None when a handler was built; else (status, note)."""
    try:
        h = program.build_handler(inst, arch, strict=True)
    except GpuFault as e:
        kind = UNMODELLED if isinstance(e, IllegalInstruction) else ERROR
        return kind, f"{type(e).__name__}: {e.reason}" if kind == ERROR else e.reason
    except Exception as e:   # noqa: BLE001 - a crash while building is a bug to report, not to propagate
        return ERROR, f"{type(e).__name__}: {e}"
    if not callable(h):
        return ERROR, f"build_handler returned {type(h).__name__}, not a handler"
    return None


def _probe(instances, arch: str) -> tuple[str, str, str]:
    """(status, note, runs_as) over decoded instances (None = undecodable), canonical ones first."""
    first, runs_as = None, ""
    for inst in instances:
        if inst is None:
            continue
        runs_as = runs_as or inst.op
        res = _build(inst, arch)
        if res is None:        # implemented unless an instance decoded before it was refused
            if first is None:
                return IMPLEMENTED, "", inst.op
            return PARTIAL, f"some forms: {first[1]}", inst.op
        if res[0] == ERROR:
            return ERROR, res[1], inst.op
        first = first or res
    if first is None:
        return UNDECODABLE, "no encoding of this entry decodes with gputwin's decoder", ""
    return first[0], first[1], runs_as


def instances(arch: str, info: OpInfo):
    """The probe instances of table entry `info` (not a VOPD half), decoded by gputwin's decoder: an
    Inst per probe encoding, None where the decoder refuses it or reads another entry."""
    t = load(arch)
    dec = decoder(arch, t.family == "cdna3")          # gfx942 runs wave64 only
    for word in _words(info, t.family, f"{arch}:{info.name}", t):
        try:
            inst = dec.decode(word, 0)
        except Exception:   # noqa: BLE001 - a refused probe encoding: try the next one
            yield None
            continue
        ops = t.by_enc.get("VOP3" if inst.encoding == "VOP3SD" else inst.encoding, {})
        yield inst if ops.get(inst.opcode) is info else None


def probe_arch(arch: str) -> list[Entry]:
    """One Entry per table entry of `arch`, with its implementation status (no evidence yet)."""
    t = load(arch)
    entries = []
    for enc, ops in sorted(t.by_enc.items()):
        if enc.startswith("VOPD"):
            continue
        for info in ops.values():
            status, note, runs_as = _probe(instances(arch, info), arch)
            entries.append(Entry(arch, info.enc, info.name, info.op, enc, info.opcode, status, note, runs_as))
    entries += _probe_vopd(arch, t, decoder(arch, t.family == "cdna3"))
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
    for side, key, table, pair in (("X", "VOPDX", xs, lambda i: (i, mov_y)), ("Y", "VOPDY", ys, lambda i: (mov_x, i))):
        for info in table.values():
            try:
                inst = dec.decode(_vopd_word(fmt, *pair(info)), 0)
                half = inst.vopd[0 if side == "X" else 1]
            except Exception:   # noqa: BLE001 - reported as undecodable
                inst = half = None
            status, note, _ = _probe([inst], arch)
            out.append(Entry(arch, "VOPD", f"{info.name} ({side})", info.op, key, info.opcode, status, note,
                             half.op if half is not None else ""))
    return out


# ---- the report ----------------------------------------------------------------------------------------------
def _base(name: str) -> str:
    return name.split(" (", 1)[0]


def entries_with_evidence(arch: str) -> list[Entry]:
    """probe_arch's entries with what each is verified against."""
    entries = probe_arch(arch)
    oracle = load(arch).oracle
    fixture_keys = src.fixture_keys(arch)[0]
    names = src.unit_test_names(arch)[0]
    for e in entries:
        if oracle:
            e.verified.append(LLVM)
        if (e.table, e.opcode) in fixture_keys:
            e.verified.append(FIXTURE)
        base = _base(e.name)     # VOPD halves only by their v_dual_ name (dual issue runs its own path)
        named = base in names or src.strip_suffix(base) in names or e.family != "VOPD" and e.op in names
        if named and e.status in (IMPLEMENTED, PARTIAL):   # a test of an unmodelled one checks it raises
            e.verified.append(UNIT)
    return entries


_COUNTS = ("table", IMPLEMENTED, PARTIAL, UNMODELLED, ERROR, LLVM, FIXTURE, UNIT, HARDWARE,
           fidelity.APPROXIMATE, fidelity.DECISION)


def _summary(entries: list[Entry]) -> dict[str, int]:
    """Counts for a group of entries; "implemented" includes the partial ones, "error" the undecodable."""
    c = dict.fromkeys(_COUNTS, 0)
    for e in entries:
        c["table"] += 1
        c[IMPLEMENTED] += e.status in (IMPLEMENTED, PARTIAL)
        c[PARTIAL] += e.status == PARTIAL
        c[UNMODELLED] += e.status == UNMODELLED
        c[ERROR] += e.status in (ERROR, UNDECODABLE)
        for v in e.verified:
            c[v] += 1
        if e.fidelity in c:
            c[e.fidelity] += 1
    return c


def _family_rank(family: str) -> tuple:
    return (FAMILY_ORDER.index(family) if family in FAMILY_ORDER else len(FAMILY_ORDER), family)


def report(arches=REPORT_ARCHES) -> dict:
    """{arch: {...}} with per-family summaries and every entry (the --json form)."""
    out = {}
    for arch in arches:
        t = load(arch)
        entries = entries_with_evidence(arch)
        fams = sorted({e.family for e in entries}, key=_family_rank)
        _, files, problems = src.fixture_keys(arch)
        out[arch] = {
            "isa": t.family, "oracle": t.oracle,
            "families": {f: _summary([e for e in entries if e.family == f]) for f in fams},
            "total": _summary(entries),
            "clang_fixtures": {"files": list(files), "run_by": [r for _, r in src.FIXTURES.get(arch, ())],
                               "problems": list(problems)},
            "unit_test_files": list(src.unit_test_names(arch)[1]),
            "hardware_fixtures": src.HARDWARE_FIXTURES,
            "entries": [dataclasses.asdict(e) for e in entries],
        }
    return out


_HEAD = ("family", "table", "impl", "partial", "unmod", "error", "llvm-mc", "clang-fix", "unit-test", "hw-fix",
         "approx", "decision")


def format_text(rep: dict, verbose: bool = False) -> str:
    lines = []
    for arch, r in rep.items():
        lines.append(f"{arch} ({r['isa']}): {r['total']['table']} table entries, encodings from llvm-mc "
                     f"({r['oracle'] or 'no oracle recorded'})")
        lines.append("  " + f"{_HEAD[0]:<8}" + "".join(f"{h:>10}" for h in _HEAD[1:]))
        for fam, c in [*r["families"].items(), ("total", r["total"])]:
            lines.append("  " + f"{fam:<8}" + "".join(f"{c[k]:>10}" for k in _COUNTS))
        fx = r["clang_fixtures"]
        lines.append(f"  clang fixtures: {len(fx['files'])} code objects, run bit-exact by {', '.join(fx['run_by'])}"
                     + (f"; {len(fx['problems'])} problems:" if fx["problems"] else ""))
        lines += [f"    {p}" for p in fx["problems"]]
        lines.append(f"  unit tests: {len(r['unit_test_files'])} emulator test files name {arch} mnemonics")
        lines.append(f"  hardware fixtures: {r['hardware_fixtures']} (none recorded on real GPUs yet)")
        bad = [e for e in r["entries"] if e["status"] in (ERROR, UNDECODABLE)]
        for e in bad if not verbose else ():
            lines.append(f"  {e['status']}: {e['name']}: {e['note']}")
        if verbose:
            for e in sorted(r["entries"], key=lambda e: (_family_rank(e["family"]), e["name"])):
                fid = f"{e['fidelity']}" + (f" ({e['fidelity_note']})" if e["fidelity_note"] else "")
                note = f"  -- {e['note']}" if e["note"] else ""
                lines.append(f"  {e['family']:<8}{e['name']:<36} {e['status']:<12} "
                             f"{', '.join(e['verified']) or '-':<48} {fid or '-'}{note}")
        lines.append("")
    return "\n".join(lines)


# ---- code objects ----------------------------------------------------------------------------------------------
def code_object_gaps(image: bytes, arch: str) -> dict[tuple[str, str], int]:
    """{(mnemonic, reason): count} of the instructions in every kernel of a code object that the emulator
    does not model (the report's rule: build_handler refuses it), or that gputwin's decoder cannot read
    (mnemonic "<undecodable>"). Empty when every instruction builds (the coverage gate, test_corpus.py)."""
    from gputwin.abi.code_object import CodeObject
    co = CodeObject.parse(image)
    gaps: dict[tuple[str, str], int] = {}
    for code, wave64 in src._kernel_code(co, image):
        dec, off = decoder(arch, wave64), 0
        while off < len(code):
            try:
                inst = dec.decode(code, off)
            except Exception as e:   # noqa: BLE001 - an unreadable word is a gap to report
                key = ("<undecodable>", f"+{off:#x}: {e}")
                off += 4
            else:
                off += inst.size
                halves = inst.vopd if inst.encoding == "VOPD" else (inst,)
                res = _build(inst, arch)
                if res is None:
                    continue
                key = (" + ".join(h.op for h in halves), res[1])
            gaps[key] = gaps.get(key, 0) + 1
    return gaps
