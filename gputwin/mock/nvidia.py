"""The mock nvidia.ko: /dev/nvidiactl, /dev/nvidia0..N-1 and (mock/nvidia_uvm.py) /dev/nvidia-uvm over one
emulated NV GPU (gputwin.emu.nv.gpu.NVGPU) per arch.

`install(kernel, archs, version=...)` mounts them in a MockKernel. Escapes follow nvidia.ko 580.105.08
(`kernel-open/nvidia/nv.c`, `arch/nvalloc/unix/src/escape.c`): the parameter block's size must be exactly
the escape's struct (else EINVAL), RM escapes go to /dev/nvidiactl, RM_ALLOC_MEMORY and mmap to a GPU file
(else EINVAL); RM's own verdict is the NV_STATUS in the block (docs/mock-nv.md lists them). Faults and hangs
of a channel come back the way RM reports them: the channel's error notifier (NvNotification at offset 0 of
its hObjectError memory: robust-channel code in info32, status 0xFFFF) and, for MMU faults, the fault
address through NV906F_CTRL_CMD_GET_MMU_FAULT_INFO.
"""
from __future__ import annotations

import ctypes
import errno

from gputwin.abi import nv_classes as c
from gputwin.abi import nv_rm as r
from gputwin.abi.ioctl import IOC_NR, IOC_SIZE
from gputwin.drivers.kernel import MAP_SHARED, Mapping
from gputwin.emu.nv.gpu import NVGPU, GpuEvent
from gputwin.mock import nv_alloc, nv_control
from gputwin.mock.kernel import MockDevice, MockKernel
from gputwin.mock.kfd_state import fail
from gputwin.mock.nv_objects import CLIENT_HANDLE_BASE, Client, MockGpu, RmObject, RmStatus

RM_VERSION = "580.105.08"
CTL_MINOR = 255


def install(kernel: MockKernel, archs: list[str], version: str = RM_VERSION) -> "MockRM":
    rm = MockRM(kernel, archs, version)
    kernel.mount_device("/dev/nvidiactl", NvidiaFile(rm, None))
    for g in rm.gpus:
        kernel.mount_device(f"/dev/nvidia{g.index}", NvidiaFile(rm, g))
    from gputwin.mock.nvidia_uvm import MockUVM
    rm.uvm = MockUVM(rm)
    kernel.mount_device("/dev/nvidia-uvm", rm.uvm)
    return rm


class OpenFile:
    """nv_linux_file_private_t: which device, the registered control fd, the pending mmap context."""

    def __init__(self, gpu: MockGpu | None):
        self.gpu, self.ctl_fd, self.mmap_context = gpu, None, None


class UsermodeMapping(Mapping):
    """The usermode region (HOPPER/AMPERE_USERMODE_A): writes of a work-submit token to
    NOTIFY_CHANNEL_PENDING (0x90) ring the GPU's doorbell."""

    def __init__(self, addr: int, size: int, gpu: MockGpu, backing):
        super().__init__(addr, size)
        self.gpu, self._backing = gpu, backing

    def write32(self, offset: int, value: int) -> None:
        super().write32(offset, value)
        if offset == c.NVC361_NOTIFY_CHANNEL_PENDING:
            self.gpu.emu.doorbell(value & 0xFFFFFFFF)


