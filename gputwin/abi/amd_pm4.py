"""PM4 packets for gfx10/gfx11/gfx12 compute queues: facts from Linux `drivers/gpu/drm/amd/amdgpu/nvd.h`
and `soc15d.h` (opcodes, header layout, per-packet control-dword fields), names as in those headers.

Type-3 header: bits [31:30] = 3, [29:16] = COUNT (payload dwords - 1), [15:8] = opcode, bit 1 = shader type
(compute, `PACKET3_COMPUTE`). Payload layouts (dword 0 is the header):

  NOP              any payload, skipped
  SET_SH_REG       1: reg offset from PACKET3_SET_SH_REG_START (dwords), 2..: values for consecutive regs
  SET_UCONFIG_REG  1: reg offset from PACKET3_SET_UCONFIG_REG_START, 2..: values
  DISPATCH_DIRECT  1..3: workgroups x, y, z; 4: COMPUTE_DISPATCH_INITIATOR (see amd_regs)
  ACQUIRE_MEM      1: COHER_CNTL; 2: COHER_SIZE; 3: COHER_SIZE_HI; 4: COHER_BASE_LO; 5: COHER_BASE_HI;
                   6: POLL_INTERVAL; 7: GCR_CNTL (gfx10+ form, 7 payload dwords)
  RELEASE_MEM      1: event cntl (EVENT_TYPE, EVENT_INDEX, GCR_*, CACHE_POLICY, EXECUTE);
                   2: data cntl (DST_SEL, INT_SEL, DATA_SEL); 3-4: address lo/hi; 5-6: data lo/hi; 7: INT_CTXID
  WAIT_REG_MEM     1: FUNCTION | MEM_SPACE | OPERATION | ENGINE; 2-3: poll address lo/hi (or register);
                   4: reference; 5: mask; 6: POLL_INTERVAL
  WRITE_DATA       1: DST_SEL | ADDR_INCR(WR_ONE_ADDR) | WR_CONFIRM | CACHE_POLICY | ENGINE_SEL;
                   2-3: destination address lo/hi; 4..: data dwords
  COPY_DATA        1: SRC_SEL | DST_SEL | COUNT_SEL | WR_CONFIRM | ...; 2-3: source (address / register /
                   immediate lo,hi); 4-5: destination address lo/hi
  INDIRECT_BUFFER  1-2: IB base lo/hi (dword aligned); 3: IB_SIZE (dwords) | CHAIN | VALID | VMID | ...
  EVENT_WRITE      1: EVENT_TYPE | EVENT_INDEX; (2-3: address, only for event indices that write memory)
"""
from __future__ import annotations

from gputwin.abi.bitfield import Field

PACKET_TYPE0, PACKET_TYPE1, PACKET_TYPE2, PACKET_TYPE3 = 0, 1, 2, 3

CP_PACKET_TYPE = Field(30, 2)
CP_PACKET_COUNT = Field(16, 14)
CP_PACKET3_OPCODE = Field(8, 8)
CP_PACKET3_SHADER_TYPE = Field(1, 1)  # 1 = compute (PACKET3_COMPUTE)
CP_PACKET2 = 0x80000000


def CP_PACKET_GET_TYPE(h: int) -> int:
    return CP_PACKET_TYPE.get(h)


def CP_PACKET_GET_COUNT(h: int) -> int:
    return CP_PACKET_COUNT.get(h)


def CP_PACKET3_GET_OPCODE(h: int) -> int:
    return CP_PACKET3_OPCODE.get(h)


def PACKET3(op: int, n: int) -> int:
    """Type-3 header for opcode `op` followed by n+1 payload dwords."""
    return (PACKET_TYPE3 << 30) | ((op & 0xFF) << 8) | ((n & 0x3FFF) << 16)


def PACKET3_COMPUTE(op: int, n: int) -> int:
    return PACKET3(op, n) | (1 << 1)


