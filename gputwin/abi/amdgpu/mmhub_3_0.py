"""MMHUB 3.0.0 (Navi 31) registers (Linux asic_reg/mmhub/mmhub_3_0_0_offset.h)."""
from gputwin.abi.amdgpu import Reg

# the frame buffer's place in the MC address space, as the VBIOS programs it (units of 16 MiB)
MMMC_VM_FB_LOCATION_BASE = Reg("MMMC_VM_FB_LOCATION_BASE", "MMHUB", 0, 0x08EC)
MMMC_VM_FB_LOCATION_TOP = Reg("MMMC_VM_FB_LOCATION_TOP", "MMHUB", 0, 0x08ED)
