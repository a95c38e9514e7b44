"""gputwin.emu.amd.conformance: the coverage report asks the emulator about every table entry, never
crashes on one, and attaches only evidence it can find (fixtures decoded, tests read)."""
from __future__ import annotations

import io
import json
import pathlib
import re
from contextlib import redirect_stdout

import pytest

from gputwin import cli
from gputwin.emu.amd import conformance, conformance_sources, fidelity, program
from gputwin.emu.amd.isa import tool
from gputwin.emu.amd.isa.table import load
from gputwin.emu.amd.valu import trans
from gputwin.errors import IllegalInstruction

STATUSES = {conformance.IMPLEMENTED, conformance.PARTIAL, conformance.UNMODELLED, conformance.ERROR,
            conformance.UNDECODABLE}


@pytest.fixture(scope="module")
def rep():
    return conformance.report()


def entries(rep, arch):
    return rep[arch]["entries"]


@pytest.mark.parametrize("arch", conformance.REPORT_ARCHES)
def test_every_table_entry_has_exactly_one_row(rep, arch):
    t = load(arch)
    want = sorted((enc, op) for enc, ops in t.by_enc.items() for op in ops)
    got = sorted((e["table"], e["opcode"]) for e in entries(rep, arch))
    assert got == want
    assert {e["status"] for e in entries(rep, arch)} <= STATUSES
    assert rep[arch]["total"]["table"] == len(want)
    assert sum(c["table"] for c in rep[arch]["families"].values()) == len(want)


@pytest.mark.parametrize("arch", conformance.REPORT_ARCHES)
def test_unmodelled_entries_raise_illegal_instruction_when_run(rep, arch):
    """The report's 'unmodelled' is what executing the instruction does: build_handler's handler raises
    IllegalInstruction (it never touches the wave group before raising)."""
    t = load(arch)
    rows = [e for e in entries(rep, arch) if e["status"] == conformance.UNMODELLED and e["family"] != "VOPD"]
    assert rows
    for e in rows:
        inst = next(i for i in conformance.instances(arch, t.by_enc[e["table"]][e["opcode"]]) if i is not None)
        with pytest.raises(IllegalInstruction, match="not modelled"):
            program.build_handler(inst, arch)(None)


def test_a_refusing_builder_is_reported_with_its_reason(monkeypatch):
    real = program._BUILDERS["SOP1"]

    def builder(inst):
        if inst.op == "s_mov_b32":
            raise IllegalInstruction("s_mov_b32 switched off for this test")
        return real(inst)
    monkeypatch.setitem(program._BUILDERS, "SOP1", builder)
    row = next(e for e in conformance.probe_arch("gfx1100") if e.name == "s_mov_b32")
    assert (row.status, row.note) == (conformance.UNMODELLED, "s_mov_b32 switched off for this test")


def test_a_crashing_builder_is_an_error_row_not_a_crash(monkeypatch):
    def builder(inst):
        raise KeyError("boom")
    monkeypatch.setitem(program._BUILDERS, "SOPC", builder)
    rows = [e for e in conformance.probe_arch("gfx1100") if e.family == "SOPC"]
    assert rows and all(e.status == conformance.ERROR and "KeyError" in e.note for e in rows)
    assert program._raiser(IllegalInstruction("x")) is not None   # the probe's patch was undone


def test_partial_when_only_some_operands_are_modelled(rep):
    """s_sendmsg models some message ids, not message 0: the canonical instance is refused, another builds."""
    row = next(e for e in entries(rep, "gfx1100") if e["name"] == "s_sendmsg")
    assert row["status"] == conformance.PARTIAL and "message 0" in row["note"]


def test_every_entry_claims_its_llvm_encoding_and_no_hardware_fixture(rep):
    for arch in rep:
        assert rep[arch]["oracle"].startswith(("Debian LLVM version 19", "LLVM version 19", "Ubuntu LLVM version 19"))
        assert all(conformance.LLVM in e["verified"] and conformance.HARDWARE not in e["verified"]
                   for e in entries(rep, arch))
        assert rep[arch]["total"][conformance.HARDWARE] == 0


def test_clang_fixture_evidence_matches_the_disassembly_of_the_fixtures(rep):
    """Independent path: the mnemonics `gputwin disasm --elf` prints for the committed gfx1100 objects
    are exactly the entries marked 'clang fixture' (VOPD printed as X :: Y)."""
    printed = set()
    for path in conformance_sources.ROOT.glob("fixtures/amd/cl/*.hsaco"):
        out, err = io.StringIO(), io.StringIO()
        tool.disasm_elf(path.read_bytes(), "gfx1100", out, err)
        for line in out.getvalue().splitlines():
            if line.startswith("\t") and not line.startswith("\t."):
                printed.update(part.split()[0] for part in line.strip().split("::"))
    from gputwin.abi.code_object import CodeObject
    for path in [*conformance_sources.ROOT.glob("fixtures/drivers/*.hsaco"),
                 *conformance_sources.ROOT.glob("fixtures/amd/corpus/*.gfx1100*.hsaco")]:
        if not CodeObject.parse(path.read_bytes()).runs_on("gfx1100"):   # gfx1201/gfx942 builds
            continue
        out = io.StringIO()
        tool.disasm_elf(path.read_bytes(), "gfx1100", out, io.StringIO())
        for line in out.getvalue().splitlines():
            if line.startswith("\t") and not line.startswith("\t."):
                printed.update(part.split()[0] for part in line.strip().split("::"))
    marked = {conformance._base(e["name"]) for e in entries(rep, "gfx1100") if conformance.FIXTURE in e["verified"]}
    assert printed and marked == printed


