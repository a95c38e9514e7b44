"""MMHUB 4.1.0 (Navi 48) registers (Linux asic_reg/mmhub/mmhub_4_1_0_offset.h)."""
from gputwin.abi.amdgpu import Reg

# the frame buffer's place in the MC address space, as the VBIOS programs it (units of 16 MiB)
MMMC_VM_FB_LOCATION_BASE = Reg("MMMC_VM_FB_LOCATION_BASE", "MMHUB", 0, 0x0554)
MMMC_VM_FB_LOCATION_TOP = Reg("MMMC_VM_FB_LOCATION_TOP", "MMHUB", 0, 0x0555)
