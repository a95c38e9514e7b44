"""NBIO (nbio_4_3_0 on Navi 3x, nbif_6_3_1 on Navi 4x — the same offsets for what the AM boot touches).

The index/data windows sit at fixed dword offsets of the MMIO BAR (the NBIO's segment 0 starts at 0), so they
are plain dword addresses usable before the discovery table is read:
  MM_INDEX / MM_DATA / MM_INDEX_HI        amdgpu's mmMM_INDEX, mmMM_DATA, mmMM_INDEX_HI (MM_INDEX bit 31: VRAM)
  PCIE_INDEX2 / PCIE_DATA2 / PCIE_INDEX2_HI  regBIF_BX0_PCIE_INDEX2 & co. (the SMN window)"""
from __future__ import annotations

from gputwin.abi.amdgpu import Reg

MM_INDEX, MM_DATA, MM_INDEX_HI = 0x0, 0x1, 0x6
MM_INDEX_VRAM = 1 << 31
PCIE_INDEX2, PCIE_DATA2, PCIE_INDEX2_HI = 0xE, 0xF, 0x11

RCC_DOORBELL_APER_EN = Reg("RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN", "NBIO", 2, 0x0C0)
BIF_DOORBELL_INT_CNTL = Reg("BIF_BX0_BIF_DOORBELL_INT_CNTL", "NBIO", 2, 0x0FE)
GPU_HDP_FLUSH_REQ = Reg("BIF_BX_PF0_GPU_HDP_FLUSH_REQ", "NBIO", 2, 0x106)
GPU_HDP_FLUSH_DONE = Reg("BIF_BX_PF0_GPU_HDP_FLUSH_DONE", "NBIO", 2, 0x107)
REMAP_HDP_MEM_FLUSH_CNTL = Reg("BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL", "NBIO", 2, 0x12D)
