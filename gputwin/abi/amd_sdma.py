"""SDMA v6 (gfx11) packets: facts from Linux `drivers/gpu/drm/amd/amdgpu/sdma_v6_0_0_pkt_open.h`, names as
in that header (`SDMA_OP_*`, `SDMA_SUBOP_*`, `SDMA_PKT_<PACKET>_<WORD>_<field>`).

Every packet starts with a header dword: op [7:0], sub_op [15:8], packet-specific bits above.
Dword layouts of the packets the emulated engine runs (dword 0 is the header):

  NOP              header count [29:16]: that many further dwords are skipped
  COPY_LINEAR      1: count [29:0] = bytes - 1; 2: parameter (dst/src swap, cache policy);
                   3-4: src address lo/hi; 5-6: dst address lo/hi                        (7 dwords)
  CONSTANT_FILL    header fillsize [31:30] (0: 1 byte .. 2: 4 bytes); 1-2: dst lo/hi; 3: src data;
                   4: count [29:0] = bytes - 1                                          (5 dwords)
  FENCE            header mtype [18:16]; 1-2: address lo/hi; 3: data                     (4 dwords)
  TRAP             1: int_context [27:0]                                                 (2 dwords)
  POLL_REGMEM      header hdp_flush [26], func [30:28], mem_poll [31]; 1-2: address lo/hi;
                   3: value; 4: mask; 5: interval [15:0] | retry_count [27:16]           (6 dwords)
  TIMESTAMP        sub_op SET/GET/GET_GLOBAL; 1-2: address lo/hi (GET*) or data lo/hi (SET) (3 dwords)
  WRITE_UNTILED    1-2: dst lo/hi; 3: count [19:0] = dwords - 1; 4..: data
  GCR_REQ          1-4: cache-control request (no effect on coherent emulated memory)    (5 dwords)
"""
from __future__ import annotations

from gputwin.abi.bitfield import Field

SDMA_OP_NOP = 0
SDMA_OP_COPY = 1
SDMA_OP_WRITE = 2
SDMA_OP_INDIRECT = 4
SDMA_OP_FENCE = 5
SDMA_OP_TRAP = 6
SDMA_OP_SEM = 7
SDMA_OP_POLL_REGMEM = 8
SDMA_OP_COND_EXE = 9
SDMA_OP_ATOMIC = 10
SDMA_OP_CONST_FILL = 11
SDMA_OP_PTEPDE = 12
SDMA_OP_TIMESTAMP = 13
SDMA_OP_SRBM_WRITE = 14
SDMA_OP_PRE_EXE = 15
SDMA_OP_GPUVM_INV = 16
SDMA_OP_GCR_REQ = 17
SDMA_OP_DUMMY_TRAP = 32

SDMA_SUBOP_TIMESTAMP_SET = 0
SDMA_SUBOP_TIMESTAMP_GET = 1
SDMA_SUBOP_TIMESTAMP_GET_GLOBAL = 2
SDMA_SUBOP_COPY_LINEAR = 0
SDMA_SUBOP_COPY_TILED = 1
SDMA_SUBOP_COPY_SOA = 3
SDMA_SUBOP_COPY_LINEAR_SUB_WIND = 4
SDMA_SUBOP_COPY_LINEAR_PHY = 8
SDMA_SUBOP_WRITE_LINEAR = 0
SDMA_SUBOP_POLL_REG_WRITE_MEM = 1
SDMA_SUBOP_POLL_DBIT_WRITE_MEM = 2
SDMA_SUBOP_POLL_MEM_VERIFY = 3

OP_NAMES: dict[int, str] = {v: k[len("SDMA_OP_"):] for k, v in list(globals().items()) if k.startswith("SDMA_OP_")}

# --- header (every packet) -------------------------------------------------------------------------
SDMA_PKT_HEADER_op = Field(0, 8)
SDMA_PKT_HEADER_sub_op = Field(8, 8)


def SDMA_PKT_HEADER(op: int, sub_op: int = 0) -> int:
    return SDMA_PKT_HEADER_op(op) | SDMA_PKT_HEADER_sub_op(sub_op)


# --- NOP -------------------------------------------------------------------------------------------
SDMA_PKT_NOP_HEADER_count = Field(16, 14)

