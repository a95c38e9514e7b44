"""The AM driver's VRAM allocator and page-table builder on their own (no chip): first fit with alignment and
coalescing, the largest page that fits, entries written to VRAM only where they changed."""
import numpy as np
import pytest

from gputwin.abi.amdgpu import vm
from gputwin.drivers.amd.am.gmc import PageTables, ExtentAllocator

MIB, GIB = 1 << 20, 1 << 30


def test_allocator_aligns_fits_first_and_coalesces_what_is_freed():
    a = ExtentAllocator(0x1000, 16 * MIB)
    small = a.alloc(100)
    big = a.alloc(2 * MIB, 2 * MIB)
    assert small == 0x1000 and big == 2 * MIB
    assert a.alloc(0x1000) == 0x2000                       # the gap before the aligned block is used first
    a.free(big, 2 * MIB)
    a.free(small, 100)
    assert a.free_list[0] == (0x1000, 0x2000)
    a.free(0x2000, 0x1000)
    assert a.free_list == [(0x1000, 16 * MIB)]            # everything merged back into one extent
    assert a.alloc(17 * MIB) is None


class FakeVram:
    def __init__(self):
        self.mem = np.zeros(64 * MIB, np.uint8)
        self.writes = []

    def write(self, at, data):
        self.writes.append((at, len(data)))
        self.mem[at:at + len(data)] = np.frombuffer(data, np.uint8)


def _tables(arch="gfx1100"):
    vram, pages = FakeVram(), iter(range(MIB, 64 * MIB, vm.PAGE))
    return vram, PageTables(arch, vram.write, lambda: next(pages))


def test_a_mapping_uses_1g_then_2m_then_4k_leaves_as_alignment_allows():
    vram, t = _tables()
    va = 1 << 40
    t.map(va, 3 * GIB, GIB + 2 * MIB + 8192, system=False)
    levels = []
    for off, level in ((0, vm.AMDGPU_VM_PDB1), (GIB, vm.AMDGPU_VM_PDB0), (GIB + 2 * MIB, vm.AMDGPU_VM_PTB),
                       (GIB + 2 * MIB + 4096, vm.AMDGPU_VM_PTB)):
        table = t.root
        for lv in range(level):
            table = int(t.tables[table][((va + off) >> vm.LEVEL_SHIFT[lv]) & 511]) & vm.ADDRESS_MASK
        e = int(t.tables[table][((va + off) >> vm.LEVEL_SHIFT[level]) & 511])
        levels.append(t.fmt.is_leaf(e, level) and e & vm.ADDRESS_MASK == 3 * GIB + off)
    assert all(levels)
    table = t.tables[t.root]                                # the host copy is what VRAM holds
    assert np.array_equal(vram.mem[t.root:t.root + vm.PAGE].view("<u8"), table)


def test_updates_write_only_the_changed_entries_and_unmap_clears_them():
    vram, t = _tables()
    t.map(1 << 40, 0x10_0000, 3 * vm.PAGE, system=True)
    vram.writes.clear()
    t.unmap((1 << 40) + vm.PAGE, vm.PAGE)
    assert vram.writes == [(vram.writes[0][0], 8)]          # one 8-byte entry
    with pytest.raises(ValueError, match="not mapped"):
        t.unmap((1 << 40) + vm.PAGE, vm.PAGE)


def test_system_pages_are_snooped_and_gfx12_leaves_carry_is_pte():
    _, t = _tables("gfx1201")
    e = t.fmt.leaf(0x1234_5000, vm.AMDGPU_VM_PTB, system=True, writable=False)
    assert e & vm.AMDGPU_PTE_SYSTEM and e & vm.AMDGPU_PTE_SNOOPED and not e & vm.AMDGPU_PTE_WRITEABLE
    assert e & vm.AMDGPU_PTE_IS_PTE and vm.AMDGPU_PTE_MTYPE_GFX12.get(e) == vm.MTYPE_UC
    e11 = vm.pte_format("gfx1100").leaf(0x1234_5000, vm.AMDGPU_VM_PDB0, system=False, writable=True)
    assert e11 & vm.AMDGPU_PDE_PTE and not e11 >> 63 and vm.AMDGPU_PTE_MTYPE_NV10.get(e11) == vm.MTYPE_UC
