"""LoadedKernel: registers and user SGPRs from the descriptor, the dispatch packet, refusals."""
from dataclasses import replace

import pytest

from gputwin.abi import amdhsa
from gputwin.abi.code_object import CodeObject
from gputwin.drivers.amd.loader import LoadedKernel

BASE = 0x7F00_0000_0000


def kernel(hsaco, version, name):
    return CodeObject.parse(hsaco[version]).kernels[name]


def test_user_sgprs_follow_the_abi_order(hsaco):
    k = LoadedKernel(kernel(hsaco, "v4", "sizes"), BASE, "gfx1100")
    assert [n for n, _, _ in k.sgprs] == ["dispatch_ptr", "kernarg_segment_ptr"]
    ka = 0x1234_5678_9ABC_0000
    assert k.user_data(ka, 5) == [(ka + k.args_size) & 0xFFFFFFFF, (ka + k.args_size) >> 32,
                                  ka & 0xFFFFFFFF, ka >> 32]
    assert k.segment_size == k.args_size + 64 and k.args_size % 64 == 0


def test_addresses_are_relative_to_the_image(hsaco):
    info = kernel(hsaco, "v5", "saxpy")
    k = LoadedKernel(info, BASE, "gfx1100")
    assert (k.kd_va, k.code_va) == (BASE + info.kd_offset, BASE + info.entry_offset)


def test_rsrc2_gets_the_lds_size_in_512_byte_granules(hsaco):
    k = LoadedKernel(kernel(hsaco, "v5", "reverse"), BASE, "gfx1100")
    field = amdhsa.COMPUTE_PGM_RSRC2_GRANULATED_LDS_SIZE
    assert field.get(k.info.rsrc2) == 0
    assert field.get(k.rsrc2()) == 2 and field.get(k.rsrc2(dynamic_lds=1)) == 3
    assert k.rsrc2() & ~field.mask == k.info.rsrc2
    with pytest.raises(ValueError, match="LDS"):
        k.rsrc2(dynamic_lds=512 * 512)


def test_gfx11_runs_waves_privileged(hsaco):
    info = kernel(hsaco, "v5", "saxpy")
    assert LoadedKernel(info, BASE, "gfx1100").rsrc1 == info.rsrc1 | amdhsa.COMPUTE_PGM_RSRC1_PRIV(1)


def test_dispatch_packet_describes_the_launch(hsaco):
    k = LoadedKernel(kernel(hsaco, "v4", "sizes"), BASE, "gfx1100")
    p = amdhsa.hsa_kernel_dispatch_packet_t.from_buffer_copy(k.dispatch_packet(0xAB000, (3, 2, 1), (8, 4, 2), 2))
    assert (p.setup, p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z) == (2, 8, 4, 2)
    assert (p.grid_size_x, p.grid_size_y, p.grid_size_z) == (24, 8, 2)
    assert (p.kernel_object, p.kernarg_address) == (k.kd_va, 0xAB000)
    assert p.header & 0xFF == amdhsa.HSA_PACKET_TYPE_KERNEL_DISPATCH


@pytest.mark.parametrize("bit,name", [(amdhsa.KERNEL_CODE_PROPERTY_ENABLE_SGPR_QUEUE_PTR, "queue_ptr"),
                                      (amdhsa.KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER,
                                       "private_segment_buffer")])
def test_user_sgprs_the_pm4_path_lacks_are_refused(hsaco, bit, name):
    info = kernel(hsaco, "v5", "saxpy")
    desc = amdhsa.kernel_descriptor_t.from_buffer_copy(bytes(info.descriptor))
    desc.kernel_code_properties |= bit.mask
    with pytest.raises(NotImplementedError, match=name):
        LoadedKernel(replace(info, descriptor=desc), BASE, "gfx1100")


def test_user_sgpr_count_smaller_than_enabled_sgprs_is_refused(hsaco):
    info = kernel(hsaco, "v4", "sizes")
    desc = amdhsa.kernel_descriptor_t.from_buffer_copy(bytes(info.descriptor))
    desc.compute_pgm_rsrc2 = desc.compute_pgm_rsrc2 & ~amdhsa.COMPUTE_PGM_RSRC2_USER_SGPR_COUNT.mask \
        | amdhsa.COMPUTE_PGM_RSRC2_USER_SGPR_COUNT(2)
    with pytest.raises(ValueError, match="USER_SGPR_COUNT"):
        LoadedKernel(replace(info, descriptor=desc), BASE, "gfx1100")


def test_dynamic_stack_kernels_get_at_least_the_default_stack(hsaco):
    info = kernel(hsaco, "v5", "scratch")
    desc = amdhsa.kernel_descriptor_t.from_buffer_copy(bytes(info.descriptor))
    assert LoadedKernel(info, BASE, "gfx1100").scratch_per_lane == info.private_segment_size < 1024
    desc.kernel_code_properties |= amdhsa.KERNEL_CODE_PROPERTY_USES_DYNAMIC_STACK.mask
    assert LoadedKernel(replace(info, descriptor=desc), BASE, "gfx1100").scratch_per_lane == 1024
