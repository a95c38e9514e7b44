"""AMDHSA ABI: the kernel descriptor, its register fields, the user SGPR order and the AQL dispatch packet.

Facts from LLVM `llvm/include/llvm/Support/AMDHSAKernelDescriptor.h` (kernel_descriptor_t and the
COMPUTE_PGM_RSRC1/2/3 + KERNEL_CODE_PROPERTY bit fields), LLVM docs AMDGPUUsage ("Kernel Descriptor",
"Initial Kernel Execution State") and the HSA runtime's `hsa.h` (hsa_kernel_dispatch_packet_t).
Names follow those headers so the code and the documents can be grepped for the same word.
"""
from __future__ import annotations

import ctypes

from gputwin.abi.bitfield import Field   # AMDHSA_BITS_ENUM_ENTRY(NAME, SHIFT, WIDTH)

# --- COMPUTE_PGM_RSRC1 (GFX6+; the names of the GFX10/11 meaning where bits were reused) -----------------
COMPUTE_PGM_RSRC1_GRANULATED_WORKITEM_VGPR_COUNT = Field(0, 6)
COMPUTE_PGM_RSRC1_GRANULATED_WAVEFRONT_SGPR_COUNT = Field(6, 4)
COMPUTE_PGM_RSRC1_PRIORITY = Field(10, 2)
COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_32 = Field(12, 2)
COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_16_64 = Field(14, 2)
COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_32 = Field(16, 2)
COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_16_64 = Field(18, 2)
COMPUTE_PGM_RSRC1_PRIV = Field(20, 1)
COMPUTE_PGM_RSRC1_ENABLE_DX10_CLAMP = Field(21, 1)      # GFX6-GFX11 (GFX12: WG_RR_EN)
COMPUTE_PGM_RSRC1_DEBUG_MODE = Field(22, 1)
COMPUTE_PGM_RSRC1_ENABLE_IEEE_MODE = Field(23, 1)       # GFX6-GFX11 (GFX12: DISABLE_PERF)
COMPUTE_PGM_RSRC1_BULKY = Field(24, 1)
COMPUTE_PGM_RSRC1_CDBG_USER = Field(25, 1)
COMPUTE_PGM_RSRC1_FP16_OVFL = Field(26, 1)              # GFX9+
COMPUTE_PGM_RSRC1_WGP_MODE = Field(29, 1)               # GFX10+
COMPUTE_PGM_RSRC1_MEM_ORDERED = Field(30, 1)            # GFX10+
COMPUTE_PGM_RSRC1_FWD_PROGRESS = Field(31, 1)           # GFX10+

# --- COMPUTE_PGM_RSRC2 --------------------------------------------------------------------------------
COMPUTE_PGM_RSRC2_ENABLE_PRIVATE_SEGMENT = Field(0, 1)
COMPUTE_PGM_RSRC2_USER_SGPR_COUNT = Field(1, 5)
COMPUTE_PGM_RSRC2_ENABLE_TRAP_HANDLER = Field(6, 1)     # GFX6-GFX11 (GFX12: ENABLE_DYNAMIC_VGPR)
COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_X = Field(7, 1)
COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Y = Field(8, 1)
COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Z = Field(9, 1)
COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_INFO = Field(10, 1)
COMPUTE_PGM_RSRC2_ENABLE_VGPR_WORKITEM_ID = Field(11, 2)
COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_ADDRESS_WATCH = Field(13, 1)
COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_MEMORY = Field(14, 1)
COMPUTE_PGM_RSRC2_GRANULATED_LDS_SIZE = Field(15, 9)
COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION = Field(24, 1)
COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_FP_DENORMAL_SOURCE = Field(25, 1)
COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_DIVISION_BY_ZERO = Field(26, 1)
COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_OVERFLOW = Field(27, 1)
COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_UNDERFLOW = Field(28, 1)
COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_INEXACT = Field(29, 1)
COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO = Field(30, 1)

# --- COMPUTE_PGM_RSRC3 (GFX10+ layout; GFX90A+ uses ACCUM_OFFSET / TG_SPLIT instead) --------------------
COMPUTE_PGM_RSRC3_GFX10_PLUS_SHARED_VGPR_COUNT = Field(0, 4)   # GFX10-GFX11
COMPUTE_PGM_RSRC3_GFX11_INST_PREF_SIZE = Field(4, 6)
COMPUTE_PGM_RSRC3_GFX11_TRAP_ON_START = Field(10, 1)
COMPUTE_PGM_RSRC3_GFX11_TRAP_ON_END = Field(11, 1)
COMPUTE_PGM_RSRC3_GFX12_PLUS_INST_PREF_SIZE = Field(4, 8)
COMPUTE_PGM_RSRC3_GFX11_PLUS_IMAGE_OP = Field(31, 1)
COMPUTE_PGM_RSRC3_GFX90A_ACCUM_OFFSET = Field(0, 6)
COMPUTE_PGM_RSRC3_GFX90A_TG_SPLIT = Field(16, 1)

