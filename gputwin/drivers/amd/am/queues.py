"""The AM driver's queues: a PM4 compute queue mapped by writing its HQD registers from an MQD (the direct
path of amdgpu's hqd_load: select ME/pipe/queue in GRBM_GFX_CNTL, write CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI
from the MQD's image, enable the doorbell, then CP_HQD_ACTIVE), and SDMA0's queue 0 ring (sdma_v6_0 /
sdma_v7_0 gfx ring registers). Rings and their pointers live in CPU-visible VRAM; the driver reaches them
through BAR0 (`BarRing`), and rings the doorbell BAR with the write pointer."""
from __future__ import annotations

import ctypes
import struct

import numpy as np

from gputwin.abi.amdgpu import mqd
from gputwin.drivers.amd.ring import RingBase

MEC_ME, MEC_PIPE, MEC_QUEUE = 1, 0, 0   # the one compute queue: ME 1 (MEC 1), pipe 0, queue 0
COMPUTE_DOORBELL, SDMA_DOORBELL = 0x0, 0x100   # doorbell BAR byte offsets (one 64-bit slot each)
SHARED_APERTURE, PRIVATE_APERTURE = 1 << 48, 2 << 48   # the 64-bit flat apertures (LDS, scratch) amdgpu uses
MQD_BYTES = ctypes.sizeof(mqd.v11_compute_mqd)


class DoorbellBar:
    """64-bit doorbell stores into BAR2."""

    def __init__(self, bar):
        self.bar = bar

    def write64(self, offset: int, value: int) -> None:
        self.bar.write(offset, struct.pack("<Q", value & 0xFFFFFFFFFFFFFFFF))


class BarRing(RingBase):
    """A ring whose dwords and read/write pointers sit in VRAM at `ring_at` / `ptrs_at` (rptr, then wptr).
    `flush_hdp` runs after the write pointer, before the doorbell: what the host wrote through BAR0 (packets,
    kernel arguments) must be visible to the engines when they fetch."""

    def __init__(self, name: str, vram, ring_at: int, ring_size: int, ptrs_at: int, doorbell, doorbell_offset: int,
                 unit: int, contiguous: bool, stall, timeout_s, flush_hdp):
        super().__init__(name, ring_size, doorbell, doorbell_offset, unit, contiguous, stall, timeout_s)
        self.vram, self.ring_at, self.ptrs_at, self.flush_hdp = vram, ring_at, ptrs_at, flush_hdp

    def _store(self, pos: int, data: np.ndarray) -> None:
        self.vram.write(self.ring_at + 4 * pos, np.ascontiguousarray(data, np.uint32).tobytes())

    def _read_rptr(self) -> int:
        return int.from_bytes(self.vram.read(self.ptrs_at, 8), "little")

    def _write_wptr(self, value: int) -> None:
        self.vram.write(self.ptrs_at + 8, struct.pack("<Q", value))
        self.flush_hdp()


