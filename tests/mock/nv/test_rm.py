"""Raw ioctls against the mock nvidia.ko / nvidia-uvm: every escape, class and control the NV driver uses,
and their error paths (errno where nvidia.ko fails the ioctl, NV_STATUS where RM answers in the block)."""
import ctypes
import errno

import pytest
from hypothesis import given, settings, strategies as st

from gputwin.abi import nv_classes as c
from gputwin.abi import nv_ctrl as k
from gputwin.abi import nv_rm as r
from gputwin.abi import nv_uvm as u
from gputwin.mock.kernel import MockKernel
from gputwin.mock.nvidia import install


@pytest.fixture
def rig():
    kernel = MockKernel()
    rm = install(kernel, ["sm_90", "sm_80"])
    return kernel, rm, kernel.open("/dev/nvidiactl")


def alloc(ctl, client, parent, cls, params=None, handle=0):
    p = r.NVOS21_PARAMETERS(hRoot=client, hObjectParent=parent, hObjectNew=handle, hClass=cls,
                            pAllocParms=ctypes.addressof(params) if params is not None else 0,
                            paramsSize=ctypes.sizeof(params) if params is not None else 0)
    ctl.ioctl(r.nv_ioctl(r.NV_ESC_RM_ALLOC, p), p)
    return p


def control(ctl, client, obj, cmd, params):
    p = r.NVOS54_PARAMETERS(hClient=client, hObject=obj, cmd=cmd, params=ctypes.addressof(params),
                            paramsSize=ctypes.sizeof(params))
    ctl.ioctl(r.nv_ioctl(r.NV_ESC_RM_CONTROL, p), p)
    return p.status


def tree(ctl, device_id=0):
    client = alloc(ctl, 0, 0, c.NV01_ROOT_CLIENT).hObjectNew
    dev = alloc(ctl, client, client, c.NV01_DEVICE_0, c.NV0080_ALLOC_PARAMETERS(deviceId=device_id)).hObjectNew
    sub = alloc(ctl, client, dev, c.NV20_SUBDEVICE_0, c.NV2080_ALLOC_PARAMETERS()).hObjectNew
    return client, dev, sub


def test_version_check_strict_query_and_mismatch(rig):
    _, rm, ctl = rig
    v = r.nv_ioctl_rm_api_version_t(cmd=r.NV_RM_API_VERSION_CMD_STRICT, versionString=b"580.105.08")
    assert ctl.ioctl(r.nv_ioctl(r.NV_ESC_CHECK_VERSION_STR, v), v) == 0
    v = r.nv_ioctl_rm_api_version_t(cmd=r.NV_RM_API_VERSION_CMD_QUERY)
    ctl.ioctl(r.nv_ioctl(r.NV_ESC_CHECK_VERSION_STR, v), v)
    assert v.versionString == b"580.105.08"
    v = r.nv_ioctl_rm_api_version_t(cmd=r.NV_RM_API_VERSION_CMD_STRICT, versionString=b"570.86.15")
    with pytest.raises(OSError, match="API mismatch") as e:
        ctl.ioctl(r.nv_ioctl(r.NV_ESC_CHECK_VERSION_STR, v), v)
    assert e.value.errno == errno.EINVAL and v.versionString == b"580.105.08"


def test_card_info_lists_every_gpu(rig):
    _, rm, ctl = rig
    cards = (r.nv_ioctl_card_info_t * 4)()
    ctl.ioctl(r.nv_ioctl(r.NV_ESC_CARD_INFO, cards), cards)
    assert [(x.valid, x.minor_number, x.pci_info.vendor_id) for x in cards[:3]] == [(1, 0, 0x10DE), (1, 1, 0x10DE), (0, 0, 0)]
    assert cards[0].pci_info.device_id != cards[1].pci_info.device_id


def test_escape_with_wrong_size_or_on_wrong_file_is_einval(rig):
    kernel, _, ctl = rig
    from gputwin.abi.ioctl import IOWR
    p = r.NVOS21_PARAMETERS()
    with pytest.raises(OSError, match="expected 32") as e:
        ctl.ioctl(IOWR(ord("F"), r.NV_ESC_RM_ALLOC, 24), p)
    assert e.value.errno == errno.EINVAL
    dev0 = kernel.open("/dev/nvidia0")
    with pytest.raises(OSError, match="only valid on /dev/nvidiactl"):
        dev0.ioctl(r.nv_ioctl(r.NV_ESC_RM_ALLOC, p), p)
    with pytest.raises(OSError, match="NV_ESC_RM_DUP_OBJECT is not modelled"):
        ctl.ioctl(IOWR(ord("F"), r.NV_ESC_RM_DUP_OBJECT, 32), p)


