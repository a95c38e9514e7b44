"""gputwin.abi.amdhsa against LLVM: the descriptor layout, register fields and user SGPR order."""
import subprocess

from gputwin.abi import amdhsa as h
from gputwin.abi.code_object import CodeObject
from tests.oracles import oracle


def test_kernel_descriptor_offsets_match_llvm():
    kd = h.kernel_descriptor_t
    offsets = {name: getattr(kd, name).offset for name, _ in kd._fields_}
    assert offsets == {"group_segment_fixed_size": 0, "private_segment_fixed_size": 4, "kernarg_size": 8,
                       "reserved0": 12, "kernel_code_entry_byte_offset": 16, "reserved1": 24,
                       "compute_pgm_rsrc3": 44, "compute_pgm_rsrc1": 48, "compute_pgm_rsrc2": 52,
                       "kernel_code_properties": 56, "kernarg_preload": 58, "reserved3": 60}


def test_dispatch_packet_offsets_match_hsa():
    p = h.hsa_kernel_dispatch_packet_t
    assert (p.workgroup_size_x.offset, p.grid_size_x.offset, p.private_segment_size.offset,
            p.group_segment_size.offset, p.kernel_object.offset, p.kernarg_address.offset,
            p.completion_signal.offset) == (4, 12, 24, 28, 32, 40, 56)
    assert h.DISPATCH_PACKET_HEADER & 0xFF == h.HSA_PACKET_TYPE_KERNEL_DISPATCH


def test_rsrc2_user_sgpr_count_sits_in_bits_1_to_5():
    f = h.COMPUTE_PGM_RSRC2_USER_SGPR_COUNT
    assert f.mask == 0b111110 and f(13) == 13 << 1 and f.get(0xFFFFFFC0 | f(13)) == 13


def test_user_sgprs_pack_in_abi_order():
    props = (h.KERNEL_CODE_PROPERTY_ENABLE_SGPR_KERNARG_SEGMENT_PTR.mask
             | h.KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_PTR.mask
             | h.KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER.mask
             | h.KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_SIZE.mask)
    assert h.user_sgpr_layout(props) == [("private_segment_buffer", 0, 4), ("dispatch_ptr", 4, 2),
                                         ("kernarg_segment_ptr", 6, 2), ("private_segment_size", 8, 1)]
    assert h.user_sgpr_layout(0) == []


_DESCRIPTOR_ASM = """
.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
.text
.globl k
.p2align 8
.type k,@function
k:
  s_endpgm
.rodata
.p2align 6
.amdhsa_kernel k
  .amdhsa_group_segment_fixed_size 1234
  .amdhsa_private_segment_fixed_size 48
  .amdhsa_kernarg_size 96
  .amdhsa_user_sgpr_count 8
  .amdhsa_user_sgpr_dispatch_ptr 1
  .amdhsa_user_sgpr_queue_ptr 1
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_user_sgpr_dispatch_id 1
  .amdhsa_wavefront_size32 0
  .amdhsa_enable_private_segment 1
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_system_sgpr_workgroup_id_y 0
  .amdhsa_system_sgpr_workgroup_id_z 1
  .amdhsa_system_vgpr_workitem_id 2
  .amdhsa_next_free_vgpr 40
  .amdhsa_next_free_sgpr 20
  .amdhsa_float_round_mode_32 2
  .amdhsa_float_round_mode_16_64 1
  .amdhsa_float_denorm_mode_32 1
  .amdhsa_float_denorm_mode_16_64 2
  .amdhsa_dx10_clamp 0
  .amdhsa_ieee_mode 1
  .amdhsa_fp16_overflow 1
  .amdhsa_workgroup_processor_mode 0
  .amdhsa_memory_ordered 1
  .amdhsa_exception_int_div_zero 1
.end_amdhsa_kernel
.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - .name: k
    .symbol: k.kd
    .kernarg_segment_size: 96
    .group_segment_fixed_size: 1234
    .private_segment_fixed_size: 48
    .kernarg_segment_align: 8
    .wavefront_size: 64
    .sgpr_count: 20
    .vgpr_count: 40
    .max_flat_workgroup_size: 256
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
...
.end_amdgpu_metadata
"""


@oracle("llvm-mc-19", "ld.lld-19")
def test_fields_read_back_what_the_llvm_assembler_wrote(tmp_path):
    (tmp_path / "k.s").write_text(_DESCRIPTOR_ASM)
    subprocess.run(["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-filetype=obj",
                    str(tmp_path / "k.s"), "-o", str(tmp_path / "k.o")], check=True)
    subprocess.run(["ld.lld-19", "-shared", str(tmp_path / "k.o"), "-o", str(tmp_path / "k.hsaco")], check=True)
    d = CodeObject.parse((tmp_path / "k.hsaco").read_bytes()).kernels["k"].descriptor
    assert (d.group_segment_fixed_size, d.private_segment_fixed_size, d.kernarg_size) == (1234, 48, 96)
    r1, r2 = d.compute_pgm_rsrc1, d.compute_pgm_rsrc2
    assert h.COMPUTE_PGM_RSRC1_GRANULATED_WORKITEM_VGPR_COUNT.get(r1) == 40 // 4 - 1   # wave64: 4-VGPR granules
    assert [f.get(r1) for f in (h.COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_32, h.COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_16_64,
                                h.COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_32, h.COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_16_64,
                                h.COMPUTE_PGM_RSRC1_ENABLE_DX10_CLAMP, h.COMPUTE_PGM_RSRC1_ENABLE_IEEE_MODE,
                                h.COMPUTE_PGM_RSRC1_FP16_OVFL, h.COMPUTE_PGM_RSRC1_WGP_MODE,
                                h.COMPUTE_PGM_RSRC1_MEM_ORDERED)] == [2, 1, 1, 2, 0, 1, 1, 0, 1]
    assert [f.get(r2) for f in (h.COMPUTE_PGM_RSRC2_ENABLE_PRIVATE_SEGMENT, h.COMPUTE_PGM_RSRC2_USER_SGPR_COUNT,
                                h.COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_X, h.COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Y,
                                h.COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Z, h.COMPUTE_PGM_RSRC2_ENABLE_VGPR_WORKITEM_ID,
                                h.COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO)] == [1, 8, 1, 0, 1, 2, 1]
    assert [n for n, _, _ in h.user_sgpr_layout(d.kernel_code_properties)] == [
        "dispatch_ptr", "queue_ptr", "kernarg_segment_ptr", "dispatch_id"]
    assert not h.KERNEL_CODE_PROPERTY_ENABLE_WAVEFRONT_SIZE32.get(d.kernel_code_properties)