def compute_mqd(ring_va: int, ring_size: int, rptr_va: int, wptr_va: int, eop_va: int, eop_size: int,
                mqd_va: int, doorbell_offset: int) -> mqd.v11_compute_mqd:
    """The MQD of a kernel-mode PM4 compute queue (as gfx_v11_0_compute_mqd_init fills it)."""
    m = mqd.v11_compute_mqd()
    m.header = 0xC0310800
    m.cp_mqd_base_addr_lo, m.cp_mqd_base_addr_hi = mqd_va & 0xFFFFFFFC, mqd_va >> 32
    m.cp_hqd_eop_base_addr_lo, m.cp_hqd_eop_base_addr_hi = (eop_va >> 8) & 0xFFFFFFFF, eop_va >> 40
    m.cp_hqd_eop_control = mqd.CP_HQD_EOP_CONTROL__EOP_SIZE((eop_size // 4).bit_length() - 2)
    m.cp_hqd_pq_base_lo, m.cp_hqd_pq_base_hi = (ring_va >> 8) & 0xFFFFFFFF, ring_va >> 40
    m.cp_hqd_pq_rptr_report_addr_lo, m.cp_hqd_pq_rptr_report_addr_hi = rptr_va & 0xFFFFFFFC, rptr_va >> 32
    m.cp_hqd_pq_wptr_poll_addr_lo, m.cp_hqd_pq_wptr_poll_addr_hi = wptr_va & 0xFFFFFFF8, wptr_va >> 32
    m.cp_hqd_pq_doorbell_control = mqd.CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET(doorbell_offset // 4) \
        | mqd.CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN(1)
    m.cp_hqd_pq_control = mqd.CP_HQD_PQ_CONTROL__QUEUE_SIZE((ring_size // 4).bit_length() - 2) \
        | mqd.CP_HQD_PQ_CONTROL__RPTR_BLOCK_SIZE(5) | mqd.CP_HQD_PQ_CONTROL__UNORD_DISPATCH(1) \
        | mqd.CP_HQD_PQ_CONTROL__PRIV_STATE(1) | mqd.CP_HQD_PQ_CONTROL__KMD_QUEUE(1)
    m.cp_hqd_active = 1
    return m


def init_vmid0_apertures(mmio, gc) -> None:
    """VMID 0's shader memory config as amdgpu's init_compute_vmid sets it for a compute VMID: 64-bit mode,
    unaligned access, LDS aperture at SHARED_APERTURE and scratch at PRIVATE_APERTURE (bits 63:48)."""
    mmio.write(gc.regGRBM_GFX_CNTL, mqd.GRBM_GFX_CNTL__VMID(0))
    mmio.write(gc.regSH_MEM_CONFIG, mqd.SH_MEM_CONFIG__ALIGNMENT_MODE(mqd.SH_MEM_ALIGNMENT_MODE_UNALIGNED)
               | mqd.SH_MEM_CONFIG__INITIAL_INST_PREFETCH(3))
    mmio.write(gc.regSH_MEM_BASES, mqd.SH_MEM_BASES__SHARED_BASE(SHARED_APERTURE >> 48)
               | mqd.SH_MEM_BASES__PRIVATE_BASE(PRIVATE_APERTURE >> 48))
    mmio.write(gc.regGRBM_GFX_CNTL, 0)


def map_compute_queue(mmio, gc, m: mqd.v11_compute_mqd, doorbell_offset: int) -> None:
    """Write the HQD registers of ME/pipe/queue from the MQD, then activate it."""
    mmio.write(gc.regGRBM_GFX_CNTL, mqd.GRBM_GFX_CNTL__MEID(MEC_ME) | mqd.GRBM_GFX_CNTL__PIPEID(MEC_PIPE)
               | mqd.GRBM_GFX_CNTL__QUEUEID(MEC_QUEUE))
    mmio.write(gc.regCP_MEC_DOORBELL_RANGE_LOWER, mqd.CP_MEC_DOORBELL_RANGE__OFFSET(0))
    mmio.write(gc.regCP_MEC_DOORBELL_RANGE_UPPER, mqd.CP_MEC_DOORBELL_RANGE__OFFSET(doorbell_offset // 4))
    image = (ctypes.c_uint32 * mqd.HQD_IMAGE_DWORDS).from_buffer_copy(bytes(m), 4 * mqd.HQD_IMAGE_FIRST)
    first = gc.regCP_MQD_BASE_ADDR
    active = gc.regCP_HQD_ACTIVE.offset - first.offset
    for i, value in enumerate(image):
        if i != active:   # activation comes last, once the queue's registers are all in place
            mmio.write_dword(mmio.address(first) + i, value)
    mmio.write(gc.regCP_HQD_ACTIVE, mqd.CP_HQD_ACTIVE__ACTIVE(1))
    mmio.write(gc.regGRBM_GFX_CNTL, 0)


def unmap_compute_queue(mmio, gc) -> None:
    mmio.write(gc.regGRBM_GFX_CNTL, mqd.GRBM_GFX_CNTL__MEID(MEC_ME) | mqd.GRBM_GFX_CNTL__PIPEID(MEC_PIPE)
               | mqd.GRBM_GFX_CNTL__QUEUEID(MEC_QUEUE))
    mmio.write(gc.regCP_HQD_DEQUEUE_REQUEST, mqd.CP_HQD_DEQUEUE_REQUEST__DEQUEUE_REQ(1))
    mmio.write(gc.regGRBM_GFX_CNTL, 0)


def map_sdma_queue(mmio, gc, ring_va: int, ring_size: int, rptr_va: int, doorbell_offset: int) -> None:
    """SDMA0 queue 0: ring base and size, read-pointer write-back, doorbell, then RB_ENABLE."""
    w = mmio.write
    w(gc.regSDMA0_QUEUE0_RB_CNTL, 0)
    w(gc.regSDMA0_QUEUE0_RB_BASE, (ring_va >> 8) & 0xFFFFFFFF)
    w(gc.regSDMA0_QUEUE0_RB_BASE_HI, ring_va >> 40)
    w(gc.regSDMA0_QUEUE0_RB_RPTR, 0)
    w(gc.regSDMA0_QUEUE0_RB_RPTR_HI, 0)
    w(gc.regSDMA0_QUEUE0_RB_WPTR, 0)
    w(gc.regSDMA0_QUEUE0_RB_WPTR_HI, 0)
    w(gc.regSDMA0_QUEUE0_RB_RPTR_ADDR_LO, rptr_va & 0xFFFFFFFC)
    w(gc.regSDMA0_QUEUE0_RB_RPTR_ADDR_HI, rptr_va >> 32)
    w(gc.regSDMA0_QUEUE0_DOORBELL_OFFSET, mqd.SDMA_QUEUE_DOORBELL_OFFSET__OFFSET(doorbell_offset // 4))
    w(gc.regSDMA0_QUEUE0_DOORBELL, mqd.SDMA_QUEUE_DOORBELL__ENABLE(1))
    w(gc.regSDMA0_QUEUE0_RB_CNTL, mqd.SDMA_QUEUE_RB_CNTL__RB_ENABLE(1)
      | mqd.SDMA_QUEUE_RB_CNTL__RB_SIZE((ring_size // 4).bit_length() - 1)
      | mqd.SDMA_QUEUE_RB_CNTL__RPTR_WRITEBACK_ENABLE(1))


def unmap_sdma_queue(mmio, gc) -> None:
    mmio.write(gc.regSDMA0_QUEUE0_RB_CNTL, 0)
