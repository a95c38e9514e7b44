"""NVIDIA RM ioctl interface ("escapes") as the open kernel modules define it.

Facts from NVIDIA/open-gpu-kernel-modules 580.105.08: `nv-ioctl-numbers.h` (NV_IOCTL_MAGIC 'F',
NV_IOCTL_BASE 200, the OS escapes), `nv_escape.h` (the RM escapes 0x27..0x5F), `nv-ioctl.h` (card info,
version check, register fd), `nvos.h` (NVOS00/02/21/33/34/54/64 parameter blocks),
`nv-unix-nvos-params-wrappers.h` (the `_with_fd` wrappers) and `nvstatuscodes.h` (NV_STATUS values).

On Linux every escape is issued as `_IOWR('F', escape, sizeof(params))` on /dev/nvidiactl or /dev/nvidiaN;
nvidia.ko uses only _IOC_NR and _IOC_SIZE, copies the parameters in and always copies them back. RM
reports its own result in the `status` field of the parameter block; the ioctl itself fails (EINVAL)
only when the escape is malformed (wrong size, wrong file).
"""
from __future__ import annotations

import ctypes

from gputwin.abi.bitfield import Field
from gputwin.abi.ioctl import IOWR

NV_IOCTL_MAGIC = ord("F")
NV_IOCTL_BASE = 200
NV_ESC_CARD_INFO = NV_IOCTL_BASE + 0
NV_ESC_REGISTER_FD = NV_IOCTL_BASE + 1
NV_ESC_ALLOC_OS_EVENT = NV_IOCTL_BASE + 6
NV_ESC_FREE_OS_EVENT = NV_IOCTL_BASE + 7
NV_ESC_STATUS_CODE = NV_IOCTL_BASE + 9
NV_ESC_CHECK_VERSION_STR = NV_IOCTL_BASE + 10
NV_ESC_IOCTL_XFER_CMD = NV_IOCTL_BASE + 11
NV_ESC_ATTACH_GPUS_TO_FD = NV_IOCTL_BASE + 12
NV_ESC_QUERY_DEVICE_INTR = NV_IOCTL_BASE + 13
NV_ESC_SYS_PARAMS = NV_IOCTL_BASE + 14
NV_ESC_EXPORT_TO_DMABUF_FD = NV_IOCTL_BASE + 17
NV_ESC_WAIT_OPEN_COMPLETE = NV_IOCTL_BASE + 18

NV_ESC_RM_ALLOC_MEMORY = 0x27
NV_ESC_RM_ALLOC_OBJECT = 0x28
NV_ESC_RM_FREE = 0x29
NV_ESC_RM_CONTROL = 0x2A
NV_ESC_RM_ALLOC = 0x2B
NV_ESC_RM_CONFIG_GET = 0x32
NV_ESC_RM_CONFIG_SET = 0x33
NV_ESC_RM_DUP_OBJECT = 0x34
NV_ESC_RM_SHARE = 0x35
NV_ESC_RM_CONFIG_GET_EX = 0x37
NV_ESC_RM_CONFIG_SET_EX = 0x38
NV_ESC_RM_I2C_ACCESS = 0x39
NV_ESC_RM_IDLE_CHANNELS = 0x41
NV_ESC_RM_VID_HEAP_CONTROL = 0x4A
NV_ESC_RM_ACCESS_REGISTRY = 0x4D
NV_ESC_RM_MAP_MEMORY = 0x4E
NV_ESC_RM_UNMAP_MEMORY = 0x4F
NV_ESC_RM_GET_EVENT_DATA = 0x52
NV_ESC_RM_ALLOC_CONTEXT_DMA2 = 0x54
NV_ESC_RM_ADD_VBLANK_CALLBACK = 0x56
NV_ESC_RM_MAP_MEMORY_DMA = 0x57
NV_ESC_RM_UNMAP_MEMORY_DMA = 0x58
NV_ESC_RM_BIND_CONTEXT_DMA = 0x59
NV_ESC_RM_EXPORT_OBJECT_TO_FD = 0x5C
NV_ESC_RM_IMPORT_OBJECT_FROM_FD = 0x5D
NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO = 0x5E
NV_ESC_RM_LOCKLESS_DIAGNOSTIC = 0x5F

ESCAPE_NAMES = {v: k for k, v in globals().items() if k.startswith("NV_ESC_") and isinstance(v, int)}

