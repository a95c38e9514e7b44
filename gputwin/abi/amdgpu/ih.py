"""Interrupt handler ring entries (interrupt vectors) and the IDs the AM driver dispatches on.

An IV is 8 dwords (amdgpu ih_v6_0 / ih_v7_0 decode_iv): dw0 client id [7:0], source id [15:8], ring id
[23:16], vmid [27:24], vmid_src [31]; dw1 timestamp [31:0]; dw2 timestamp [47:32] in [15:0], timestamp_src
[31]; dw3 pasid [15:0], node id [23:16]; dw4..7 src_data[0..3]. Client and source ids from soc21_enum.h and
the gfx_11_0_0 / gfx_12_0_0 / vmc / utcl2 *_sh_mask interrupt source headers. IH_RB_CNTL fields from
osssys_6_0_0_sh_mask.h (unchanged in 7.0)."""
from __future__ import annotations

import struct
from dataclasses import dataclass

from gputwin.abi.bitfield import Field

IV_DWORDS = 8
IV_BYTES = 4 * IV_DWORDS

SOC21_IH_CLIENTID_GFX = 10
SOC21_IH_CLIENTID_VMC = 18
SOC21_IH_CLIENTID_GRBM_CP = 20

UTCL2_1_0__SRCID__FAULT = 0                  # client GFX: a GFX-hub translation fault
VMC_1_0__SRCID__VM_FAULT = 0                 # client VMC: an MM-hub translation fault
GFX_11_0_0__SRCID__SDMA_TRAP = 49            # client GFX (same id on GC 12)
GFX_11_0_0__SRCID__CP_EOP_INTERRUPT = 181    # client GRBM_CP
GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR = 183
GFX_11_0_0__SRCID__CP_PRIV_INSTR_FAULT = 185
GFX_11_0_0__SRCID__SQ_INTERRUPT_ID = 239     # client GRBM_CP: wave traps and illegal instructions

IH_RB_CNTL__RB_ENABLE = Field(0, 1)
IH_RB_CNTL__RB_SIZE = Field(1, 5)            # ring of 2 ** RB_SIZE dwords
IH_RB_CNTL__WPTR_WRITEBACK_ENABLE = Field(8, 1)
IH_RB_CNTL__WPTR_OVERFLOW_ENABLE = Field(16, 1)
IH_RB_CNTL__ENABLE_INTR = Field(17, 1)
IH_RB_CNTL__MC_SPACE = Field(28, 3)
IH_RB_CNTL__WPTR_OVERFLOW_CLEAR = Field(31, 1)
IH_RB_WPTR__RB_OVERFLOW = Field(0, 1)
IH_RB_WPTR__OFFSET = Field(2, 16)            # byte offset (dword aligned) of the next entry
MC_SPACE_PHYSICAL = 4                        # the ring and its write-pointer copy sit at MC (FB) addresses

# ring_id of a compute queue's EOP interrupt (gfx_v11_0_eop_irq): me [3:2], pipe [1:0], queue [6:4]
def cp_ring_id(me: int, pipe: int, queue: int) -> int:
    return (me & 3) << 2 | (pipe & 3) | (queue & 7) << 4


@dataclass(frozen=True)
class InterruptVector:
    client_id: int
    src_id: int
    ring_id: int = 0
    vmid: int = 0
    timestamp: int = 0
    pasid: int = 0
    node_id: int = 0
    src_data: tuple[int, int, int, int] = (0, 0, 0, 0)

    def pack(self) -> bytes:
        return struct.pack("<8I", self.client_id & 0xFF | (self.src_id & 0xFF) << 8 | (self.ring_id & 0xFF) << 16
                           | (self.vmid & 0xF) << 24, self.timestamp & 0xFFFFFFFF, (self.timestamp >> 32) & 0xFFFF,
                           self.pasid & 0xFFFF | (self.node_id & 0xFF) << 16, *self.src_data)

    @classmethod
    def unpack(cls, data: bytes) -> "InterruptVector":
        d = struct.unpack("<8I", data[:IV_BYTES])
        return cls(d[0] & 0xFF, (d[0] >> 8) & 0xFF, (d[0] >> 16) & 0xFF, (d[0] >> 24) & 0xF,
                   d[1] | (d[2] & 0xFFFF) << 32, d[3] & 0xFFFF, (d[3] >> 16) & 0xFF, tuple(d[4:8]))


def fault_src_data(address: int) -> tuple[int, int, int, int]:
    """src_data of a VM fault (gmc_v11_0_process_interrupt): page number bits 43:12 in [0], 47:44 in [1][3:0]
    (read or write is in the hub's L2_PROTECTION_FAULT_STATUS.RW)."""
    return (address >> 12) & 0xFFFFFFFF, (address >> 44) & 0xF, 0, 0


def fault_address(src_data) -> int:
    return src_data[0] << 12 | (src_data[1] & 0xF) << 44
