"""gputwin.abi.code_object on real clang-19 / ld.lld-19 code objects (fixtures/drivers) and on bad input."""
import struct
from pathlib import Path

import numpy as np
import pytest

from gputwin.abi.code_object import R_AMDGPU_RELATIVE64, CodeObject, CodeObjectError
from tests.abi import patch_code_object

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "drivers"
V5 = (FIX / "kernels_gfx1100_v5.hsaco").read_bytes()
V4 = (FIX / "kernels_gfx1100_v4.hsaco").read_bytes()
W64 = (FIX / "kernels_gfx1100_w64.hsaco").read_bytes()
V6 = (FIX / "kernels_gfx11_generic_v6.hsaco").read_bytes()
KERNELS = {"empty", "saxpy", "scalars", "sizes", "hidden", "fault", "spin", "reverse", "reloc", "scratch", "lrev"}
BLOBS = {"v5": V5, "v4": V4, "w64": W64}


@pytest.mark.parametrize("which,version,wave", [("v5", 5, 32), ("v4", 4, 32), ("w64", 5, 64)])
def test_reads_target_version_and_kernels(which, version, wave):
    co = CodeObject.parse(BLOBS[which])
    assert (co.arch, co.version) == ("gfx1100", version)
    assert set(co.kernels) == KERNELS
    for k in co.kernels.values():
        assert k.wavefront_size == wave and k.wave32 == (wave == 32)
        assert k.kd_offset % 64 == 0 and k.entry_offset % 256 == 0


def test_generic_v6_object_runs_on_its_family():
    co = CodeObject.parse(V6)
    assert (co.arch, co.version, co.generic_version) == ("gfx11-generic", 6, 1)
    assert co.runs_on("gfx1100") and co.runs_on("gfx1151") and not co.runs_on("gfx1201")
    assert set(co.kernels) == KERNELS
    assert CodeObject.parse(V5).runs_on("gfx1100") and not CodeObject.parse(V5).runs_on("gfx1101")


def test_entry_is_the_function_symbol_and_holds_its_code():
    co = CodeObject.parse(V5)
    funcs = {s.name: s for s in co.symbols if s.type == 2}
    text = next(s for s in co.sections if s.name == ".text")
    for name, k in co.kernels.items():
        assert k.entry_offset == funcs[name].value
        assert co.image[k.entry_offset:k.entry_offset + 16] == \
            V5[text.offset + k.entry_offset - text.addr:][:16]


def test_saxpy_arguments_from_metadata():
    k = CodeObject.parse(V5).kernels["saxpy"]
    assert [(a.name, a.type_name, a.offset, a.size, a.value_kind) for a in k.explicit_args] == [
        ("y", "float*", 0, 8, "global_buffer"), ("x", "float*", 8, 8, "global_buffer"),
        ("a", "float", 16, 4, "by_value"), ("n", "int", 20, 4, "by_value")]
    assert k.explicit_args[1].is_const and not k.explicit_args[0].is_const
    assert k.signature() == "saxpy(float* y, float* x, float a, int n)"
    hidden = {a.value_kind: a.offset for a in k.args if a.hidden}
    assert hidden["hidden_block_count_x"] == 24 and hidden["hidden_grid_dims"] == 24 + 64
    assert k.kernarg_size >= 24 + 256 - 24 and k.kernarg_size == k.descriptor.kernarg_size


def test_code_object_v4_uses_the_dispatch_packet_for_sizes():
    k4, k5 = CodeObject.parse(V4).kernels["sizes"], CodeObject.parse(V5).kernels["sizes"]
    assert k4.descriptor.kernel_code_properties & 2 and k5.descriptor.kernel_code_properties & 2   # grid size
    assert not any(a.value_kind.startswith("hidden_group_size") for a in k4.args)
    assert any(a.value_kind == "hidden_group_size_x" for a in k5.args)


def test_image_is_laid_out_by_vaddr_with_bss_zeroed():
    co = CodeObject.parse(V5)
    assert len(co.image) == co.image_size and co.image_size % 4096 == 0
    for seg in co.segments:
        assert co.image[seg.vaddr:seg.vaddr + seg.filesz] == V5[seg.offset:seg.offset + seg.filesz]
        assert not any(co.image[seg.vaddr + seg.filesz:seg.vaddr + seg.memsz])


def test_relative_relocation_is_applied_at_the_load_base():
    co = CodeObject.parse(V5)
    (rel,) = co.relocations
    assert rel.type == R_AMDGPU_RELATIVE64
    table = next(s for s in co.symbols if s.name == "table_data")
    assert rel.addend == table.value
    img = co.relocated_image(0x7F1234560000)
    assert struct.unpack_from("<Q", img, rel.offset)[0] == 0x7F1234560000 + table.value
    assert img[:rel.offset] == co.image[:rel.offset]


@pytest.mark.parametrize("mutate,message", [
    (lambda b: b"\x7fELG" + b[4:], "bad magic"),
    (lambda b: b[:18] + struct.pack("<H", 62) + b[20:], "EM_AMDGPU"),
    (lambda b: b[:7] + b"\x00" + b[8:], "OS ABI"),
    (lambda b: b[:8] + b"\x01" + b[9:], "ABI version"),
    (lambda b: b[:16] + struct.pack("<H", 1) + b[18:], "ET_DYN"),
    (lambda b: b[:48], "outside"),
    (lambda b: b"", "outside"),
])
def test_malformed_headers_are_named(mutate, message):
    with pytest.raises(CodeObjectError, match=message):
        CodeObject.parse(mutate(V5))


