"""The IP discovery binary (Linux include/discovery.h, amdgpu_discovery.c): what the VBIOS leaves at the top of
VRAM for the driver to find the chip's IP blocks, their versions and register bases.

Layout: binary_header (signature, version, a 16-bit byte-sum checksum of everything after the checksum field up
to binary_size, and a table_list of (offset, checksum, size)) -> the ip_discovery table (ip_discovery_header,
then per die a die_header and its ip entries: hw_id, instance, number of bases, major/minor/revision, then the
32-bit bases) and the gc_info table. Each table's checksum is the byte sum of its bytes."""
from __future__ import annotations

import struct

BINARY_SIGNATURE = 0x28211407
DISCOVERY_TABLE_SIGNATURE = 0x53445049
GC_TABLE_ID = 0x4347
HARVEST_TABLE_SIGNATURE = 0x56524148
IP_DISCOVERY, GC, HARVEST_INFO, VCN_INFO, MALL_INFO, NPS_INFO = range(6)
TOTAL_TABLES = 6

DISCOVERY_TMR_OFFSET = 64 << 10   # the table sits this far below the top of VRAM
DISCOVERY_TMR_SIZE = 10 << 10     # and is at most this large
RCC_CONFIG_MEMSIZE = 0xDE3        # NBIO dword (segment 2 + 0xC3) with VRAM size in MiB, read before discovery

BINARY_HEADER = struct.Struct("<IHHHH")            # signature, version major/minor, checksum, binary size
TABLE_INFO = struct.Struct("<HHHH")                # offset, checksum, size, padding
BINARY_HEADER_SIZE = BINARY_HEADER.size + TOTAL_TABLES * TABLE_INFO.size   # v1: table_list[6] follows
BINARY_HEADER_V2 = struct.Struct("<HH")            # v2: num_tables, padding; then table_list[num_tables]
CHECKSUM_START = 10                                # the binary checksum covers bytes from after its own field
IP_DISCOVERY_HEADER = struct.Struct("<IHHIH" + "HH" * 16 + "H")   # signature, version, size, id, num_dies,
                                                                  # die_info[16] (id, offset), padding
DIE_HEADER = struct.Struct("<HH")                  # die_id, num_ips
IP_ENTRY = struct.Struct("<HBBBBBB")               # hw_id, instance, num_base_address, major, minor, revision,
                                                   # sub_revision:4 | variant:4; then num_base_address bases:
                                                   # u32, or u64 in a v4 table whose header flag says so
BASE_ADDR_64_BIT = 1                               # ip_discovery_header v4: low bit of the trailing field
HARVEST_INFO_HEADER = struct.Struct("<II")         # signature, version
HARVEST_ENTRY = struct.Struct("<HBB")              # hw_id, number_instance, reserved (32 entries; hw_id 0 = none)
HARVEST_TABLE_SIZE = HARVEST_INFO_HEADER.size + 32 * HARVEST_ENTRY.size
GPU_INFO_HEADER = struct.Struct("<IHHI")           # table_id, version major/minor, size
GC_INFO_V1_0_FIELDS = (
    "gc_num_se", "gc_num_wgp0_per_sa", "gc_num_wgp1_per_sa", "gc_num_rb_per_se", "gc_num_gl2c", "gc_num_gprs",
    "gc_num_max_gs_thds", "gc_gs_table_depth", "gc_gsprim_buff_depth", "gc_parameter_cache_depth",
    "gc_double_offchip_lds_buffer", "gc_wave_size", "gc_max_waves_per_simd", "gc_max_scratch_slots_per_cu",
    "gc_lds_size", "gc_num_sc_per_se", "gc_num_sa_per_se", "gc_num_packer_per_sc", "gc_num_gl2a")

# soc15_hw_ip.h hardware ids of the IPs the AM driver uses (NBIO is the NBIF block)
HW_IDS = {"MP1": 1, "GC": 11, "MMHUB": 34, "ATHUB": 35, "OSSSYS": 40, "HDP": 41, "SDMA0": 42, "SDMA1": 43,
          "NBIO": 108, "MP0": 255}
IP_NAMES = {v: k for k, v in HW_IDS.items()}


def checksum(data: bytes) -> int:
    """amdgpu_discovery_calculate_checksum: the 16-bit wrapping byte sum."""
    return sum(data) & 0xFFFF