class MockRM:
    def __init__(self, kernel: MockKernel, archs: list[str], version: str):
        if not archs:
            raise ValueError("a mock nvidia.ko needs at least one GPU arch")
        self.kernel, self.version = kernel, version
        self.gpus = [MockGpu.make(i, NVGPU(a, name=f"{a}#{i}")) for i, a in enumerate(archs)]
        for g in self.gpus:
            g.emu.listener = lambda event, g=g: self.on_gpu_event(g, event)
        self.clients: dict[int, Client] = {}
        self.channels: dict = {}          # emulated Channel -> RmObject of the channel
        self.faults: list = []            # (gpu index, GpuEvent), for inspection
        self.uvm = None

    # --- clients and objects -------------------------------------------------------------------------
    def client(self, handle: int, what: str) -> Client:
        cl = self.clients.get(handle)
        if cl is None:
            raise RmStatus(r.NV_ERR_INVALID_CLIENT, f"{what}: no client {handle:#x}")
        return cl

    def new_client(self, wanted: int) -> Client:
        handle = wanted or next(h for h in range(CLIENT_HANDLE_BASE, CLIENT_HANDLE_BASE + (1 << 20))
                                if h not in self.clients)
        if handle in self.clients:
            raise RmStatus(r.NV_ERR_INSERT_DUPLICATE_NAME, f"client handle {handle:#x} is in use")
        self.clients[handle] = Client(handle)
        return self.clients[handle]

    def free_object(self, client: Client, obj: RmObject) -> None:
        def on_free(o: RmObject) -> None:
            nv_alloc.release(self, o)
        client.free(obj, on_free)
        if obj is client.root:
            del self.clients[client.handle]

    def memory(self, hclient: int, hmemory: int, what: str):
        cl = self.client(hclient, what)
        obj = cl.get(hmemory, what, r.NV_ERR_OBJECT_NOT_FOUND)
        if obj.class_id not in (c.NV01_MEMORY_LOCAL_USER, c.NV01_MEMORY_SYSTEM_OS_DESCRIPTOR):
            raise RmStatus(r.NV_ERR_INVALID_OBJECT_HANDLE, f"{what}: {hmemory:#x} is {obj.name}, not memory")
        return obj

    # --- reports from the GPU --------------------------------------------------------------------------
    def on_gpu_event(self, g: MockGpu, event: GpuEvent) -> None:
        if event.kind == "nonstall":
            return
        self.faults.append((g.index, event))
        obj = self.channels.get(event.channel)
        if obj is not None:
            nv_alloc.channel_error(self, obj, event)


class NvidiaFile(MockDevice):
    """/dev/nvidiactl (gpu None) or /dev/nvidiaN."""

    def __init__(self, rm: MockRM, gpu: MockGpu | None):
        self.rm, self.gpu = rm, gpu

    def open(self, kernel, path, flags):
        return OpenFile(self.gpu)

    def ioctl(self, f: OpenFile, request: int, arg: bytearray) -> int:
        escape, size = IOC_NR(request), IOC_SIZE(request)
        handler = _ESCAPES.get(escape)
        name = r.ESCAPE_NAMES.get(escape, f"escape {escape:#x}")
        if handler is None:
            raise fail(errno.EINVAL, f"nvidia.ko: {name} is not modelled by the mock")
        struct, on_ctl, fn = handler
        if escape == r.NV_ESC_RM_ALLOC and size == ctypes.sizeof(r.NVOS64_PARAMETERS):
            struct = r.NVOS64_PARAMETERS          # RM_ALLOC with access rights (escape.c accepts either size)
        if struct is not None and size != ctypes.sizeof(struct):
            raise fail(errno.EINVAL, f"nvidia.ko: {name} with {size} parameter bytes, expected {ctypes.sizeof(struct)}")
        if on_ctl is not None and on_ctl != (f.gpu is None):
            raise fail(errno.EINVAL, f"nvidia.ko: {name} on {'/dev/nvidiactl' if f.gpu is None else '/dev/nvidia%d' % f.gpu.index}"
                                     f", which is only valid on {'/dev/nvidiactl' if on_ctl else 'a GPU file'}")
        params = struct.from_buffer_copy(bytes(arg)) if struct is not None else None
        fn(self.rm, f, params, arg)
        if params is not None:
            arg[:] = bytes(params)
        return 0

    def mmap(self, f: OpenFile, addr: int, size: int, prot: int, flags: int, offset: int) -> Mapping:
        ctx = f.mmap_context
        if f.gpu is None or ctx is None:
            raise fail(errno.EINVAL, "mmap of an nvidia file without NV_ESC_RM_MAP_MEMORY on it first")
        obj, mem_offset, length = ctx
        if size > length or not flags & MAP_SHARED:
            raise fail(errno.EINVAL, f"mmap of {size:#x} bytes of a {length:#x}-byte RM mapping (MAP_SHARED only)")
        if obj.class_id in nv_alloc.USERMODE:
            return UsermodeMapping(obj.data.map_at(addr, size, prot, flags), size, obj.gpu, obj.data)
        mem = obj.data
        if mem.shared is None:
            raise fail(errno.EINVAL, "mmap of system memory through nvidia.ko (it is the user's own memory)")
        if mem_offset:
            raise fail(errno.EINVAL, "mmap of an RM mapping at a non-zero memory offset is not modelled")
        return Mapping(mem.shared.map_at(addr, size, prot, flags), size)


