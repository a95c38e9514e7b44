"""Linked AMDGPU code objects: loadable like ld.lld -shared output, for gfx1100, gfx1201 and gfx942."""
import struct
import subprocess

import pytest

from gputwin.compiler import compile_kernel, llvm as backend, render
from gputwin.compiler.elf import LinkError, link
from tests.compiler import kernels
from tests.oracles import require_tools

ARCHS = ["gfx1100", "gfx1201", "gfx942"]


def tool(name):
    return require_tools(name)[0]


def sections(image: bytes) -> dict:
    from gputwin.compiler import elf
    hdr = elf.EHDR.unpack_from(image)
    shoff, shnum, shstrndx = hdr[6], hdr[12], hdr[13]
    raw = [elf.SHDR.unpack_from(image, shoff + i * elf.SHDR.size) for i in range(shnum)]
    names = image[raw[shstrndx][4]:raw[shstrndx][4] + raw[shstrndx][5]]
    return {names[r[0]:names.index(b"\0", r[0])].decode(): (r[3], image[r[4]:r[4] + r[5]]) for r in raw[1:]}


@pytest.mark.parametrize("arch", ARCHS)
def test_code_object_parses_with_the_driver_reader(arch):
    from gputwin.abi.code_object import CodeObject
    co = CodeObject.parse(compile_kernel(kernels.row_sum(), arch))
    assert co.arch == arch and co.version == 5
    k = co.kernels["row_sum"]
    assert [a.value_kind for a in k.explicit_args] == ["global_buffer", "global_buffer", "by_value", "by_value"]
    assert [a.offset for a in k.explicit_args] == [0, 8, 16, 20]
    # the descriptor's kernel_code_entry_byte_offset points at the code
    assert k.descriptor.kernel_code_entry_byte_offset == k.entry_offset - k.kd_offset
    assert k.wave32 == (arch != "gfx942")


@pytest.mark.parametrize("arch", ARCHS)
def test_layout_matches_what_ld_lld_makes_from_the_same_object(arch, tmp_path):
    lld = tool("ld.lld-19")
    obj = backend.emit_object(render(kernels.shared_reverse(), arch), arch)
    (tmp_path / "k.o").write_bytes(obj)
    subprocess.run([lld, "-shared", str(tmp_path / "k.o"), "-o", str(tmp_path / "k.so")], check=True)
    ours, theirs = sections(link(obj)), sections((tmp_path / "k.so").read_bytes())
    for name in (".text", ".note"):
        assert ours[name][1] == theirs[name][1], name
    kd_ours, kd_theirs = ours[".rodata"][1], theirs[".rodata"][1]
    assert kd_ours[:16] == kd_theirs[:16] and kd_ours[24:] == kd_theirs[24:]
    # entry offset differs only by where each linker put .text relative to .rodata
    entry = struct.unpack_from("<q", kd_ours, 16)[0]
    assert entry == ours[".text"][0] - ours[".rodata"][0]
    assert struct.unpack_from("<q", kd_theirs, 16)[0] == theirs[".text"][0] - theirs[".rodata"][0]


@pytest.mark.parametrize("arch", ARCHS)
def test_llvm_tools_read_and_disassemble_it(arch, tmp_path):
    path = tmp_path / "k.hsaco"
    path.write_bytes(compile_kernel(kernels.matmul(), arch))
    out = subprocess.run([tool("llvm-readelf-19"), "-a", "--notes", str(path)], capture_output=True, text=True,
                         check=True).stdout
    assert "DYN (Shared object file)" in out and "NT_AMDGPU_METADATA" in out and "matmul.kd" in out
    assert "warning" not in out.lower()
    dis = subprocess.run([tool("llvm-objdump-19"), "-d", f"--mcpu={arch}", str(path)], capture_output=True,
                         text=True, check=True)
    assert "<matmul>:" in dis.stdout and "s_endpgm" in dis.stdout and "<unknown>" not in dis.stdout


def test_absolute_relocations_are_refused_by_name():
    from gputwin.compiler import elf
    obj = bytearray(backend.emit_object(render(kernels.row_sum(), "gfx1100"), "gfx1100"))
    # turn the descriptor's R_AMDGPU_REL64 into an R_AMDGPU_ABS64
    hdr = elf.EHDR.unpack_from(obj)
    for i in range(hdr[12]):
        sh = elf.SHDR.unpack_from(obj, hdr[6] + i * elf.SHDR.size)
        if sh[1] == elf.SHT_RELA:
            off, info, add = elf.RELA.unpack_from(obj, sh[4])
            elf.RELA.pack_into(obj, sh[4], off, (info & ~0xFFFFFFFF) | 3, add)
    with pytest.raises(LinkError, match="R_AMDGPU_ABS64"):
        link(bytes(obj))


def test_non_amdgpu_input_is_refused():
    with pytest.raises(LinkError, match="not an ELF64 object"):
        link(b"\x7fELF" + bytes(60))


@pytest.mark.parametrize("arch", ARCHS)
def test_descriptor_keeps_ieee_denormals_and_division_is_the_exact_sequence(arch):
    from gputwin.abi import amdhsa
    from gputwin.abi.code_object import CodeObject
    from gputwin.compiler import ir
    from tests.compiler.helpers import elementwise
    kern = elementwise("dv", [ir.float32] * 2, ir.float32, lambda x, y: x / y)
    k = CodeObject.parse(compile_kernel(kern, arch)).kernels["dv"]
    assert amdhsa.COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_32.get(k.rsrc1) == amdhsa.FLOAT_DENORM_MODE_FLUSH_NONE
    assert amdhsa.COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_16_64.get(k.rsrc1) == amdhsa.FLOAT_DENORM_MODE_FLUSH_NONE
    asm = backend.emit_assembly(render(kern, arch), arch)
    for step in ("v_div_scale_f32", "v_div_fmas_f32", "v_div_fixup_f32"):
        assert step in asm
