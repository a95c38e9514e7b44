"""What the AM boot programs in NBIO: the doorbell aperture, and the HDP flush remap (amdgpu places the
flush register in the MMIO "register hole" page at 0x7F000, MMIO_REG_HOLE_OFFSET, so a flush is one write)."""
from __future__ import annotations

from gputwin.abi.amdgpu import nbio as n
from gputwin.drivers.amd.am.mmio import Mmio

MMIO_REG_HOLE_OFFSET = 0x80000 - 0x1000
HDP_MEM_FLUSH_CNTL_OFFSET = MMIO_REG_HOLE_OFFSET + 0x0   # KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL


def init(mmio: Mmio) -> None:
    mmio.write(n.RCC_DOORBELL_APER_EN, 1)
    mmio.write(n.REMAP_HDP_MEM_FLUSH_CNTL, HDP_MEM_FLUSH_CNTL_OFFSET)


def flush_hdp(mmio: Mmio) -> None:
    """Make host writes through the BAR visible to the GPU's engines (and firmware) before they read them."""
    mmio.write_dword(HDP_MEM_FLUSH_CNTL_OFFSET // 4, 0)
