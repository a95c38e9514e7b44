"""The RLC's autoload status (GC; Linux gc_11_0_0_offset.h / gc_12_0_0_offset.h, sh_mask BOOTLOAD_COMPLETE):
after the PSP's AUTOLOAD_RLC the driver waits for bit 31 before touching GFX (gfx_v11_0's
wait_for_rlc_autoload_complete)."""
from gputwin.abi.amdgpu import Reg

RLC_RLCS_BOOTLOAD_STATUS = {11: Reg("RLC_RLCS_BOOTLOAD_STATUS", "GC", 1, 0x4E82),
                            12: Reg("RLC_RLCS_BOOTLOAD_STATUS", "GC", 1, 0x4E7C)}   # by GC major version
BOOTLOAD_COMPLETE = 1 << 31
