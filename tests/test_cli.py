import json
import subprocess
import sys

import pytest

import gputwin
from gputwin.cli import main


def test_info_lists_mock_targets(capsys, monkeypatch):
    monkeypatch.delenv("DEV", raising=False)
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "selected: MOCKAMD" in out and "MOCKAMD:gfx1100" in out and "CPU" in out
    assert "MOCKNV:sm_90" in out and "MOCKNV:sm_80" in out
    assert out.splitlines()[-1] == "opened AMD:0 (gfx1100)"


def test_info_says_why_the_selected_target_cannot_be_opened(capsys, monkeypatch):
    monkeypatch.setattr("gputwin.drivers.kernel.HostKernel.exists", lambda self, path: False)
    assert main(["info", "--dev", "AMD"]) == 1
    out, err = capsys.readouterr()
    assert "selected: AMD" in out and "opened" not in out
    assert err.strip() == ("gputwin: the selected target AMD cannot be opened: AMD: no real AMD GPU here "
                           "(looked for /dev/kfd); use MOCKAMD for the emulated one")


def test_info_rejects_a_bad_dev_listing_valid_spellings(capsys, monkeypatch):
    monkeypatch.setenv("DEV", "NOPE")
    assert main(["info"]) != 0
    assert "valid spellings" in capsys.readouterr().err


def test_version_and_help_from_the_console_script():
    out = subprocess.run([sys.executable, "-m", "gputwin.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and gputwin.__version__ in out.stdout
    for cmd in (["--help"], ["info", "--help"]):
        res = subprocess.run([sys.executable, "-m", "gputwin.cli", *cmd], capture_output=True, text=True)
        assert res.returncode == 0 and "usage: gputwin" in res.stdout


def test_conformance_all_covers_the_amd_and_nv_arches(capsys):
    assert main(["conformance", "--arch", "all", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert {"gfx1100", "gfx1201", "gfx942", "sm_80", "sm_90"} <= set(rep)


# --- asm / disasm as llvm-mc drop-ins ---------------------------------------------------------------------
ASM = "start:\n  s_mov_b32 s0, s1\n  v_add_f32 v0, v1, v2\n  s_branch start\n"


def test_asm_takes_llvm_mc_flags(tmp_path, capsys):
    src = tmp_path / "k.s"
    src.write_text(ASM)
    assert main(["asm", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-show-encoding", str(src)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "\tv_add_f32_e32 v0, v1, v2                ; encoding: [0x01,0x05,0x00,0x06]"
    assert main(["asm", "--arch", "gfx942", "-mattr=+wavefrontsize64", str(src)]) == 0
    capsys.readouterr()
    assert main(["asm", "-mcpu=gfx1100", "-arch=amdgcn", "--show-encoding", str(src)]) == 0   # llvm-mc's -arch
    assert capsys.readouterr().out.splitlines()[2] == lines[2]
    assert main(["asm", "-triple=nvptx64", str(src)]) == 2
    assert "handles amdgcn (AMDGPU) code only" in capsys.readouterr().err


def test_asm_errors_name_the_input_file(tmp_path, capsys):
    src = tmp_path / "bad.s"
    src.write_text("s_nop 0\n  v_bogus v0\n")
    assert main(["asm", "--arch", "gfx1100", str(src)]) == 1
    assert f"{src}:2:3: error: unknown instruction 'v_bogus'" in capsys.readouterr().err
    bytes_file = tmp_path / "b.txt"
    bytes_file.write_text("0x01,0x05\n0x1ff\n")
    assert main(["disasm", str(bytes_file)]) == 1
    assert f"{bytes_file}:2: error: '0x1ff' is not a byte" in capsys.readouterr().err


def test_asm_disassemble_flag_acts_as_disasm(tmp_path, capsys):
    src = tmp_path / "b.txt"
    src.write_text("0x01,0x05,0x00,0x06\n")
    assert main(["asm", "-disassemble", "-mcpu=gfx1100", str(src)]) == 0
    assert capsys.readouterr().out == "\t.text\n\tv_add_f32_e32 v0, v1, v2\n"


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201", "gfx942"])
def test_filetype_obj_matches_llvm_mc(arch, tmp_path):
    from tests.oracles import require_tools
    require_tools("llvm-mc-19", "llvm-objdump-19", "llvm-readelf-19")
    src = tmp_path / "k.s"
    src.write_text(ASM)
    assert main(["asm", "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-filetype=obj", str(src),
                 "-o", str(tmp_path / "ours.o")]) == 0
    subprocess.run(["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-filetype=obj", str(src), "-o",
                    str(tmp_path / "theirs.o")], check=True)

    def look(name: str, *tool: str) -> str:
        text = subprocess.run([*tool, str(tmp_path / name)], capture_output=True, text=True, check=True).stdout
        return text.replace(name, "X")
    for tool in (["llvm-objdump-19", "-d", "-t"], ["llvm-readelf-19", "-h"]):
        assert look("ours.o", *tool) == look("theirs.o", *tool)


def test_filetype_obj_needs_an_output(tmp_path, capsys):
    src = tmp_path / "k.s"
    src.write_text(ASM)
    assert main(["asm", "-filetype=obj", str(src)]) == 2
    assert "-filetype=obj needs -o FILE" in capsys.readouterr().err


def test_disasm_of_an_elf_reads_the_arch_from_its_header(capsys):
    import pathlib
    fix = pathlib.Path(__file__).parent.parent / "fixtures" / "drivers"
    assert main(["disasm", "--elf", str(fix / "kernels_gfx942_v5.hsaco")]) == 0
    ours = capsys.readouterr().out
    assert main(["disasm", "--arch", "gfx942", str(fix / "kernels_gfx942_v5.hsaco")]) == 0   # ELF detected
    assert capsys.readouterr().out == ours and "global_load_dword" in ours


def test_a_closed_pipe_ends_quietly(tmp_path):
    import pathlib
    fix = pathlib.Path(__file__).parent.parent / "fixtures" / "drivers" / "kernels_gfx1100_v5.hsaco"
    proc = subprocess.run(f"{sys.executable} -m gputwin.cli disasm {fix} | head -2", shell=True, capture_output=True,
                          text=True, executable="/bin/bash")
    assert proc.stdout.splitlines() == ["\t.text", "empty:"]
    assert proc.stderr == ""
