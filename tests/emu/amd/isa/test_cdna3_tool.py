"""Whole gfx942 code objects (fixtures/amd/cl/gfx942, clang-19 output) disassemble exactly as
llvm-objdump-19 --mcpu=gfx942 prints them, kernel by kernel."""
from __future__ import annotations

import pathlib
import subprocess

import pytest

from gputwin.emu.amd.isa import tool
from tests.oracles import oracle

from .test_tool import _blocks, run

FIXTURES = pathlib.Path(__file__).resolve().parents[4] / "fixtures" / "amd" / "cl" / "gfx942"


@oracle("llvm-objdump-19")
@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.hsaco")))
def test_gfx942_elf_disassembly_matches_llvm_objdump(name):
    path = FIXTURES / f"{name}.hsaco"
    rc, out, err = run(tool.disasm_elf, path.read_bytes(), "gfx942")
    assert (rc, err) == (0, "")
    ours = _blocks(out.splitlines()[1:], lambda ln: ln[:-1] if ln.endswith(":") else None)
    dump = subprocess.run(["llvm-objdump-19", "-d", "--no-show-raw-insn", "--mcpu=gfx942", str(path)],
                          capture_output=True, text=True).stdout
    theirs = _blocks([ln.split("//")[0] for ln in dump.splitlines()],
                     lambda ln: ln.split("<")[1].split(">")[0] if ln.endswith(">:") else None)
    assert ours and set(ours) <= set(theirs)
    for kernel, insts in ours.items():   # objdump also shows the padding after each kernel
        assert len(insts) > 5 and insts == theirs[kernel][:len(insts)], kernel


def test_gfx942_kernels_use_gfx9_forms():
    """The fixtures exercise what differs from RDNA3: SDWA, MFMA with AGPRs, GFX9 SMEM and carry ops."""
    text = "\n".join(run(tool.disasm_elf, p.read_bytes(), "gfx942")[1] for p in sorted(FIXTURES.glob("*.hsaco")))
    for form in ("_sdwa", "v_mfma_f32_16x16x16_f16 a[", "s_load_dwordx2", "v_addc_co_u32", "scratch_store"):
        assert form in text, form


def test_gfx942_assembly_errors_name_line_and_column():
    from gputwin.emu.amd.isa.asm import AsmError, assemble
    with pytest.raises(AsmError, match="v_mfma_f32_16x16x16_f16 takes 4 operands, got 3") as e:
        assemble("s_endpgm\nv_mfma_f32_16x16x16_f16 a[0:3], v[4:5], v[6:7]", "gfx942")
    assert e.value.line == 2
    assert assemble("v_accvgpr_write_b32 a1, v2", "gfx942") == bytes.fromhex("0140d9d302010018")
