"""The emulated NBIO windows: MM_INDEX/MM_DATA into VRAM and registers, the SMN window, the HDP flush remap,
the doorbell aperture gate, and fail-closed register decoding."""
import pytest

from gputwin.abi.amdgpu import ip_bases
from gputwin.abi.amdgpu import nbio as n
from gputwin.emu.amd.soc.board import build
from gputwin.emu.amd.soc.regfile import RegisterError

GIB = 1 << 30


@pytest.fixture
def f():
    return build("gfx1100", vram_size=GIB)


def test_mm_index_with_bit31_reaches_vram_above_2gib_via_index_hi():
    f = build("gfx1100", vram_size=4 * GIB)
    address = 3 * GIB + 0x40
    f.regs.write(n.MM_INDEX_HI, address >> 31)
    f.regs.write(n.MM_INDEX, (address & 0x7FFFFFFF) | 1 << 31)
    f.regs.write(n.MM_DATA, 0xDEADBEEF)
    assert f.vram[address:address + 4].tobytes() == bytes.fromhex("efbeadde")
    f.vram[address + 4:address + 8] = memoryview(b"\x01\x02\x03\x04")
    f.regs.write(n.MM_INDEX, ((address + 4) & 0x7FFFFFFF) | 1 << 31)
    assert f.regs.read(n.MM_DATA) == 0x04030201


def test_mm_index_without_bit31_reaches_registers(f):
    f.regs.write(n.MM_INDEX, 0xDE3 * 4)
    assert f.regs.read(n.MM_DATA) == 1024


@pytest.mark.parametrize("index, target", [(n.MM_INDEX, n.MM_DATA), (n.MM_INDEX, n.PCIE_DATA2),
                                           (n.PCIE_INDEX2, n.PCIE_DATA2), (n.PCIE_INDEX2, n.MM_DATA)])
def test_a_window_pointed_at_a_data_register_is_refused_not_recursed(f, index, target):
    f.regs.write(index, 4 * target)
    data = n.MM_DATA if index == n.MM_INDEX else n.PCIE_DATA2
    with pytest.raises(RegisterError, match="points at the data window register"):
        f.regs.read(data)


def test_mm_data_outside_vram_fails(f):
    f.regs.write(n.MM_INDEX_HI, 1)
    f.regs.write(n.MM_INDEX, 1 << 31)
    with pytest.raises(RegisterError, match="outside VRAM"):
        f.regs.read(n.MM_DATA)


def test_smn_window_reaches_a_register_beyond_the_bar_and_fails_closed(f):
    dword = 0x40000   # 1 MiB: past the MMIO BAR
    f.regs.add(dword, "FAR_REG")
    f.regs.write(n.PCIE_INDEX2, dword * 4)
    f.regs.write(n.PCIE_DATA2, 77)
    assert f.regs.value(dword) == 77
    f.regs.write(n.PCIE_INDEX2, 0x50000 * 4)
    with pytest.raises(RegisterError, match=r"dword 0x50000 .* not modelled"):
        f.regs.read(n.PCIE_DATA2)


def test_hdp_flush_register_moves_with_the_remap(f):
    bases = ip_bases("gfx1100")
    nbio = f.blocks["nbio"]
    with pytest.raises(RegisterError, match="not modelled"):
        f.regs.write(0x7F000 // 4, 0)                     # nothing there before the remap
    f.regs.write(n.REMAP_HDP_MEM_FLUSH_CNTL.address(bases), 0x7F000)
    assert f.regs.read(n.REMAP_HDP_MEM_FLUSH_CNTL.address(bases)) == 0x7F000
    f.regs.write(0x7F000 // 4, 0)
    assert nbio.hdp_flushes == 1
    f.regs.write(n.REMAP_HDP_MEM_FLUSH_CNTL.address(bases), 0x7E000)
    with pytest.raises(RegisterError):
        f.regs.write(0x7F000 // 4, 0)                     # the old place no longer decodes
    f.regs.write(n.GPU_HDP_FLUSH_REQ.address(bases), 0x1)
    assert f.regs.read(n.GPU_HDP_FLUSH_DONE.address(bases)) == 0x1 and nbio.hdp_flushes == 2


def test_doorbells_decode_only_after_the_aperture_is_enabled(f):
    hits = []
    f.doorbells.claim(0x10, hits.append)
    with pytest.raises(RegisterError, match="doorbell aperture is disabled"):
        f.doorbells.write(0x10, (5).to_bytes(8, "little"))
    f.regs.write(n.RCC_DOORBELL_APER_EN.address(ip_bases("gfx1100")), 1)
    f.doorbells.write(0x10, (5).to_bytes(8, "little"))
    assert hits == [5]


def test_fb_location_registers_are_what_the_vbios_left_and_read_only():
    for arch, dword in (("gfx1100", 0x1A000 + 0x8EC), ("gfx1201", 0x1A000 + 0x554)):
        f = build(arch, vram_size=GIB)
        assert f.regs.read(dword) << 24 == f.fb.base
        assert (f.regs.read(dword + 1) + 1) << 24 == f.fb.base + GIB
        with pytest.raises(RegisterError, match="read-only MMMC_VM_FB_LOCATION_BASE"):
            f.regs.write(dword, 0)
