"""RM object classes and their allocation parameters (NVIDIA/open-gpu-kernel-modules 580.105.08:
`class/cl0000.h` .. `clcbc0.h`, `nvos.h`, `alloc/alloc_channel.h`, `class/clb0b5sw.h`, `nvlimits.h`,
`nvgputypes.h` for NvNotification, `cl2080_notification.h` for engine types, `nverror.h` for RC codes).
"""
from __future__ import annotations

import ctypes

from gputwin.abi.bitfield import Field
from gputwin.abi.nv_rm import NvBool, NvHandle, NvP64, NvS32, NvU16, NvU32, NvU64, _S

NV_MAX_DEVICES = 32
NV_MAX_SUBDEVICES = 8
NV_PROC_NAME_MAX_LENGTH = 100

NV01_ROOT = 0x0
NV01_ROOT_NON_PRIV = 0x1
NV01_ROOT_CLIENT = 0x41
NV01_MEMORY_SYSTEM = 0x3E
NV01_MEMORY_LOCAL_USER = 0x40
NV01_MEMORY_SYSTEM_OS_DESCRIPTOR = 0x71
NV01_DEVICE_0 = 0x80
NV20_SUBDEVICE_0 = 0x2080
FERMI_CONTEXT_SHARE_A = 0x9067
FERMI_VASPACE_A = 0x90F1
KEPLER_CHANNEL_GROUP_A = 0xA06C
TURING_USERMODE_A = 0xC461
AMPERE_USERMODE_A = 0xC561
HOPPER_USERMODE_A = 0xC661
AMPERE_CHANNEL_GPFIFO_A = 0xC56F
HOPPER_CHANNEL_GPFIFO_A = 0xC86F
AMPERE_DMA_COPY_A = 0xC6B5
HOPPER_DMA_COPY_A = 0xC8B5
AMPERE_COMPUTE_A = 0xC6C0
HOPPER_COMPUTE_A = 0xCBC0

# Where the kernel parameters start in constant bank 0 (c[0x0][...]) for each compute class: what ptxas
# records as EIATTR_PARAM_CBANK in a cubin's .nv.info (checked by tests/drivers/nv/test_cbank.py)
CBANK0_PARAM_OFFSET = {AMPERE_COMPUTE_A: 0x160, HOPPER_COMPUTE_A: 0x210}

CLASS_NAMES = {v: k for k, v in dict(globals()).items() if isinstance(v, int) and k[:2] in ("NV", "FE", "KE", "TU", "AM", "HO")
               and not k.startswith("NV_")}


class NV0000_ALLOC_PARAMETERS(_S):
    _fields_ = [("hClient", NvHandle), ("processID", NvU32), ("processName", ctypes.c_char * NV_PROC_NAME_MAX_LENGTH),
                ("pOsPidInfo", NvP64)]


class NV0080_ALLOC_PARAMETERS(_S):
    _fields_ = [("deviceId", NvU32), ("hClientShare", NvHandle), ("hTargetClient", NvHandle),
                ("hTargetDevice", NvHandle), ("flags", NvU32), ("vaSpaceSize", NvU64), ("vaStartInternal", NvU64),
                ("vaLimitInternal", NvU64), ("vaMode", NvU32)]


class NV2080_ALLOC_PARAMETERS(_S):
    _fields_ = [("subDeviceId", NvU32)]


class NV_HOPPER_USERMODE_A_PARAMS(_S):
    _fields_ = [("bBar1Mapping", NvBool), ("bPriv", NvBool)]


class NV_VASPACE_ALLOCATION_PARAMETERS(_S):
    _fields_ = [("index", NvU32), ("flags", NvU32), ("vaSize", NvU64), ("vaStartInternal", NvU64),
                ("vaLimitInternal", NvU64), ("bigPageSize", NvU32), ("vaBase", NvU64), ("pasid", NvU32)]


NV_VASPACE_ALLOCATION_INDEX_GPU_NEW = 0x00
NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING = 1 << 6    # nvos.h BIT(6)


class NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS(_S):
    _fields_ = [("hObjectError", NvHandle), ("hObjectEccError", NvHandle), ("hVASpace", NvHandle),
                ("engineType", NvU32), ("bIsCallingContextVgpuPlugin", NvBool)]


class NV_CTXSHARE_ALLOCATION_PARAMETERS(_S):
    _fields_ = [("hVASpace", NvHandle), ("flags", NvU32), ("subctxId", NvU32)]


NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC = 1   # nvos.h SUBCONTEXT 1:0 _ASYNC


