"""gputwin.abi.cubin against cubins NVIDIA's ptxas makes here (CUDA 13, sm_80 and sm_90): the parameter layout
equals the PTX's own .param list, registers and barriers equal what `ptxas -v` prints, and damaged files fail
with CubinError naming the problem."""
import pathlib
import re
import shutil
import struct
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gputwin.abi import nv_classes as c
from gputwin.abi.cubin import CubinError, eiattr_records, read_cubin
from gputwin.drivers.nv import ptx_params

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "drivers" / "nv"
needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs NVIDIA's ptxas on PATH")
CBANK = {"sm_90": c.CBANK0_PARAM_OFFSET[c.HOPPER_COMPUTE_A], "sm_80": c.CBANK0_PARAM_OFFSET[c.AMPERE_COMPUTE_A]}


@pytest.fixture(scope="module", params=["sm_90", "sm_80"])
def built(request, tmp_path_factory):
    arch = request.param
    src = FIXTURES / f"kernels_{arch.replace('_', '')}.ptx"
    out = tmp_path_factory.mktemp(arch) / "k.cubin"
    run = subprocess.run(["ptxas", "-v", f"-arch={arch}", "-o", str(out), str(src)], capture_output=True, text=True,
                         check=True)
    usage = dict(re.findall(r"Compiling entry function '(\w+)'.*?Used (\d+ registers, used \d+) barriers", run.stderr,
                            re.S))
    return arch, src.read_text(), out.read_bytes(), {k: tuple(map(int, re.findall(r"\d+", v))) for k, v in usage.items()}


@needs_ptxas
def test_parameter_layout_equals_the_ptx_param_list(built):
    arch, ptx, elf, _ = built
    cubin = read_cubin(elf)
    assert cubin.arch == arch
    kernels = ptx_params.kernels(ptx)
    assert set(cubin.kernels) == set(kernels)
    for name, pk in kernels.items():
        ck = cubin.kernels[name]
        assert [(p.offset, p.size) for p in ck.params] == [(p.offset, p.size) for p in pk.params], name
        assert [p.ordinal for p in ck.params] == list(range(len(pk.params)))
        if pk.params:
            assert ck.params_size == pk.params_size and ck.param_cbank_offset == CBANK[arch]


@needs_ptxas
def test_registers_and_barriers_equal_ptxas_report(built):
    _, _, elf, usage = built
    cubin = read_cubin(elf)
    assert usage and set(usage) == set(cubin.kernels)
    for name, (regs, bars) in usage.items():
        assert (cubin.kernels[name].registers, cubin.kernels[name].barriers) == (regs, bars), name
    assert usage["reverse"][1] == 1          # the fixture's __syncthreads kernel: a case that could fail


@needs_ptxas
def test_text_and_constant_bank_come_from_their_sections(built):
    arch, _, elf, _ = built
    ck = read_cubin(elf).kernels["saxpy"]
    assert ck.text_offset % 128 == 0 and ck.text_size > 0 and ck.relocations == 0
    assert len(ck.constant0) == CBANK[arch] + ck.params_size          # bank 0 ends with the parameters
    assert ck.exit_offsets and all(o < ck.text_size for o in ck.exit_offsets)
    # every SASS instruction is 16 bytes: the code is whole instructions
    assert ck.text_size % 16 == 0 and elf[ck.text_offset:ck.text_offset + ck.text_size] != bytes(ck.text_size)


def test_not_a_cubin_is_refused():
    with pytest.raises(CubinError, match="not a little-endian ELF64"):
        read_cubin(b"// PTX text")
    elf = bytearray(64)
    elf[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<H", elf, 0x12, 224)              # EM_AMDGPU
    with pytest.raises(CubinError, match="not EM_CUDA"):
        read_cubin(bytes(elf))


@needs_ptxas
def test_truncated_cubin_names_what_runs_past_the_end(built):
    elf = built[2]
    with pytest.raises(CubinError, match="runs past the end|truncated"):
        read_cubin(elf[:len(elf) // 2])


def test_eiattr_records_decode_each_format_and_refuse_overruns():
    info = bytes([4, 0x17, 12, 0]) + struct.pack("<IHHI", 0, 1, 8, (4 << 18) | 0xF000) + bytes([3, 0x19, 0x18, 0]) \
        + bytes([2, 0x4C, 1, 0]) + bytes([1, 0x50, 0, 0])
    assert eiattr_records(info) == [(4, 0x17, info[4:16]), (3, 0x19, 0x18), (2, 0x4C, 1), (1, 0x50, 0)]
    with pytest.raises(CubinError, match="run past the section"):
        eiattr_records(bytes([4, 0x17, 12, 0, 1, 2]))
    with pytest.raises(CubinError, match="unknown format 9"):
        eiattr_records(bytes([9, 0x17, 0, 0]))


@needs_ptxas
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.sampled_from(["elf header", "section headers", "nv.info", "anywhere"]),
                                 st.integers(0, 1 << 20), st.integers(0, 255)), min_size=1, max_size=8),
       cut=st.integers(0, 1 << 20))
def test_damaged_cubins_fail_with_cuberror_only(built, edits, cut):
    elf = bytearray(built[2])
    shoff, shnum = struct.unpack_from("<Q", elf, 0x28)[0], struct.unpack_from("<H", elf, 0x3C)[0]
    info = elf.index(b"\x04\x2f\x08\x00")          # the first EIATTR_REGCOUNT record of .nv.info
    for where, pos, value in edits:
        base, span = {"elf header": (0, 64), "section headers": (shoff, 64 * shnum), "nv.info": (info, 256),
                      "anywhere": (0, len(elf))}[where]
        elf[(base + pos % span) % len(elf)] = value
    for image in (bytes(elf), bytes(elf[:cut % len(elf)])):
        try:
            read_cubin(image)
        except CubinError:
            pass