def test_missing_metadata_note_is_an_error():
    co = CodeObject.parse(V5)
    note = next(s for s in co.sections if s.name == ".note")
    blob = bytearray(V5)
    blob[note.offset + 8:note.offset + 12] = struct.pack("<I", 1)   # note type: not NT_AMDGPU_METADATA
    with pytest.raises(CodeObjectError, match="NT_AMDGPU_METADATA"):
        CodeObject.parse(bytes(blob))


def test_random_corruption_never_escapes_as_another_exception():
    rng = np.random.default_rng(6)
    for _ in range(300):
        blob = bytearray(V5)
        for pos in rng.integers(0, 0x400, rng.integers(1, 6)):   # headers, notes, symbols live up front
            blob[pos] = int(rng.integers(0, 256))
        try:
            CodeObject.parse(bytes(blob))
        except CodeObjectError:
            pass
    for cut in range(0, len(V5), 97):
        try:
            CodeObject.parse(V5[:cut])
        except CodeObjectError:
            pass


def with_metadata(edit) -> bytes:
    """V5 with its metadata note replaced by edit(metadata), re-packed into a note section at the end."""
    return patch_code_object.with_metadata(V5, edit)


def test_rewritten_metadata_is_read_from_the_note_section():
    co = CodeObject.parse(with_metadata(lambda md: md["amdhsa.kernels"][1].update({".wavefront_size": 32})))
    assert set(co.kernels) == KERNELS


@pytest.mark.parametrize("key,value", [(".kernarg_segment_size", "lots"), (".wavefront_size", -1),
                                       (".max_flat_workgroup_size", True)])
def test_bad_metadata_values_are_named(key, value):
    blob = with_metadata(lambda md: md["amdhsa.kernels"][0].update({key: value}))
    with pytest.raises(CodeObjectError, match=key):
        CodeObject.parse(blob)


def test_kernel_without_descriptor_symbol_is_named():
    blob = with_metadata(lambda md: md["amdhsa.kernels"][0].update({".symbol": "nope.kd"}))
    with pytest.raises(CodeObjectError, match="nope.kd"):
        CodeObject.parse(blob)


def _saxpy(edit):
    """V5 after edit(saxpy's metadata entry)."""
    return with_metadata(lambda md: edit(patch_code_object.kernel_metadata(md, "saxpy")))


def _set_arg(index, key, value):
    return lambda k: k[".args"][index].update({key: value})


@pytest.mark.parametrize("edit,match", [
    (lambda k: k.update({".kernarg_segment_size": 2 ** 40}), "kernarg_segment_size of 1099511627776 bytes exceeds"),
    (lambda k: k.update({".kernarg_segment_size": 2 ** 31}), "kernarg_segment_size of 2147483648 bytes exceeds"),
    (_set_arg(0, ".size", -4), r"argument 0 \(.offset 0, .size -4\)"),
    (_set_arg(1, ".offset", -4), r"argument 1 \(.offset -4, .size 8\)"),
    (_set_arg(3, ".offset", 1 << 20), "does not lie inside the 280-byte kernarg segment"),
    (_set_arg(2, ".size", 2.5), r"argument 2 \(.offset 16, .size 2.5\)"),
    (lambda k: k.update({".max_flat_workgroup_size": 2048}), "max_flat_workgroup_size 2048 is not 1..1024"),
    (lambda k: k.update({".wavefront_size": 48}), "wavefront_size 48 is neither 32 nor 64"),
    (lambda k: k.update({".kernarg_segment_align": 24}), "kernarg_segment_align 24 is not a power of two"),
    (lambda k: k.update({".args": {"y": 1}}), ".args is a dict, not a list"),
])
def test_kernel_metadata_out_of_range_is_a_code_object_error(edit, match):
    with pytest.raises(CodeObjectError, match=f"kernel saxpy: .*{match}"):
        CodeObject.parse(_saxpy(edit))


def test_kernel_metadata_edits_that_stay_in_range_still_load():
    co = CodeObject.parse(_saxpy(lambda k: k.update({".max_flat_workgroup_size": 1024})))   # the reference above
    assert co.kernels["saxpy"].kernarg_size == 280 and co.kernels["saxpy"].metadata[".max_flat_workgroup_size"] == 1024


def test_descriptor_kernarg_size_is_range_checked_too():
    co = CodeObject.parse(V5)
    kd = co.kernels["saxpy"].kd_offset
    seg = next(s for s in co.segments if s.vaddr <= kd < s.vaddr + s.filesz)
    blob = bytearray(V5)
    struct.pack_into("<I", blob, seg.offset + kd - seg.vaddr + 8, 1 << 31)   # kernel_descriptor_t.kernarg_size
    with pytest.raises(CodeObjectError, match="descriptor's kernarg_size of 2147483648 bytes exceeds"):
        CodeObject.parse(bytes(blob))
