"""NV ABI layouts pinned against numbers read from open-gpu-kernel-modules 580.105.08 / open-gpu-doc text."""
import ctypes

import pytest

from gputwin.abi import nv_classes as c
from gputwin.abi import nv_ctrl as k
from gputwin.abi import nv_methods as m
from gputwin.abi import nv_qmd as q
from gputwin.abi import nv_rm as r
from gputwin.abi import nv_uvm as u


def test_escape_requests_are_iowr_F_with_the_struct_size():
    assert r.nv_ioctl(r.NV_ESC_RM_ALLOC, r.NVOS21_PARAMETERS) == 0xC020462B
    assert r.nv_ioctl(r.NV_ESC_RM_CONTROL, r.NVOS54_PARAMETERS) == 0xC020462A
    assert r.nv_ioctl(r.NV_ESC_CHECK_VERSION_STR, r.nv_ioctl_rm_api_version_t) == 0xC04846D2
    assert (r.NV_ESC_CARD_INFO, r.NV_ESC_REGISTER_FD, r.NV_ESC_RM_MAP_MEMORY) == (200, 201, 0x4E)


@pytest.mark.parametrize("struct,size,offsets", [
    (r.NVOS21_PARAMETERS, 32, {"pAllocParms": 16, "paramsSize": 24, "status": 28}),
    (r.NVOS54_PARAMETERS, 32, {"params": 16, "paramsSize": 24, "status": 28}),
    (r.NVOS33_PARAMETERS, 48, {"offset": 16, "pLinearAddress": 32, "status": 40, "flags": 44}),
    (r.NVOS02_PARAMETERS, 48, {"pMemory": 24, "limit": 32, "status": 40}),
    (r.nv_ioctl_nvos33_parameters_with_fd, 56, {"fd": 48}),
    (r.nv_ioctl_card_info_t, 72, {"gpu_id": 16, "reg_address": 24, "fb_size": 48, "minor_number": 56}),
    (r.nv_ioctl_rm_api_version_t, 72, {"versionString": 8}),
    (c.NV_CHANNEL_ALLOC_PARAMS, 368, {"gpFifoOffset": 8, "gpFifoEntries": 16, "hUserdMemory": 32, "userdOffset": 64,
                                      "engineType": 128, "instanceMem": 144, "errorNotifierMem": 248, "tpcConfigID": 360}),
    (c.NV_MEMORY_ALLOCATION_PARAMS, 128, {"rangeLo": 48, "size": 64, "address": 96, "hVASpace": 108}),
    (c.NV0080_ALLOC_PARAMETERS, 56, {"vaSpaceSize": 24, "vaMode": 48}),
    (u.UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, 9264, {"perGpuAttributes": 24, "gpuAttributesCount": 9240, "rmStatus": 9260}),
    (u.UVM_REGISTER_GPU_PARAMS, 40, {"rmCtrlFd": 24, "hClient": 28, "rmStatus": 36}),
    (k.NV2080_CTRL_GR_GET_INFO_PARAMS, 32, {"grInfoList": 8, "grRouteInfo": 16}),
])
def test_struct_layouts_match_the_headers(struct, size, offsets):
    assert ctypes.sizeof(struct) == size
    for name, off in offsets.items():
        assert getattr(struct, name).offset == off, name


def test_class_and_control_numbers():
    assert (c.HOPPER_CHANNEL_GPFIFO_A, c.HOPPER_COMPUTE_A, c.HOPPER_DMA_COPY_A, c.HOPPER_USERMODE_A) == \
        (0xC86F, 0xCBC0, 0xC8B5, 0xC661)
    assert (k.NV2080_CTRL_CMD_GR_GET_INFO, k.NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN,
            k.NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, k.NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2) == \
        (0x20801201, 0xC36F0108, 0xA06C0101, 0x800292)
    assert (u.UVM_REGISTER_GPU, u.UVM_CREATE_EXTERNAL_RANGE, u.UVM_INITIALIZE) == (37, 73, 0x30000001)


def test_method_header_and_gpfifo_entry_encodings():
    # NVC56F_DMA_INCR: OPCODE 31:29 = 1, COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 (method >> 2)
    assert m.method_header(m.SEC_OP_INC_METHOD, 4, 0x300, 1) == 0x2001_80C0
    assert m.decode_header(0x2001_80C0) == (1, 4, 0x300, 1)
    e0, e1 = m.gp_entry(0x12_3456_7890, 5)
    assert e0 == 0x3456_7890 and e1 == (0x12 | 5 << 10)


def test_qmd_v03_field_positions():
    qmd = q.QMD().set("QMD_MAJOR_VERSION", 3).set("CTA_THREAD_DIMENSION0", 0x80).set("RELEASE0_ENABLE", 1)
    d = qmd.dwords()
    assert d[18] & 0xFFFF == 3 << 4             # MW(583:580): dword 18 bits 7:4
    assert d[18] >> 16 == 0x80                  # CTA_THREAD_DIMENSION0 MW(607:592)
    assert d[25] == 1 << 23                     # RELEASE0_ENABLE MW(823:823)
    with pytest.raises(ValueError, match="CTA_RASTER_HEIGHT"):
        q.QMD().set("CTA_RASTER_HEIGHT", 1 << 16)
