"""Issue 11, defect 1: user pointers into protected pages. The mock KFD returns EFAULT where the kernel does,
and the emulated GPU faults rather than the host touching a page it may not. Each scenario runs in a
subprocess: a regression is a segfault (rc 139), which must fail the test, not kill the test worker."""
import subprocess
import sys
import textwrap

import pytest

PRELUDE = """
import ctypes, errno
from gputwin.abi import amd_pm4 as pm4, kfd_ioctl as k
from gputwin.drivers.kernel import MAP_PRIVATE, MAP_SHARED, PROT_READ
from tests.mock.kfd_rig import GTT_RW, RW, KfdRig
libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
rig = KfdRig()
USERPTR = k.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | k.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE

def errno_of(request, args):
    try:
        rig.ioctl(request, args)
    except OSError as e:
        return errno.errorcode[e.errno]
    return "ok"

def userptr(addr, size=0x2000):
    a = rig.ioctl(k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, k.kfd_ioctl_alloc_memory_of_gpu_args(
        va_addr=rig.reserve(size), size=size, gpu_id=rig.gpu_id, flags=USERPTR, mmap_offset=addr))
    rig.map(a.handle)
    return a

def queue_with_pointers_at(va):
    ring = rig.alloc(0x1000, GTT_RW)
    q = rig.ioctl(k.AMDKFD_IOC_CREATE_QUEUE, k.kfd_ioctl_create_queue_args(
        ring_base_address=ring.va, ring_size=0x1000, gpu_id=rig.gpu_id, queue_type=k.KFD_IOC_QUEUE_TYPE_COMPUTE,
        queue_percentage=100, queue_priority=7, read_pointer_address=va, write_pointer_address=va + 8))
    base = q.doorbell_offset & ~0x1FFF
    bells = rig.kfd.mmap(0, 0x2000, RW, MAP_SHARED, base)
    ring.write_u32(0, pm4.PACKET3(pm4.PACKET3_NOP, 0), 0)
    return lambda: bells.write64(q.doorbell_offset - base, 2)
"""


def run(script: str) -> list[str]:
    """The scenario's printed lines; fails on any exit but a clean one (139 = the host segfaulted)."""
    code = textwrap.dedent(PRELUDE) + textwrap.dedent(script)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"rc {p.returncode}\n{p.stderr[-3000:]}"
    return p.stdout.split()


@pytest.mark.parametrize("prot", [0, 1])   # PROT_NONE (a VA reservation), read-only
def test_userptr_over_memory_not_mapped_read_write_is_efault(prot):
    out = run(f"""
        m = rig.kernel.mmap(0, 0x2000, {prot}, MAP_PRIVATE)
        try:
            userptr(m.addr)
            ring = queue_with_pointers_at(m.addr)   # the crash of issue 11 if the allocation were accepted
            ring()
            print("accepted")
        except OSError as e:
            print(errno.errorcode[e.errno])
        """)
    assert out == ["EFAULT"]


def test_userptr_partly_unmapped_is_efault():
    out = run("""
        m = rig.kernel.mmap(0, 0x3000, RW, MAP_PRIVATE)
        libc.munmap(ctypes.c_void_p(m.addr + 0x1000), 0x1000)
        print(errno_of(k.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, k.kfd_ioctl_alloc_memory_of_gpu_args(
            va_addr=rig.reserve(0x3000), size=0x3000, gpu_id=rig.gpu_id, flags=USERPTR, mmap_offset=m.addr)))
        """)
    assert out == ["EFAULT"]


@pytest.mark.parametrize("prot", [0, 1])
def test_gpu_faults_when_userptr_pages_lose_their_protection(prot):
    """KFD's MMU notifier evicts the buffer: the GPU's read-pointer write faults (memory event with the address);
    once the pages are read-write again the buffer is back in the GPU's page table."""
    out = run(f"""
        m = rig.kernel.mmap(0, 0x2000, RW, MAP_PRIVATE)
        a = userptr(m.addr)
        mev = rig.event(k.KFD_IOC_EVENT_MEMORY)
        ring = queue_with_pointers_at(a.va_addr)
        libc.mprotect(m.addr, 0x2000, {prot})
        ring()
        result, data = rig.wait(mev.event_id)
        print(result == k.KFD_IOC_WAIT_RESULT_COMPLETE, data[0].memory_exception_data.va == a.va_addr)
        gpu_mem = rig.mock.nodes[0].gpu.mem
        print(gpu_mem.find(a.va_addr) is None)
        libc.mprotect(m.addr, 0x2000, 3)
        rig.ioctl(k.AMDKFD_IOC_GET_VERSION, k.kfd_ioctl_get_version_args())
        print(gpu_mem.find(a.va_addr) is not None)
        """)
    assert out == ["True", "True", "True", "True"]


@pytest.mark.parametrize("prot", [0, 1])
def test_wait_events_into_protected_pages_is_efault(prot):
    out = run(f"""
        ev = rig.event()
        m = rig.kernel.mmap(0, 0x1000, {prot}, MAP_PRIVATE)
        print(errno_of(k.AMDKFD_IOC_WAIT_EVENTS, k.kfd_ioctl_wait_events_args(events_ptr=m.addr, num_events=1)))
        """)
    assert out == ["EFAULT"]


@pytest.mark.parametrize("prot", [0, 1])
def test_process_apertures_into_protected_pages_is_efault(prot):
    out = run(f"""
        m = rig.kernel.mmap(0, 0x1000, {prot}, MAP_PRIVATE)
        print(errno_of(k.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, k.kfd_ioctl_get_process_apertures_new_args(
            kfd_process_device_apertures_ptr=m.addr, num_of_nodes=1)))
        if {prot}:
            print(ctypes.string_at(m.addr, 64) == bytes(64))   # nothing was written
        """)
    assert out == ["EFAULT"] + (["True"] if prot else [])


def test_the_mocks_own_memory_cannot_be_unmapped_or_replaced_through_the_seam():
    """The memory behind a buffer (the mock's own mapping, kernel memory on Linux) is out of the user's reach:
    munmap of it is EINVAL, MAP_FIXED over it ENOMEM, and the GPU still reaches it afterwards."""
    out = run("""
        from gputwin.drivers.kernel import MAP_FIXED, Mapping
        q = rig.queue()
        behind = next(a for a in rig.mock.process.allocations.values() if a.va == q.ring.va).host_addr
        for call in (lambda: rig.kernel.munmap(Mapping(behind, 0x1000)),
                     lambda: rig.kernel.mmap(behind, 0x1000, RW, MAP_PRIVATE | MAP_FIXED)):
            try:
                call()
                print("allowed")
            except OSError as e:
                print(errno.errorcode[e.errno])
        q.submit(pm4.PACKET3(pm4.PACKET3_NOP, 0), 0)
        print(q.rptr == 8)
        """)
    assert out == ["EINVAL", "ENOMEM", "True"]