NvHandle = ctypes.c_uint32
NvU8, NvU16, NvU32, NvU64, NvS32 = ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32
NvP64 = ctypes.c_uint64
NvBool = ctypes.c_uint8


class _S(ctypes.Structure):
    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n, *_ in self._fields_)})"


# --- nv-ioctl.h ----------------------------------------------------------------------------------
class nv_pci_info_t(_S):
    _fields_ = [("domain", NvU32), ("bus", NvU8), ("slot", NvU8), ("function", NvU8),
                ("vendor_id", NvU16), ("device_id", NvU16)]


class nv_ioctl_card_info_t(_S):
    _fields_ = [("valid", NvBool), ("pci_info", nv_pci_info_t), ("gpu_id", NvU32), ("interrupt_line", NvU16),
                ("reg_address", NvU64), ("reg_size", NvU64), ("fb_address", NvU64), ("fb_size", NvU64),
                ("minor_number", NvU32), ("dev_name", NvU8 * 10)]


NV_RM_API_VERSION_STRING_LENGTH = 64
NV_RM_API_VERSION_CMD_STRICT = 0
NV_RM_API_VERSION_CMD_RELAXED = ord("1")
NV_RM_API_VERSION_CMD_QUERY = ord("2")
NV_RM_API_VERSION_REPLY_UNRECOGNIZED = 0
NV_RM_API_VERSION_REPLY_RECOGNIZED = 1


class nv_ioctl_rm_api_version_t(_S):
    _fields_ = [("cmd", NvU32), ("reply", NvU32), ("versionString", ctypes.c_char * NV_RM_API_VERSION_STRING_LENGTH)]


class nv_ioctl_register_fd_t(_S):
    _fields_ = [("ctl_fd", ctypes.c_int)]


# --- nvos.h --------------------------------------------------------------------------------------
class NVOS00_PARAMETERS(_S):          # RM_FREE
    _fields_ = [("hRoot", NvHandle), ("hObjectParent", NvHandle), ("hObjectOld", NvHandle), ("status", NvU32)]


class NVOS02_PARAMETERS(_S):          # RM_ALLOC_MEMORY
    _fields_ = [("hRoot", NvHandle), ("hObjectParent", NvHandle), ("hObjectNew", NvHandle), ("hClass", NvU32),
                ("flags", NvU32), ("pMemory", NvP64), ("limit", NvU64), ("status", NvU32)]


class NVOS21_PARAMETERS(_S):          # RM_ALLOC
    _fields_ = [("hRoot", NvHandle), ("hObjectParent", NvHandle), ("hObjectNew", NvHandle), ("hClass", NvU32),
                ("pAllocParms", NvP64), ("paramsSize", NvU32), ("status", NvU32)]


class NVOS64_PARAMETERS(_S):          # RM_ALLOC with access rights
    _fields_ = [("hRoot", NvHandle), ("hObjectParent", NvHandle), ("hObjectNew", NvHandle), ("hClass", NvU32),
                ("pAllocParms", NvP64), ("pRightsRequested", NvP64), ("paramsSize", NvU32), ("flags", NvU32),
                ("status", NvU32)]


class NVOS54_PARAMETERS(_S):          # RM_CONTROL
    _fields_ = [("hClient", NvHandle), ("hObject", NvHandle), ("cmd", NvU32), ("flags", NvU32),
                ("params", NvP64), ("paramsSize", NvU32), ("status", NvU32)]


class NVOS33_PARAMETERS(_S):          # RM_MAP_MEMORY
    _fields_ = [("hClient", NvHandle), ("hDevice", NvHandle), ("hMemory", NvHandle), ("offset", NvU64),
                ("length", NvU64), ("pLinearAddress", NvP64), ("status", NvU32), ("flags", NvU32)]


class NVOS34_PARAMETERS(_S):          # RM_UNMAP_MEMORY
    _fields_ = [("hClient", NvHandle), ("hDevice", NvHandle), ("hMemory", NvHandle), ("pLinearAddress", NvP64),
                ("status", NvU32), ("flags", NvU32)]


class nv_ioctl_nvos02_parameters_with_fd(_S):
    _fields_ = [("params", NVOS02_PARAMETERS), ("fd", ctypes.c_int)]


