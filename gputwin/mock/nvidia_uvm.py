"""The mock /dev/nvidia-uvm: UVM_INITIALIZE, GPU and GPU-VA-space registration, external ranges and
external allocation mappings (RM memory objects mapped into a GPU's address space), UVM_FREE.

Requests carry no size (UVM_IOCTL_BASE(i) is i on Linux), so the mock copies sizeof(<cmd>_PARAMS) as
nvidia-uvm does; unknown requests are EINVAL; a file not yet initialised answers NV_ERR_ILLEGAL_ACTION.
"""
from __future__ import annotations

import ctypes
import errno

from gputwin.abi import nv_classes as c
from gputwin.abi import nv_rm as r
from gputwin.abi import nv_uvm as u
from gputwin.abi.ioctl import IOC_READ, IOC_WRITE
from gputwin.mock.kernel import MockDevice
from gputwin.mock.kfd_state import PAGE, fail
from gputwin.mock.nv_objects import RmStatus


class UvmFile:
    def __init__(self):
        self.initialized = False
        self.gpus: dict[bytes, object] = {}        # uuid -> MockGpu
        self.vaspaces: dict[bytes, int] = {}       # uuid -> hVaSpace
        self.ranges: dict[int, int] = {}           # base -> length
        self.maps: list = []                       # (MockGpu, va, length, Memory)