def test_fixture_sets_name_tests_that_exist_and_read_those_fixtures():
    """Each runner (with the conftest/helpers beside it that load the objects) names the fixture folder."""
    for arch, sets in conformance_sources.FIXTURES.items():
        for pattern, runner in sets:
            assert list(conformance_sources.ROOT.glob(pattern)), pattern
            path = conformance_sources.ROOT / runner
            text = "".join(p.read_text() for p in (path, path.with_name("conftest.py"), path.with_name("helpers.py"))
                           if p.is_file())
            assert f'"{pathlib.Path(pattern).parent.name}"' in text or f"{pathlib.Path(pattern).parent}" in text, runner


def test_unit_test_evidence_needs_the_mnemonic_in_a_test_and_a_built_handler(rep):
    names = conformance_sources.unit_test_names("gfx1100")[0]
    for e in entries(rep, "gfx1100"):
        if conformance.UNIT in e["verified"]:
            assert e["status"] in (conformance.IMPLEMENTED, conformance.PARTIAL)
            base = conformance._base(e["name"])
            assert {base, re.sub(r"_(e32|e64|dpp|sdwa)$", "", base), e["op"]} & names


def test_transcendentals_and_float_matrix_ops_are_marked_approximate():
    for name in trans.OPS:
        assert fidelity.level(name)[0] == fidelity.APPROXIMATE, name
    assert fidelity.level("v_mfma_f32_32x32x8_f16")[0] == fidelity.APPROXIMATE
    assert fidelity.level("v_wmma_f32_16x16x16_f16")[0] == fidelity.APPROXIMATE
    assert fidelity.level("v_mfma_i32_16x16x32_i8")[0] == fidelity.EXACT
    assert fidelity.level("v_wmma_i32_16x16x16_iu8")[0] == fidelity.EXACT
    assert fidelity.level("v_add_f32_e32", "v_add_f32")[0] == fidelity.EXACT
    assert fidelity.level("v_div_scale_f32")[0] == fidelity.DECISION


def test_report_marks_fidelity_only_on_implemented_entries(rep):
    for arch in rep:
        for e in entries(rep, arch):
            implemented = e["status"] in (conformance.IMPLEMENTED, conformance.PARTIAL)
            assert bool(e["fidelity"]) == implemented
            if implemented:
                assert e["fidelity"] == fidelity.level(e["op"], e["runs_as"], e["name"])[0]


def run_cli(*argv):
    out = io.StringIO()
    with redirect_stdout(out):
        status = cli.main(["conformance", *argv])
    return status, out.getvalue()


def test_cli_prints_a_summary_row_per_family_and_exits_1_only_on_errors(rep):
    status, text = run_cli("--arch", "gfx942")
    assert status == (1 if rep["gfx942"]["total"]["error"] else 0)
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines() if line.startswith("  ")}
    for fam, c in rep["gfx942"]["families"].items():
        assert rows[fam][:5] == [str(c[k]) for k in ("table", "implemented", "partial", "unmodelled", "error")]
    assert "hardware fixtures: 0" in text


def test_cli_verbose_and_json(rep):
    _, text = run_cli("--arch", "gfx1100", "--verbose")
    assert re.search(r"VOP1\s+v_exp_f32_e32\s+implemented\s+.*approximate", text)
    _, js = run_cli("--arch", "gfx1201", "--json")
    data = json.loads(js)
    assert list(data) == ["gfx1201"] and data["gfx1201"]["total"] == rep["gfx1201"]["total"]


def test_docs_describe_the_command():
    doc = pathlib.Path(conformance_sources.ROOT, "docs", "conformance.md").read_text()
    assert "gputwin conformance" in doc and "fidelity.py" in doc


@pytest.mark.parametrize("arch", conformance.REPORT_ARCHES)
def test_fixture_counts_come_from_objects_of_that_arch(rep, arch):
    """Each counted code object's ELF header names the arch (or its generic family): fixtures/drivers
    holds gfx1201 and gfx942 builds beside the gfx1100 ones, and only the gfx1100 ones count there."""
    from gputwin.abi.code_object import CodeObject
    want = conformance_sources.OBJECT_ARCH.get(arch, arch)
    files = rep[arch]["clang_fixtures"]["files"]
    assert files and rep[arch]["clang_fixtures"]["problems"] == []
    for f in files:
        assert CodeObject.parse((conformance_sources.ROOT / f).read_bytes()).runs_on(want), f
    if arch == "gfx1100":
        drivers = sorted((conformance_sources.ROOT / "fixtures" / "drivers").glob("*.hsaco"))
        own = {str(p.relative_to(conformance_sources.ROOT)) for p in drivers
               if CodeObject.parse(p.read_bytes()).runs_on("gfx1100")}
        assert len(own) < len(drivers) and own == {f for f in files if f.startswith("fixtures/drivers/")}


def test_fixture_problems_print_one_per_line(rep):
    one = json.loads(json.dumps(rep["gfx1100"]))
    one["clang_fixtures"]["problems"] = ["a.hsaco+0x10: first problem", "b.hsaco: second problem"]
    lines = conformance.format_text({"gfx1100": one}).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  clang fixtures:"))
    assert lines[at].endswith("; 2 problems:")
    assert lines[at + 1:at + 3] == ["    a.hsaco+0x10: first problem", "    b.hsaco: second problem"]
