"""Random KFD ioctl sequences against the mock /dev/kfd (two emulated GPUs), as a userspace driver issues them.

A case is a list of (operation, seed) steps; the seed picks the operation's arguments against the live state
(handles, queues, events made by earlier steps), mostly well-formed so sequences get deep, sometimes not.
User pointers come from a zoo of the process's own pages: read-write scratch, read-only, write-only,
PROT_NONE, unmapped, a span crossing from read-write into PROT_NONE, null, kernel and non-canonical
addresses; USERPTR buffers over such pages and queues whose pointers live in them are made on purpose,
pages under a live USERPTR buffer are mprotected or unmapped between steps, and stale Mappings over the
memory behind buffers are unmapped or mapped over. Allowed outcomes: success or an
OSError with a real errno raised by the mock; nothing may crash the host.
"""
from __future__ import annotations

import ctypes
import random

from gputwin.abi import amd_pm4 as pm4
from gputwin.abi import kfd_ioctl as k
from gputwin.drivers.kernel import (MAP_FIXED, MAP_NORESERVE, MAP_PRIVATE, MAP_SHARED, PROT_NONE, PROT_READ,
                                    PROT_WRITE, Mapping)
from gputwin.fuzz.surface import Recorder, Surface, register

RW = PROT_READ | PROT_WRITE
PAGE = 0x1000
VRAM_RW = k.KFD_IOC_ALLOC_MEM_FLAGS_VRAM | k.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | k.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
GTT_RW = k.KFD_IOC_ALLOC_MEM_FLAGS_GTT | k.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
USERPTR = k.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | k.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
FLAGS = [VRAM_RW, GTT_RW, USERPTR, k.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL, k.KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP, 0,
         VRAM_RW | k.KFD_IOC_ALLOC_MEM_FLAGS_GTT, 0xFFFFFFFF, k.KFD_IOC_ALLOC_MEM_FLAGS_GTT]
SIZES = [PAGE, 2 * PAGE, 8 * PAGE, PAGE + 1, 0, 1 << 40, (1 << 64) - 1]
OPCODES = [pm4.PACKET3_NOP, pm4.PACKET3_WRITE_DATA, pm4.PACKET3_RELEASE_MEM, pm4.PACKET3_WAIT_REG_MEM,
           pm4.PACKET3_INDIRECT_BUFFER, pm4.PACKET3_COPY_DATA, pm4.PACKET3_SET_SH_REG, pm4.PACKET3_ACQUIRE_MEM,
           pm4.PACKET3_EVENT_WRITE, pm4.PACKET3_DISPATCH_DIRECT, 0xEE]
OPS = ["alloc"] * 3 + ["free", "map", "map", "unmap", "queue", "queue", "userptr_queue", "destroy_queue",
                       "update_queue", "event", "event", "set", "reset", "destroy_event", "wait", "wait", "raw",
                       "doorbell", "doorbell", "mmap", "apertures", "protect", "stale"]

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


