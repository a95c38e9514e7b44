"""NV_ESC_RM_CONTROL of the mock RM: the controls the NV driver uses, each checked against the class of the
object it is sent to (the command's top 16 bits) and its exact parameter size. Unknown commands are
NV_ERR_NOT_SUPPORTED; the message names them."""
from __future__ import annotations

import ctypes

from gputwin.abi import nv_classes as c
from gputwin.abi import nv_ctrl as k
from gputwin.abi import nv_rm as r
from gputwin.abi import nv_sanitizer_report as sr
from gputwin.errors import SanitizerError
from gputwin.mock.nv_objects import RmStatus

_CLIENT = (c.NV01_ROOT_CLIENT,)
_DEVICE = (c.NV01_DEVICE_0,)
_SUBDEVICE = (c.NV20_SUBDEVICE_0,)
_GROUP = (c.KEPLER_CHANNEL_GROUP_A,)
_CHANNEL = (c.AMPERE_CHANNEL_GPFIFO_A, c.HOPPER_CHANNEL_GPFIFO_A)


def _attached_ids(rm, obj, p: k.NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS):
    ids = [g.gpu_id for g in rm.gpus] + [k.NV0000_CTRL_GPU_INVALID_ID] * (k.NV0000_CTRL_GPU_MAX_ATTACHED_GPUS - len(rm.gpus))
    p.gpuIds[:] = ids


def _probed_ids(rm, obj, p: k.NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS):
    pad = [k.NV0000_CTRL_GPU_INVALID_ID] * (k.NV0000_CTRL_GPU_MAX_PROBED_GPUS - len(rm.gpus))
    p.gpuIds[:] = [g.gpu_id for g in rm.gpus] + pad
    p.excludedGpuIds[:] = [k.NV0000_CTRL_GPU_INVALID_ID] * k.NV0000_CTRL_GPU_MAX_PROBED_GPUS


def _id_info_v2(rm, obj, p: k.NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS):
    g = next((g for g in rm.gpus if g.gpu_id == p.gpuId), None)
    if g is None:
        raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: no GPU with gpuId {p.gpuId:#x}")
    p.deviceInstance, p.subDeviceInstance, p.gpuInstance, p.numaId, p.gpuFlags = g.index, 0, 0, -1, 1


def _classlist(rm, obj, p: k.NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS):
    prof = obj.gpu.emu.profile
    classes = [c.NV01_DEVICE_0, c.NV20_SUBDEVICE_0, c.FERMI_VASPACE_A, c.KEPLER_CHANNEL_GROUP_A, c.FERMI_CONTEXT_SHARE_A,
               c.NV01_MEMORY_LOCAL_USER, c.NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, prof.usermode_class, prof.channel_class,
               prof.compute_class, prof.copy_class]
    p.numClasses = len(classes)
    p.classList[:len(classes)] = classes


def _gpu_id(rm, obj, p: k.NV2080_CTRL_GPU_GET_ID_PARAMS):
    p.gpuId = obj.gpu.gpu_id


def _gid(rm, obj, p: k.NV2080_CTRL_GPU_GET_GID_INFO_PARAMS):
    if p.flags == k.NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY:
        data = obj.gpu.uuid
    elif p.flags == k.NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_ASCII:
        data = obj.gpu.uuid_string().encode() + b"\0"
    else:
        raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"NV2080_CTRL_CMD_GPU_GET_GID_INFO: flags {p.flags:#x}")
    p.length = len(data)
    p.data[:len(data)] = list(data)


