"""RM and UVM calls of the NV driver: thin wrappers that issue one escape or UVM ioctl each and turn a
status other than NV_OK into RmError naming the call (and the class or control)."""
from __future__ import annotations

import ctypes

from gputwin.abi import nv_classes as c
from gputwin.abi import nv_ctrl as k
from gputwin.abi import nv_rm as r
from gputwin.abi import nv_uvm as u
from gputwin.drivers.kernel import File, Kernel

RM_VERSION = "580.105.08"     # the RM ABI this driver is written against (open-gpu-kernel-modules tag)


class RmVersionMismatch(RuntimeError):
    """The kernel module's RM version differs from the one this driver was written for."""


def _ref(struct) -> int:
    return ctypes.addressof(struct) if struct is not None else 0


class RM:
    """One RM client on /dev/nvidiactl."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.ctl = kernel.open("/dev/nvidiactl")
        try:
            self.check_version()
            self.client = self.alloc(0, c.NV01_ROOT_CLIENT, None)
        except BaseException:
            self.ctl.close()
            raise

    def check_version(self) -> None:
        v = r.nv_ioctl_rm_api_version_t(cmd=r.NV_RM_API_VERSION_CMD_STRICT, versionString=RM_VERSION.encode())
        try:
            self.ctl.ioctl(r.nv_ioctl(r.NV_ESC_CHECK_VERSION_STR, v), v)
        except OSError as e:
            theirs = v.versionString.decode(errors="replace")
            raise RmVersionMismatch(f"NVIDIA kernel module reports RM version {theirs!r}; gputwin's NV driver is "
                                    f"written for {RM_VERSION!r} and refuses another ({e.strerror})") from None

    def card_info(self) -> list[r.nv_ioctl_card_info_t]:
        cards = (r.nv_ioctl_card_info_t * c.NV_MAX_DEVICES)()
        self.ctl.ioctl(r.nv_ioctl(r.NV_ESC_CARD_INFO, cards), cards)
        return [card for card in cards if card.valid]

    def alloc(self, parent: int, class_id: int, params, handle: int = 0) -> int:
        p = r.NVOS21_PARAMETERS(hRoot=getattr(self, "client", 0), hObjectParent=parent, hObjectNew=handle,
                                hClass=class_id, pAllocParms=_ref(params),
                                paramsSize=ctypes.sizeof(params) if params is not None else 0)
        self.ctl.ioctl(r.nv_ioctl(r.NV_ESC_RM_ALLOC, p), p)
        if p.status != r.NV_OK:
            raise r.RmError(f"NV_ESC_RM_ALLOC of {c.CLASS_NAMES.get(class_id, hex(class_id))}", p.status)
        return p.hObjectNew

    def alloc_os_descriptor(self, dev_file: File, device: int, address: int, size: int) -> int:
        w = r.nv_ioctl_nvos02_parameters_with_fd(params=r.NVOS02_PARAMETERS(
            hRoot=self.client, hObjectParent=device, hClass=c.NV01_MEMORY_SYSTEM_OS_DESCRIPTOR,
            flags=r.NVOS02_FLAGS_PHYSICALITY(r.NVOS02_FLAGS_PHYSICALITY_NONCONTIGUOUS)
            | r.NVOS02_FLAGS_COHERENCY(r.NVOS02_FLAGS_COHERENCY_CACHED),
            pMemory=address, limit=size - 1), fd=-1)
        dev_file.ioctl(r.nv_ioctl(r.NV_ESC_RM_ALLOC_MEMORY, w), w)
        if w.params.status != r.NV_OK:
            raise r.RmError("NV_ESC_RM_ALLOC_MEMORY of NV01_MEMORY_SYSTEM_OS_DESCRIPTOR", w.params.status)
        return w.params.hObjectNew

    def free(self, handle: int) -> None:
        p = r.NVOS00_PARAMETERS(hRoot=self.client, hObjectParent=0, hObjectOld=handle)
        self.ctl.ioctl(r.nv_ioctl(r.NV_ESC_RM_FREE, p), p)
        if p.status != r.NV_OK:
            raise r.RmError(f"NV_ESC_RM_FREE of {handle:#x}", p.status)

    def control(self, obj: int, cmd: int, params):
        p = r.NVOS54_PARAMETERS(hClient=self.client, hObject=obj, cmd=cmd, params=_ref(params),
                                paramsSize=ctypes.sizeof(params))
        self.ctl.ioctl(r.nv_ioctl(r.NV_ESC_RM_CONTROL, p), p)
        if p.status != r.NV_OK:
            raise r.RmError(f"NV_ESC_RM_CONTROL {k.control_name(cmd)}", p.status)
        return params

    def map_memory(self, dev_file: File, device: int, memory: int, length: int) -> None:
        """Make `memory` the next mmap of `dev_file` (a fresh /dev/nvidiaN file per mapping, as nvidia.ko keeps
        one mmap context per file)."""
        w = r.nv_ioctl_nvos33_parameters_with_fd(params=r.NVOS33_PARAMETERS(
            hClient=self.client, hDevice=device, hMemory=memory, offset=0, length=length), fd=dev_file.fd)
        self.ctl.ioctl(r.nv_ioctl(r.NV_ESC_RM_MAP_MEMORY, w), w)
        if w.params.status != r.NV_OK:
            raise r.RmError("NV_ESC_RM_MAP_MEMORY", w.params.status)

    def close(self) -> None:
        try:
            self.free(self.client)     # frees every object of the client
        finally:
            self.ctl.close()


class UVM:
    """One /dev/nvidia-uvm file (a UVM VA space)."""

    def __init__(self, kernel: Kernel):
        self.file = kernel.open("/dev/nvidia-uvm")
        try:
            self.call(u.UVM_INITIALIZE, u.UVM_INITIALIZE_PARAMS(flags=0))
        except BaseException:
            self.file.close()
            raise

    def call(self, request: int, params):
        self.file.ioctl(request, params)
        if params.rmStatus != r.NV_OK:
            raise r.RmError(u.IOCTLS[request][0], params.rmStatus)
        return params

    def register_gpu(self, uuid: bytes, ctl_fd: int, client: int, vaspace: int) -> None:
        g = u.UVM_REGISTER_GPU_PARAMS(rmCtrlFd=ctl_fd, hClient=client)
        g.gpu_uuid.uuid[:] = list(uuid)
        self.call(u.UVM_REGISTER_GPU, g)
        v = u.UVM_REGISTER_GPU_VASPACE_PARAMS(rmCtrlFd=ctl_fd, hClient=client, hVaSpace=vaspace)
        v.gpuUuid.uuid[:] = list(uuid)
        self.call(u.UVM_REGISTER_GPU_VASPACE, v)

    def map(self, uuid: bytes, va: int, size: int, ctl_fd: int, client: int, memory: int) -> None:
        self.call(u.UVM_CREATE_EXTERNAL_RANGE, u.UVM_CREATE_EXTERNAL_RANGE_PARAMS(base=va, length=size))
        p = u.UVM_MAP_EXTERNAL_ALLOCATION_PARAMS(base=va, length=size, offset=0, gpuAttributesCount=1,
                                                 rmCtrlFd=ctl_fd, hClient=client, hMemory=memory)
        p.perGpuAttributes[0].gpuUuid.uuid[:] = list(uuid)
        p.perGpuAttributes[0].gpuMappingType = u.UvmGpuMappingTypeReadWriteAtomic
        try:
            self.call(u.UVM_MAP_EXTERNAL_ALLOCATION, p)
        except BaseException:
            self.free(va, size)
            raise

    def free(self, va: int, size: int) -> None:
        self.call(u.UVM_FREE, u.UVM_FREE_PARAMS(base=va, length=size))

    def close(self) -> None:
        self.file.close()
