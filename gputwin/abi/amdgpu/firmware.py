"""amdgpu firmware files (Linux amdgpu_ucode.h): every image starts with common_firmware_header, followed by a
per-kind header that locates the pieces the PSP loads (LOAD_IP_FW per ucode type, or bootloader components for
the PSP's own sOS container).

common_firmware_header: size_bytes, header_size_bytes, header_version major/minor, ip_version major/minor,
ucode_version, ucode_size_bytes, ucode_array_offset_bytes, crc32 (zlib crc32 of the ucode array)."""
from __future__ import annotations

import struct

COMMON_HEADER = struct.Struct("<IIHHHHIIII")
# per-kind headers, each following the common header (field order as amdgpu_ucode.h)
PSP_HEADER_V2_0 = struct.Struct("<I")                    # psp_fw_bin_count, then that many PSP_FW_BIN_DESC
PSP_FW_BIN_DESC = struct.Struct("<IIII")                 # fw_type, fw_version, offset_bytes, size_bytes
SMC_HEADER_V2_0 = struct.Struct("<III")                  # ucode_start_addr, ppt_offset_bytes, ppt_size_bytes
SDMA_HEADER_V2_0 = struct.Struct("<IIIIIIII")            # ucode_feature_version, ctx_ucode_size_bytes, ctx_jt
                                                         # offset/size, ctl_ucode_offset, ctl_ucode_size_bytes,
                                                         # ctl_jt offset/size
SDMA_HEADER_V3_0 = struct.Struct("<III")                 # ucode_feature_version, ucode_offset_bytes, size
GFX_HEADER_V2_0 = struct.Struct("<IIIIIII")              # ucode_feature_version, ucode_size_bytes,
                                                         # ucode_offset_bytes, data_size_bytes, data_offset_bytes,
                                                         # ucode_start_addr lo/hi (RS64 CP: PFP, ME, MEC)
IMU_HEADER_V1_0 = struct.Struct("<IIII")                 # iram size/offset, dram size/offset
RLC_HEADER_V2_0 = struct.Struct("<" + "I" * 18)          # ucode_feature_version, jt_offset, jt_size, ...
# RLC v2.1-2.3 extend v2.0 (each minor adds to the previous), at these file offsets; piece offsets are from the
# start of the file
RLC_V2_1 = (104, struct.Struct("<13I"))   # direct reg list length; save/restore list cntl, gpm, srm: each
                                          # (ucode_ver, feature_ver, size_bytes, offset_bytes)
RLC_V2_2 = (156, struct.Struct("<4I"))    # rlc_iram size/offset, rlc_dram size/offset
RLC_V2_3 = (172, struct.Struct("<8I"))    # rlcp (ucode_ver, feature_ver, size, offset), rlcv likewise
PSP_HEADER_V2_1 = struct.Struct("<II")                   # psp_fw_bin_count, psp_aux_fw_bin_index

# The firmware files the AM boot loads, per chip (names as /lib/firmware/amdgpu has them).
FILES = {
    "gfx1100": {"sos": "psp_13_0_0_sos.bin", "smu": "smu_13_0_0.bin", "sdma": "sdma_6_0_0.bin",
                "mec": "gc_11_0_0_mec.bin", "imu": "gc_11_0_0_imu.bin", "rlc": "gc_11_0_0_rlc.bin"},
    "gfx1201": {"sos": "psp_14_0_3_sos.bin", "smu": "smu_14_0_3.bin", "sdma": "sdma_7_0_1.bin",
                "pfp": "gc_12_0_1_pfp.bin", "me": "gc_12_0_1_me.bin", "mec": "gc_12_0_1_mec.bin",
                "imu": "gc_12_0_1_imu.bin", "rlc": "gc_12_0_1_rlc.bin"},
}

# Synthetic images (fixtures/amd/firmware/, tools/make_am_firmware.py): every piece the PSP receives starts with
# this 16-byte stand-in for AMD's signed-image header, so the emulated PSP can verify what it is given the way the
# real one checks a signature: magic, the fw type it was built for, the payload size and the payload's crc32.
SYNTHETIC_MAGIC = b"GTFW"
SYNTHETIC_HEADER = struct.Struct("<4sIII")
# sOS components are built for SYNTHETIC_PSP_TAG | psp_fw_type, LOAD_IP_FW pieces for their GFX_FW_TYPE
SYNTHETIC_PSP_TAG = 0x1000
