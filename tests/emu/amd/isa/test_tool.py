"""`gputwin asm` / `gputwin disasm` output: llvm-mc's own format, errors on stderr with a non-zero exit,
and whole code objects compared with llvm-objdump-19."""
from __future__ import annotations

import io
import pathlib
import subprocess

import pytest

from gputwin.cli import main
from gputwin.emu.amd.isa import tool
from tests.oracles import oracle

FIXTURES = pathlib.Path(__file__).resolve().parents[4] / "fixtures" / "amd" / "cl"
SOURCE = """\
  v_add_f32 v1, v2, v3
  v_fma_f32 v100, v200, v3, v4 clamp mul:2
  s_load_b64 s[0:1], s[2:3], 0x10
"""


def run(fn, *args, **kw):
    out, err = io.StringIO(), io.StringIO()
    rc = fn(*args, out, err, **kw)
    return rc, out.getvalue(), err.getvalue()


def test_asm_prints_like_llvm_mc_show_encoding():
    rc, out, err = run(tool.asm, SOURCE, "gfx1100")
    assert rc == 0 and err == ""
    assert out.splitlines() == [
        "\t.text",
        "\tv_add_f32_e32 v1, v2, v3                ; encoding: [0x02,0x07,0x02,0x06]",
        "\tv_fma_f32 v100, v200, v3, v4 clamp mul:2 ; encoding: [0x64,0x80,0x13,0xd6,0xc8,0x07,0x12,0x0c]",
        "\ts_load_b64 s[0:1], s[2:3], 0x10         ; encoding: [0x01,0x00,0x04,0xf4,0x10,0x00,0x00,0xf8]",
    ]


@oracle("llvm-mc-19")
def test_asm_output_is_identical_to_llvm_mc():
    want = subprocess.run(["llvm-mc-19", "-triple=amdgcn", "-mcpu=gfx1100", "-show-encoding"], input=SOURCE,
                          capture_output=True, text=True).stdout
    assert run(tool.asm, SOURCE, "gfx1100")[1] == want


def test_asm_reports_bad_lines_and_keeps_the_good_ones():
    rc, out, err = run(tool.asm, "s_nop 0\n  v_nope v1\ns_endpgm\n", "gfx1100")
    assert rc == 1
    assert "<stdin>:2:3: error: unknown instruction 'v_nope'" in err
    assert [ln.split(";")[0].strip() for ln in out.splitlines()[1:]] == ["s_nop 0", "s_endpgm"]


def test_disasm_reads_llvm_mc_byte_lines():
    rc, out, err = run(tool.disasm, "0x02,0x07,0x02,0x06 # add\n0x00 0x00 0xb0 0xbf\n", "gfx1100")
    assert (rc, err) == (0, "")
    assert out.splitlines() == ["\t.text", "\tv_add_f32_e32 v1, v2, v3", "\ts_endpgm"]


def test_disasm_marks_undecodable_words_and_fails():
    rc, out, err = run(tool.disasm, "0x00,0x00,0xb0,0xbf 0xff,0xff,0xff,0xff\n", "gfx1100")
    assert rc == 1
    assert out.splitlines()[-1] == "\t.long 0xffffffff"
    assert "offset 0x4" in err


def test_cli_asm_reads_a_file(tmp_path, capsys):
    src = tmp_path / "k.s"
    src.write_text("s_endpgm\n")
    assert main(["asm", "--arch", "gfx1100", str(src)]) == 0
    assert "s_endpgm" in capsys.readouterr().out


@oracle("llvm-objdump-19")
@pytest.mark.parametrize("name", ["basic", "atomics", "divsqrt", "half", "lds", "basic.w64", "atomics.w64",
                                  "divsqrt.w64", "half.w64", "lds.w64"])
def test_elf_disassembly_matches_llvm_objdump(name):
    path = FIXTURES / f"{name}.hsaco"
    mattr = ["--mattr=+wavefrontsize64"] if name.endswith("w64") else []
    rc, out, err = run(tool.disasm_elf, path.read_bytes(), "gfx1100")
    assert (rc, err) == (0, "")
    ours = _blocks(out.splitlines()[1:], lambda ln: ln[:-1] if ln.endswith(":") else None)
    dump = subprocess.run(["llvm-objdump-19", "-d", "--no-show-raw-insn", "--mcpu=gfx1100", *mattr, str(path)],
                          capture_output=True, text=True).stdout
    theirs = _blocks([ln.split("//")[0] for ln in dump.splitlines()],
                     lambda ln: ln.split("<")[1].split(">")[0] if ln.endswith(">:") else None)
    assert ours and set(ours) <= set(theirs)
    for kernel, insts in ours.items():   # objdump also shows the padding after each kernel
        assert len(insts) > 5 and insts == theirs[kernel][:len(insts)], kernel


def _blocks(lines, header) -> dict[str, list[str]]:
    out, cur = {}, None
    for ln in lines:
        name = header(ln.strip())
        if name:
            cur = out.setdefault(name, [])
        elif cur is not None and ln.strip():
            cur.append(ln.strip())
    return out
