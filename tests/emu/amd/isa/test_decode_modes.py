"""The decoder's two modes (docs/isa.md, "Decoder modes"): strict (what LLVM accepts: assembler,
disassembler, conformance) and execution (strict=False: what the hardware runs), and the encodings that
neither can mean, which must raise IllegalInstruction naming the bytes and offset in both modes (issue 11,
defect 7: these leaked TypeError / ValueError). Words come from llvm-mc-19 -show-encoding (the text in the
comment) with the named field changed by hand."""
from __future__ import annotations

import pytest

from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.isa import Operand, decode
from gputwin.emu.amd.program import Program
from gputwin.emu.memory import AddressSpace
from gputwin.errors import IllegalInstruction

S_ENDPGM = {"gfx1100": bytes.fromhex("0000b0bf"), "gfx942": bytes.fromhex("000081bf")}


def _with(word: bytes, lo: int, value: int) -> bytes:
    """`word` with `value` ORed in at bit `lo` of the 64-bit little-endian instruction."""
    w = int.from_bytes(word[:8], "little") | value << lo
    return w.to_bytes(8, "little") + word[8:]


V_ADD_F32_E64 = bytes.fromhex("010003d502070200")   # v_add_f32_e64 v1, v2, v3
DS_ADD_U32 = bytes.fromhex("000000d801020000")                        # ds_add_u32 v1, v2


@pytest.mark.parametrize("word,field", [
    (_with(V_ADD_F32_E64, 50, 256 + 5), "src2 field of a 2-source VOP3"),
    (_with(V_ADD_F32_E64, 63, 1), "neg of the absent src2"),
    (_with(DS_ADD_U32, 56, 7), "vdst of a no-return DS atomic"),
    (_with(DS_ADD_U32, 48, 9), "data1 of a one-data DS atomic"),
])
def test_fields_the_hardware_ignores_decode_only_in_execution_mode(word, field):
    with pytest.raises(IllegalInstruction, match="reserved or unsupported bits"):
        decode(word)
    ran = decode(word, strict=False)
    clean = decode(V_ADD_F32_E64 if ran.encoding == "VOP3" else DS_ADD_U32)
    assert (ran.op, ran.operands, ran.neg[:2]) == (clean.op, clean.operands, clean.neg[:2]), field


def test_modifiers_an_instruction_lacks_stay_illegal_in_both_modes():
    writelane = bytes.fromhex("2a0061d75e000000")                     # v_writelane_b32 v42, s94, s0
    clamped = _with(writelane, 15, 1)
    for strict in (True, False):
        with pytest.raises(IllegalInstruction, match=r"v_writelane_b32 with reserved or unsupported bits 0x8000"):
            decode(clamped, strict=strict)


def test_16bit_e32_high_halves_decode_as_op_sel_in_execution_mode():
    word = bytes.fromhex("82070265")          # v_add_f16_e32 v1.h, v2.h, v3.l (llvm-mc-19 +real-true16)
    with pytest.raises(IllegalInstruction, match="vdst: register 129"):
        decode(word)
    inst = decode(word, strict=False)
    assert inst.operands == {"vdst": Operand("vgpr", 1), "src0": Operand("vgpr", 2), "src1": Operand("vgpr", 3)}
    assert inst.op_sel == (True, False, False, True)


NEITHER = [   # (arch, bytes, what the message names): LLVM marks them invalid; no hardware meaning either
    ("gfx942", "f9a0807cff0ea80a", "SDWA takes no literal"),
    ("gfx1100", "16000bd5e9fe010005000000", "DPP with a literal"),
    ("gfx1100", "2a0061d75ee30100", "src0: v94 is not allowed"),           # v_writelane src0 must be scalar
    ("gfx1100", "2a0061d75e010000", "src0: v94 is not allowed"),           # v_writelane v42, v94, s0
    ("gfx1100", "62005bd621a22201", "src0: scalar register 33"),           # v_permlane16 src0 must be a VGPR
    ("gfx1100", "340060d7ffcc0300003c0000", "src0: this operand takes no literal"),   # v_readlane
]


@pytest.mark.parametrize("arch,hexword,why", NEITHER)
def test_encodings_neither_llvm_nor_hardware_mean_are_illegal_in_both_modes(arch, hexword, why):
    code = bytes.fromhex(hexword)
    for strict in (True, False):
        with pytest.raises(IllegalInstruction, match=why) as e:
            decode(code, arch, wave64=arch == "gfx942", strict=strict)
        assert code[:8].hex() in str(e.value) and "offset 0x0" in str(e.value)


@pytest.mark.parametrize("arch,hexword,why", NEITHER)
def test_running_them_raises_illegal_instruction_with_the_pc(arch, hexword, why):
    wave64 = arch == "gfx942"
    with pytest.raises(IllegalInstruction, match=why) as e:
        run_dispatch(AddressSpace(), Dispatch(0x1000, code=bytes.fromhex(hexword) + S_ENDPGM[arch],
                                              block=(64 if wave64 else 32, 1, 1), wave64=wave64), arch=arch)
    assert e.value.pc == 0x1000


def test_ignored_src2_field_executes_as_the_two_source_form():
    code = _with(V_ADD_F32_E64, 50, 255) + bytes.fromhex("0000b0bf")   # src2 = the literal code, unused
    prog = Program(code, "gfx1100")
    fn, nxt, inst = prog.step(0)
    assert inst is not None and nxt == 8 and inst.op == "v_add_f32"     # no literal dword is consumed
    assert list(inst.operands) == ["vdst", "src0", "src1"]


@pytest.mark.parametrize("arch,fixture,wave64", [
    ("gfx1100", "fixtures/amd/cl/control.hsaco", False),
    ("gfx1201", "fixtures/amd/cl/gfx1201/memory.hsaco", False),
    ("gfx942", "fixtures/amd/cl/gfx942/pkf32.hsaco", True),
])
def test_bit_flipped_clang_code_raises_only_gputwin_errors(arch, fixture, wave64):
    """Issue 11 defect 7: mutated compiler output leaked IndexError/TypeError. Flip 1-3 bits of a random
    instruction of a real kernel, decode it as the emulator does and run it alone: every outcome is a
    result or a gputwin error (GpuFault subclasses), never a Python/numpy exception."""
    import pathlib
    import random

    from gputwin.abi.code_object import CodeObject
    from gputwin.errors import GpuFault

    root = pathlib.Path(__file__).resolve().parents[4]
    co = CodeObject((root / fixture).read_bytes())
    text = next(co.data[s.offset:s.offset + s.size] for s in co.sections if s.name == ".text")
    rng = random.Random(f"flip-{arch}")
    outcomes = set()
    for _ in range(200):
        off = rng.randrange(len(text) // 4) * 4
        word = bytearray(text[off:off + 12].ljust(12, b"\0"))
        for _ in range(rng.choice((1, 2, 3))):
            bit = rng.randrange(64)
            word[bit // 8] ^= 1 << (bit % 8)
        try:
            inst = decode(bytes(word), arch, wave64=wave64, strict=False)
            run_dispatch(AddressSpace(), Dispatch(0x1000, code=bytes(word[:inst.size]) + S_ENDPGM[
                "gfx942" if arch == "gfx942" else "gfx1100"], block=(64 if wave64 else 32, 1, 1), wave64=wave64,
                lds_bytes=rng.choice((0, 256))), arch=arch)
            outcomes.add("ran")
        except GpuFault as e:
            outcomes.add(type(e).__name__)
    assert "ran" in outcomes and "IllegalInstruction" in outcomes     # the loop exercised both paths
