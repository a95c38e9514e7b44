"""The RM object model of the mock nvidia.ko: clients, their object trees, and the per-class allocation
checks (parent class, parameter block size and contents) with the NV_STATUS values RM answers.

Each allocation handler receives the parent object and the class's parameter struct and returns the new
object's data; a failure raises `RmStatus(status, message)`, which the escape layer stores in the
parameter block's `status` field (RM's ioctl itself still succeeds).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from gputwin.abi import nv_classes as c
from gputwin.abi import nv_rm as r
from gputwin.emu.memory import host_bytes
from gputwin.mock.kfd_state import PAGE, SharedMemory

CLIENT_HANDLE_BASE = 0xC1D00000
GENERATED_HANDLE_BASE = 0xCAF00000


class RmStatus(Exception):
    def __init__(self, status: int, message: str):
        self.status = status
        super().__init__(f"{message}: {r.status_name(status)}")


@dataclass
class RmObject:
    handle: int
    class_id: int
    parent: "RmObject | None"
    gpu: object = None                 # the MockGpu (device and below)
    data: object = None                # per class: Memory, Channel state, ...
    children: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return c.CLASS_NAMES.get(self.class_id, f"class {self.class_id:#x}")


@dataclass
class Memory:
    """The pages behind a memory object: VRAM (a memfd the mock owns) or the user's own memory (OS descriptor)."""
    size: int
    host_addr: int
    shared: SharedMemory | None = None
    gpu_maps: list = field(default_factory=list)      # (NVGPU, va) mapped through UVM
    asked: int | None = None       # VRAM: the bytes the allocation asked for (size is rounded to pages)
    cpu_mapped: bool = False       # VRAM the CPU mapped (NV_ESC_RM_MAP_MEMORY): its contents are the host's

    def extent(self, offset: int, length: int) -> int | None:
        """Of a GPU mapping of [offset, offset+length), the bytes the allocation asked for (memcheck)."""
        return None if self.asked is None else max(0, min(length, self.asked - offset))

    @property
    def undefined(self) -> bool:
        """Are its contents undefined until written (VRAM no CPU maps: initcheck tracks it)?"""
        return self.shared is not None and not self.cpu_mapped

    def cpu_map(self) -> None:
        """The CPU maps it: the host may write it directly, so initcheck stops tracking it."""
        self.cpu_mapped = True
        for gpu, va in self.gpu_maps:
            r = gpu.mem.find(va)
            if r is not None:
                r.shadow = None

    def view(self, offset: int, size: int) -> np.ndarray:
        return host_bytes(self.host_addr + offset, size)

    def release(self) -> None:
        for gpu, va in self.gpu_maps:
            if gpu.mem.find(va) is not None:
                gpu.mem.unmap(va)
        self.gpu_maps.clear()
        if self.shared is not None:
            self.shared.release()


@dataclass
class MockGpu:
    """One GPU as RM sees it: gpuId (PCI bus << 8), minor number, UUID, the emulated device."""
    index: int
    gpu_id: int
    uuid: bytes
    emu: object                       # gputwin.emu.nv.gpu.NVGPU

    @staticmethod
    def make(index: int, emu) -> "MockGpu":
        uuid = zlib.crc32(f"{emu.arch}:{index}".encode()).to_bytes(4, "little") * 4
        return MockGpu(index, (index + 1) << 8, bytes(uuid), emu)

    def uuid_string(self) -> str:
        u = self.uuid.hex()
        return f"GPU-{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:]}"


class Client:
    def __init__(self, handle: int):
        self.handle = handle
        self.root = RmObject(handle, c.NV01_ROOT_CLIENT, None)
        self.objects: dict[int, RmObject] = {handle: self.root}
        self._next = GENERATED_HANDLE_BASE

    def new_handle(self) -> int:
        while self._next in self.objects:
            self._next += 1
        return self._next

    def get(self, handle: int, what: str, status: int = r.NV_ERR_INVALID_OBJECT_HANDLE) -> RmObject:
        obj = self.objects.get(handle)
        if obj is None:
            raise RmStatus(status, f"{what}: no object {handle:#x} in client {self.handle:#x}")
        return obj

    def add(self, obj: RmObject) -> None:
        self.objects[obj.handle] = obj
        obj.parent.children.append(obj)

    def free(self, obj: RmObject, on_free) -> None:
        for child in list(obj.children):
            self.free(child, on_free)
        on_free(obj)
        self.objects.pop(obj.handle, None)
        if obj.parent is not None and obj in obj.parent.children:
            obj.parent.children.remove(obj)


def page_up(n: int) -> int:
    return (n + PAGE - 1) & ~(PAGE - 1)


def expect_parent(parent: RmObject, classes: tuple[int, ...], what: str) -> None:
    if parent.class_id not in classes:
        names = " or ".join(c.CLASS_NAMES.get(k, hex(k)) for k in classes)
        raise RmStatus(r.NV_ERR_INVALID_OBJECT_PARENT, f"{what}: parent {parent.handle:#x} is {parent.name}, not {names}")