class nv_ioctl_nvos33_parameters_with_fd(_S):
    _fields_ = [("params", NVOS33_PARAMETERS), ("fd", ctypes.c_int)]


# NVOS02 flags (nvos.h): fields and their values, as the header's DRF definitions
NVOS02_FLAGS_PHYSICALITY, NVOS02_FLAGS_PHYSICALITY_NONCONTIGUOUS = Field(4, 4), 1
NVOS02_FLAGS_LOCATION, NVOS02_FLAGS_LOCATION_PCI = Field(8, 4), 0
NVOS02_FLAGS_COHERENCY, NVOS02_FLAGS_COHERENCY_CACHED = Field(12, 4), 1
NVOS02_FLAGS_ALLOC, NVOS02_FLAGS_ALLOC_NONE = Field(16, 2), 1
NVOS02_FLAGS_MAPPING, NVOS02_FLAGS_MAPPING_NO_MAP = Field(30, 2), 1

# --- nvstatuscodes.h ------------------------------------------------------------------------------
NV_STATUS_CODES = {
    "NV_OK": 0x00, "NV_ERR_GENERIC": 0xFFFF, "NV_ERR_BUFFER_TOO_SMALL": 0x02, "NV_ERR_GPU_IS_LOST": 0x0F,
    "NV_ERR_GPU_UUID_NOT_FOUND": 0x12, "NV_ERR_ILLEGAL_ACTION": 0x16, "NV_ERR_IN_USE": 0x17, "NV_ERR_INSERT_DUPLICATE_NAME": 0x19,
    "NV_ERR_INSUFFICIENT_RESOURCES": 0x1A, "NV_ERR_INVALID_ACCESS_TYPE": 0x1D, "NV_ERR_INVALID_ADDRESS": 0x1E,
    "NV_ERR_INVALID_ARGUMENT": 0x1F, "NV_ERR_INVALID_BASE": 0x20, "NV_ERR_INVALID_CHANNEL": 0x21,
    "NV_ERR_INVALID_CLASS": 0x22, "NV_ERR_INVALID_CLIENT": 0x23, "NV_ERR_INVALID_COMMAND": 0x24,
    "NV_ERR_INVALID_DEVICE": 0x26, "NV_ERR_INVALID_FLAGS": 0x29, "NV_ERR_INVALID_LIMIT": 0x2E,
    "NV_ERR_INVALID_METHOD": 0x30, "NV_ERR_INVALID_OBJECT": 0x31, "NV_ERR_INVALID_OBJECT_HANDLE": 0x33,
    "NV_ERR_INVALID_OBJECT_NEW": 0x34, "NV_ERR_INVALID_OBJECT_OLD": 0x35, "NV_ERR_INVALID_OBJECT_PARENT": 0x36,
    "NV_ERR_INVALID_OFFSET": 0x37, "NV_ERR_INVALID_PARAM_STRUCT": 0x3A, "NV_ERR_INVALID_POINTER": 0x3D,
    "NV_ERR_INVALID_STATE": 0x40, "NV_ERR_NO_MEMORY": 0x51, "NV_ERR_NOT_SUPPORTED": 0x56,
    "NV_ERR_OBJECT_NOT_FOUND": 0x57, "NV_ERR_OPERATING_SYSTEM": 0x59, "NV_ERR_OUT_OF_RANGE": 0x5B,
    "NV_ERR_PROTECTION_FAULT": 0x5F, "NV_ERR_RC_ERROR": 0x60, "NV_ERR_TIMEOUT": 0x65, "NV_ERR_STATE_IN_USE": 0x63,
    "NV_ERR_UVM_ADDRESS_IN_USE": 0x68,
}
globals().update(NV_STATUS_CODES)
STATUS_NAMES = {v: k for k, v in NV_STATUS_CODES.items()}


def status_name(status: int) -> str:
    return STATUS_NAMES.get(status, f"NV_STATUS {status:#x}")


class RmError(RuntimeError):
    """An RM call that returned a status other than NV_OK; `status` is the NV_STATUS value."""

    def __init__(self, message: str, status: int):
        self.status = status
        super().__init__(f"{message}: {status_name(status)} ({status:#x})")


def nv_ioctl(escape: int, struct) -> int:
    """The request number userspace passes for an escape: _IOWR('F', escape, sizeof(params))."""
    return IOWR(NV_IOCTL_MAGIC, escape, struct)
