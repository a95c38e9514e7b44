"""Random ioctl sequences and malformed structs against the mock KFD: no crash, no hang, and every failure
is an OSError carrying one of the errnos docs/mock-kfd.md documents.

Each step is an operation plus a seed; the seed picks its arguments, mostly well-formed (so sequences get
deep: buffers, queues, doorbells, events) and sometimes not. Pointer fields are drawn from safe values (null,
unmapped, or a scratch buffer of the test), since the mock, like the real kernel, writes wherever a valid
user pointer points."""
import ctypes
import errno
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gputwin.abi import amd_pm4 as pm4
from gputwin.abi import kfd_ioctl as k
from gputwin.drivers.kernel import MAP_PRIVATE, MAP_SHARED
from tests.mock.kfd_rig import GTT_RW, RW, VRAM_RW, KfdRig

DOCUMENTED = {errno.EINVAL, errno.ENOMEM, errno.EFAULT, errno.ENOTTY, errno.EBADF, errno.EBUSY, errno.EPERM,
              errno.EEXIST, errno.ENOSPC}
# requests whose handlers write through a user pointer: exercised with safe pointers only, never raw
_WRITES_THROUGH_POINTERS = {k.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, k.AMDKFD_IOC_WAIT_EVENTS}
RAW_REQUESTS = sorted(set(k.IOCTLS) - _WRITES_THROUGH_POINTERS) + [0xC0084B7F, 0x1234, 0xC0104B99]
FLAGS = [VRAM_RW, GTT_RW, k.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, k.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL,
         k.KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP, 0, VRAM_RW | k.KFD_IOC_ALLOC_MEM_FLAGS_GTT, 0xFFFFFFFF,
         k.KFD_IOC_ALLOC_MEM_FLAGS_GTT]
SIZES = [0x1000, 0x2000, 0x8000, 0x1001, 0, 1 << 40, (1 << 64) - 1]
OPCODES = [pm4.PACKET3_NOP, pm4.PACKET3_WRITE_DATA, pm4.PACKET3_RELEASE_MEM, pm4.PACKET3_WAIT_REG_MEM,
           pm4.PACKET3_INDIRECT_BUFFER, pm4.PACKET3_COPY_DATA, pm4.PACKET3_SET_SH_REG, pm4.PACKET3_ACQUIRE_MEM,
           pm4.PACKET3_EVENT_WRITE, 0xEE]
OPS = ["alloc", "alloc", "alloc", "free", "map", "map", "unmap", "queue", "queue", "destroy_queue", "update_queue",
       "event", "event", "set", "reset", "destroy_event", "wait", "raw", "doorbell", "doorbell", "mmap", "apertures"]


def mostly(rnd: random.Random, good, bad, p_good: float = 0.8):
    return good() if rnd.random() < p_good else bad()


