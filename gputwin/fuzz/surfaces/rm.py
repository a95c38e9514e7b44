"""RM escapes and UVM ioctls through the mock nvidia.ko / nvidia-uvm (gputwin.mock.nvidia*), sm_90 and sm_80.

A case is a random sequence of up to 30 operations on one mock machine, half the time on top of a working
NV driver (gputwin.drivers.nv.NVDevice: a client with device, subdevice, usermode, VA space, channel groups,
channels, engine objects, memory, UVM registered), so objects that exist get hit as well as ones that do
not: RM_ALLOC (NVOS21 or NVOS64) of every class the mock models with its params struct (or another's, or
none) and fields set to handles, sizes, pointers from the pointer zoo (read-only, PROT_NONE, unmapped,
kernel, non-canonical) or random bits; RM_CONTROL of every modelled control likewise; RM_FREE of any handle
(clients and USERD memory included); RM_MAP_MEMORY then mmap of the GPU file; RM_ALLOC_MEMORY over user
pages; escapes with random numbers, sizes and bytes on every file; every UVM ioctl with random fields and
the GPU's real UUID; a doorbell write through the usermode mapping. Outcomes: success, the mock's errno
(OSError), RM's verdict in the block (`status:<NV_ERR name>`); nothing else. Afterwards a new NVDevice on
the same machine must still round-trip a copy.
"""
from __future__ import annotations

import ctypes
import random

import numpy as np

from gputwin.abi import nv_classes as c
from gputwin.abi import nv_rm as r
from gputwin.abi import nv_uvm as u
from gputwin.abi.ioctl import IOWR
from gputwin.drivers.kernel import MAP_SHARED, PROT_READ, PROT_WRITE
from gputwin.fuzz.surface import Recorder, Surface, register
from gputwin.fuzz.surfaces.kfd import Zoo

ARCHES = ("sm_90", "sm_80")
OPS = ("alloc", "alloc", "alloc", "control", "control", "free", "map", "alloc_memory", "raw", "uvm", "uvm",
       "doorbell")


def _tables():
    from gputwin.mock.nv_alloc import _CLASSES
    from gputwin.mock.nv_control import _CONTROLS
    return _CLASSES, _CONTROLS


class _Case:
    """The machine under test and what the fuzzer knows about it (handles, files, the GPU's UUID)."""

    def __init__(self, rnd: random.Random, arch: str, driver: bool):
        from gputwin.mock.kernel import MockKernel
        from gputwin.mock.nvidia import install
        self.rnd, self.kernel = rnd, MockKernel()
        self.rm = install(self.kernel, [arch])
        self.zoo = Zoo(self.kernel)
        self.dev, self.maps = None, []
        if driver:
            from gputwin.drivers.nv.device import NVDevice
            self.dev = NVDevice(self.kernel, 0, ptx_native=True)
        self.ctl = self.kernel.open("/dev/nvidiactl")
        self.gpu = self.kernel.open("/dev/nvidia0")
        self.uvm = self.kernel.open("/dev/nvidia-uvm")
        self.files = [self.ctl, self.gpu, self.uvm]
        self.uuid = self.dev.uuid if self.dev else bytes(16)
        root = r.NVOS21_PARAMETERS(hClass=c.NV01_ROOT_CLIENT)     # the fuzzer's own client to build under
        self.ctl.ioctl(r.nv_ioctl(r.NV_ESC_RM_ALLOC, root), root)

    def handles(self) -> list[int]:
        hs = [h for cl in self.rm.clients.values() for h in cl.objects]
        return hs or [0]

    def client_of(self, handle: int) -> int:
        for cl in self.rm.clients.values():
            if handle in cl.objects:
                return cl.handle
        return self.rnd.choice([*self.rm.clients, 0, 0xC1D00001])

    def value(self, ftype) -> int:
        rnd = self.rnd
        return rnd.choice([0, 0, 1, 2, 8, 0x1000, 0x200000, rnd.choice(self.handles()), rnd.choice(self.handles()),
                           self.zoo.pointer(rnd), self.zoo.rw, self.ctl.fd, self.gpu.fd, 0xFFFFFFFF,
                           1 << rnd.randrange(64), rnd.getrandbits(8 * ctypes.sizeof(ftype)), -1])

    def fill(self, s, p: float = 0.3) -> None:
        """Set some of a ctypes structure's integer fields (nested structures and arrays too) to hostile values."""
        for name, ftype, *_ in s._fields_:
            if self.rnd.random() >= p:
                continue
            if isinstance(ftype, type) and issubclass(ftype, ctypes.Structure):
                self.fill(getattr(s, name), p)
            elif isinstance(ftype, type) and issubclass(ftype, ctypes.Array):
                arr = getattr(s, name)
                for _ in range(min(len(arr), 3)):
                    i = self.rnd.randrange(len(arr))
                    if issubclass(ftype._type_, ctypes.Structure):
                        self.fill(arr[i], 0.5)
                    elif issubclass(ftype._type_, ctypes._SimpleCData) and ftype._type_._type_ not in "cuzZPO?":
                        arr[i] = ftype._type_(self.value(ftype._type_)).value
            elif issubclass(ftype, ctypes._SimpleCData) and ftype._type_ not in "cuzZPO?":
                setattr(s, name, ftype(self.value(ftype)).value)

    def close(self) -> None:
        for m in self.maps:
            self.kernel.munmap(m)
        for f in self.files:
            f.close()
        if self.dev is not None:
            try:
                self.dev.close()
            except Exception:   # noqa: BLE001 - the case freed its objects under it; closing is best effort
                pass
        self.zoo.release()


