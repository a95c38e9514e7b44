"""GPFIFO entries, pushbuffer method headers, USERD, and the methods of the host, compute and copy classes.

Facts from NVIDIA/open-gpu-kernel-modules 580.105.08 `class/clc56f.h` (AMPERE_CHANNEL_GPFIFO_A: DMA method
header formats, SEM_*, GP_ENTRY*), `class/clc86f.h` (HOPPER_CHANNEL_GPFIFO_A: same SEM_* offsets, the
Nvc86fControl USERD layout) and NVIDIA/open-gpu-doc (commit c8607fe) `classes/compute/clc6c0.h`,
`clcbc0.h` (compute methods), `classes/dma-copy/clc6b5.h`, `clc8b5.h` (copy methods). Method offsets are
byte offsets in the class's method space; a header carries offset >> 2.
"""
from __future__ import annotations

# --- GPFIFO entry (two dwords, NVC56F_GP_ENTRY*) ---------------------------------------------------
GP_ENTRY_SIZE = 8
GP_ENTRY1_LENGTH_SHIFT = 10          # LENGTH 30:10, in dwords
GP_ENTRY1_LENGTH_MASK = (1 << 21) - 1
GP_ENTRY1_LEVEL_SUBROUTINE = 1 << 9
GP_ENTRY1_SYNC_WAIT = 1 << 31
GP_ENTRY1_GET_HI_MASK = 0xFF         # GET_HI 7:0 (address bits 39:32)


def gp_entry(address: int, ndwords: int, sync: bool = False) -> tuple[int, int]:
    """The two dwords of a GPFIFO entry pointing at `ndwords` of pushbuffer at `address` (4-aligned)."""
    if address % 4 or not 0 < ndwords <= GP_ENTRY1_LENGTH_MASK or address >> 40:
        raise ValueError(f"GPFIFO entry for {ndwords} dwords at {address:#x}")
    return (address & 0xFFFFFFFC, (address >> 32) & GP_ENTRY1_GET_HI_MASK | ndwords << GP_ENTRY1_LENGTH_SHIFT
            | (GP_ENTRY1_SYNC_WAIT if sync else 0))


# --- USERD (Nvc86fControl / Nvc56fControl) ------------------------------------------------------------
USERD_SIZE = 0x200
USERD_GP_GET = 0x88
USERD_GP_PUT = 0x8C

# --- pushbuffer method headers (NVC56F_DMA_*) ----------------------------------------------------------
SEC_OP_GRP0_USE_TERT = 0
SEC_OP_INC_METHOD = 1
SEC_OP_GRP2_USE_TERT = 2
SEC_OP_NON_INC_METHOD = 3
SEC_OP_IMMD_DATA_METHOD = 4
SEC_OP_ONE_INC = 5
SEC_OP_RESERVED6 = 6
SEC_OP_END_PB_SEGMENT = 7
SEC_OP_NAMES = {0: "GRP0_USE_TERT", 1: "INC_METHOD", 2: "GRP2_USE_TERT", 3: "NON_INC_METHOD",
                4: "IMMD_DATA_METHOD", 5: "ONE_INC", 6: "RESERVED6", 7: "END_PB_SEGMENT"}


def method_header(sec_op: int, subchannel: int, method: int, count_or_data: int) -> int:
    """SEC_OP 31:29 | COUNT (or IMMD_DATA) 28:16 | SUBCHANNEL 15:13 | ADDRESS (method >> 2) 11:0."""
    if method % 4 or method >> 14 or not 0 <= subchannel < 8 or not 0 <= count_or_data < 1 << 13:
        raise ValueError(f"method header: method {method:#x} subchannel {subchannel} count/data {count_or_data}")
    return sec_op << 29 | count_or_data << 16 | subchannel << 13 | method >> 2


def decode_header(h: int) -> tuple[int, int, int, int]:
    """(sec_op, subchannel, method byte offset, count or immediate data)."""
    return h >> 29, (h >> 13) & 7, (h & 0xFFF) << 2, (h >> 16) & 0x1FFF


# --- host class (NVC56F_ / NVC86F_): methods below 0x100 are the channel's own, on any subchannel ---------
HOST_METHOD_LIMIT = 0x100
NVC56F_SET_OBJECT = 0x0000
NVC56F_NOP = 0x0008
NVC56F_NON_STALL_INTERRUPT = 0x0020
NVC56F_MEM_OP_A, NVC56F_MEM_OP_B, NVC56F_MEM_OP_C, NVC56F_MEM_OP_D = 0x28, 0x2C, 0x30, 0x34
NVC56F_SEM_ADDR_LO = 0x005C
NVC56F_SEM_ADDR_HI = 0x0060
NVC56F_SEM_PAYLOAD_LO = 0x0064
NVC56F_SEM_PAYLOAD_HI = 0x0068
NVC56F_SEM_EXECUTE = 0x006C
NVC56F_WFI = 0x0078
SEM_EXECUTE_OPERATION_ACQUIRE = 0
SEM_EXECUTE_OPERATION_RELEASE = 1
SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ = 2
SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ = 3
SEM_EXECUTE_OPERATION_ACQ_AND = 4
SEM_EXECUTE_OPERATION_ACQ_NOR = 5
SEM_EXECUTE_OPERATION_REDUCTION = 6
SEM_EXECUTE_ACQUIRE_SWITCH_TSG = 1 << 12
SEM_EXECUTE_RELEASE_WFI = 1 << 20
SEM_EXECUTE_PAYLOAD_SIZE_64BIT = 1 << 24
SEM_EXECUTE_RELEASE_TIMESTAMP = 1 << 25
MEM_OP_D_OPERATION_MEMBAR = 5 << 27
MEM_OP_D_OPERATION_L2_FLUSH_DIRTY = 0x10 << 27
MEM_OP_D_OPERATION_L2_SYSMEM_INVALIDATE = 0x0E << 27

