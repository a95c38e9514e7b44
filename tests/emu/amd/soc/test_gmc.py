"""GPU page tables end to end: the AM driver builds them in VRAM (4 KiB, 2 MiB and 1 GiB leaves, gfx11 and
gfx12 entry formats), the emulated GMC walks them on the TLB-invalidate handshake and the engines' address
space follows; unmapped accesses fault (the IH side: tests/drivers/amd/am/test_am_device.py)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gputwin.abi.amdgpu import ip_bases, versions, vm
from gputwin.drivers.amd.am.gmc import VRAM_VA, Gmc
from gputwin.emu.amd.soc import board
from gputwin.emu.amd.soc.regfile import RegisterError
from gputwin.errors import MemoryFault
from tests.emu.amd.soc.am_rig import booted

GIB, MIB = 1 << 30, 1 << 20


def _gmc(arch):
    f, pci, chip = booted(arch)
    size = chip.discovery.vram_size
    g = Gmc(chip.mmio, chip.vram, arch, 32 * MIB, 256 * MIB, size - (1 << 20), versions.gc(arch),
            versions.mmhub(arch))
    return f, g


def _entry(g, va, level):
    """The entry for va at `level` in the driver's host copy of the tables."""
    table = g.tables.root
    for lv in range(level + 1):
        e = int(g.tables.tables[table][(va >> vm.LEVEL_SHIFT[lv]) & 511])
        if lv == level:
            return e
        table = e & vm.ADDRESS_MASK


@pytest.mark.parametrize("arch,leaf_bit", [("gfx1100", vm.AMDGPU_PDE_PTE), ("gfx1201", vm.AMDGPU_PDE_PTE_GFX12)])
@pytest.mark.parametrize("size,level", [(4096, vm.AMDGPU_VM_PTB), (2 * MIB, vm.AMDGPU_VM_PDB0),
                                        (GIB, vm.AMDGPU_VM_PDB1)])
def test_mapping_of_each_page_size_translates_to_vram(arch, leaf_bit, size, level):
    f, g = _gmc(arch)
    pa = 2 * GIB                       # 1 GiB aligned, so the largest page that fits is used
    va = VRAM_VA + pa
    g.tables.map(va, pa, size, system=False)
    g.flush()
    e = _entry(g, va, level)
    assert e & vm.ADDRESS_MASK == pa and e & vm.AMDGPU_PTE_VALID and e & vm.AMDGPU_PTE_WRITEABLE
    assert bool(e & leaf_bit) == (level != vm.AMDGPU_VM_PTB or arch == "gfx1201")   # gfx12: IS_PTE, the same bit
    assert vm.AMDGPU_PTE_FRAG.get(e) == vm.LEVEL_SHIFT[level] - 12
    if arch == "gfx1201":
        assert e & vm.AMDGPU_PTE_IS_PTE
    mem = f.gpu.mem
    mem.write_u32(va + size - 4, 0xC0FFEE)         # the last dword of the mapping lands in VRAM
    assert int(f.vram[pa + size - 4:pa + size].view("<u4")[0]) == 0xC0FFEE
    with pytest.raises(MemoryFault) as e:
        mem.read_u32(va + size)
    assert e.value.address == va + size


def test_a_stale_tlb_keeps_the_old_translation_until_the_invalidate():
    f, g = _gmc("gfx1100")
    va = VRAM_VA + 64 * MIB
    g.tables.map(va, 64 * MIB, 4096, system=False)
    g.flush()
    g.tables.unmap(va, 4096)
    g.tables.map(va, 65 * MIB, 4096, system=False)      # no flush yet
    f.gpu.mem.write_u32(va, 1)
    assert int(f.vram[64 * MIB:64 * MIB + 4].view("<u4")[0]) == 1
    g.flush()
    f.gpu.mem.write_u32(va, 2)
    assert int(f.vram[65 * MIB:65 * MIB + 4].view("<u4")[0]) == 2