def _status(rec: Recorder, label: str, status: int) -> None:
    rec.ok("ok" if status == r.NV_OK else "status:" + r.STATUS_NAMES.get(status, hex(status)))


def _ioctl(rec: Recorder, step: str, f, request: int, block) -> bool:
    """An escape; an OSError from the mock is an outcome (counted by errno), True when it returned."""
    try:
        f.ioctl(request, block)
        return True
    except Exception as e:   # noqa: BLE001 - classified: the mock's OSError is fine, anything else leaks
        rec.error(step, e)
        return False


def _op(rec: Recorder, k: _Case, op: str, step: str) -> None:
    rnd = k.rnd
    classes, controls = _tables()
    if op == "alloc":
        cls = rnd.choice([*classes, *classes, c.NV01_ROOT_CLIENT, rnd.getrandbits(16)])
        ptype = classes.get(cls, (None,))[0] if rnd.random() < 0.8 else rnd.choice(
            [v[0] for v in classes.values()])
        params = ptype() if ptype is not None else None
        if params is not None:
            k.fill(params)
        parent = rnd.choice(k.handles())
        ptr = ctypes.addressof(params) if params is not None else 0
        if rnd.random() < 0.1:
            ptr = k.zoo.pointer(rnd)
        size = ctypes.sizeof(params) if params is not None else 0
        if rnd.random() < 0.1:
            size = rnd.choice([0, 1, size + 8, rnd.getrandbits(32)])
        args = dict(hRoot=k.client_of(parent), hObjectParent=parent, hClass=cls, pAllocParms=ptr, paramsSize=size,
                    hObjectNew=rnd.choice([0, 0, rnd.choice(k.handles()), rnd.getrandbits(32)]))
        p = r.NVOS64_PARAMETERS(**args, pRightsRequested=rnd.choice([0, k.zoo.pointer(rnd)])) if rnd.random() < 0.2 \
            else r.NVOS21_PARAMETERS(**args)
        if _ioctl(rec, step, k.ctl, r.nv_ioctl(r.NV_ESC_RM_ALLOC, p), p):
            _status(rec, step, p.status)
    elif op == "control":
        cmd = rnd.choice([*controls, rnd.getrandbits(32)])
        ptype = controls.get(cmd, (rnd.choice([v[0] for v in controls.values()]),))[0]
        params = ptype()
        k.fill(params)
        obj = rnd.choice(k.handles())
        ptr, size = ctypes.addressof(params), ctypes.sizeof(params)
        if rnd.random() < 0.1:
            ptr = k.zoo.pointer(rnd)
        if rnd.random() < 0.1:
            size = rnd.choice([0, size - 1, size + 4, rnd.getrandbits(32)])
        p = r.NVOS54_PARAMETERS(hClient=k.client_of(obj), hObject=obj, cmd=cmd, params=ptr, paramsSize=size,
                                flags=rnd.choice([0, 0, rnd.getrandbits(32)]))
        if _ioctl(rec, step, k.ctl, r.nv_ioctl(r.NV_ESC_RM_CONTROL, p), p):
            _status(rec, step, p.status)
    elif op == "free":
        h = rnd.choice(k.handles())
        p = r.NVOS00_PARAMETERS(hRoot=k.client_of(h), hObjectParent=rnd.choice([0, h]), hObjectOld=h)
        if _ioctl(rec, step, k.ctl, r.nv_ioctl(r.NV_ESC_RM_FREE, p), p):
            _status(rec, step, p.status)
    elif op == "map":
        h = rnd.choice(k.handles())
        w = r.nv_ioctl_nvos33_parameters_with_fd(fd=rnd.choice([k.gpu.fd, k.gpu.fd, k.ctl.fd, -1, 999]))
        w.params.hClient, w.params.hMemory = k.client_of(h), h
        w.params.hDevice = rnd.choice(k.handles())
        w.params.length = rnd.choice([0x1000, 0x10000, 1 << 21, rnd.getrandbits(40)])
        w.params.offset = rnd.choice([0, 0, 0x1000, rnd.getrandbits(40)])
        k.fill(w.params, 0.1)
        if _ioctl(rec, step, k.ctl, r.nv_ioctl(r.NV_ESC_RM_MAP_MEMORY, w), w):
            _status(rec, step, w.params.status)
            if w.params.status == r.NV_OK:
                size = rnd.choice([0x1000, int(w.params.length) & ~0xFFF or 0x1000])
                m = rec.step(step + ":mmap", k.gpu.mmap, 0, size, PROT_READ | PROT_WRITE, MAP_SHARED)
                if m is not None:
                    k.maps.append(m)
    elif op == "alloc_memory":
        w = r.nv_ioctl_nvos02_parameters_with_fd(fd=rnd.choice([k.gpu.fd, -1]))
        h = rnd.choice(k.handles())
        size = rnd.choice([0x1000, 0x2000, 0x1001])
        w.params = r.NVOS02_PARAMETERS(hRoot=k.client_of(h), hObjectParent=h, hClass=rnd.choice(
            [c.NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, c.NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, rnd.getrandbits(16)]),
            pMemory=rnd.choice([k.zoo.user_range(0x2000), k.zoo.pointer(rnd)]), limit=size - 1,
            flags=rnd.choice([0, rnd.getrandbits(32)]))
        f = rnd.choice([k.gpu, k.gpu, k.ctl])
        if _ioctl(rec, step, f, r.nv_ioctl(r.NV_ESC_RM_ALLOC_MEMORY, w), w):
            _status(rec, step, w.params.status)
    elif op == "raw":
        f = rnd.choice(k.files)
        nr = rnd.choice([rnd.randrange(0x20, 0x60), r.NV_ESC_RM_ALLOC, r.NV_ESC_RM_CONTROL, r.NV_ESC_CARD_INFO,
                         r.NV_ESC_CHECK_VERSION_STR, r.NV_ESC_REGISTER_FD, rnd.randrange(256)])
        size = rnd.choice([0, 8, 16, 24, 32, 40, 48, 72, rnd.randrange(1, 600)])
        block = (ctypes.c_uint8 * max(size, 1)).from_buffer_copy(rnd.randbytes(max(size, 1)))
        req = IOWR(ord("F"), nr, size) if f is not k.uvm else rnd.choice([*u.IOCTLS, rnd.getrandbits(32)])
        if _ioctl(rec, step, f, req, block):
            rec.ok()
    elif op == "uvm":
        req = rnd.choice([*u.IOCTLS, u.UVM_INITIALIZE, u.UVM_REGISTER_GPU])
        params = u.IOCTLS[req][1]()
        for name in ("gpu_uuid", "gpuUuid"):
            if hasattr(params, name) and rnd.random() < 0.7:
                ctypes.memmove(ctypes.addressof(getattr(params, name)), k.uuid, 16)
        if hasattr(params, "rmCtrlFd") and rnd.random() < 0.7:
            params.rmCtrlFd = k.ctl.fd
        if hasattr(params, "hClient") and rnd.random() < 0.7:
            params.hClient = rnd.choice([*k.rm.clients, 0])
        if hasattr(params, "base") and rnd.random() < 0.7:
            params.base, params.length = rnd.choice([0x200000000, 0x7F0000000000, 0x1000]), rnd.choice(
                [0x200000, 0x1000, 0x1001, 0])
        k.fill(params, 0.2)
        if _ioctl(rec, step, k.uvm, req, params):
            _status(rec, step, params.rmStatus)
    elif op == "doorbell":
        if k.dev is None:
            return
        rec.step(step, k.dev.usermode.write32, 0x90, rnd.choice([0, 1, 2, rnd.getrandbits(32)]))


