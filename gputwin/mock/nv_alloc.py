"""NV_ESC_RM_ALLOC / RM_ALLOC_MEMORY of the mock RM: one handler per class, checking the parent's class and
the class's parameter block as RM does, and what freeing each object undoes."""
from __future__ import annotations

import ctypes

from gputwin.abi import nv_classes as c
from gputwin.abi import nv_rm as r
from gputwin.abi.nv_methods import USERD_SIZE
from gputwin.emu.nv.compute import ComputeEngine
from gputwin.emu.nv.copy import CopyEngine
from gputwin.mock.kfd_state import PAGE, SharedMemory

HUGE_PAGE = 2 << 20
from gputwin.mock.nv_objects import Memory, RmObject, RmStatus, expect_parent, page_up

USERMODE = (c.TURING_USERMODE_A, c.AMPERE_USERMODE_A, c.HOPPER_USERMODE_A)


class ChannelState:
    def __init__(self, emu_channel, error_notifier: RmObject | None, group: RmObject, userd: RmObject):
        self.emu, self.error_notifier, self.group, self.userd = emu_channel, error_notifier, group, userd
        self.fault: tuple[int, int, str] | None = None        # (address, fault type, text) of an MMU fault
        self.error: BaseException | None = None               # what stopped the channel (sanitizer reports)


def _params(rm, p: r.NVOS21_PARAMETERS, struct, what: str):
    if struct is None:
        return None
    if p.paramsSize != ctypes.sizeof(struct):
        raise RmStatus(r.NV_ERR_INVALID_PARAM_STRUCT, f"{what}: paramsSize {p.paramsSize}, "
                                                     f"sizeof({struct.__name__}) is {ctypes.sizeof(struct)}")
    try:
        return struct.from_buffer_copy(rm.kernel.copy_from_user(p.pAllocParms, p.paramsSize))
    except OSError:
        raise RmStatus(r.NV_ERR_INVALID_POINTER, f"{what}: pAllocParms {p.pAllocParms:#x} is not readable") from None


def alloc(rm, p: r.NVOS21_PARAMETERS) -> None:
    what = f"NV_ESC_RM_ALLOC of {c.CLASS_NAMES.get(p.hClass, hex(p.hClass))}"
    if p.hClass in (c.NV01_ROOT, c.NV01_ROOT_NON_PRIV, c.NV01_ROOT_CLIENT):
        params = _params(rm, p, c.NV0000_ALLOC_PARAMETERS, what) if p.paramsSize else None
        cl = rm.new_client(p.hObjectNew or (params.hClient if params else 0))
        p.hObjectNew = cl.handle
        if params is not None:
            params.hClient = cl.handle
            rm.kernel.copy_to_user(p.pAllocParms, bytes(params))
        return
    entry = _CLASSES.get(p.hClass)
    if entry is None:
        raise RmStatus(r.NV_ERR_INVALID_CLASS, f"NV_ESC_RM_ALLOC: class {p.hClass:#x} is not modelled by the mock RM")
    struct, parents, handler = entry
    cl = rm.client(p.hRoot, what)
    parent = cl.get(p.hObjectParent, what, r.NV_ERR_INVALID_OBJECT_PARENT)
    expect_parent(parent, parents, what)
    handle = p.hObjectNew or cl.new_handle()
    if handle in cl.objects:
        raise RmStatus(r.NV_ERR_INSERT_DUPLICATE_NAME, f"{what}: handle {handle:#x} is in use")
    params = _params(rm, p, struct, what)
    obj = RmObject(handle, p.hClass, parent, parent.gpu)
    handler(rm, cl, obj, params, what)
    cl.add(obj)
    p.hObjectNew = handle


def _device(rm, cl, obj, a: c.NV0080_ALLOC_PARAMETERS, what):
    if a.deviceId >= len(rm.gpus):
        raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{what}: deviceId {a.deviceId}, the machine has {len(rm.gpus)} GPUs")
    # a second device object of the same instance in one client is allowed on bare metal (device.c refuses
    # it only for virtual GPUs)
    obj.gpu = rm.gpus[a.deviceId]


def _subdevice(rm, cl, obj, a: c.NV2080_ALLOC_PARAMETERS, what):
    if a.subDeviceId != 0:
        raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{what}: subDeviceId {a.subDeviceId} (one subdevice per device)")


