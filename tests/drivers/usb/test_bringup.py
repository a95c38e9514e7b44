"""PCIe bring-up over the bridge and the resulting PciDevice, against the emulated AMD GPU: bus numbers,
BAR sizes and addresses, Resizable BAR, config reads through the whole chain, VRAM round trips through
BAR0, MMIO registers through BAR5, and the SRAM DMA windows as the GPU sees them."""
import numpy as np
import pytest

from gputwin.abi import pcie as regs
from gputwin.device import TargetNotAvailable
from gputwin.drivers.pci import read32, write32
from gputwin.drivers.usb import BridgeNotFound, LinkDown, list_bridges, open_usb_pci
from gputwin.emu.amd.soc.function import AmdGpuFunction
from gputwin.emu.amd.soc.regfile import RegisterError
from gputwin.emu.pcie import NotModelled
from gputwin.mock.usb import MockUsbBackend, usb_gpu

GIB, MIB = 1 << 30, 1 << 20


def open_gpu(arch="gfx1100", **kw):
    function = AmdGpuFunction(arch)
    backend, enclosure = usb_gpu(function, train_polls=2)
    return open_usb_pci(backend, **kw), function, enclosure


def test_buses_are_numbered_down_the_chain_to_the_gpu():
    dev, function, enc = open_gpu()
    h = dev.hierarchy
    assert (h.bridge_buses, h.endpoint_bus, h.vendor_id, h.device_id) == ((0, 1, 2, 3), 4, 0x1002, 0x744C)
    bridges = enc.topology.functions()[:-1]
    assert [(b.config[regs.PRIMARY_BUS], b.secondary_bus, b.subordinate_bus) for b in bridges] == \
        [(0, 1, 4), (1, 2, 4), (2, 3, 4), (3, 4, 4)]
    assert all(b.config_read(regs.COMMAND, 2) & 6 == 6 for b in bridges + [function])


@pytest.mark.parametrize("arch,device_id", [("gfx1100", 0x744C), ("gfx1201", 0x7550)])
def test_config_reads_of_the_ids_go_through_the_whole_chain(arch, device_id):
    dev, function, enc = open_gpu(arch)
    sent = enc.tlp.sent
    assert dev.config_read(regs.VENDOR_ID) == device_id << 16 | 0x1002
    assert dev.config_read(regs.DEVICE_ID, 2) == device_id and enc.tlp.sent == sent + 2
    dev.config_write(0x3C, 0x0B, 1)
    assert function.config_read(0x3C, 1) == 0x0B


def test_bars_are_sized_resized_and_placed_in_the_bridge_windows():
    dev, function, enc = open_gpu()
    bars = {i: (a.address, a.size) for i, a in dev.assignments.items()}
    # VRAM (24 GiB) gets the largest resizable size, 32 GiB, at the prefetchable window's base
    assert bars == {0: (32 * GIB, 32 * GIB), 2: (64 * GIB, 2 * MIB), 5: (0x1000_0000, 1 * MIB)}
    assert function.bars[0].size == 32 * GIB and function.bar_address(2) == 64 * GIB
    root = enc.topology.functions()[0]
    assert sorted(root.windows()) == [(0x1000_0000, 0x1010_0000), (32 * GIB, 64 * GIB + 2 * MIB)]


def test_a_smaller_prefetchable_window_gets_the_largest_bar_that_still_fits():
    dev, function, _ = open_gpu(pref_window=(32 * GIB, 48 * GIB))
    assert dev.assignments[0].size == 8 * GIB and function.bars[0].size == 8 * GIB   # 16 GiB + 2 MiB won't fit
    assert dev.assignments[2].address == 40 * GIB


def test_vram_round_trips_through_bar0(rng):
    dev, function, _ = open_gpu()
    bar = dev.bar(0)
    for offset, size in ((0, 4), (0x1000, 1 << 20), (0x2003, 13), (23 * GIB + 5, 7)):
        data = rng.integers(0, 256, size, np.uint8).tobytes()
        bar.write(offset, data)
        assert function.vram[offset:offset + size].tobytes() == data and bar.read(offset, size) == data
    with pytest.raises(ValueError, match="outside"):
        bar.read(32 * GIB - 2, 4)
    with pytest.raises(NotModelled, match="nothing backs"):           # the 32 GiB BAR past 24 GiB of VRAM
        bar.read(24 * GIB, 8)