@register
class Rm(Surface):
    name = "rm"
    doc = "RM escapes (alloc/control/free/map/alloc-memory/raw) and UVM ioctls through the mock nvidia.ko"

    def generate(self, rnd: random.Random) -> dict:
        return {"arch": rnd.choice(ARCHES), "driver": rnd.random() < 0.5, "seed": rnd.getrandbits(32),
                "ops": [rnd.choice(OPS) for _ in range(rnd.randrange(1, 31))]}

    def execute(self, case: dict, rec: Recorder) -> None:
        rnd = random.Random(case["seed"])
        k = rec.step("open", _Case, rnd, case["arch"], case["driver"])
        if k is None:
            return
        try:
            for i, op in enumerate(case["ops"]):
                _op(rec, k, op, f"{i}:{op}")
            rec.step("fresh device", _still_works, k.kernel)
        finally:
            k.close()


def _still_works(kernel) -> None:
    """A new driver instance (its own client) on the same machine round-trips a copy."""
    from gputwin.drivers.nv.device import NVDevice
    dev = NVDevice(kernel, 0, ptx_native=True)
    try:
        data = np.arange(64, dtype=np.uint32)
        buf = dev.alloc(data.nbytes)
        dev.copyin(buf, data)
        out = np.zeros_like(data)
        dev.copyout(out, buf)
        if not np.array_equal(out, data):
            raise AssertionError("a fresh NV device's copy round trip came back wrong after the fuzzed ioctls")
    finally:
        dev.close()
