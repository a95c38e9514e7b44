import ctypes

import numpy as np
import pytest

from gputwin.emu.memory import AddressSpace
from gputwin.errors import GpuFault, MemoryFault


@pytest.fixture
def mem():
    m = AddressSpace()
    m.map(0x1000, 0x100)
    m.map(0x2000, 0x100)
    return m


def test_scalar_read_write(mem):
    mem.write_u32(0x1004, 0xDEADBEEF)
    mem.write_u64(0x2008, 0x0102030405060708)
    assert mem.read_u32(0x1004) == 0xDEADBEEF
    assert mem.read(0x2008, 8) == bytes.fromhex("0807060504030201")
    assert mem.read_u64(0x2008) == 0x0102030405060708


def test_vector_load_store_across_regions(mem):
    addrs = np.array([0x1000, 0x2004, 0x10FC, 0x2000], np.uint64)
    mem.store_u32(addrs, np.array([1, 2, 3, 4], np.uint32))
    assert mem.load_u32(addrs)[:, 0].tolist() == [1, 2, 3, 4]
    assert mem.load(np.array([[0x1000, 0x1001]], np.uint64), 2).shape == (1, 2, 2)


def test_unaligned_vector_access(mem):
    mem.write(0x1000, bytes(range(16)))
    assert mem.load_u32(np.array([0x1001], np.uint64))[0, 0] == 0x04030201


@pytest.mark.parametrize("addr,n", [(0x0FFC, 4), (0x10FE, 4), (0x3000, 1), (0x1100, 4)])
def test_out_of_bounds_faults_with_the_address(mem, addr, n):
    with pytest.raises(MemoryFault, match="unmapped address") as e:
        mem.load(np.array([0x1000, addr], np.uint64), n)
    assert isinstance(e.value, GpuFault) and e.value.address in (addr, 0x1100) and e.value.write is False


def test_write_to_read_only_mapping_faults():
    m = AddressSpace()
    m.map(0x4000, 64, writable=False)
    with pytest.raises(MemoryFault, match="write to read-only mapping") as e:
        m.store_u32(np.array([0x4000], np.uint64), np.array([1], np.uint32))
    assert e.value.write is True
    with pytest.raises(MemoryFault, match="write to read-only mapping"):
        m.write_u32(0x4000, 1)


def test_overlapping_maps_are_rejected(mem):
    with pytest.raises(ValueError, match="mapping va=0x10f0 size=0x20 overlaps an existing mapping"):
        mem.map(0x10F0, 0x20)
    with pytest.raises(ValueError, match="mapping va=0xf80 size=0x100 overlaps an existing mapping"):
        mem.map(0x0F80, 0x100)


def test_host_backed_mapping_shares_memory():
    buf = (ctypes.c_uint32 * 4)()
    m = AddressSpace()
    m.map(0x8000, 16, ctypes.addressof(buf))
    m.write_u32(0x8008, 77)
    assert buf[2] == 77
    m.unmap(0x8000)
    with pytest.raises(MemoryFault, match="unmapped address"):
        m.read_u32(0x8008)


TOP = (1 << 64) - 2     # addr + 4 wraps past 2**64


@pytest.mark.parametrize("layout", [[], [(0x1000, 0x1000)], [(1 << 32, 8 << 30)], [(0x1000, 0x100), (1 << 40, 0x10)]])
@pytest.mark.parametrize("lanes", [[TOP], [0x1000, TOP], [TOP, (1 << 64) - 1]])
def test_accesses_that_wrap_past_2_64_fault(layout, lanes):
    """Issue 11 defect 4: the end of an access is computed without wrapping, so no lane reaches a mapping
    (or an IndexError) through the 64-bit wrap; the fault names the first lane that wraps."""
    m = AddressSpace()
    for va, size in layout:
        m.map(va, size)
    addrs = np.array(lanes, np.uint64)
    first_bad = next(a for a in lanes if not any(va <= a and a + 4 <= va + size for va, size in layout))
    for access in (lambda: m.load(addrs, 4), lambda: m.store(addrs, np.zeros((len(lanes), 4), np.uint8))):
        with pytest.raises(MemoryFault, match="unmapped address") as e:
            access()
        assert e.value.address == first_bad


def test_the_last_bytes_below_2_64_are_mappable():
    m = AddressSpace()
    m.map((1 << 64) - 0x1000, 0x1000 - 1)
    m.store(np.array([TOP - 3], np.uint64), np.full((1, 4), 7, np.uint8))
    assert m.load(np.array([TOP - 3], np.uint64), 4).tolist() == [[7, 7, 7, 7]]
    with pytest.raises(MemoryFault, match="unmapped"):
        m.load(np.array([TOP - 2], np.uint64), 4)


@pytest.mark.parametrize("va,size", [(-0x1000, 0x2000), ((1 << 64) - 0x1000, 0x1000), (1 << 64, 1), (0x1000, 0)])
def test_mappings_must_lie_inside_the_64_bit_space(va, size):
    with pytest.raises(ValueError, match="bad mapping"):
        AddressSpace().map(va, size)