class Zoo:
    """User pages of every kind a pointer can land on (owned by the case, released with it)."""

    def __init__(self, kernel):
        self.kernel, self.maps = kernel, []
        self.rw = self._page(RW, 2)                        # second page goes PROT_NONE: a crossing span
        _libc.mprotect(self.rw + PAGE, PAGE, PROT_NONE)
        self.ro, self.wo, self.none = self._page(PROT_READ), self._page(PROT_WRITE), self._page(PROT_NONE)
        self.gone = self._page(RW)
        _libc.munmap(self.gone, PAGE)
        self.user = []                                     # read-write ranges handed to USERPTR

    def _page(self, prot: int, n: int = 1) -> int:
        m = self.kernel.mmap(0, n * PAGE, prot, MAP_PRIVATE)
        self.maps.append(m)
        return m.addr

    def user_range(self, size: int) -> int:
        addr = self._page(RW, size // PAGE)
        self.user.append((addr, size))
        return addr

    def pointer(self, rnd: random.Random, size: int = 64) -> int:
        return rnd.choice([self.rw, self.rw, self.rw + PAGE - min(size, PAGE) // 2, self.ro, self.wo, self.none,
                           self.gone, 0, 8, 1 << 47, 0xFFFF800000000000, rnd.getrandbits(64)])

    def release(self) -> None:
        for m in self.maps:
            _libc.munmap(m.addr, m.size)   # whatever protection a step left (munmap ignores it)


class Rig:
    """One mock machine: MockKernel + mock KFD with a GPU per arch, /dev/kfd and the render nodes open, VMs
    acquired."""

    def __init__(self, archs: list[str]):
        from gputwin.mock.kernel import MockKernel
        from gputwin.mock.kfd import install
        self.kernel = MockKernel()
        self.mock = install(self.kernel, archs)
        self.kfd = self.kernel.open("/dev/kfd")
        self.gpu_ids = [n.gpu_id for n in self.mock.nodes]
        self.renders = [self.kernel.open(f"/dev/dri/renderD{n.render_minor}") for n in self.mock.nodes]
        for gpu_id, r in zip(self.gpu_ids, self.renders):
            self.ioctl(k.AMDKFD_IOC_ACQUIRE_VM, k.kfd_ioctl_acquire_vm_args(drm_fd=r.fd, gpu_id=gpu_id))
        self.zoo = Zoo(self.kernel)
        self.handles, self.vas, self.queues, self.events = [], [], [], []

    def ioctl(self, request, args):
        self.kfd.ioctl(request, args)
        return args

    def reserve(self, size: int) -> int:
        m = self.kernel.mmap(0, size, PROT_NONE, MAP_PRIVATE | MAP_NORESERVE)
        self.zoo.maps.append(m)
        return m.addr

    def alloc(self, size: int, flags: int, mmap_offset: int = 0, gpu: int = 0, cpu: bool = True) -> int:
        va = self.reserve(size)
        a = self.ioctl(k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, k.kfd_ioctl_alloc_memory_of_gpu_args(
            va_addr=va, size=size, gpu_id=self.gpu_ids[gpu], flags=flags, mmap_offset=mmap_offset))
        self.handles.append(a.handle)
        self.vas.append(va)
        self.map(a.handle, [self.gpu_ids[gpu]])
        if cpu and flags & (k.KFD_IOC_ALLOC_MEM_FLAGS_VRAM | k.KFD_IOC_ALLOC_MEM_FLAGS_GTT):
            self.renders[gpu].mmap(va, size, RW, MAP_SHARED | MAP_FIXED, a.mmap_offset)
        return va

    def map(self, handle: int, ids: list[int], ptr: int | None = None, request=k.AMDKFD_IOC_MAP_MEMORY_TO_GPU,
            n_success: int = 0):
        arr = (ctypes.c_uint32 * max(1, len(ids)))(*ids)
        struct = (k.kfd_ioctl_map_memory_to_gpu_args if request == k.AMDKFD_IOC_MAP_MEMORY_TO_GPU
                  else k.kfd_ioctl_unmap_memory_from_gpu_args)
        return self.ioctl(request, struct(handle=handle, device_ids_array_ptr=ctypes.addressof(arr) if ptr is None
                                          else ptr, n_devices=len(ids), n_success=n_success))

    def create_queue(self, ring: int, ring_size: int, ptrs: int, qtype: int = 0, gpu: int = 0, pct: int = 100):
        a = self.ioctl(k.AMDKFD_IOC_CREATE_QUEUE, k.kfd_ioctl_create_queue_args(
            ring_base_address=ring, ring_size=ring_size, gpu_id=self.gpu_ids[gpu], queue_type=qtype,
            queue_percentage=pct, queue_priority=7, read_pointer_address=ptrs, write_pointer_address=ptrs + 8))
        self.queues.append((a.queue_id, a.doorbell_offset, ring, a.queue_type, gpu))
        return a

    def ring(self, q, value: int) -> None:
        _, doorbell, _, _, _ = q
        bells = self.kfd.mmap(0, 0x2000, RW, MAP_SHARED, doorbell & ~0x1FFF)
        try:
            bells.write64(doorbell & 0x1FF8, value)
        finally:
            self.kernel.munmap(bells)

    def close(self) -> None:
        self.kfd.close()
        for r in self.renders:
            r.close()
        self.zoo.release()


def _mostly(rnd: random.Random, good, bad, p: float = 0.8):
    return good() if rnd.random() < p else bad()


def _known(rnd: random.Random, items: list, junk):
    return _mostly(rnd, lambda: rnd.choice(items), lambda: junk) if items else junk


def step(rig: Rig, op: str, rnd: random.Random) -> None:
    """One operation; raises what the mock raised."""
    zoo, gpu = rig.zoo, rnd.randrange(len(rig.gpu_ids))
    if op == "alloc":
        flags = _mostly(rnd, lambda: rnd.choice(FLAGS[:3]), lambda: rnd.choice(FLAGS))
        size = _mostly(rnd, lambda: rnd.choice(SIZES[:3]), lambda: rnd.choice(SIZES))
        user = zoo.user_range(max(PAGE, size)) if flags == USERPTR and size <= 8 * PAGE and rnd.random() < 0.6 \
            else zoo.pointer(rnd) & ~(PAGE - 1)
        va = _mostly(rnd, lambda: rig.reserve(8 * PAGE), lambda: rnd.choice(rig.vas + [0, 8, 1 << 47]))
        a = rig.ioctl(k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, k.kfd_ioctl_alloc_memory_of_gpu_args(
            va_addr=va, size=size, flags=flags, gpu_id=_mostly(rnd, lambda: rig.gpu_ids[gpu], lambda: 7, 0.9),
            mmap_offset=user if flags & k.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR else 0))
        rig.handles.append(a.handle)
        rig.vas.append(a.va_addr)
    elif op == "free":
        rig.ioctl(k.AMDKFD_IOC_FREE_MEMORY_OF_GPU, k.kfd_ioctl_free_memory_of_gpu_args(
            handle=_known(rnd, rig.handles, rnd.getrandbits(64))))
    elif op in ("map", "unmap"):
        ids = [rig.gpu_ids[gpu]] + ([rnd.choice(rig.gpu_ids + [3])] if rnd.random() < 0.3 else [])
        request = k.AMDKFD_IOC_MAP_MEMORY_TO_GPU if op == "map" else k.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU
        rig.map(_known(rnd, rig.handles, rnd.getrandbits(64)), ids if rnd.random() < 0.95 else [],
                ptr=_mostly(rnd, lambda: None, lambda: zoo.pointer(rnd, 4 * len(ids))), request=request,
                n_success=rnd.choice([0, 0, 0, 1, 3]))
    elif op == "queue":
        fresh = lambda: rig.alloc(PAGE, GTT_RW, gpu=gpu, cpu=False)   # noqa: E731
        ring = _mostly(rnd, fresh, lambda: _known(rnd, rig.vas, zoo.pointer(rnd)))
        ptrs = _mostly(rnd, fresh, lambda: _known(rnd, rig.vas, zoo.pointer(rnd)))
        rig.create_queue(ring, _mostly(rnd, lambda: PAGE, lambda: rnd.getrandbits(32)), ptrs,
                         _mostly(rnd, lambda: rnd.choice([0, 1]), lambda: rnd.randrange(6)), gpu,
                         _mostly(rnd, lambda: 100, lambda: rnd.randrange(200)))
    elif op == "userptr_queue":    # issue 11: read/write pointers in user pages, which then lose their access
        own = rnd.random() < 0.7
        user = zoo.user_range(PAGE) if own else zoo.pointer(rnd) & ~(PAGE - 1)
        ptrs = rig.alloc(PAGE, USERPTR, mmap_offset=user, gpu=gpu)
        ring = rig.alloc(PAGE, GTT_RW, gpu=gpu)
        rig.create_queue(ring, PAGE, ptrs, rnd.choice([0, 1]), gpu)
        if own and rnd.random() < 0.7:   # (the zoo's other pages keep their protection: the fuzzer uses them)
            _libc.mprotect(user, PAGE, rnd.choice([PROT_NONE, PROT_READ, PROT_WRITE]))
        rig.ring(rig.queues[-1], rnd.choice([0, 2, 8]))
    elif op in ("destroy_queue", "update_queue"):
        q = _known(rnd, rig.queues, (rnd.randrange(2000), 0, 0, 0, 0))
        if op == "destroy_queue":
            rig.ioctl(k.AMDKFD_IOC_DESTROY_QUEUE, k.kfd_ioctl_destroy_queue_args(queue_id=q[0]))
            if q in rig.queues:
                rig.queues.remove(q)
        else:
            rig.ioctl(k.AMDKFD_IOC_UPDATE_QUEUE, k.kfd_ioctl_update_queue_args(
                queue_id=q[0], ring_base_address=_mostly(rnd, lambda: q[2], lambda: zoo.pointer(rnd)),
                ring_size=rnd.choice([PAGE, 0x800, 0x1800]), queue_percentage=rnd.choice([100, 0, 101]),
                queue_priority=rnd.choice([1, 15, 16])))
    elif op == "event":
        a = rig.ioctl(k.AMDKFD_IOC_CREATE_EVENT, k.kfd_ioctl_create_event_args(
            event_type=_mostly(rnd, lambda: rnd.choice([0, 3, 8]), lambda: rnd.randrange(12)),
            auto_reset=rnd.randrange(2), event_page_offset=rnd.choice([0, 0, 0, _known(rnd, rig.handles, 5)])))
        rig.events.append(a.event_id)
    elif op in ("set", "reset", "destroy_event"):
        request, struct = {"set": (k.AMDKFD_IOC_SET_EVENT, k.kfd_ioctl_set_event_args),
                           "reset": (k.AMDKFD_IOC_RESET_EVENT, k.kfd_ioctl_reset_event_args),
                           "destroy_event": (k.AMDKFD_IOC_DESTROY_EVENT, k.kfd_ioctl_destroy_event_args)}[op]
        rig.ioctl(request, struct(event_id=_known(rnd, rig.events, rnd.getrandbits(32))))
    elif op == "wait":
        n = rnd.randrange(4)
        size = n * ctypes.sizeof(k.kfd_event_data)
        ptr = _mostly(rnd, lambda: zoo.rw, lambda: zoo.pointer(rnd, size), 0.6)
        if ptr == zoo.rw:
            data = (k.kfd_event_data * max(n, 1)).from_address(ptr)
            for d in data[:n]:
                d.event_id = _known(rnd, rig.events, rnd.getrandbits(32))
        rig.ioctl(k.AMDKFD_IOC_WAIT_EVENTS, k.kfd_ioctl_wait_events_args(
            events_ptr=ptr, num_events=n if rnd.random() < 0.95 else rnd.getrandbits(32),
            wait_for_all=rnd.randrange(2), timeout=rnd.choice([0, 1, 0xFFFFFFFF])))
    elif op == "raw":
        request = rnd.choice(sorted(k.IOCTLS) + [0xC0084B7F, 0x1234, 0xC0104B99])
        size = max(1, (request >> 16) & 0x3FFF)
        rig.kfd.ioctl(request, (ctypes.c_uint8 * size).from_buffer_copy(rnd.randbytes(size)))
    elif op == "doorbell" and rig.queues:
        q = rnd.choice(rig.queues)
        words = []
        for _ in range(rnd.randrange(1, 6)):
            count = rnd.randrange(8)
            words += [pm4.PACKET3(rnd.choice(OPCODES), count) if q[3] == 0 else rnd.getrandbits(8)]
            words += [rnd.choice([0, 1, rnd.getrandbits(32), _known(rnd, rig.vas, 0) & 0xFFFFFFFF])
                      for _ in range(count + 1)]
        mem = rig.mock.nodes[q[4]].gpu.mem
        region = mem.find(q[2])
        if region is not None and 4 * len(words) <= region.end - q[2] and region.writable:
            mem.write(q[2], b"".join(w.to_bytes(4, "little") for w in words))   # as the CPU's ring write
        rig.ring(q, rnd.choice([len(words), len(words) * 4, rnd.getrandbits(64)]))
    elif op == "mmap":
        allocs = list(rig.mock.process.allocations.values()) if rig.mock.process else []
        kfd_offset = rnd.choice([3 << 62 | rig.gpu_ids[gpu] << 46, 2 << 62, rig.gpu_ids[gpu] << 46,
                                 rnd.getrandbits(64)])
        bo_offset = _known(rnd, [a.mmap_offset for a in allocs], rnd.getrandbits(64))
        f, offset = rnd.choice([(rig.kfd, kfd_offset), (rig.renders[gpu], bo_offset)])
        m = f.mmap(0, rnd.choice([PAGE, 0x2000, 8 * PAGE]), RW, rnd.choice([MAP_SHARED, MAP_PRIVATE]), offset)
        rig.kernel.munmap(m)
    elif op == "apertures":
        rig.ioctl(k.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, k.kfd_ioctl_get_process_apertures_new_args(
            kfd_process_device_apertures_ptr=zoo.pointer(rnd), num_of_nodes=rnd.choice([0, 1, 2, 3, 70])))
    elif op == "stale" and rig.mock.process and rig.mock.process.allocations:
        # a stale or forged Mapping: munmap, or MAP_FIXED over, the memory behind a buffer -- the mock's own
        # (kernel memory: must be refused) or the user's CPU view of it (the user's own business)
        alloc = rnd.choice(list(rig.mock.process.allocations.values()))
        addr = alloc.host_addr if rnd.random() < 0.7 else alloc.va
        if alloc.flags & k.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR and addr not in {a for a, _ in zoo.user}:
            addr = alloc.va     # not the zoo's other pages: the fuzzer itself uses them
        if addr < 1 << 16:      # never map page 0 into the worker: it would hide later NULL dereferences
            return
        if rnd.random() < 0.5:
            rig.kernel.munmap(Mapping(addr, PAGE))
        else:
            rig.kernel.mmap(addr, PAGE, RW, MAP_PRIVATE | MAP_FIXED)
    elif op == "protect" and zoo.user:   # the user changes pages under a USERPTR buffer between ioctls
        addr, size = rnd.choice(zoo.user)
        if rnd.random() < 0.2:
            _libc.munmap(addr, size)
        else:
            _libc.mprotect(addr, size, rnd.choice([PROT_NONE, PROT_READ, PROT_WRITE, RW]))


@register
class Kfd(Surface):
    name = "kfd"
    doc = "random mock-KFD ioctl sequences, user pointers into protected pages, USERPTR pages pulled away"

    def generate(self, rnd: random.Random) -> dict:
        return {"gpus": rnd.choice([1, 2]),
                "steps": [[rnd.choice(OPS), rnd.getrandbits(32)] for _ in range(rnd.randrange(1, 40))]}

    def execute(self, case: dict, rec: Recorder) -> None:
        rig = Rig(["gfx1100"] * case["gpus"])
        try:
            for i, (op, seed) in enumerate(case["steps"]):
                rec.step(f"{i}:{op}", step, rig, op, random.Random(seed))
            rec.step("run_gpus", rig.mock.run_gpus)
            record_gpu_events(rec, rig.mock)
        finally:
            rig.close()


def record_gpu_events(rec: Recorder, mock) -> None:
    """Count what the GPUs reported to the mock KFD (faults, hangs, rejected packets). The error inside an
    event must itself be a gputwin error: an IndexError turned into an "error" event is a leak all the same."""
    for _, event in mock.faults:
        rec.error(f"gpu event {event.kind}", event.error, prefix=f"event:{event.kind}:", validation=False)