# --- escapes -------------------------------------------------------------------------------------------
def _status(params, fn) -> None:
    try:
        fn()
        params.status = r.NV_OK
    except RmStatus as e:
        params.status = e.status


def _card_info(rm: MockRM, f, params, arg: bytearray) -> None:
    n = len(arg) // ctypes.sizeof(r.nv_ioctl_card_info_t)
    cards = (r.nv_ioctl_card_info_t * max(n, 1))()
    for i, g in enumerate(rm.gpus[:n]):
        cards[i] = r.nv_ioctl_card_info_t(valid=1, pci_info=r.nv_pci_info_t(bus=g.gpu_id >> 8, vendor_id=0x10DE,
                                          device_id=g.emu.profile.device_id), gpu_id=g.gpu_id,
                                          fb_size=g.emu.profile.vram_bytes, minor_number=g.index)
    arg[:n * ctypes.sizeof(r.nv_ioctl_card_info_t)] = bytes(cards)[:n * ctypes.sizeof(r.nv_ioctl_card_info_t)]


def _check_version(rm: MockRM, f, p: r.nv_ioctl_rm_api_version_t, arg) -> None:
    p.reply = r.NV_RM_API_VERSION_REPLY_RECOGNIZED
    mine = rm.version.encode()
    if p.cmd == r.NV_RM_API_VERSION_CMD_QUERY:
        p.versionString = mine
        return
    client = bytes(p.versionString)
    if p.cmd == r.NV_RM_API_VERSION_CMD_RELAXED:
        if client.split(b".")[0] == mine.split(b".")[0] and b"." in client:
            return
    elif client == mine:
        return
    p.versionString = mine
    arg[:] = bytes(p)
    e = fail(errno.EINVAL, f"NVRM: API mismatch: the client has the version {client.decode(errors='replace')!r}, "
                           f"but this kernel module has the version {rm.version!r}")
    e.copy_out = True          # nvidia_ioctl copies the block back unless the failure is EFAULT
    raise e


def _register_fd(rm: MockRM, f: OpenFile, p: r.nv_ioctl_register_fd_t, arg) -> None:
    try:
        ctl = rm.kernel.file(p.ctl_fd)
    except OSError:
        ctl = None
    if f.ctl_fd is not None:
        raise fail(errno.EINVAL, "NV_ESC_REGISTER_FD: this file already has a control fd (NV_ERR_INVALID_STATE)")
    if ctl is None or not isinstance(ctl.device, NvidiaFile) or ctl.state.gpu is not None:
        raise fail(errno.EINVAL, f"NV_ESC_REGISTER_FD: fd {p.ctl_fd} is not an open /dev/nvidiactl")
    f.ctl_fd = p.ctl_fd


def _rm_alloc(rm: MockRM, f, p, arg) -> None:
    if isinstance(p, r.NVOS64_PARAMETERS):
        if p.pRightsRequested:
            p.status = r.NV_ERR_NOT_SUPPORTED     # access-rights requests are not modelled
            return
        p21 = r.NVOS21_PARAMETERS(hRoot=p.hRoot, hObjectParent=p.hObjectParent, hObjectNew=p.hObjectNew,
                                  hClass=p.hClass, pAllocParms=p.pAllocParms, paramsSize=p.paramsSize)
        _status(p21, lambda: nv_alloc.alloc(rm, p21))
        p.hObjectNew, p.status = p21.hObjectNew, p21.status
        return
    _status(p, lambda: nv_alloc.alloc(rm, p))