def test_object_tree_and_rm_status_codes(rig):
    _, rm, ctl = rig
    client, dev, sub = tree(ctl)
    assert alloc(ctl, client, client, c.NV01_DEVICE_0, c.NV0080_ALLOC_PARAMETERS(deviceId=5)).status == r.NV_ERR_INVALID_ARGUMENT
    assert alloc(ctl, client, client, c.NV01_DEVICE_0, c.NV0080_ALLOC_PARAMETERS(deviceId=0)).status == r.NV_OK
    assert alloc(ctl, client, sub, c.FERMI_VASPACE_A, c.NV_VASPACE_ALLOCATION_PARAMETERS()).status == r.NV_ERR_INVALID_OBJECT_PARENT
    assert alloc(ctl, client, dev, 0xB197, None).status == r.NV_ERR_INVALID_CLASS
    assert alloc(ctl, 0xDEAD, dev, c.FERMI_VASPACE_A, c.NV_VASPACE_ALLOCATION_PARAMETERS()).status == r.NV_ERR_INVALID_CLIENT
    assert alloc(ctl, client, dev, c.FERMI_VASPACE_A, c.NV2080_ALLOC_PARAMETERS()).status == r.NV_ERR_INVALID_PARAM_STRUCT
    assert alloc(ctl, client, sub, c.AMPERE_USERMODE_A).status == r.NV_ERR_INVALID_CLASS       # sm_90 is Hopper
    assert alloc(ctl, client, dev, c.FERMI_VASPACE_A, c.NV_VASPACE_ALLOCATION_PARAMETERS(), handle=sub).status \
        == r.NV_ERR_INSERT_DUPLICATE_NAME
    f = r.NVOS00_PARAMETERS(hRoot=client, hObjectOld=0x1234)
    ctl.ioctl(r.nv_ioctl(r.NV_ESC_RM_FREE, f), f)
    assert f.status == r.NV_ERR_INVALID_OBJECT_HANDLE
    f = r.NVOS00_PARAMETERS(hRoot=client, hObjectOld=client)
    ctl.ioctl(r.nv_ioctl(r.NV_ESC_RM_FREE, f), f)
    assert f.status == r.NV_OK and client not in rm.clients


def test_controls_and_their_errors(rig):
    _, rm, ctl = rig
    client, dev, sub = tree(ctl, device_id=1)
    ids = k.NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS()
    assert control(ctl, client, client, k.NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS, ids) == r.NV_OK
    assert list(ids.gpuIds[:3]) == [rm.gpus[0].gpu_id, rm.gpus[1].gpu_id, k.NV0000_CTRL_GPU_INVALID_ID]
    info = (k.NV2080_CTRL_GR_INFO * 1)(k.NV2080_CTRL_GR_INFO(index=k.NV2080_CTRL_GR_INFO_INDEX_SM_VERSION))
    gp = k.NV2080_CTRL_GR_GET_INFO_PARAMS(grInfoListSize=1, grInfoList=ctypes.addressof(info))
    assert control(ctl, client, sub, k.NV2080_CTRL_CMD_GR_GET_INFO, gp) == r.NV_OK and info[0].data == 0x800
    gid = k.NV2080_CTRL_GPU_GET_GID_INFO_PARAMS(flags=k.NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY)
    assert control(ctl, client, sub, k.NV2080_CTRL_CMD_GPU_GET_GID_INFO, gid) == r.NV_OK
    assert bytes(gid.data[:gid.length]) == rm.gpus[1].uuid
    assert control(ctl, client, dev, k.NV2080_CTRL_CMD_GPU_GET_ID, k.NV2080_CTRL_GPU_GET_ID_PARAMS()) == r.NV_ERR_NOT_SUPPORTED
    assert control(ctl, client, sub, 0x20800999, k.NV2080_CTRL_GPU_GET_ID_PARAMS()) == r.NV_ERR_NOT_SUPPORTED
    bad = k.NV2080_CTRL_GR_GET_INFO_PARAMS(grInfoListSize=1, grInfoList=8)
    assert control(ctl, client, sub, k.NV2080_CTRL_CMD_GR_GET_INFO, bad) == r.NV_ERR_INVALID_POINTER


