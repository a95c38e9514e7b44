"""The PSP (MP0) interface of psp_v13_0 / psp_v14_0 (Linux amdgpu_psp.h, psp_gfx_if.h).

Bootloader: C2PMSG_35 is the command/status register (bit 31 = the bootloader is ready for a command),
C2PMSG_36 the 1 MiB-aligned MC address of the component (>> 20); sOS is alive once C2PMSG_81 is non-zero.
Ring: C2PMSG_69/70 ring MC address lo/hi, C2PMSG_71 size, C2PMSG_64 the control command (ring type << 16) whose
response sets bit 31 with a 16-bit status; C2PMSG_67 the write pointer in dwords. Each 64-byte rb frame points at
a 1 KiB GFX_CMD_RESP buffer and a fence; the PSP writes the response status at offset 864 and then the fence."""
from __future__ import annotations

import struct

from gputwin.abi.amdgpu import Reg

# MP0 registers (mp_13_0_0 MP0_SMN_C2PMSG_n; mp_14_0_x names them MPASP_SMN_C2PMSG_n at the same offsets)
def _c2pmsg(n: int) -> Reg:
    return Reg(f"MP0_SMN_C2PMSG_{n}", "MP0", 0, 0x40 + n)


C2PMSG_35, C2PMSG_36, C2PMSG_64, C2PMSG_67 = _c2pmsg(35), _c2pmsg(36), _c2pmsg(64), _c2pmsg(67)
C2PMSG_69, C2PMSG_70, C2PMSG_71, C2PMSG_81 = _c2pmsg(69), _c2pmsg(70), _c2pmsg(71), _c2pmsg(81)
READY = 0x80000000              # C2PMSG_35 / C2PMSG_64 response flag (GFX_FLAG_RESPONSE)
STATUS_MASK = 0xFFFF            # C2PMSG_64 response status (0 = success)

# enum psp_bootloader_cmd
PSP_BL__LOAD_SYSDRV = 0x10000
PSP_BL__LOAD_SOSDRV = 0x20000
PSP_BL__LOAD_KEY_DATABASE = 0x80000
PSP_BL__LOAD_SOCDRV = 0xB0000
PSP_BL__LOAD_DBGDRV = 0xC0000
PSP_BL__LOAD_INTFDRV = 0xD0000
PSP_BL__LOAD_RASDRV = 0xE0000
PSP_BL__LOAD_TOS_SPL_TABLE = 0x10000000

# enum psp_fw_type (the components of the psp_*_sos.bin container)
PSP_FW_TYPE_PSP_SOS, PSP_FW_TYPE_PSP_SYS_DRV, PSP_FW_TYPE_PSP_KDB, PSP_FW_TYPE_PSP_TOC = 1, 2, 3, 4
PSP_FW_TYPE_PSP_SPL, PSP_FW_TYPE_PSP_SOC_DRV, PSP_FW_TYPE_PSP_INTF_DRV = 5, 7, 8
PSP_FW_TYPE_PSP_DBG_DRV, PSP_FW_TYPE_PSP_RAS_DRV = 9, 10

# enum psp_gfx_crtl_cmd_id and psp_ring_type
GFX_CTRL_CMD_ID_INIT_GPCOM_RING = 0x20000
GFX_CTRL_CMD_ID_DESTROY_RINGS = 0x30000
PSP_RING_TYPE__KM = 2

# enum psp_gfx_cmd_id
GFX_CMD_ID_SETUP_TMR, GFX_CMD_ID_LOAD_IP_FW, GFX_CMD_ID_DESTROY_TMR = 0x5, 0x6, 0x7
GFX_CMD_ID_LOAD_TOC, GFX_CMD_ID_AUTOLOAD_RLC = 0x20, 0x21
GFX_CMD_NAMES = {GFX_CMD_ID_SETUP_TMR: "SETUP_TMR", GFX_CMD_ID_LOAD_IP_FW: "LOAD_IP_FW",
                 GFX_CMD_ID_DESTROY_TMR: "DESTROY_TMR", GFX_CMD_ID_LOAD_TOC: "LOAD_TOC",
                 GFX_CMD_ID_AUTOLOAD_RLC: "AUTOLOAD_RLC"}

# response status (psp_gfx_if.h / amdgpu_psp.h)
PSP_STATUS_SUCCESS = 0
PSP_ERR_UNKNOWN_COMMAND = 0x100
TEE_ERROR_NOT_SUPPORTED = 0xFFFF000A
TEE_ERROR_BAD_PARAMETERS = 0xFFFF0006     # GlobalPlatform TEE status the sOS returns for a malformed request
TEE_ERROR_SECURITY = 0xFFFF000F           # GlobalPlatform TEE status: signature / integrity check failed
TEE_ERROR_BAD_STATE = 0xFFFF0007          # GlobalPlatform TEE status: command out of order

# enum psp_gfx_fw_type (the ucode ids LOAD_IP_FW takes)
GFX_FW_TYPE = {
    "CP_ME": 1, "CP_PFP": 2, "CP_MEC": 4, "RLC_V": 7, "RLC_G": 8, "SDMA0": 9, "SDMA1": 10, "SMU": 18,
    "RLC_RESTORE_LIST_GPM_MEM": 20, "RLC_RESTORE_LIST_SRM_MEM": 21, "RLC_RESTORE_LIST_SRM_CNTL": 22,
    "RLC_P": 25, "RLC_IRAM": 26, "RLC_DRAM_BOOT": 48, "IMU_I": 68, "IMU_D": 69,
    "SDMA_UCODE_TH0": 71, "SDMA_UCODE_TH1": 72, "RS64_PFP": 87, "RS64_ME": 88, "RS64_MEC": 89,
    "RS64_PFP_P0_STACK": 90, "RS64_PFP_P1_STACK": 91, "RS64_ME_P0_STACK": 92, "RS64_ME_P1_STACK": 93,
    "RS64_MEC_P0_STACK": 94, "RS64_MEC_P1_STACK": 95, "RS64_MEC_P2_STACK": 96, "RS64_MEC_P3_STACK": 97,
}
GFX_FW_NAME = {v: k for k, v in GFX_FW_TYPE.items()}

# struct psp_gfx_rb_frame (64 bytes): cmd_buf_addr lo/hi, cmd_buf_size, fence_addr lo/hi, fence_value, sid lo/hi,
# vmid, frame_type, reserved
RB_FRAME = struct.Struct("<IIIIIIIIBB30x")
RB_FRAME_DWORDS = RB_FRAME.size // 4
# struct psp_gfx_cmd_resp (1024 bytes): buf_size, buf_version, cmd_id, resp_buf_addr lo/hi, resp_offset,
# resp_buf_size, then the command union at 28 and the response (status, session_id, fw_addr lo/hi, tmr_size) at 864
CMD_RESP_SIZE = 1024
CMD_HEADER = struct.Struct("<IIIIIII")
CMD_OFFSET = 28
RESP_OFFSET = 864
RESP = struct.Struct("<IIIII")
CMD_LOAD_IP_FW = struct.Struct("<IIII")         # fw_phy_addr lo/hi, fw_size, fw_type
CMD_SETUP_TMR = struct.Struct("<IIIIII")        # buf_phy_addr lo/hi, buf_size, flags (bit 0 virt_phy_addr),
                                                # system_phy_addr lo/hi
CMD_LOAD_TOC = struct.Struct("<III")            # toc_phy_addr lo/hi, toc_size
PSP_1_MEG = 1 << 20
PSP_TMR_ALIGNMENT = 1 << 20