def _rm_alloc_memory(rm: MockRM, f: OpenFile, w: r.nv_ioctl_nvos02_parameters_with_fd, arg) -> None:
    _status(w.params, lambda: nv_alloc.alloc_os_descriptor(rm, f, w.params))


def _rm_free(rm: MockRM, f, p: r.NVOS00_PARAMETERS, arg) -> None:
    def free():
        cl = rm.client(p.hRoot, "NV_ESC_RM_FREE")
        obj = cl.get(p.hObjectOld, "NV_ESC_RM_FREE", r.NV_ERR_INVALID_OBJECT_HANDLE)
        rm.free_object(cl, obj)
    _status(p, free)


def _rm_control(rm: MockRM, f, p: r.NVOS54_PARAMETERS, arg) -> None:
    _status(p, lambda: nv_control.control(rm, p))


def _rm_map_memory(rm: MockRM, f, w: r.nv_ioctl_nvos33_parameters_with_fd, arg) -> None:
    p = w.params

    def map_memory():
        what = "NV_ESC_RM_MAP_MEMORY"
        cl = rm.client(p.hClient, what)
        dev = cl.get(p.hDevice, what)
        if dev.class_id not in (c.NV01_DEVICE_0, c.NV20_SUBDEVICE_0):
            raise RmStatus(r.NV_ERR_INVALID_OBJECT_HANDLE, f"{what}: hDevice {p.hDevice:#x} is {dev.name}")
        obj = cl.get(p.hMemory, what)
        if obj.class_id in nv_alloc.USERMODE:
            size = c.USERMODE_SIZE
        elif obj.class_id == c.NV01_MEMORY_LOCAL_USER:
            size = obj.data.size
        else:
            raise RmStatus(r.NV_ERR_INVALID_OBJECT_HANDLE, f"{what}: {obj.name} {p.hMemory:#x} cannot be CPU-mapped here")
        if obj.gpu is not dev.gpu:
            raise RmStatus(r.NV_ERR_INVALID_DEVICE, f"{what}: memory {p.hMemory:#x} is not on that device's GPU")
        if p.length == 0 or p.offset + p.length > size:
            raise RmStatus(r.NV_ERR_INVALID_LIMIT, f"{what}: [{p.offset:#x}, +{p.length:#x}) of {size:#x} bytes")
        try:
            target = rm.kernel.file(w.fd)
        except OSError:
            target = None
        if target is None or not isinstance(target.device, NvidiaFile) or target.state.gpu is not obj.gpu:
            raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{what}: fd {w.fd} is not an open /dev/nvidia{obj.gpu.index}")
        target.state.mmap_context = (obj, p.offset, p.length)
        if obj.class_id == c.NV01_MEMORY_LOCAL_USER:
            obj.data.cpu_map()
        p.pLinearAddress = 0x1000 * (obj.handle & 0xFFFFF) + p.offset or 0x1000   # a cookie, as RM returns
    _status(p, map_memory)


_ESCAPES = {   # escape -> (params struct or None for variable size, True: ctl only / False: GPU file only / None, handler)
    r.NV_ESC_CARD_INFO: (None, True, _card_info),
    r.NV_ESC_CHECK_VERSION_STR: (r.nv_ioctl_rm_api_version_t, True, _check_version),
    r.NV_ESC_REGISTER_FD: (r.nv_ioctl_register_fd_t, None, _register_fd),
    r.NV_ESC_RM_ALLOC: (r.NVOS21_PARAMETERS, True, _rm_alloc),
    r.NV_ESC_RM_ALLOC_MEMORY: (r.nv_ioctl_nvos02_parameters_with_fd, False, _rm_alloc_memory),
    r.NV_ESC_RM_FREE: (r.NVOS00_PARAMETERS, True, _rm_free),
    r.NV_ESC_RM_CONTROL: (r.NVOS54_PARAMETERS, True, _rm_control),
    r.NV_ESC_RM_MAP_MEMORY: (r.nv_ioctl_nvos33_parameters_with_fd, True, _rm_map_memory),
}