def _usermode(rm, cl, obj, a, what):
    if obj.class_id != obj.gpu.emu.profile.usermode_class:
        raise RmStatus(r.NV_ERR_INVALID_CLASS, f"{what}: the GPU ({obj.gpu.emu.arch}) has usermode class "
                                               f"{obj.gpu.emu.profile.usermode_class:#x}")
    obj.data = SharedMemory(c.USERMODE_SIZE, "nv-usermode")


def _vaspace(rm, cl, obj, a: c.NV_VASPACE_ALLOCATION_PARAMETERS, what):
    if a.index != c.NV_VASPACE_ALLOCATION_INDEX_GPU_NEW:
        raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{what}: index {a.index} (only GPU_NEW is modelled)")


def _sibling(cl, handle: int, class_ids: tuple, gpu, what: str, field: str) -> RmObject:
    obj = cl.objects.get(handle)
    if obj is None or obj.class_id not in class_ids or obj.gpu is not gpu:
        raise RmStatus(r.NV_ERR_INVALID_OBJECT_HANDLE, f"{what}: {field} {handle:#x} is no "
                                                       f"{'/'.join(c.CLASS_NAMES.get(k, hex(k)) for k in class_ids)} "
                                                       f"of this GPU")
    return obj


def _channel_group(rm, cl, obj, a: c.NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, what):
    if a.engineType != c.NV2080_ENGINE_TYPE_GRAPHICS:
        raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{what}: engineType {a.engineType} (only GRAPHICS is modelled)")
    if a.hVASpace:
        _sibling(cl, a.hVASpace, (c.FERMI_VASPACE_A,), obj.gpu, what, "hVASpace")
    err = _sibling(cl, a.hObjectError, (c.NV01_MEMORY_LOCAL_USER, c.NV01_MEMORY_SYSTEM_OS_DESCRIPTOR), obj.gpu,
                   what, "hObjectError") if a.hObjectError else None
    obj.data = {"scheduled": False, "error": err}


def _ctxshare(rm, cl, obj, a: c.NV_CTXSHARE_ALLOCATION_PARAMETERS, what):
    _sibling(cl, a.hVASpace, (c.FERMI_VASPACE_A,), obj.gpu, what, "hVASpace")


def _channel(rm, cl, obj, a: c.NV_CHANNEL_ALLOC_PARAMS, what):
    emu = obj.gpu.emu
    if obj.class_id != emu.profile.channel_class:
        raise RmStatus(r.NV_ERR_INVALID_CLASS, f"{what}: the GPU ({emu.arch}) has channel class {emu.profile.channel_class:#x}")
    _sibling(cl, a.hContextShare, (c.FERMI_CONTEXT_SHARE_A,), obj.gpu, what, "hContextShare")
    if a.gpFifoEntries == 0 or a.gpFifoEntries & (a.gpFifoEntries - 1) or a.gpFifoOffset % 8:
        raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{what}: gpFifoEntries {a.gpFifoEntries} (a power of two) at "
                                                  f"{a.gpFifoOffset:#x} (8-aligned)")
    userd = _sibling(cl, a.hUserdMemory[0], (c.NV01_MEMORY_LOCAL_USER, c.NV01_MEMORY_SYSTEM_OS_DESCRIPTOR), obj.gpu,
                     what, "hUserdMemory[0]")
    if a.userdOffset[0] % USERD_SIZE or a.userdOffset[0] + USERD_SIZE > userd.data.size:
        raise RmStatus(r.NV_ERR_INVALID_OFFSET, f"{what}: userdOffset {a.userdOffset[0]:#x} in {userd.data.size:#x} bytes")
    err = _sibling(cl, a.hObjectError, (c.NV01_MEMORY_LOCAL_USER, c.NV01_MEMORY_SYSTEM_OS_DESCRIPTOR), obj.gpu,
                   what, "hObjectError") if a.hObjectError else obj.parent.data["error"]
    ch = emu.create_channel(a.gpFifoOffset, a.gpFifoEntries, userd.data.view(a.userdOffset[0], USERD_SIZE),
                            name=f"{emu.name} channel {obj.handle:#x}")
    ch.enabled = obj.parent.data["scheduled"]
    obj.data = ChannelState(ch, err, obj.parent, userd)
    rm.channels[ch] = obj