def test_system_pages_reach_the_dma_window_and_read_only_pages_refuse_writes():
    f, g = _gmc("gfx1100")
    window = 0x1000_0000                               # DirectPciDevice's host window bus address
    va = g.map_system(window, 1 << 20)
    f.gpu.mem.write_u32(va + 8, 0x5A5A)
    assert int(f.upstream.view(window + 8, 4).view("<u4")[0]) == 0x5A5A
    g.tables.map(VRAM_VA + 80 * MIB, 80 * MIB, 4096, system=False, writable=False)
    g.flush()
    f.gpu.mem.read_u32(VRAM_VA + 80 * MIB)
    with pytest.raises(MemoryFault):
        f.gpu.mem.write_u32(VRAM_VA + 80 * MIB, 1)


def test_contiguous_leaves_merge_into_one_region():
    f, g = _gmc("gfx1100")
    for i in range(3):
        g.tables.map(VRAM_VA + 96 * MIB + i * 4096, 96 * MIB + i * 4096, 4096, system=False)
    g.tables.map(VRAM_VA + 98 * MIB, 98 * MIB, 2 * MIB, system=False)
    g.flush()
    assert [(r.base, r.data.size) for r in f.gpu.mem.regions()] == [(VRAM_VA + 96 * MIB, 3 * 4096),
                                                                    (VRAM_VA + 98 * MIB, 2 * MIB)]


def test_page_tables_of_an_unmodelled_depth_are_refused():
    f, g = _gmc("gfx1100")
    hub = g.hubs[0]
    hub.mmio.write(hub.reg("CONTEXT0_CNTL"), vm.VM_CONTEXT_CNTL__ENABLE_CONTEXT(1)
                   | vm.VM_CONTEXT_CNTL__PAGE_TABLE_DEPTH(1))
    with pytest.raises(Exception, match="depth 1"):
        hub.flush()


@settings(max_examples=40, deadline=None)
@given(entries=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 511), st.integers(0, (1 << 64) - 1)),
                        max_size=24))
def test_arbitrary_page_tables_map_only_real_memory_or_fail_closed(entries):
    """Whatever the tables hold, an invalidate either builds regions inside VRAM / the DMA window or raises
    RegisterError; the host process never sees anything else."""
    f = board.build("gfx1100", vram_size=256 * MIB)
    tables = [16 * MIB + i * 4096 for i in range(4)]   # four tables the entries may point between
    f.vram[16 * MIB:16 * MIB + 4 * 4096] = 0
    for table, index, value in entries:
        if value & 1 and value % 7 == 0:
            value = (value & ~vm.ADDRESS_MASK) | tables[value % 4]   # often a directory to another table
        f.vram[tables[table] + 8 * index:tables[table] + 8 * index + 8].view("<u8")[0] = value
    regs = versions.gc("gfx1100")
    hub = f.blocks["gmc"].gfxhub
    hub.set("CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32", tables[0] | 1)
    hub.set("CONTEXT0_PAGE_TABLE_END_ADDR_LO32", 0xFFFFFFFF)
    hub.set("CONTEXT0_PAGE_TABLE_END_ADDR_HI32", 0xF)
    hub.set("CONTEXT0_CNTL", vm.VM_CONTEXT_CNTL__ENABLE_CONTEXT(1) | vm.VM_CONTEXT_CNTL__PAGE_TABLE_DEPTH(3))
    try:
        f.regs.write(regs.regGCVM_INVALIDATE_ENG17_REQ.address(ip_bases("gfx1100")), 1)
    except RegisterError:
        return
    vram_at = f.vram.__array_interface__["data"][0]
    for region in f.gpu.mem.regions():   # no upstream memory here: every region is a slice of VRAM
        offset = region.data.__array_interface__["data"][0] - vram_at
        assert 0 <= offset and offset + region.data.size <= f.vram_size and region.end <= 1 << 48