# --- opcodes (nvd.h) ---------------------------------------------------------------------------------
_before_opcodes = set(globals())
PACKET3_NOP = 0x10
PACKET3_SET_BASE = 0x11
PACKET3_CLEAR_STATE = 0x12
PACKET3_DISPATCH_DIRECT = 0x15
PACKET3_DISPATCH_INDIRECT = 0x16
PACKET3_ATOMIC_MEM = 0x1E
PACKET3_COND_EXEC = 0x22
PACKET3_PRED_EXEC = 0x23
PACKET3_CONTEXT_CONTROL = 0x28
PACKET3_WRITE_DATA = 0x37
PACKET3_MEM_SEMAPHORE = 0x39
PACKET3_COPY_DW = 0x3B
PACKET3_WAIT_REG_MEM = 0x3C
PACKET3_INDIRECT_BUFFER = 0x3F
PACKET3_COPY_DATA = 0x40
PACKET3_CP_DMA = 0x41
PACKET3_PFP_SYNC_ME = 0x42
PACKET3_SURFACE_SYNC = 0x43
PACKET3_COND_WRITE = 0x45
PACKET3_EVENT_WRITE = 0x46
PACKET3_EVENT_WRITE_EOP = 0x47
PACKET3_EVENT_WRITE_EOS = 0x48
PACKET3_RELEASE_MEM = 0x49
PACKET3_PREAMBLE_CNTL = 0x4A
PACKET3_DMA_DATA = 0x50
PACKET3_ACQUIRE_MEM = 0x58
PACKET3_REWIND = 0x59
PACKET3_INTERRUPT = 0x5A
PACKET3_LOAD_SH_REG = 0x5F
PACKET3_SET_CONFIG_REG = 0x68
PACKET3_SET_CONTEXT_REG = 0x69
PACKET3_SET_SH_REG = 0x76
PACKET3_SET_SH_REG_OFFSET = 0x77
PACKET3_SET_QUEUE_REG = 0x78
PACKET3_SET_UCONFIG_REG = 0x79
PACKET3_SET_UCONFIG_REG_INDEX = 0x7A
PACKET3_WAIT_REG_MEM64 = 0x93
PACKET3_HDP_FLUSH = 0x95
PACKET3_INVALIDATE_TLBS = 0x98
PACKET3_AQL_PACKET = 0x99
PACKET3_SET_SH_REG_INDEX = 0x9B

# opcode -> header name without PACKET3_, for error messages
OPCODE_NAMES: dict[int, str] = {v: k[len("PACKET3_"):] for k, v in list(globals().items())
                                if k.startswith("PACKET3_") and k not in _before_opcodes}
del _before_opcodes

# gputwin's marker in a NOP's payload (NOT an AMD definition: the CP skips NOP payloads, and tools put
# markers there the same way): [GPUTWIN_NOP_GROUP_SEGMENT, bytes] says the next dispatch's kernel declared
# `bytes` of group segment (static + dynamic LDS), which COMPUTE_PGM_RSRC2.LDS_SIZE only has in 512-byte
# granules. gputwin's emulated CP hands it to its sanitizers (docs/sanitizers.md).
GPUTWIN_NOP_GROUP_SEGMENT = 0x47545347   # "GSTG" little-endian
# [GPUTWIN_NOP_HOST_OBSERVED, address lo, address hi, value lo, value hi]: the host saw the 64-bit signal at
# `address` at `value` or more before it submitted what follows (the driver adds it under the sanitizers;
# racecheck across queues orders the queue after the write that reached it). The SDMA engine's NOP carries
# the same payload (its count field says how many dwords the engine skips).
GPUTWIN_NOP_HOST_OBSERVED = 0x4F485447   # "GTHO" little-endian

# register windows: SET_*_REG offsets count dwords from these starts
PACKET3_SET_CONFIG_REG_START, PACKET3_SET_CONFIG_REG_END = 0x00002000, 0x00002C00
PACKET3_SET_CONTEXT_REG_START, PACKET3_SET_CONTEXT_REG_END = 0x0000A000, 0x0000A400
PACKET3_SET_SH_REG_START, PACKET3_SET_SH_REG_END = 0x00002C00, 0x00003000
PACKET3_SET_UCONFIG_REG_START, PACKET3_SET_UCONFIG_REG_END = 0x0000C000, 0x0000C400

# --- WRITE_DATA control dword ------------------------------------------------------------------------
WRITE_DATA_DST_SEL = Field(8, 4)
WR_ONE_ADDR = 1 << 16                       # PACKET3_WRITE_DATA__ADDR_INCR: 1 = do not increment
WR_CONFIRM = 1 << 20
WRITE_DATA_CACHE_POLICY = Field(25, 2)
WRITE_DATA_ENGINE_SEL = Field(30, 2)
PACKET3_WRITE_DATA__ADDR_INCR = Field(16, 1)
PACKET3_WRITE_DATA__DST_SEL__MEM_MAPPED_REGISTER = 0
PACKET3_WRITE_DATA__DST_SEL__MEMORY_SYNC = 1  # nvd.h: "1 - memory (sync - via GRBM)"
PACKET3_WRITE_DATA__DST_SEL__TC_L2 = 2
PACKET3_WRITE_DATA__DST_SEL__GDS = 3
PACKET3_WRITE_DATA__DST_SEL__MEMORY = 5

