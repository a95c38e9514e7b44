"""OSSSYS 6.0 registers (osssys_6_0_0_offset.h): the interrupt handler's ring 0 (IH_RB_*)."""
from __future__ import annotations

from gputwin.abi.amdgpu import Reg

regIH_RB_CNTL = Reg("regIH_RB_CNTL", "OSSSYS", 0, 0x0080)
regIH_RB_BASE = Reg("regIH_RB_BASE", "OSSSYS", 0, 0x0081)
regIH_RB_BASE_HI = Reg("regIH_RB_BASE_HI", "OSSSYS", 0, 0x0082)
regIH_RB_RPTR = Reg("regIH_RB_RPTR", "OSSSYS", 0, 0x0083)
regIH_RB_WPTR = Reg("regIH_RB_WPTR", "OSSSYS", 0, 0x0084)
regIH_RB_WPTR_ADDR_HI = Reg("regIH_RB_WPTR_ADDR_HI", "OSSSYS", 0, 0x0085)
regIH_RB_WPTR_ADDR_LO = Reg("regIH_RB_WPTR_ADDR_LO", "OSSSYS", 0, 0x0086)
regIH_DOORBELL_RPTR = Reg("regIH_DOORBELL_RPTR", "OSSSYS", 0, 0x0087)