def _gr_info(rm, obj, p: k.NV2080_CTRL_GR_GET_INFO_PARAMS):
    what = "NV2080_CTRL_CMD_GR_GET_INFO"
    if not 0 < p.grInfoListSize <= k.NV2080_CTRL_GR_INFO_INDEX_MAX + 1:
        raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{what}: grInfoListSize {p.grInfoListSize}")
    size = p.grInfoListSize * ctypes.sizeof(k.NV2080_CTRL_GR_INFO)
    try:
        items = (k.NV2080_CTRL_GR_INFO * p.grInfoListSize).from_buffer_copy(rm.kernel.copy_from_user(p.grInfoList, size))
    except OSError:
        raise RmStatus(r.NV_ERR_INVALID_POINTER, f"{what}: grInfoList {p.grInfoList:#x} is not readable") from None
    prof = obj.gpu.emu.profile
    values = {k.NV2080_CTRL_GR_INFO_INDEX_SM_VERSION: prof.sm_version,
              k.NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS: prof.gpcs,
              k.NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC: prof.tpc_per_gpc,
              k.NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC: prof.sm_per_tpc,
              k.NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM: prof.max_warps_per_sm,
              k.NV2080_CTRL_GR_INFO_INDEX_MAX_THREADS_PER_WARP: 32}
    for item in items:
        if item.index not in values:
            raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{what}: GR info index {item.index:#x} is not modelled")
        item.data = values[item.index]
    rm.kernel.copy_to_user(p.grInfoList, bytes(items))


def _schedule(rm, obj, p: k.NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS):
    obj.data["scheduled"] = bool(p.bEnable)
    for child in obj.children:
        if child.class_id in _CHANNEL:
            child.data.emu.enabled = bool(p.bEnable)


def _timeslice(rm, obj, p):
    pass


def _work_submit_token(rm, obj, p: k.NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS):
    p.workSubmitToken = obj.data.emu.token


def _mmu_fault_info(rm, obj, p: k.NV906F_CTRL_GET_MMU_FAULT_INFO_PARAMS):
    fault = obj.data.fault
    if fault is None:
        raise RmStatus(r.NV_ERR_INVALID_STATE, "NV906F_CTRL_CMD_GET_MMU_FAULT_INFO: the channel had no MMU fault")
    address, kind, text = fault
    p.addrHi, p.addrLo, p.faultType, p.faultString = address >> 32, address & 0xFFFFFFFF, kind, text.encode()[:31]


def _sanitizer_report(rm, obj, p: sr.GPUTWIN_SANITIZER_REPORT_PARAMS):
    err = obj.data.error
    if not isinstance(err, SanitizerError):
        raise RmStatus(r.NV_ERR_INVALID_STATE, "GPUTWIN_GET_SANITIZER_REPORT: the channel had no sanitizer finding")
    p.valid, p.write, p.address, p.line = 1, int(bool(err.write)), err.address or 0, err.line or 0
    p.kernel, p.instruction = (err.kernel or "").encode()[:127], (err.instruction or "").encode()[:95]
    p.message = err.reason.encode()[:sr.MESSAGE_BYTES - 1]


_CONTROLS = {   # cmd -> (params struct, object classes it is valid on, handler)
    k.NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS: (k.NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS, _CLIENT, _attached_ids),
    k.NV0000_CTRL_CMD_GPU_GET_PROBED_IDS: (k.NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS, _CLIENT, _probed_ids),
    k.NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: (k.NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, _CLIENT, _id_info_v2),
    k.NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2: (k.NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS, _DEVICE, _classlist),
    k.NV2080_CTRL_CMD_GPU_GET_ID: (k.NV2080_CTRL_GPU_GET_ID_PARAMS, _SUBDEVICE, _gpu_id),
    k.NV2080_CTRL_CMD_GPU_GET_GID_INFO: (k.NV2080_CTRL_GPU_GET_GID_INFO_PARAMS, _SUBDEVICE, _gid),
    k.NV2080_CTRL_CMD_GR_GET_INFO: (k.NV2080_CTRL_GR_GET_INFO_PARAMS, _SUBDEVICE, _gr_info),
    k.NVA06C_CTRL_CMD_GPFIFO_SCHEDULE: (k.NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS, _GROUP, _schedule),
    k.NVA06C_CTRL_CMD_SET_TIMESLICE: (k.NVA06C_CTRL_TIMESLICE_PARAMS, _GROUP, _timeslice),
    k.NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN: (k.NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS, _CHANNEL,
                                                     _work_submit_token),
    k.NV906F_CTRL_CMD_GET_MMU_FAULT_INFO: (k.NV906F_CTRL_GET_MMU_FAULT_INFO_PARAMS, _CHANNEL, _mmu_fault_info),
    sr.NV906F_CTRL_CMD_GPUTWIN_GET_SANITIZER_REPORT: (sr.GPUTWIN_SANITIZER_REPORT_PARAMS, _CHANNEL,
                                                      _sanitizer_report),
}


def control(rm, p: r.NVOS54_PARAMETERS) -> None:
    name = k.control_name(p.cmd)
    cl = rm.client(p.hClient, name)
    obj = cl.get(p.hObject, name)
    entry = _CONTROLS.get(p.cmd)
    if entry is None:
        raise RmStatus(r.NV_ERR_NOT_SUPPORTED, f"NV_ESC_RM_CONTROL: {name} is not modelled by the mock RM")
    struct, classes, handler = entry
    if obj.class_id not in classes:
        raise RmStatus(r.NV_ERR_NOT_SUPPORTED, f"{name} sent to {obj.name} {p.hObject:#x}")
    if p.paramsSize != ctypes.sizeof(struct):
        raise RmStatus(r.NV_ERR_INVALID_PARAM_STRUCT, f"{name}: paramsSize {p.paramsSize}, "
                                                     f"sizeof({struct.__name__}) is {ctypes.sizeof(struct)}")
    try:
        params = struct.from_buffer_copy(rm.kernel.copy_from_user(p.params, p.paramsSize))
    except OSError:
        raise RmStatus(r.NV_ERR_INVALID_POINTER, f"{name}: params {p.params:#x} is not readable") from None
    handler(rm, obj, params)
    try:
        rm.kernel.copy_to_user(p.params, bytes(params))
    except OSError:
        raise RmStatus(r.NV_ERR_INVALID_POINTER, f"{name}: params {p.params:#x} is not writable") from None