# --- compute class (NVC6C0_ / NVCBC0_, same offsets) -----------------------------------------------------
COMPUTE_NO_OPERATION = 0x0100
COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_A = 0x02A0
COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_B = 0x02A4
COMPUTE_SEND_PCAS_A = 0x02B4
COMPUTE_SEND_SIGNALING_PCAS_B = 0x02BC
COMPUTE_SEND_SIGNALING_PCAS2_B = 0x02C0
COMPUTE_SET_SHADER_LOCAL_MEMORY_A = 0x0790
COMPUTE_SET_SHADER_LOCAL_MEMORY_B = 0x0794
COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_A = 0x07B0
COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_B = 0x07B4
COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI = 0x1698
COMPUTE_SET_REPORT_SEMAPHORE_A = 0x1B00
COMPUTE_SET_REPORT_SEMAPHORE_B = 0x1B04
COMPUTE_SET_REPORT_SEMAPHORE_C = 0x1B08
COMPUTE_SET_REPORT_SEMAPHORE_D = 0x1B0C
PCAS2_B_ACTION_INVALIDATE_COPY_SCHEDULE = 0x3
PCAS_B_INVALIDATE = 1 << 0
PCAS_B_SCHEDULE = 1 << 1
REPORT_SEMAPHORE_D_OPERATION_RELEASE = 0
REPORT_SEMAPHORE_D_STRUCTURE_SIZE_ONE_WORD = 1 << 28

# --- copy class (NVC6B5_ / NVC8B5_) -----------------------------------------------------------------------
COPY_NOP = 0x0100
COPY_SET_SEMAPHORE_A = 0x0240
COPY_SET_SEMAPHORE_B = 0x0244
COPY_SET_SEMAPHORE_PAYLOAD = 0x0248
COPY_SET_SEMAPHORE_PAYLOAD_UPPER = 0x024C     # NVC8B5 only (Hopper): 64-bit semaphores
COPY_LAUNCH_DMA = 0x0300
COPY_OFFSET_IN_UPPER = 0x0400
COPY_OFFSET_IN_LOWER = 0x0404
COPY_OFFSET_OUT_UPPER = 0x0408
COPY_OFFSET_OUT_LOWER = 0x040C
COPY_PITCH_IN = 0x0410
COPY_PITCH_OUT = 0x0414
COPY_LINE_LENGTH_IN = 0x0418
COPY_LINE_COUNT = 0x041C
# LAUNCH_DMA fields
LAUNCH_DMA_DATA_TRANSFER_TYPE_MASK = 0x3          # 1:0: NONE 0, PIPELINED 1, NON_PIPELINED 2
LAUNCH_DMA_DATA_TRANSFER_TYPE_PIPELINED = 1
LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED = 2
LAUNCH_DMA_FLUSH_ENABLE = 1 << 2
LAUNCH_DMA_SEMAPHORE_TYPE_SHIFT = 3               # 4:3: NONE 0, ONE_WORD / NO_TIMESTAMP 1, FOUR_WORD / WITH_TIMESTAMP 2
LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD = 1 << 3
LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_WITH_TIMESTAMP = 2 << 3
LAUNCH_DMA_INTERRUPT_TYPE_SHIFT = 5               # 6:5
LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH = 1 << 7
LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH = 1 << 8
LAUNCH_DMA_MULTI_LINE_ENABLE = 1 << 9
LAUNCH_DMA_SRC_TYPE_PHYSICAL = 1 << 12
LAUNCH_DMA_DST_TYPE_PHYSICAL = 1 << 13
LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE = 1 << 19
LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD = 1 << 27   # NVC8B5 only

# upper address bits each class keeps (SEM_ADDR_HI_OFFSET, OFFSET_*_UPPER_UPPER, SET_SEMAPHORE_A_UPPER,
# SET_REPORT_SEMAPHORE_A_OFFSET_UPPER): Ampere classes take 40-bit (host, compute) or 49-bit (copy) addresses,
# Hopper classes 57-bit
UPPER_ADDRESS_MASK = {0xC56F: 0xFF, 0xC86F: 0x1FFFFFF, 0xC6C0: 0xFF, 0xCBC0: 0x1FFFFFF, 0xC6B5: 0x1FFFF,
                      0xC8B5: 0x1FFFFFF}

SUBCHANNEL_COMPUTE = 1      # where gputwin binds its compute and copy objects (a driver choice)
SUBCHANNEL_COPY = 4
