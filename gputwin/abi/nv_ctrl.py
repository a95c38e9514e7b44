"""RM control commands (NV_ESC_RM_CONTROL, NVOS54) the NV driver uses, with their parameter blocks.

Facts from NVIDIA/open-gpu-kernel-modules 580.105.08 `src/common/sdk/nvidia/inc/ctrl/`: ctrl0000gpu.h,
ctrl0080gpu.h, ctrl0080gr.h, ctrl2080gpu.h, ctrl2080gr.h, ctrla06c.h (+ ctrla06f gpfifo), ctrlc36f.h,
ctrl906f.h. A command is (interface class << 16) | (category << 8) | message id, so its top 16 bits
name the class of object it must be sent to.
"""
from __future__ import annotations

import ctypes

from gputwin.abi.nv_rm import NvBool, NvP64, NvS32, NvU8, NvU32, NvU64, _S

# --- NV01_ROOT (client) ----------------------------------------------------------------------------
NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS = 0x201
NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 = 0x205
NV0000_CTRL_CMD_GPU_GET_PROBED_IDS = 0x214
NV0000_CTRL_GPU_MAX_ATTACHED_GPUS = 32
NV0000_CTRL_GPU_MAX_PROBED_GPUS = 32
NV0000_CTRL_GPU_INVALID_ID = 0xFFFFFFFF


class NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS(_S):
    _fields_ = [("gpuIds", NvU32 * NV0000_CTRL_GPU_MAX_ATTACHED_GPUS)]


class NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS(_S):
    _fields_ = [("gpuId", NvU32), ("gpuFlags", NvU32), ("deviceInstance", NvU32), ("subDeviceInstance", NvU32),
                ("sliStatus", NvU32), ("boardId", NvU32), ("gpuInstance", NvU32), ("numaId", NvS32)]


class NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS(_S):
    _fields_ = [("gpuIds", NvU32 * NV0000_CTRL_GPU_MAX_PROBED_GPUS),
                ("excludedGpuIds", NvU32 * NV0000_CTRL_GPU_MAX_PROBED_GPUS),
                ("gpuFlags", NvU32 * NV0000_CTRL_GPU_MAX_PROBED_GPUS)]


# --- NV01_DEVICE_0 -----------------------------------------------------------------------------------
NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2 = 0x800292
NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE = 200


class NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS(_S):
    _fields_ = [("numClasses", NvU32), ("classList", NvU32 * NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE)]


# --- NV20_SUBDEVICE_0 --------------------------------------------------------------------------------
NV2080_CTRL_CMD_GPU_GET_ID = 0x20800142
NV2080_CTRL_CMD_GPU_GET_GID_INFO = 0x2080014A
NV2080_CTRL_CMD_GR_GET_INFO = 0x20801201
NV2080_GPU_MAX_GID_LENGTH = 0x100
NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_ASCII = 0
NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY = 2


class NV2080_CTRL_GPU_GET_ID_PARAMS(_S):
    _fields_ = [("gpuId", NvU32)]


class NV2080_CTRL_GPU_GET_GID_INFO_PARAMS(_S):
    _fields_ = [("index", NvU32), ("flags", NvU32), ("length", NvU32), ("data", NvU8 * NV2080_GPU_MAX_GID_LENGTH)]


class NV2080_CTRL_GR_INFO(_S):          # NVXXXX_CTRL_XXX_INFO
    _fields_ = [("index", NvU32), ("data", NvU32)]


class NV0080_CTRL_GR_ROUTE_INFO(_S):
    _fields_ = [("flags", NvU32), ("route", NvU64)]


class NV2080_CTRL_GR_GET_INFO_PARAMS(_S):
    _fields_ = [("grInfoListSize", NvU32), ("grInfoList", NvP64), ("grRouteInfo", NV0080_CTRL_GR_ROUTE_INFO)]


NV2080_CTRL_GR_INFO_INDEX_SM_VERSION = 0x0C
NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM = 0x0D
NV2080_CTRL_GR_INFO_INDEX_MAX_THREADS_PER_WARP = 0x0E
NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS = 0x14
NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC = 0x17
NV2080_CTRL_GR_INFO_INDEX_GPU_CORE_COUNT = 0x1D
NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC = 0x20
NV2080_CTRL_GR_INFO_INDEX_MAX = 0x39
NV2080_CTRL_GR_INFO_SM_VERSION_8_00 = 0x800   # not named in the header; its major << 8 | minor encoding
NV2080_CTRL_GR_INFO_SM_VERSION_8_09 = 0x809
NV2080_CTRL_GR_INFO_SM_VERSION_9_00 = 0x900

# --- KEPLER_CHANNEL_GROUP_A / channels ---------------------------------------------------------------
NVA06C_CTRL_CMD_GPFIFO_SCHEDULE = 0xA06C0101
NVA06C_CTRL_CMD_SET_TIMESLICE = 0xA06C0103
NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN = 0xC36F0108
NV906F_CTRL_CMD_GET_MMU_FAULT_INFO = 0x906F0106
NV906F_CTRL_MMU_FAULT_STRING_LEN = 32
NV906F_CTRL_MMU_FAULT_SHADER_TYPES = 7


class NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS(_S):   # = NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS
    _fields_ = [("bEnable", NvBool), ("bSkipSubmit", NvBool), ("bSkipEnable", NvBool)]


class NVA06C_CTRL_TIMESLICE_PARAMS(_S):
    _fields_ = [("timesliceUs", NvU64)]


class NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS(_S):
    _fields_ = [("workSubmitToken", NvU32)]


class NV906F_CTRL_GET_MMU_FAULT_INFO_PARAMS(_S):
    _fields_ = [("addrHi", NvU32), ("addrLo", NvU32), ("faultType", NvU32),
                ("faultString", ctypes.c_char * NV906F_CTRL_MMU_FAULT_STRING_LEN),
                ("shaderProgramVA", NvU64 * NV906F_CTRL_MMU_FAULT_SHADER_TYPES)]


CONTROL_NAMES = {v: k for k, v in dict(globals()).items() if "_CTRL_CMD_" in k and isinstance(v, int)}


def control_name(cmd: int) -> str:
    return CONTROL_NAMES.get(cmd, f"control {cmd:#010x}")