# --- kernel_code_properties ----------------------------------------------------------------------------
KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER = Field(0, 1)
KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_PTR = Field(1, 1)
KERNEL_CODE_PROPERTY_ENABLE_SGPR_QUEUE_PTR = Field(2, 1)
KERNEL_CODE_PROPERTY_ENABLE_SGPR_KERNARG_SEGMENT_PTR = Field(3, 1)
KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_ID = Field(4, 1)
KERNEL_CODE_PROPERTY_ENABLE_SGPR_FLAT_SCRATCH_INIT = Field(5, 1)
KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_SIZE = Field(6, 1)
KERNEL_CODE_PROPERTY_ENABLE_WAVEFRONT_SIZE32 = Field(10, 1)    # GFX10+
KERNEL_CODE_PROPERTY_USES_DYNAMIC_STACK = Field(11, 1)

KERNARG_PRELOAD_SPEC_LENGTH = Field(0, 7)
KERNARG_PRELOAD_SPEC_OFFSET = Field(7, 9)

# Floating point modes as RSRC1 encodes them.
FLOAT_ROUND_MODE_NEAR_EVEN, FLOAT_ROUND_MODE_PLUS_INFINITY, FLOAT_ROUND_MODE_MINUS_INFINITY, \
    FLOAT_ROUND_MODE_ZERO = range(4)
FLOAT_DENORM_MODE_FLUSH_SRC_DST, FLOAT_DENORM_MODE_FLUSH_DST, FLOAT_DENORM_MODE_FLUSH_SRC, \
    FLOAT_DENORM_MODE_FLUSH_NONE = range(4)


class kernel_descriptor_t(ctypes.LittleEndianStructure):
    """The 64-byte kernel descriptor a code object holds at symbol `name.kd` (64-byte aligned)."""
    _pack_ = 1
    _fields_ = [
        ("group_segment_fixed_size", ctypes.c_uint32),
        ("private_segment_fixed_size", ctypes.c_uint32),
        ("kernarg_size", ctypes.c_uint32),
        ("reserved0", ctypes.c_uint8 * 4),
        ("kernel_code_entry_byte_offset", ctypes.c_int64),   # from the descriptor's own address
        ("reserved1", ctypes.c_uint8 * 20),
        ("compute_pgm_rsrc3", ctypes.c_uint32),
        ("compute_pgm_rsrc1", ctypes.c_uint32),
        ("compute_pgm_rsrc2", ctypes.c_uint32),
        ("kernel_code_properties", ctypes.c_uint16),
        ("kernarg_preload", ctypes.c_uint16),
        ("reserved3", ctypes.c_uint8 * 4),
    ]


assert ctypes.sizeof(kernel_descriptor_t) == 64


# --- user SGPRs (AMDGPUUsage "Initial Kernel Execution State": this order, each only when enabled) -------
USER_SGPR_ORDER: tuple[tuple[str, Field, int], ...] = (
    ("private_segment_buffer", KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER, 4),
    ("dispatch_ptr", KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_PTR, 2),
    ("queue_ptr", KERNEL_CODE_PROPERTY_ENABLE_SGPR_QUEUE_PTR, 2),
    ("kernarg_segment_ptr", KERNEL_CODE_PROPERTY_ENABLE_SGPR_KERNARG_SEGMENT_PTR, 2),
    ("dispatch_id", KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_ID, 2),
    ("flat_scratch_init", KERNEL_CODE_PROPERTY_ENABLE_SGPR_FLAT_SCRATCH_INIT, 2),
    ("private_segment_size", KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_SIZE, 1),
)


def user_sgpr_layout(kernel_code_properties: int) -> list[tuple[str, int, int]]:
    """[(name, first SGPR, count)] of the enabled system user SGPRs, packed from s0 in ABI order."""
    out, sgpr = [], 0
    for name, bit, count in USER_SGPR_ORDER:
        if bit.get(kernel_code_properties):
            out.append((name, sgpr, count))
            sgpr += count
    return out


# --- the AQL kernel dispatch packet (hsa.h) ---------------------------------------------------------------
HSA_PACKET_TYPE_KERNEL_DISPATCH = 2
HSA_PACKET_HEADER_TYPE = 0
HSA_PACKET_HEADER_BARRIER = 8
HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE = 9
HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE = 11
HSA_FENCE_SCOPE_NONE, HSA_FENCE_SCOPE_AGENT, HSA_FENCE_SCOPE_SYSTEM = 0, 1, 2
HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS = 0   # bits [1:0] of `setup`


class hsa_kernel_dispatch_packet_t(ctypes.LittleEndianStructure):
    """What s[dispatch_ptr] points at: code object v4 kernels read group and grid sizes from here."""
    _pack_ = 1
    _fields_ = [
        ("header", ctypes.c_uint16),
        ("setup", ctypes.c_uint16),
        ("workgroup_size_x", ctypes.c_uint16),
        ("workgroup_size_y", ctypes.c_uint16),
        ("workgroup_size_z", ctypes.c_uint16),
        ("reserved0", ctypes.c_uint16),
        ("grid_size_x", ctypes.c_uint32),      # in work-items, not workgroups
        ("grid_size_y", ctypes.c_uint32),
        ("grid_size_z", ctypes.c_uint32),
        ("private_segment_size", ctypes.c_uint32),
        ("group_segment_size", ctypes.c_uint32),
        ("kernel_object", ctypes.c_uint64),    # address of the kernel descriptor
        ("kernarg_address", ctypes.c_uint64),
        ("reserved2", ctypes.c_uint64),
        ("completion_signal", ctypes.c_uint64),
    ]


assert ctypes.sizeof(hsa_kernel_dispatch_packet_t) == 64

DISPATCH_PACKET_HEADER = ((HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE)
                          | (1 << HSA_PACKET_HEADER_BARRIER)
                          | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
                          | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE))