def test_uvm_requires_initialize_and_checks_ranges(rig):
    kernel, rm, ctl = rig
    client, dev, sub = tree(ctl)
    uvm = kernel.open("/dev/nvidia-uvm")
    p = u.UVM_CREATE_EXTERNAL_RANGE_PARAMS(base=1 << 36, length=1 << 21)
    uvm.ioctl(u.UVM_CREATE_EXTERNAL_RANGE, p)
    assert p.rmStatus == r.NV_ERR_ILLEGAL_ACTION
    with pytest.raises(OSError) as e:
        uvm.ioctl(0x1234, p)
    assert e.value.errno == errno.EINVAL
    uvm.ioctl(u.UVM_INITIALIZE, i := u.UVM_INITIALIZE_PARAMS())
    assert i.rmStatus == r.NV_OK
    g = u.UVM_REGISTER_GPU_PARAMS(rmCtrlFd=ctl.fd, hClient=client)
    uvm.ioctl(u.UVM_REGISTER_GPU, g)
    assert g.rmStatus == r.NV_ERR_GPU_UUID_NOT_FOUND
    uvm.ioctl(u.UVM_CREATE_EXTERNAL_RANGE, p)
    assert p.rmStatus == r.NV_OK
    uvm.ioctl(u.UVM_CREATE_EXTERNAL_RANGE, p)
    assert p.rmStatus == r.NV_ERR_UVM_ADDRESS_IN_USE
    mp = u.UVM_MAP_EXTERNAL_ALLOCATION_PARAMS(base=1 << 40, length=4096, gpuAttributesCount=1, rmCtrlFd=ctl.fd,
                                              hClient=client, hMemory=dev)
    uvm.ioctl(u.UVM_MAP_EXTERNAL_ALLOCATION, mp)
    assert mp.rmStatus == r.NV_ERR_INVALID_ADDRESS


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(c.CLASS_NAMES)), st.integers(0, 6), st.binary(max_size=96),
                          st.integers(0, 400)), max_size=8),
       st.lists(st.tuples(st.sampled_from(sorted(k.CONTROL_NAMES)), st.integers(0, 6), st.binary(max_size=64)),
                max_size=6))
def test_fuzz_rm_sequences_answer_with_status_codes_never_crash(allocs, controls):
    kernel = MockKernel()
    install(kernel, ["sm_90"])
    ctl = kernel.open("/dev/nvidiactl")
    handles = list(tree(ctl))
    known = set(r.NV_STATUS_CODES.values())
    for cls, parent, blob, size in allocs:
        buf = ctypes.create_string_buffer(blob.ljust(size, b"\0")[:size] or b"\0")
        p = r.NVOS21_PARAMETERS(hRoot=handles[0], hObjectParent=handles[parent % len(handles)], hClass=cls,
                                pAllocParms=ctypes.addressof(buf), paramsSize=size)
        ctl.ioctl(r.nv_ioctl(r.NV_ESC_RM_ALLOC, p), p)
        assert p.status in known
        if p.status == r.NV_OK:
            handles.append(p.hObjectNew)
    for cmd, obj, blob in controls:
        buf = ctypes.create_string_buffer(blob or b"\0")
        p = r.NVOS54_PARAMETERS(hClient=handles[0], hObject=handles[obj % len(handles)], cmd=cmd,
                                params=ctypes.addressof(buf), paramsSize=len(blob))
        ctl.ioctl(r.nv_ioctl(r.NV_ESC_RM_CONTROL, p), p)
        assert p.status in known


_ESCAPE_STRUCTS = [(r.NV_ESC_RM_ALLOC, r.NVOS21_PARAMETERS, 16), (r.NV_ESC_RM_CONTROL, r.NVOS54_PARAMETERS, 16),
                   (r.NV_ESC_RM_FREE, r.NVOS00_PARAMETERS, None), (r.NV_ESC_RM_MAP_MEMORY, r.nv_ioctl_nvos33_parameters_with_fd, None),
                   (r.NV_ESC_RM_ALLOC_MEMORY, r.nv_ioctl_nvos02_parameters_with_fd, None),
                   (r.NV_ESC_CHECK_VERSION_STR, r.nv_ioctl_rm_api_version_t, None),
                   (r.NV_ESC_REGISTER_FD, r.nv_ioctl_register_fd_t, None)]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(_ESCAPE_STRUCTS), st.booleans(), st.binary(min_size=72, max_size=72), st.binary(max_size=400))