# --- WAIT_REG_MEM ------------------------------------------------------------------------------------
WAIT_REG_MEM_FUNCTION = Field(0, 3)
WAIT_REG_MEM_MEM_SPACE = Field(4, 2)       # 0 register, 1 memory
WAIT_REG_MEM_OPERATION = Field(6, 2)       # 0 wait_reg_mem, 1 wr_wait_wr_reg, 3 wait_mem_preemptable
WAIT_REG_MEM_ENGINE = Field(8, 2)          # 0 me, 1 pfp
PACKET3_WAIT_REG_MEM__CACHE_POLICY = Field(25, 2)
PACKET3_WAIT_REG_MEM__POLL_INTERVAL = Field(0, 16)
PACKET3_WAIT_REG_MEM__FUNCTION__ALWAYS_PASS = 0
PACKET3_WAIT_REG_MEM__FUNCTION__LESS_THAN_REF_VALUE = 1
PACKET3_WAIT_REG_MEM__FUNCTION__LESS_THAN_EQUAL_TO_THE_REF_VALUE = 2
PACKET3_WAIT_REG_MEM__FUNCTION__EQUAL_TO_THE_REFERENCE_VALUE = 3
PACKET3_WAIT_REG_MEM__FUNCTION__NOT_EQUAL_REFERENCE_VALUE = 4
PACKET3_WAIT_REG_MEM__FUNCTION__GREATER_THAN_OR_EQUAL_REFERENCE_VALUE = 5
PACKET3_WAIT_REG_MEM__FUNCTION__GREATER_THAN_REFERENCE_VALUE = 6
PACKET3_WAIT_REG_MEM__MEM_SPACE__REGISTER_SPACE = 0
PACKET3_WAIT_REG_MEM__MEM_SPACE__MEMORY_SPACE = 1
PACKET3_WAIT_REG_MEM__OPERATION__WAIT_REG_MEM = 0

# --- INDIRECT_BUFFER ---------------------------------------------------------------------------------
PACKET3_INDIRECT_BUFFER__IB_SIZE = Field(0, 20)
PACKET3_INDIRECT_BUFFER__CHAIN = Field(20, 1)
PACKET3_INDIRECT_BUFFER__VALID = Field(23, 1)
PACKET3_INDIRECT_BUFFER__VMID = Field(24, 4)
PACKET3_INDIRECT_BUFFER__CACHE_POLICY = Field(28, 2)
PACKET3_INDIRECT_BUFFER__PRIV = Field(31, 1)
INDIRECT_BUFFER_VALID = 1 << 23
INDIRECT_BUFFER_PRE_ENB = Field(21, 1)

# --- COPY_DATA control dword -------------------------------------------------------------------------
PACKET3_COPY_DATA__SRC_SEL = Field(0, 4)
PACKET3_COPY_DATA__DST_SEL = Field(8, 4)
PACKET3_COPY_DATA__SRC_CACHE_POLICY = Field(13, 2)
PACKET3_COPY_DATA__COUNT_SEL = Field(16, 1)
PACKET3_COPY_DATA__WR_CONFIRM = Field(20, 1)
PACKET3_COPY_DATA__DST_CACHE_POLICY = Field(25, 2)
PACKET3_COPY_DATA__PQ_EXE_STATUS = Field(29, 1)
PACKET3_COPY_DATA__SRC_SEL__MEM_MAPPED_REGISTER = 0
PACKET3_COPY_DATA__SRC_SEL__MEMORY = 1
PACKET3_COPY_DATA__SRC_SEL__TC_L2 = 2
PACKET3_COPY_DATA__SRC_SEL__GDS = 3
PACKET3_COPY_DATA__SRC_SEL__PERFCOUNTERS = 4
PACKET3_COPY_DATA__SRC_SEL__IMMEDIATE_DATA = 5
PACKET3_COPY_DATA__SRC_SEL__ATOMIC_RETURN_DATA = 6
PACKET3_COPY_DATA__SRC_SEL__GPU_CLOCK_COUNT = 9
PACKET3_COPY_DATA__DST_SEL__MEM_MAPPED_REGISTER = 0
PACKET3_COPY_DATA__DST_SEL__TC_L2 = 2
PACKET3_COPY_DATA__DST_SEL__GDS = 3
PACKET3_COPY_DATA__DST_SEL__PERFCOUNTERS = 4
PACKET3_COPY_DATA__DST_SEL__MEMORY = 5
PACKET3_COPY_DATA__COUNT_SEL__32_BITS_OF_DATA = 0
PACKET3_COPY_DATA__COUNT_SEL__64_BITS_OF_DATA = 1

