"""The nvidia-uvm ioctls the NV driver uses (NVIDIA/open-gpu-kernel-modules 580.105.08:
`kernel-open/nvidia-uvm/uvm_ioctl.h`, `uvm_linux_ioctl.h`, `uvm_types.h`, `common/inc/nv_uvm_user_types.h`).

On Linux UVM_IOCTL_BASE(i) is just i: the request numbers carry no size or direction. nvidia-uvm copies
`sizeof(<cmd>_PARAMS)` bytes in, runs the command, stores the result in `rmStatus` and copies the block
back; an unknown command is EINVAL. Every command but UVM_INITIALIZE answers NV_ERR_ILLEGAL_ACTION on a
file that was not initialised.
"""
from __future__ import annotations


from gputwin.abi.nv_rm import NvBool, NvHandle, NvS32, NvU8, NvU32, NvU64, _S

UVM_INITIALIZE = 0x30000001
UVM_DEINITIALIZE = 0x30000002
UVM_REGISTER_GPU_VASPACE = 25
UVM_UNREGISTER_GPU_VASPACE = 26
UVM_MAP_EXTERNAL_ALLOCATION = 33
UVM_FREE = 34
UVM_REGISTER_GPU = 37
UVM_UNREGISTER_GPU = 38
UVM_PAGEABLE_MEM_ACCESS = 39
UVM_UNMAP_EXTERNAL = 66
UVM_CREATE_EXTERNAL_RANGE = 73

UVM_MAX_GPUS = 32 * 8          # NV_MAX_DEVICES * UVM_PARENT_ID_MAX_SUB_PROCESSORS
UVM_INIT_FLAGS_DISABLE_HMM = 0x1
UVM_INIT_FLAGS_MULTI_PROCESS_SHARING_MODE = 0x2
UVM_INIT_FLAGS_MASK = 0x3
UvmGpuMappingTypeDefault, UvmGpuMappingTypeReadWriteAtomic, UvmGpuMappingTypeReadWrite, UvmGpuMappingTypeReadOnly = 0, 1, 2, 3
UvmGpuCachingTypeDefault, UvmGpuCachingTypeForceUncached, UvmGpuCachingTypeForceCached = 0, 1, 2


class NvProcessorUuid(_S):
    _fields_ = [("uuid", NvU8 * 16)]


class UvmGpuMappingAttributes(_S):
    _fields_ = [("gpuUuid", NvProcessorUuid), ("gpuMappingType", NvU32), ("gpuCachingType", NvU32),
                ("gpuFormatType", NvU32), ("gpuElementBits", NvU32), ("gpuCompressionType", NvU32)]


class UVM_INITIALIZE_PARAMS(_S):
    _fields_ = [("flags", NvU64), ("rmStatus", NvU32)]


class UVM_REGISTER_GPU_PARAMS(_S):
    _fields_ = [("gpu_uuid", NvProcessorUuid), ("numaEnabled", NvBool), ("numaNodeId", NvS32), ("rmCtrlFd", NvS32),
                ("hClient", NvHandle), ("hSmcPartRef", NvHandle), ("rmStatus", NvU32)]


class UVM_UNREGISTER_GPU_PARAMS(_S):
    _fields_ = [("gpu_uuid", NvProcessorUuid), ("rmStatus", NvU32)]


class UVM_REGISTER_GPU_VASPACE_PARAMS(_S):
    _fields_ = [("gpuUuid", NvProcessorUuid), ("rmCtrlFd", NvS32), ("hClient", NvHandle), ("hVaSpace", NvHandle),
                ("rmStatus", NvU32)]


class UVM_UNREGISTER_GPU_VASPACE_PARAMS(_S):
    _fields_ = [("gpuUuid", NvProcessorUuid), ("rmStatus", NvU32)]


class UVM_CREATE_EXTERNAL_RANGE_PARAMS(_S):
    _fields_ = [("base", NvU64), ("length", NvU64), ("rmStatus", NvU32)]


class UVM_MAP_EXTERNAL_ALLOCATION_PARAMS(_S):
    _fields_ = [("base", NvU64), ("length", NvU64), ("offset", NvU64),
                ("perGpuAttributes", UvmGpuMappingAttributes * UVM_MAX_GPUS), ("gpuAttributesCount", NvU64),
                ("rmCtrlFd", NvS32), ("hClient", NvU32), ("hMemory", NvU32), ("rmStatus", NvU32)]


class UVM_FREE_PARAMS(_S):
    _fields_ = [("base", NvU64), ("length", NvU64), ("rmStatus", NvU32)]


class UVM_UNMAP_EXTERNAL_PARAMS(_S):
    _fields_ = [("base", NvU64), ("length", NvU64), ("gpuUuid", NvProcessorUuid), ("rmStatus", NvU32)]


class UVM_PAGEABLE_MEM_ACCESS_PARAMS(_S):
    _fields_ = [("pageableMemAccess", NvBool), ("rmStatus", NvU32)]


# request -> (name, params struct)
IOCTLS = {
    UVM_INITIALIZE: ("UVM_INITIALIZE", UVM_INITIALIZE_PARAMS),
    UVM_REGISTER_GPU: ("UVM_REGISTER_GPU", UVM_REGISTER_GPU_PARAMS),
    UVM_UNREGISTER_GPU: ("UVM_UNREGISTER_GPU", UVM_UNREGISTER_GPU_PARAMS),
    UVM_REGISTER_GPU_VASPACE: ("UVM_REGISTER_GPU_VASPACE", UVM_REGISTER_GPU_VASPACE_PARAMS),
    UVM_UNREGISTER_GPU_VASPACE: ("UVM_UNREGISTER_GPU_VASPACE", UVM_UNREGISTER_GPU_VASPACE_PARAMS),
    UVM_CREATE_EXTERNAL_RANGE: ("UVM_CREATE_EXTERNAL_RANGE", UVM_CREATE_EXTERNAL_RANGE_PARAMS),
    UVM_MAP_EXTERNAL_ALLOCATION: ("UVM_MAP_EXTERNAL_ALLOCATION", UVM_MAP_EXTERNAL_ALLOCATION_PARAMS),
    UVM_FREE: ("UVM_FREE", UVM_FREE_PARAMS),
    UVM_UNMAP_EXTERNAL: ("UVM_UNMAP_EXTERNAL", UVM_UNMAP_EXTERNAL_PARAMS),
    UVM_PAGEABLE_MEM_ACCESS: ("UVM_PAGEABLE_MEM_ACCESS", UVM_PAGEABLE_MEM_ACCESS_PARAMS),
}