def _engine(kind):
    def handler(rm, cl, obj, a, what):
        prof = obj.gpu.emu.profile
        want = prof.compute_class if kind is ComputeEngine else prof.copy_class
        if obj.class_id != want:
            raise RmStatus(r.NV_ERR_INVALID_CLASS, f"{what}: the GPU ({obj.gpu.emu.arch}) has class {want:#x} for that engine")
        if kind is CopyEngine and a is not None and a.version == c.NVB0B5_ALLOCATION_PARAMETERS_VERSION_1 \
                and a.engineType != c.NV2080_ENGINE_TYPE_COPY0:
            raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{what}: engineType {a.engineType} (COPY0 is modelled)")
        ch = obj.parent.data.emu
        if want in ch.objects:
            raise RmStatus(r.NV_ERR_INVALID_STATE, f"{what}: the channel already has a {c.CLASS_NAMES[want]} object")
        engine = kind(ch, want)
        ch.bind_object(want, engine)
        obj.data = engine
    return handler


def _local_memory(rm, cl, obj, a: c.NV_MEMORY_ALLOCATION_PARAMS, what):
    if a.size == 0:
        raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{what}: size 0")
    # RM rounds the size to the page size the attributes ask for (2 MiB for huge pages); the size asked
    # for is kept: memcheck bounds accesses by it (docs/sanitizers.md)
    huge = c.NVOS32_ATTR_PAGE_SIZE.get(a.attr) == c.NVOS32_ATTR_PAGE_SIZE_HUGE
    size = -(-a.size // HUGE_PAGE) * HUGE_PAGE if huge else page_up(a.size)
    used = sum(o.data.size for o in _all(rm) if o.class_id == c.NV01_MEMORY_LOCAL_USER and o.gpu is obj.gpu)
    if used + size > obj.gpu.emu.profile.vram_bytes:
        raise RmStatus(r.NV_ERR_NO_MEMORY, f"{what}: {size:#x} bytes exceed the free video memory")
    shared = SharedMemory(size, f"nv-vidmem-{obj.handle:#x}")
    obj.data = Memory(size, shared.addr, shared, asked=a.size)


def _all(rm):
    for cl in rm.clients.values():
        yield from cl.objects.values()


_CLASSES = {   # class -> (params struct, allowed parent classes, handler)
    c.NV01_DEVICE_0: (c.NV0080_ALLOC_PARAMETERS, (c.NV01_ROOT_CLIENT,), _device),
    c.NV20_SUBDEVICE_0: (c.NV2080_ALLOC_PARAMETERS, (c.NV01_DEVICE_0,), _subdevice),
    c.FERMI_VASPACE_A: (c.NV_VASPACE_ALLOCATION_PARAMETERS, (c.NV01_DEVICE_0,), _vaspace),
    c.KEPLER_CHANNEL_GROUP_A: (c.NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, (c.NV01_DEVICE_0,), _channel_group),
    c.FERMI_CONTEXT_SHARE_A: (c.NV_CTXSHARE_ALLOCATION_PARAMETERS, (c.KEPLER_CHANNEL_GROUP_A,), _ctxshare),
    c.NV01_MEMORY_LOCAL_USER: (c.NV_MEMORY_ALLOCATION_PARAMS, (c.NV01_DEVICE_0,), _local_memory),
    **{k: (c.NV_HOPPER_USERMODE_A_PARAMS if k == c.HOPPER_USERMODE_A else None, (c.NV20_SUBDEVICE_0,), _usermode)
       for k in USERMODE},
    **{k: (c.NV_CHANNEL_ALLOC_PARAMS, (c.KEPLER_CHANNEL_GROUP_A,), _channel)
       for k in (c.AMPERE_CHANNEL_GPFIFO_A, c.HOPPER_CHANNEL_GPFIFO_A)},
    **{k: (c.NV_GR_ALLOCATION_PARAMETERS, (c.AMPERE_CHANNEL_GPFIFO_A, c.HOPPER_CHANNEL_GPFIFO_A), _engine(ComputeEngine))
       for k in (c.AMPERE_COMPUTE_A, c.HOPPER_COMPUTE_A)},
    **{k: (c.NVB0B5_ALLOCATION_PARAMETERS, (c.AMPERE_CHANNEL_GPFIFO_A, c.HOPPER_CHANNEL_GPFIFO_A), _engine(CopyEngine))
       for k in (c.AMPERE_DMA_COPY_A, c.HOPPER_DMA_COPY_A)},
}
for _k in USERMODE:       # Turing/Ampere usermode classes take no parameters
    if _k != c.HOPPER_USERMODE_A:
        _CLASSES[_k] = (None, (c.NV20_SUBDEVICE_0,), _usermode)


def alloc_os_descriptor(rm, f, p: r.NVOS02_PARAMETERS) -> None:
    """NV_ESC_RM_ALLOC_MEMORY of NV01_MEMORY_SYSTEM_OS_DESCRIPTOR: wrap the user's pages at pMemory."""
    what = "NV_ESC_RM_ALLOC_MEMORY"
    if p.hClass != c.NV01_MEMORY_SYSTEM_OS_DESCRIPTOR:
        raise RmStatus(r.NV_ERR_INVALID_CLASS, f"{what}: class {p.hClass:#x} (only NV01_MEMORY_SYSTEM_OS_DESCRIPTOR "
                                               f"is modelled)")
    cl = rm.client(p.hRoot, what)
    parent = cl.get(p.hObjectParent, what, r.NV_ERR_INVALID_OBJECT_PARENT)
    expect_parent(parent, (c.NV01_DEVICE_0,), what)
    if parent.gpu is not f.gpu:
        raise RmStatus(r.NV_ERR_INVALID_DEVICE, f"{what}: issued on /dev/nvidia{f.gpu.index} for a device of GPU "
                                                f"{parent.gpu.index}")
    size = p.limit + 1
    if p.pMemory % PAGE or size % PAGE or p.limit >= 1 << 47:
        raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{what}: pMemory {p.pMemory:#x} limit {p.limit:#x} (page-aligned)")
    try:
        rm.kernel.copy_from_user(p.pMemory, 1)
        rm.kernel.copy_from_user(p.pMemory + size - 1, 1)
    except OSError:
        raise RmStatus(r.NV_ERR_INVALID_ADDRESS, f"{what}: [{p.pMemory:#x}, +{size:#x}) is not mapped user memory") from None
    handle = p.hObjectNew or cl.new_handle()
    if handle in cl.objects:
        raise RmStatus(r.NV_ERR_INSERT_DUPLICATE_NAME, f"{what}: handle {handle:#x} is in use")
    obj = RmObject(handle, p.hClass, parent, parent.gpu, Memory(size, p.pMemory))
    cl.add(obj)
    p.hObjectNew = handle


def release(rm, obj: RmObject) -> None:
    """What freeing one object undoes (children are freed first). RM keeps memory a channel uses alive by
    reference; the mock instead takes a channel whose USERD is freed off the GPU and forgets a freed error
    notifier, so no emulated access ever touches released pages."""
    if isinstance(obj.data, Memory):
        for ch_obj in list(rm.channels.values()):
            state = ch_obj.data
            if state.userd is obj:
                state.emu.stopped = True
                rm.channels.pop(state.emu, None)
                ch_obj.gpu.emu.destroy_channel(state.emu)
            if state.error_notifier is obj:
                state.error_notifier = None
        for group in (o for o in _all(rm)
                      if o.class_id == c.KEPLER_CHANNEL_GROUP_A and o.data and o.data.get("error") is obj):
            group.data["error"] = None
        obj.data.release()
    elif isinstance(obj.data, ChannelState):
        rm.channels.pop(obj.data.emu, None)
        obj.gpu.emu.destroy_channel(obj.data.emu)
    elif obj.class_id in USERMODE and obj.data is not None:
        obj.data.release()
    elif isinstance(obj.data, (ComputeEngine, CopyEngine)):
        obj.data.ch.objects.pop(obj.data.class_id, None)
        for sc, e in list(obj.data.ch.engines.items()):
            if e is obj.data:
                del obj.data.ch.engines[sc]


def channel_error(rm, obj: RmObject, event) -> None:
    """RC: write the channel's error notifier, remember an MMU fault for NV906F_CTRL_CMD_GET_MMU_FAULT_INFO."""
    state: ChannelState = obj.data
    err = event.error
    if event.kind == "memory_fault":
        code = c.ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT
        state.fault = (getattr(err, "address", 0) or 0, 1 if getattr(err, "write", False) else 0, str(err)[:31])
    elif event.kind == "hang":
        code = c.ROBUST_CHANNEL_PREEMPTIVE_REMOVAL
    elif type(err).__name__ == "MethodError":
        code = c.ROBUST_CHANNEL_PBDMA_ERROR
    else:
        code = c.ROBUST_CHANNEL_GR_EXCEPTION
    state.error, state.error_text = err, f"{type(err).__name__}: {err}"
    if state.error_notifier is not None:
        note = c.NvNotification(info32=code, status=c.NV_NOTIFICATION_STATUS_ERROR)
        ns = obj.gpu.emu.timestamp_ns()
        note.timeStamp[0], note.timeStamp[1] = ns & 0xFFFFFFFF, ns >> 32
        state.error_notifier.data.view(0, ctypes.sizeof(note))[:] = memoryview(bytes(note)).cast("B")
