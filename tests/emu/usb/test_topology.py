"""The PCIe hierarchy behind the bridge: type-1 headers, bus-number routing of configuration requests,
window routing of memory requests."""
import pytest

from gputwin.abi import pcie as regs
from gputwin.emu.amd.soc.function import AmdGpuFunction
from gputwin.emu.pcie import NotModelled, PcieBridge
from gputwin.emu.usb import Asm2464Enclosure
from tests.emu.usb.helpers import chain, number_buses, open_windows, ram_enclosure


def test_the_chain_has_real_ids_asmedia_ports_then_the_amd_switch_then_the_gpu():
    enc = Asm2464Enclosure(AmdGpuFunction("gfx1100"))
    bridges, gpu = chain(enc)
    ids = [(f.config_read(0) & 0xFFFF, f.config_read(0) >> 16) for f in bridges + [gpu]]
    assert ids == [(0x1B21, 0x2461), (0x1B21, 0x2461), (0x1002, 0x1478), (0x1002, 0x1479), (0x1002, 0x744C)]
    assert all(f.config_read(regs.HEADER_TYPE, 1) == 1 and f.config_read(0x08) >> 8 == 0x060400 for f in bridges)


def test_nothing_below_bus_0_answers_until_the_buses_are_numbered():
    enc, ep = ram_enclosure()
    topo = enc.topology
    assert topo.config_target(0, 7, 0, type1=False) is topo.root       # the root port answers any device
    assert topo.config_target(1, 0, 0, type1=True) is None
    last = number_buses(enc)
    assert topo.config_target(last, 0, 0, type1=True) is ep
    assert topo.config_target(last, 1, 0, type1=True) is None         # a link has only device 0
    assert topo.config_target(last + 1, 0, 0, type1=True) is None      # past the subordinate bus
    assert topo.config_target(0, 0, 0, type1=True) is None


def test_type1_header_masks_and_bus_reset_fails_closed():
    b = PcieBridge("port", 0x1B21, 0x2461)
    b.config_write(regs.PREF_MEMORY_BASE, 0xFFFFFFFF)
    assert b.config_read(regs.PREF_MEMORY_BASE) == 0xFFF1FFF1           # 64-bit window, 1 MiB granular
    b.config_write(regs.MEMORY_BASE, 0x12345678)
    assert b.config_read(regs.MEMORY_BASE) == 0x12305670
    with pytest.raises(NotModelled, match="secondary bus reset"):
        b.config_write(regs.BRIDGE_CONTROL, regs.BRIDGE_CTL_BUS_RESET, 2)


def test_memory_reaches_a_bar_only_through_open_windows_with_decoding_on():
    enc, ep = ram_enclosure()
    number_buses(enc)
    assert enc.topology.route(0x8_0000_0000, 4) is None
    open_windows(enc)
    r = enc.topology.route(0x8_0000_0010, 4)
    assert r.function is ep and r.bar == 0 and r.bar_base == 0x8_0000_0000
    assert enc.topology.route(0x1000_0000, 4).bar == 2
    assert enc.topology.route(0x8_0000_0000 + (2 << 20) - 2, 4) is None   # straddles the BAR's end
    bridges, _ = chain(enc)
    bridges[2].config_write(regs.COMMAND, 0, 2)                            # one bridge stops decoding
    enc.topology.invalidate()
    assert enc.topology.route(0x8_0000_0010, 4) is None