# --- EVENT_WRITE / RELEASE_MEM event dword -----------------------------------------------------------
EVENT_TYPE = Field(0, 6)
EVENT_INDEX = Field(8, 4)
PACKET3_EVENT_WRITE__EVENT_INDEX__OTHER = 0
PACKET3_EVENT_WRITE__EVENT_INDEX__SAMPLE_PIPELINESTATS = 2
PACKET3_EVENT_WRITE__EVENT_INDEX__CS_PARTIAL_FLUSH = 4

# VGT_EVENT_TYPE values a compute queue uses (soc15_enum.h / sid.h)
CACHE_FLUSH_TS = 0x04
CACHE_FLUSH = 0x06
CS_PARTIAL_FLUSH = 0x07
CACHE_FLUSH_AND_INV_TS_EVENT = 0x14
CACHE_FLUSH_AND_INV_EVENT = 0x16
BOTTOM_OF_PIPE_TS = 0x28
CS_DONE = 0x2F

PACKET3_RELEASE_MEM_EVENT_TYPE = Field(0, 6)
PACKET3_RELEASE_MEM_EVENT_INDEX = Field(8, 4)
PACKET3_RELEASE_MEM_GCR_GLM_WB = 1 << 12
PACKET3_RELEASE_MEM_GCR_GLM_INV = 1 << 13
PACKET3_RELEASE_MEM_GCR_GLV_INV = 1 << 14
PACKET3_RELEASE_MEM_GCR_GL1_INV = 1 << 15
PACKET3_RELEASE_MEM_GCR_GL2_US = 1 << 16
PACKET3_RELEASE_MEM_GCR_GL2_RANGE = 1 << 17
PACKET3_RELEASE_MEM_GCR_GL2_DISCARD = 1 << 19
PACKET3_RELEASE_MEM_GCR_GL2_INV = 1 << 20
PACKET3_RELEASE_MEM_GCR_GL2_WB = 1 << 21
PACKET3_RELEASE_MEM_GCR_SEQ = 1 << 22
PACKET3_RELEASE_MEM_CACHE_POLICY = Field(25, 2)
PACKET3_RELEASE_MEM_EXECUTE = 1 << 28
# data-control dword
PACKET3_RELEASE_MEM_DST_SEL = Field(16, 2)   # 0 memory controller, 1 TC/L2
PACKET3_RELEASE_MEM_INT_SEL = Field(24, 3)   # 0 none, 1 interrupt only, 2 after data write confirmed
PACKET3_RELEASE_MEM_DATA_SEL = Field(29, 3)
# values of EVENT_INDEX for RELEASE_MEM (event_index__mec_release_mem__*)
EVENT_INDEX_END_OF_PIPE = 5
EVENT_INDEX_SHADER_DONE = 6
# DATA_SEL values (nvd.h comment)
DATA_SEL_DISCARD = 0
DATA_SEL_LOW_32 = 1
DATA_SEL_64 = 2
DATA_SEL_GPU_COUNTER_64 = 3
DATA_SEL_SYSTEM_COUNTER_64 = 4
# INT_SEL values (nvd.h comment)
INT_SEL_NONE = 0
INT_SEL_INTERRUPT_ONLY = 1
INT_SEL_INTERRUPT_AFTER_WRITE_CONFIRM = 2
INT_SEL_INTERRUPT_AFTER_WRITE_CONFIRM_3 = 3   # same meaning on gfx11 firmware (written by ROCm/tinygrad)

# --- ACQUIRE_MEM (gfx10+ form) ---------------------------------------------------------------------
PACKET3_ACQUIRE_MEM_GCR_CNTL_GLI_INV = Field(0, 2)
PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_RANGE = Field(2, 2)
PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_WB = Field(4, 1)
PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_INV = Field(5, 1)
PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_WB = Field(6, 1)
PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_INV = Field(7, 1)
PACKET3_ACQUIRE_MEM_GCR_CNTL_GLV_INV = Field(8, 1)
PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_INV = Field(9, 1)
PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_US = Field(10, 1)
PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_RANGE = Field(11, 2)
PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_DISCARD = Field(13, 1)
PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV = Field(14, 1)
PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB = Field(15, 1)
PACKET3_ACQUIRE_MEM_GCR_CNTL_SEQ = Field(16, 2)
PACKET3_ACQUIRE_MEM_GCR_RANGE_IS_PA = 1 << 18
ACQUIRE_MEM_PAYLOAD_DWORDS = 7

