"""Register access of the AM driver: by Reg through discovered bases, direct and through SMN, and the
emulator failing closed on a register it does not model."""
import pytest

from gputwin.abi.amdgpu import Reg, ip_bases
from gputwin.drivers.amd.am.mmio import Mmio, PollTimeout, wait_until
from gputwin.emu.amd.soc.regfile import RegisterError
from tests.drivers.amd.am.conftest import attach


def test_reg_resolves_through_the_bases_and_reads_direct():
    f, pci = attach()
    mmio = Mmio(pci.bar(5), ip_bases("gfx1100"))
    reg = Reg("MMMC_VM_FB_LOCATION_BASE", "MMHUB", 0, 0x8EC)
    assert mmio.address(reg) == 0x1A000 + 0x8EC
    assert mmio.read(reg) << 24 == f.fb.base


def test_register_beyond_the_bar_goes_through_smn():
    f, pci = attach()
    mmio = Mmio(pci.bar(5), {("FAR", 0): (0x100000,)})
    f.regs.add(0x100004, "FAR_REG")
    mmio.write(Reg("FAR_REG", "FAR", 0, 4), 0x1234)
    assert f.regs.value(0x100004) == 0x1234 and mmio.read(Reg("FAR_REG", "FAR", 0, 4)) == 0x1234
    assert f.regs.value(0xE) == 0x100004 * 4   # PCIE_INDEX2 holds the SMN byte address


def test_unknown_ip_and_unmodelled_register_are_named():
    f, pci = attach()
    mmio = Mmio(pci.bar(5), ip_bases("gfx1100"))
    with pytest.raises(KeyError, match="VCN instance 0"):
        mmio.read(Reg("UVD_STATUS", "VCN", 0, 0x10))
    with pytest.raises(RegisterError, match=r"dword 0x1260 \(byte offset 0x4980\) is not modelled"):
        mmio.read(Reg("GRBM_CNTL", "GC", 0, 0x0))


def test_vram_window_access_must_be_dword_aligned():
    _f, pci = attach()
    with pytest.raises(ValueError, match="not dword-aligned"):
        Mmio(pci.bar(5)).vram_read(2, 4)


def test_poll_gives_up_naming_what_it_waited_for():
    with pytest.raises(PollTimeout, match=r"the moon \(last value 0x7"):
        wait_until(lambda: 7, lambda v: v == 8, "the moon", 0.01)