def test_fuzz_malformed_escape_blocks_fail_with_errno_or_status(entry, on_gpu_file, raw, scratch_bytes):
    """Random parameter blocks (user pointers aimed at a scratch buffer or nowhere): the mock answers with
    EINVAL/EFAULT or an NV_STATUS, never another exception, and the process survives."""
    kernel = MockKernel()
    install(kernel, ["sm_90"])
    f = kernel.open("/dev/nvidia0" if on_gpu_file else "/dev/nvidiactl")
    escape, struct, ptr_off = entry
    block = bytearray(raw[:ctypes.sizeof(struct)])
    scratch = ctypes.create_string_buffer(scratch_bytes.ljust(400, b"\0"))
    if ptr_off is not None:
        block[ptr_off:ptr_off + 8] = (ctypes.addressof(scratch) if raw[0] & 1 else raw[0]).to_bytes(8, "little")
    if escape == r.NV_ESC_RM_ALLOC_MEMORY:
        block[24:32] = (0).to_bytes(8, "little")     # pMemory: never let RM wrap random host pages
    p = struct.from_buffer_copy(bytes(block))
    try:
        f.ioctl(r.nv_ioctl(escape, p), p)
    except OSError as e:
        assert e.errno in (errno.EINVAL, errno.EFAULT)
        return
    status = getattr(p, "status", None)
    if status is None and hasattr(p, "params"):
        status = p.params.status
    assert status is None or status in set(r.NV_STATUS_CODES.values())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(u.IOCTLS)), st.binary(max_size=64)), min_size=1, max_size=6))
def test_fuzz_uvm_sequences_of_malformed_blocks(calls):
    kernel = MockKernel()
    rm = install(kernel, ["sm_90"])
    uvm = kernel.open("/dev/nvidia-uvm")
    known = set(r.NV_STATUS_CODES.values())
    for request, raw in calls:
        struct = u.IOCTLS[request][1]
        p = struct.from_buffer_copy(raw.ljust(ctypes.sizeof(struct), b"\0")[:ctypes.sizeof(struct)])
        uvm.ioctl(request, p)
        assert p.rmStatus in known
    uvm.close()
    assert not rm.gpus[0].emu.mem.regions()


def test_freeing_memory_a_channel_uses_takes_the_channel_off_the_gpu():
    """No emulated access may touch released pages: freeing USERD memory removes the channel."""
    import gputwin
    from gputwin import device as devmod
    dev = gputwin.open_device("MOCKNV")
    gpu = devmod.emulated_gpu(dev)
    ring_memory = dev.compute_channel.ring.meta[0]
    dev.rm.free(ring_memory)
    assert [ch.token for ch in gpu.channels.values()] == [dev.copy_channel.token]
    dev._lost = RuntimeError("test tore the compute channel down")
    dev.close()


def test_rm_alloc_also_takes_an_nvos64_block(rig):
    _, rm, ctl = rig
    client = alloc(ctl, 0, 0, c.NV01_ROOT_CLIENT).hObjectNew
    params = c.NV0080_ALLOC_PARAMETERS(deviceId=1)
    p = r.NVOS64_PARAMETERS(hRoot=client, hObjectParent=client, hObjectNew=0x1234, hClass=c.NV01_DEVICE_0,
                            pAllocParms=ctypes.addressof(params), paramsSize=ctypes.sizeof(params))
    ctl.ioctl(r.nv_ioctl(r.NV_ESC_RM_ALLOC, p), p)
    assert (p.status, p.hObjectNew) == (r.NV_OK, 0x1234)
    assert rm.clients[client].objects[0x1234].gpu is rm.gpus[1]
    p.hObjectNew, p.pRightsRequested = 0x1235, ctypes.addressof(params)
    ctl.ioctl(r.nv_ioctl(r.NV_ESC_RM_ALLOC, p), p)
    assert p.status == r.NV_ERR_NOT_SUPPORTED