def test_mmio_registers_through_bar5_and_unmodelled_ones_fail_closed():
    dev, function, _ = open_gpu()
    function.regs.add(0x1234, "TEST_SCRATCH", reset=0x5)
    seen = []
    function.regs.add(0x1235, "TEST_HOOKED", write=seen.append)
    bar5 = dev.bar(5)
    assert read32(bar5, 0x1234 * 4) == 5
    write32(bar5, 0x1234 * 4, 0xDEADBEEF)
    assert function.regs.value(0x1234) == 0xDEADBEEF and read32(bar5, 0x1234 * 4) == 0xDEADBEEF
    bar5.write(0x1234 * 4, (7).to_bytes(4, "little") + (9).to_bytes(4, "little"))   # a streamed pair
    assert function.regs.value(0x1234) == 7 and seen == [9]
    with pytest.raises(RegisterError, match="dword 0x99"):
        read32(bar5, 0x99 * 4)


def test_sram_windows_are_what_the_gpu_reaches_upstream(rng):
    dev, function, _ = open_gpu()
    sram, page = dev.dma_windows()
    assert (sram.bus_address, sram.size, page.bus_address, page.size) == (0x200000, 0x80000, 0x820000, 0x1000)
    data = rng.integers(0, 256, 100_000, np.uint8).tobytes()
    sram.write(0x8000, data)
    assert function.upstream.view(0x208000, len(data)).tobytes() == data
    sram.write(0x8010, b"abc")                                               # read-modify-write inside a sector
    assert function.upstream.view(0x208000, 20).tobytes() == data[:16] + b"abc" + data[19:20]
    function.upstream.view(0x27FF00, 256)[:] = 7                              # the GPU writes SRAM
    assert sram.read(0x7FF00, 256) == bytes([7]) * 256
    page.write(8, b"\x01\x02\x03")
    assert function.upstream.view(0x820008, 3).tobytes() == b"\x01\x02\x03" and page.read(8, 3) == b"\x01\x02\x03"


def test_no_bridge_is_a_target_not_available_naming_what_was_looked_for():
    with pytest.raises(BridgeNotFound, match="ADD1:0001|add1:0001") as e:
        open_usb_pci(MockUsbBackend())
    assert isinstance(e.value, TargetNotAvailable)
    assert list_bridges(MockUsbBackend()) == []


def test_a_link_that_never_trains_is_reported():
    backend, _ = usb_gpu(AmdGpuFunction("gfx1100"), train_polls=10 ** 9)
    with pytest.raises(LinkDown, match="did not come up"):
        open_usb_pci(backend, link_timeout_s=0.02)


def test_any_endpoint_without_a_card_switch_is_found_and_placed():
    from gputwin.emu.usb import Asm2464Enclosure
    from tests.emu.usb.helpers import RamEndpoint
    ep = RamEndpoint()
    backend = MockUsbBackend(Asm2464Enclosure(ep, gpu_switch=False))
    assert list_bridges(backend) == ["ASM2464 (custom firmware) USB add1:0001 bus 1 address 2"]
    dev = open_usb_pci(backend)
    assert dev.hierarchy.bridge_buses == (0, 1) and dev.hierarchy.endpoint_bus == 2
    assert {i: (a.address, a.size) for i, a in dev.assignments.items()} == {0: (32 * GIB, 2 * MIB),
                                                                              2: (0x1000_0000, 4096)}
    dev.bar(2).write(8, b"\x01\x00\x00\x00\x02\x00\x00\x00")
    assert list(ep.regs[2:4]) == [1, 2] and ep.accesses == [("w", 8, 4), ("w", 12, 4)]


def test_every_alignment_of_a_short_bar_access_round_trips():
    from gputwin.emu.usb import Asm2464Enclosure
    from tests.emu.usb.helpers import RamEndpoint
    ep = RamEndpoint()
    bar = open_usb_pci(MockUsbBackend(Asm2464Enclosure(ep, gpu_switch=False))).bar(0)
    for offset in range(5):
        for size in range(1, 10):
            data = bytes((offset * 16 + size + i) & 0xFF for i in range(size))
            ep.mem[0xF0:0x120] = 0xAA
            bar.write(0x100 + offset, data)
            assert ep.mem[0x100 + offset:0x100 + offset + size].tobytes() == data
            assert bar.read(0x100 + offset, size) == data
            untouched = np.r_[ep.mem[0xF0:0x100 + offset], ep.mem[0x100 + offset + size:0x120]]
            assert (untouched == 0xAA).all()                                  # byte enables spare the neighbours