class MockUVM(MockDevice):
    def __init__(self, rm):
        self.rm = rm

    def open(self, kernel, path, flags):
        return UvmFile()

    def close(self, f: UvmFile) -> None:
        for base in list(f.ranges):
            self._free_range(f, base)

    def ioctl_layout(self, f, request: int) -> tuple[int, int]:
        entry = u.IOCTLS.get(request)
        return (ctypes.sizeof(entry[1]), IOC_READ | IOC_WRITE) if entry else (0, 0)

    def ioctl(self, f: UvmFile, request: int, arg: bytearray) -> int:
        if request == u.UVM_DEINITIALIZE:
            return 0
        entry = u.IOCTLS.get(request)
        if entry is None:
            raise fail(errno.EINVAL, f"nvidia-uvm: unknown request {request:#x}")
        name, struct = entry
        p = struct.from_buffer_copy(bytes(arg))
        try:
            if request != u.UVM_INITIALIZE and not f.initialized:
                raise RmStatus(r.NV_ERR_ILLEGAL_ACTION, f"{name} before UVM_INITIALIZE")
            getattr(self, "_" + name[4:].lower())(f, p, name)
            p.rmStatus = r.NV_OK
        except RmStatus as e:
            p.rmStatus = e.status
        arg[:] = bytes(p)
        return 0

    # --- commands -------------------------------------------------------------------------------------
    def _initialize(self, f, p, name):
        if p.flags & ~u.UVM_INIT_FLAGS_MASK:
            raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{name}: flags {p.flags:#x}")
        f.initialized = True

    def _pageable_mem_access(self, f, p, name):
        p.pageableMemAccess = 0

    def _gpu(self, uuid: bytes, name: str):
        g = next((g for g in self.rm.gpus if g.uuid == uuid), None)
        if g is None:
            raise RmStatus(r.NV_ERR_GPU_UUID_NOT_FOUND, f"{name}: no GPU with UUID {uuid.hex()}")
        return g

    def _rm_client(self, fd: int, hclient: int, name: str):
        try:
            ctl = self.rm.kernel.file(fd)
        except OSError:
            ctl = None
        if ctl is None or getattr(ctl.state, "gpu", 0) is not None or ctl.path != "/dev/nvidiactl":
            raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{name}: rmCtrlFd {fd} is not an open /dev/nvidiactl")
        return self.rm.client(hclient, name)

    def _register_gpu(self, f, p, name):
        uuid = bytes(p.gpu_uuid.uuid)
        g = self._gpu(uuid, name)
        self._rm_client(p.rmCtrlFd, p.hClient, name)
        if uuid in f.gpus:
            raise RmStatus(r.NV_ERR_IN_USE, f"{name}: GPU {uuid.hex()} is already registered")
        f.gpus[uuid] = g
        p.numaEnabled, p.numaNodeId = 0, -1

    def _unregister_gpu(self, f, p, name):
        uuid = bytes(p.gpu_uuid.uuid)
        if uuid not in f.gpus:
            raise RmStatus(r.NV_ERR_INVALID_DEVICE, f"{name}: GPU {uuid.hex()} is not registered")
        del f.gpus[uuid]
        f.vaspaces.pop(uuid, None)

    def _register_gpu_vaspace(self, f, p, name):
        uuid = bytes(p.gpuUuid.uuid)
        if uuid not in f.gpus:
            raise RmStatus(r.NV_ERR_INVALID_DEVICE, f"{name}: GPU {uuid.hex()} is not registered (UVM_REGISTER_GPU)")
        cl = self._rm_client(p.rmCtrlFd, p.hClient, name)
        vas = cl.get(p.hVaSpace, name, r.NV_ERR_OBJECT_NOT_FOUND)
        if vas.class_id != c.FERMI_VASPACE_A or vas.gpu is not f.gpus[uuid]:
            raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{name}: {p.hVaSpace:#x} is no VA space of that GPU")
        if uuid in f.vaspaces:
            raise RmStatus(r.NV_ERR_INVALID_DEVICE, f"{name}: GPU {uuid.hex()} already has a VA space registered")
        f.vaspaces[uuid] = p.hVaSpace

    def _unregister_gpu_vaspace(self, f, p, name):
        if f.vaspaces.pop(bytes(p.gpuUuid.uuid), None) is None:
            raise RmStatus(r.NV_ERR_INVALID_DEVICE, f"{name}: no VA space registered for that GPU")

    def _create_external_range(self, f, p, name):
        if p.length == 0 or p.base % PAGE or p.length % PAGE or p.base + p.length > 1 << 57 or p.base == 0:
            raise RmStatus(r.NV_ERR_INVALID_ADDRESS, f"{name}: [{p.base:#x}, +{p.length:#x})")
        for base, length in f.ranges.items():
            if p.base < base + length and base < p.base + p.length:
                raise RmStatus(r.NV_ERR_UVM_ADDRESS_IN_USE, f"{name}: [{p.base:#x}, +{p.length:#x}) overlaps "
                                                           f"[{base:#x}, +{length:#x})")
        f.ranges[p.base] = p.length

    def _map_external_allocation(self, f, p, name):
        rng = next(((b, n) for b, n in f.ranges.items() if b <= p.base and p.base + p.length <= b + n), None)
        if rng is None or p.length == 0 or p.base % PAGE or p.length % PAGE:
            raise RmStatus(r.NV_ERR_INVALID_ADDRESS, f"{name}: [{p.base:#x}, +{p.length:#x}) is not inside one "
                                                     f"external range")
        if not 0 < p.gpuAttributesCount <= u.UVM_MAX_GPUS:
            raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{name}: gpuAttributesCount {p.gpuAttributesCount}")
        self._rm_client(p.rmCtrlFd, p.hClient, name)
        mem = self.rm.memory(p.hClient, p.hMemory, name).data
        if p.offset % PAGE or p.offset + p.length > mem.size:
            raise RmStatus(r.NV_ERR_INVALID_LIMIT, f"{name}: [{p.offset:#x}, +{p.length:#x}) of a {mem.size:#x}-byte "
                                                   f"allocation")
        targets = []
        for attr in p.perGpuAttributes[:p.gpuAttributesCount]:
            uuid = bytes(attr.gpuUuid.uuid)
            if uuid not in f.vaspaces:
                raise RmStatus(r.NV_ERR_INVALID_DEVICE, f"{name}: GPU {uuid.hex()} has no registered VA space")
            if attr.gpuMappingType > u.UvmGpuMappingTypeReadOnly or attr.gpuCachingType > u.UvmGpuCachingTypeForceCached:
                raise RmStatus(r.NV_ERR_INVALID_ARGUMENT, f"{name}: mapping type {attr.gpuMappingType} caching "
                                                          f"{attr.gpuCachingType}")
            g = f.gpus[uuid]
            if any(gg is g and p.base < va + n and va < p.base + p.length for gg, va, n, _ in f.maps):
                raise RmStatus(r.NV_ERR_UVM_ADDRESS_IN_USE, f"{name}: {p.base:#x} is already mapped on that GPU")
            targets.append((g, attr.gpuMappingType != u.UvmGpuMappingTypeReadOnly))
        for g, writable in targets:
            g.emu.mem.map(p.base, p.length, mem.host_addr + p.offset, writable=writable, name=f"rm {p.hMemory:#x}",
                          extent=mem.extent(p.offset, p.length), undefined=mem.undefined)
            mem.gpu_maps.append((g.emu, p.base))
            f.maps.append((g, p.base, p.length, mem))

    def _free(self, f, p, name):
        if p.base not in f.ranges:
            raise RmStatus(r.NV_ERR_INVALID_ADDRESS, f"{name}: no external range starts at {p.base:#x}")
        self._free_range(f, p.base)

    def _unmap_external(self, f, p, name):
        uuid = bytes(p.gpuUuid.uuid)
        hits = [m for m in f.maps if m[0].uuid == uuid and m[1] == p.base and m[2] == p.length]
        if not hits:
            raise RmStatus(r.NV_ERR_INVALID_ADDRESS, f"{name}: nothing mapped at [{p.base:#x}, +{p.length:#x})")
        self._unmap(f, hits[0])

    def _unmap(self, f, entry) -> None:
        g, va, n, mem = entry
        if g.emu.mem.find(va) is not None:
            g.emu.mem.unmap(va)
        if (g.emu, va) in mem.gpu_maps:
            mem.gpu_maps.remove((g.emu, va))
        f.maps.remove(entry)

    def _free_range(self, f, base: int) -> None:
        length = f.ranges.pop(base)
        for entry in [m for m in f.maps if base <= m[1] < base + length]:
            self._unmap(f, entry)
