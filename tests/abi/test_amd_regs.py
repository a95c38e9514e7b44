"""gc 11.0.0 register facts, pinned to the Linux headers asic_reg/gc/gc_11_0_0_offset.h (regX values,
BASE_IDX 0) and gc_11_0_0_sh_mask.h (the `__MASK` values, written here as the header prints them)."""
import pytest

from gputwin.abi import amd_pm4, amd_regs as r

_OFFSETS = {  # regX from gc_11_0_0_offset.h
    "COMPUTE_DISPATCH_INITIATOR": 0x1BA0, "COMPUTE_NUM_THREAD_X": 0x1BA7, "COMPUTE_NUM_THREAD_Z": 0x1BA9,
    "COMPUTE_PGM_LO": 0x1BAC, "COMPUTE_PGM_HI": 0x1BAD, "COMPUTE_DISPATCH_SCRATCH_BASE_LO": 0x1BB0,
    "COMPUTE_DISPATCH_SCRATCH_BASE_HI": 0x1BB1, "COMPUTE_PGM_RSRC1": 0x1BB2, "COMPUTE_PGM_RSRC2": 0x1BB3,
    "COMPUTE_RESOURCE_LIMITS": 0x1BB5, "COMPUTE_TMPRING_SIZE": 0x1BB8, "COMPUTE_RESTART_X": 0x1BBB,
    "COMPUTE_DISPATCH_ID": 0x1BC0, "COMPUTE_PGM_RSRC3": 0x1BC8, "COMPUTE_USER_DATA_0": 0x1BE0,
    "COMPUTE_USER_DATA_15": 0x1BEF,
}


@pytest.mark.parametrize("name", sorted(_OFFSETS))
def test_register_offset_matches_gc_11_0_0_offset_header(name):
    assert getattr(r, f"reg{name}") == _OFFSETS[name]


_MASKS = {  # gc_11_0_0_sh_mask.h
    "COMPUTE_TMPRING_SIZE__WAVES": 0x00000FFF, "COMPUTE_TMPRING_SIZE__WAVESIZE": 0x07FFF000,
    "COMPUTE_PGM_RSRC3__SHARED_VGPR_CNT": 0x0000000F, "COMPUTE_PGM_RSRC3__INST_PREF_SIZE": 0x000003F0,
    "COMPUTE_PGM_RSRC3__TRAP_ON_START": 0x00000400, "COMPUTE_PGM_RSRC3__TRAP_ON_END": 0x00000800,
    "COMPUTE_PGM_RSRC3__IMAGE_OP": 0x80000000,
    "COMPUTE_PGM_RSRC1__VGPRS": 0x0000003F, "COMPUTE_PGM_RSRC1__SGPRS": 0x000003C0,
    "COMPUTE_PGM_RSRC1__FLOAT_MODE": 0x000FF000, "COMPUTE_PGM_RSRC1__WGP_MODE": 0x20000000,
    "COMPUTE_PGM_RSRC2__USER_SGPR": 0x0000003E, "COMPUTE_PGM_RSRC2__TIDIG_COMP_CNT": 0x00001800,
    "COMPUTE_PGM_RSRC2__LDS_SIZE": 0x00FF8000, "COMPUTE_PGM_RSRC2__EXCP_EN": 0x7F000000,
    "COMPUTE_DISPATCH_INITIATOR__CS_W32_EN": 0x00008000,
    "COMPUTE_DISPATCH_INITIATOR__DISABLE_DISP_PREMPT_EN": 0x00020000,
    "COMPUTE_RESOURCE_LIMITS__WAVES_PER_SH": 0x000003FF, "COMPUTE_RESOURCE_LIMITS__CU_GROUP_COUNT": 0x07000000,
    "COMPUTE_NUM_THREAD_X__NUM_THREAD_PARTIAL": 0xFFFF0000, "COMPUTE_PGM_HI__DATA": 0x000000FF,
}


@pytest.mark.parametrize("name", sorted(_MASKS))
def test_field_mask_matches_gc_11_0_0_sh_mask_header(name):
    assert getattr(r, name).mask == _MASKS[name]


def test_set_sh_reg_offsets_count_from_the_persistent_space_start():
    # regX + GC segment 0 (0x1260) is the absolute dword address; SET_SH_REG counts from 0x2C00
    assert r.sh_reg_offset(r.regCOMPUTE_PGM_RSRC3) == 0x1BC8 + 0x1260 - amd_pm4.PACKET3_SET_SH_REG_START == 0x228