class Fuzzer:
    def __init__(self):
        self.rig = KfdRig(("gfx1100", "gfx1100"))
        self.scratch = (ctypes.c_uint8 * 4096)()
        self.handles, self.queues, self.events, self.vas = [], [], [], []
        self.steps = 0

    def known(self, rnd, items, junk):
        return mostly(rnd, lambda: rnd.choice(items), lambda: junk) if items else junk

    def run(self, op: str, seed: int) -> None:
        self.steps += 1   # hypothesis favours seed 0: mix in the position so repeated seeds still vary
        rnd, rig = random.Random(f"{seed}:{self.steps}"), self.rig
        other_gpu = rig.mock.nodes[1].gpu_id
        if op == "alloc":
            size = mostly(rnd, lambda: rnd.choice(SIZES[:3]), lambda: rnd.choice(SIZES))
            flags = mostly(rnd, lambda: rnd.choice(FLAGS[:2]), lambda: rnd.choice(FLAGS))
            va = mostly(rnd, lambda: rig.reserve(0x8000), lambda: rnd.choice(self.vas + [0, 8, 1 << 47]))
            args = rig.ioctl(k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, k.kfd_ioctl_alloc_memory_of_gpu_args(
                va_addr=va, size=size, flags=flags, gpu_id=mostly(rnd, lambda: rig.gpu_id, lambda: 7, 0.9),
                mmap_offset=rnd.choice([0, rig.reserve(0x8000)])))
            self.handles.append(args.handle)
            self.vas.append(args.va_addr)
        elif op == "free":
            rig.ioctl(k.AMDKFD_IOC_FREE_MEMORY_OF_GPU, k.kfd_ioctl_free_memory_of_gpu_args(
                handle=self.known(rnd, self.handles, rnd.getrandbits(64))))
        elif op in ("map", "unmap"):
            ids = (ctypes.c_uint32 * 2)(rig.gpu_id, rnd.choice([other_gpu, rig.gpu_id, 3]))
            struct = k.kfd_ioctl_map_memory_to_gpu_args if op == "map" else k.kfd_ioctl_unmap_memory_from_gpu_args
            request = k.AMDKFD_IOC_MAP_MEMORY_TO_GPU if op == "map" else k.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU
            rig.ioctl(request, struct(handle=self.known(rnd, self.handles, rnd.getrandbits(64)),
                                      device_ids_array_ptr=mostly(rnd, lambda: ctypes.addressof(ids), lambda: 8),
                                      n_devices=rnd.choice([1, 1, 2, 0]), n_success=rnd.choice([0, 0, 0, 3])))
        elif op == "queue":
            fresh = lambda: rig.alloc(0x1000, GTT_RW, cpu=False).va   # noqa: E731 - mapped, as a driver does
            ring = mostly(rnd, fresh, lambda: self.known(rnd, self.vas, 0))
            ptrs = mostly(rnd, fresh, lambda: self.known(rnd, self.vas, 0))
            args = rig.ioctl(k.AMDKFD_IOC_CREATE_QUEUE, k.kfd_ioctl_create_queue_args(
                ring_base_address=ring, ring_size=mostly(rnd, lambda: 0x1000, lambda: rnd.getrandbits(32)),
                gpu_id=rig.gpu_id, queue_type=mostly(rnd, lambda: rnd.choice([0, 1]), lambda: rnd.randrange(6)),
                queue_percentage=mostly(rnd, lambda: 100, lambda: rnd.randrange(200)), read_pointer_address=ptrs,
                write_pointer_address=ptrs + 8))
            self.queues.append((args.queue_id, args.doorbell_offset, ring, args.queue_type))
        elif op in ("destroy_queue", "update_queue"):
            q = self.known(rnd, self.queues, (rnd.randrange(2000), 0, 0, 0))
            if op == "destroy_queue":
                rig.ioctl(k.AMDKFD_IOC_DESTROY_QUEUE, k.kfd_ioctl_destroy_queue_args(queue_id=q[0]))
                self.queues.remove(q) if q in self.queues else None
            else:
                rig.ioctl(k.AMDKFD_IOC_UPDATE_QUEUE, k.kfd_ioctl_update_queue_args(
                    queue_id=q[0], ring_base_address=q[2], ring_size=rnd.choice([0x1000, 0x800, 0x1800]),
                    queue_percentage=rnd.choice([100, 0, 101]), queue_priority=rnd.choice([1, 15, 16])))
        elif op == "event":
            args = rig.event(mostly(rnd, lambda: rnd.choice([0, 3, 8]), lambda: rnd.randrange(12)), rnd.randrange(2),
                             rnd.choice([0, 0, 0, self.known(rnd, self.handles, 5)]))
            self.events.append(args.event_id)
        elif op in ("set", "reset", "destroy_event"):
            request, struct = {"set": (k.AMDKFD_IOC_SET_EVENT, k.kfd_ioctl_set_event_args),
                               "reset": (k.AMDKFD_IOC_RESET_EVENT, k.kfd_ioctl_reset_event_args),
                               "destroy_event": (k.AMDKFD_IOC_DESTROY_EVENT, k.kfd_ioctl_destroy_event_args)}[op]
            rig.ioctl(request, struct(event_id=self.known(rnd, self.events, rnd.getrandbits(32))))
        elif op == "wait":
            ids = [self.known(rnd, self.events, rnd.getrandbits(32)) for _ in range(rnd.randrange(4))]
            rig.wait(*ids, wait_for_all=rnd.randrange(2), timeout=rnd.choice([0, 1, 0xFFFFFFFF]))
        elif op == "raw":
            request = rnd.choice(RAW_REQUESTS)
            size = max(1, (request >> 16) & 0x3FFF)
            buf = (ctypes.c_uint8 * size).from_buffer_copy(rnd.randbytes(size))
            rig.kfd.ioctl(request, buf)
        elif op == "doorbell" and self.queues:
            qid, doorbell, ring, qtype = rnd.choice(self.queues)
            words = []
            for _ in range(rnd.randrange(1, 6)):
                count = rnd.randrange(8)
                words += [pm4.PACKET3(rnd.choice(OPCODES), count) if qtype == 0 else rnd.getrandbits(8)]
                words += [rnd.choice([0, 1, rnd.getrandbits(32), self.known(rnd, self.vas, 0) & 0xFFFFFFFF])
                          for _ in range(count + 1)]
            gpu = rig.mock.nodes[0].gpu
            region = gpu.mem.find(ring)
            if region is None or 4 * len(words) > region.end - ring or not region.writable:
                return
            gpu.mem.write(ring, b"".join(w.to_bytes(4, "little") for w in words))
            bells = rig.kfd.mmap(0, 0x2000, RW, MAP_SHARED, doorbell & ~0x1FFF)
            bells.write64(doorbell & 0x1FF8, rnd.choice([len(words), len(words) * 4, rnd.getrandbits(64)]))
            rig.kernel.munmap(bells)
        elif op == "mmap":
            allocs = list(rig.mock.process.allocations.values())
            kfd_offset = rnd.choice([3 << 62 | rig.gpu_id << 46, 2 << 62, rig.gpu_id << 46, rnd.getrandbits(64)])
            bo_offset = self.known(rnd, [a.mmap_offset for a in allocs], rnd.getrandbits(64))
            f, offset = rnd.choice([(rig.kfd, kfd_offset), (rig.render, bo_offset)])
            size, flags = rnd.choice([0x1000, 0x2000, 0x8000]), rnd.choice([MAP_SHARED, MAP_PRIVATE])
            m = f.mmap(0, size, RW, flags, offset)
            rig.kernel.munmap(m)
        elif op == "apertures":
            rig.ioctl(k.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, k.kfd_ioctl_get_process_apertures_new_args(
                kfd_process_device_apertures_ptr=rnd.choice([ctypes.addressof(self.scratch), 0, 0xDEAD0000]),
                num_of_nodes=rnd.randrange(4096 // 56)))


@settings(max_examples=100, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, (1 << 32) - 1)), max_size=40))
def test_random_ioctl_sequences_fail_only_with_documented_errnos(steps):
    f = Fuzzer()
    try:
        for s in steps:
            try:
                f.run(*s)
            except OSError as e:
                assert e.errno in DOCUMENTED, (s, e)
    finally:
        f.rig.close()