class NV_MEMORY_DESC_PARAMS(_S):
    _fields_ = [("base", NvU64), ("size", NvU64), ("addressSpace", NvU32), ("cacheAttrib", NvU32)]


class NV_CHANNEL_ALLOC_PARAMS(_S):
    _fields_ = [("hObjectError", NvHandle), ("hObjectBuffer", NvHandle), ("gpFifoOffset", NvU64),
                ("gpFifoEntries", NvU32), ("flags", NvU32), ("hContextShare", NvHandle), ("hVASpace", NvHandle),
                ("hUserdMemory", NvHandle * NV_MAX_SUBDEVICES), ("userdOffset", NvU64 * NV_MAX_SUBDEVICES),
                ("engineType", NvU32), ("cid", NvU32), ("subDeviceId", NvU32), ("hObjectEccError", NvHandle),
                ("instanceMem", NV_MEMORY_DESC_PARAMS), ("userdMem", NV_MEMORY_DESC_PARAMS),
                ("ramfcMem", NV_MEMORY_DESC_PARAMS), ("mthdbufMem", NV_MEMORY_DESC_PARAMS),
                ("hPhysChannelGroup", NvHandle), ("internalFlags", NvU32),
                ("errorNotifierMem", NV_MEMORY_DESC_PARAMS), ("eccErrorNotifierMem", NV_MEMORY_DESC_PARAMS),
                ("ProcessID", NvU32), ("SubProcessID", NvU32), ("encryptIv", NvU32 * 3), ("decryptIv", NvU32 * 3),
                ("hmacNonce", NvU32 * 8), ("tpcConfigID", NvU32)]


class NV_GR_ALLOCATION_PARAMETERS(_S):
    _fields_ = [("version", NvU32), ("flags", NvU32), ("size", NvU32), ("caps", NvU32)]


NVB0B5_ALLOCATION_PARAMETERS_VERSION_1 = 1


class NVB0B5_ALLOCATION_PARAMETERS(_S):
    _fields_ = [("version", NvU32), ("engineType", NvU32)]


class NV_MEMORY_ALLOCATION_PARAMS(_S):
    _fields_ = [("owner", NvU32), ("type", NvU32), ("flags", NvU32), ("width", NvU32), ("height", NvU32),
                ("pitch", NvS32), ("attr", NvU32), ("attr2", NvU32), ("format", NvU32), ("comprCovg", NvU32),
                ("zcullCovg", NvU32), ("rangeLo", NvU64), ("rangeHi", NvU64), ("size", NvU64), ("alignment", NvU64),
                ("offset", NvU64), ("limit", NvU64), ("address", NvP64), ("ctagOffset", NvU32),
                ("hVASpace", NvHandle), ("internalflags", NvU32), ("tag", NvU32), ("numaNode", NvS32)]


NVOS32_TYPE_IMAGE = 0
NVOS32_ATTR_PAGE_SIZE, NVOS32_ATTR_PAGE_SIZE_BIG, NVOS32_ATTR_PAGE_SIZE_HUGE = Field(23, 2), 2, 3
NVOS32_ATTR_LOCATION, NVOS32_ATTR_LOCATION_VIDMEM = Field(25, 2), 0
NVOS32_ATTR_PHYSICALITY, NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS = Field(27, 2), 3
NVOS32_ATTR2_ZBC, NVOS32_ATTR2_ZBC_PREFER_NO_ZBC = Field(0, 2), 1
NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT = 0x1
NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE = 0x100
NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED = 0x8000
NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM = 0x10000


class NvNotification(_S):
    """nvgputypes.h: RM fills timeStamp, info32, info16, then status (errors: status 0xFFFF)."""
    _fields_ = [("timeStamp", NvU32 * 2), ("info32", NvU32), ("info16", NvU16), ("status", NvU16)]


NV_NOTIFICATION_STATUS_ERROR = 0xFFFF
# engine types (cl2080_notification.h)
NV2080_ENGINE_TYPE_GRAPHICS = 0x1
NV2080_ENGINE_TYPE_COPY0 = 0x9
# robust-channel error codes RM writes into error notifiers (nverror.h)
ROBUST_CHANNEL_GR_EXCEPTION = 13
ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT = 31
ROBUST_CHANNEL_PBDMA_ERROR = 32
ROBUST_CHANNEL_CE0_ERROR = 39
ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR = 43
ROBUST_CHANNEL_PREEMPTIVE_REMOVAL = 45

NVC361_NOTIFY_CHANNEL_PENDING = 0x90    # clc361.h: the usermode doorbell register, takes a work-submit token
USERMODE_SIZE = 0x10000