# --- COPY_LINEAR -------------------------------------------------------------------------------------
SDMA_PKT_COPY_LINEAR_HEADER_encrypt = Field(16, 1)
SDMA_PKT_COPY_LINEAR_HEADER_tmz = Field(18, 1)
SDMA_PKT_COPY_LINEAR_HEADER_cpv = Field(19, 1)
SDMA_PKT_COPY_LINEAR_HEADER_backwards = Field(25, 1)
SDMA_PKT_COPY_LINEAR_HEADER_broadcast = Field(27, 1)
SDMA_PKT_COPY_LINEAR_COUNT_count = Field(0, 30)
SDMA_PKT_COPY_LINEAR_PARAMETER_dst_sw = Field(16, 2)
SDMA_PKT_COPY_LINEAR_PARAMETER_dst_cache_policy = Field(18, 3)
SDMA_PKT_COPY_LINEAR_PARAMETER_src_sw = Field(24, 2)
SDMA_PKT_COPY_LINEAR_PARAMETER_src_cache_policy = Field(26, 3)
SDMA_PKT_COPY_LINEAR_DWORDS = 7
SDMA_COPY_LINEAR_MAX_BYTES = 1 << 30  # COUNT holds bytes - 1 in 30 bits

# --- CONSTANT_FILL -----------------------------------------------------------------------------------
SDMA_PKT_CONSTANT_FILL_HEADER_sw = Field(16, 2)
SDMA_PKT_CONSTANT_FILL_HEADER_fillsize = Field(30, 2)
SDMA_PKT_CONSTANT_FILL_COUNT_count = Field(0, 30)
SDMA_PKT_CONSTANT_FILL_DWORDS = 5

# --- FENCE -------------------------------------------------------------------------------------------
SDMA_PKT_FENCE_HEADER_mtype = Field(16, 3)
SDMA_PKT_FENCE_HEADER_gcc = Field(19, 1)
SDMA_PKT_FENCE_HEADER_sys = Field(20, 1)
SDMA_PKT_FENCE_HEADER_snp = Field(22, 1)
SDMA_PKT_FENCE_HEADER_gpa = Field(23, 1)
SDMA_PKT_FENCE_HEADER_l2_policy = Field(24, 2)
SDMA_PKT_FENCE_DWORDS = 4

# --- TRAP --------------------------------------------------------------------------------------------
SDMA_PKT_TRAP_INT_CONTEXT_int_context = Field(0, 28)
SDMA_PKT_TRAP_DWORDS = 2

# --- POLL_REGMEM -------------------------------------------------------------------------------------
SDMA_PKT_POLL_REGMEM_HEADER_hdp_flush = Field(26, 1)
SDMA_PKT_POLL_REGMEM_HEADER_func = Field(28, 3)     # same compare functions as PM4 WAIT_REG_MEM
SDMA_PKT_POLL_REGMEM_HEADER_mem_poll = Field(31, 1)  # 1 memory, 0 register
SDMA_PKT_POLL_REGMEM_DW5_interval = Field(0, 16)
SDMA_PKT_POLL_REGMEM_DW5_retry_count = Field(16, 12)
SDMA_PKT_POLL_REGMEM_DWORDS = 6

# --- TIMESTAMP ---------------------------------------------------------------------------------------
SDMA_PKT_TIMESTAMP_DWORDS = 3

# --- WRITE_UNTILED -----------------------------------------------------------------------------------
SDMA_PKT_WRITE_UNTILED_DW_3_count = Field(0, 20)

# --- GCR_REQ -----------------------------------------------------------------------------------------
SDMA_PKT_GCR_REQ_DWORDS = 5
SDMA_GCR_RANGE_IS_PA = 1 << 18
SDMA_GCR_SEQ = Field(16, 2)
SDMA_GCR_GL2_WB = 1 << 15
SDMA_GCR_GL2_INV = 1 << 14
SDMA_GCR_GL2_DISCARD = 1 << 13
SDMA_GCR_GL2_RANGE = Field(11, 2)
SDMA_GCR_GL2_US = 1 << 10
SDMA_GCR_GL1_INV = 1 << 9
SDMA_GCR_GLV_INV = 1 << 8
SDMA_GCR_GLK_INV = 1 << 7
SDMA_GCR_GLK_WB = 1 << 6
SDMA_GCR_GLM_INV = 1 << 5
SDMA_GCR_GLM_WB = 1 << 4
SDMA_GCR_GL1_RANGE = Field(2, 2)
SDMA_GCR_GLI_INV = Field(0, 2)
