"""The PCIe request engine through its XDATA registers, as firmware drives it: build a TLP in
B210..B223, fire it with B254, read the completion from B22A/B22B, B284, B220..B223 and B296."""
import struct

import pytest

from gputwin.abi import pcie as regs
from gputwin.emu.pcie import Completion, NotModelled, PcieError
from tests.emu.usb.helpers import number_buses, open_windows, ram_enclosure


def send(enc, fmt, address, be=0xF, data=None):
    x = enc.xdata
    x.write(0xB210, bytes([fmt]))
    x.write(0xB217, bytes([be]))
    x.write(0xB218, struct.pack(">I", address & 0xFFFFFFFF))
    x.write(0xB21C, struct.pack(">I", address >> 32))
    if data is not None:
        x.write(0xB220, struct.pack(">I", data))
    for strobe in (1, 2, 4):
        x.write(0xB296, bytes([strobe]))
    x.write(0xB254, b"\x0f")
    status = x.read(0xB296, 1)[0]
    hi, lo = x.read(0xB22A, 2)
    return status, hi >> 5, (hi & 0xF) << 8 | lo, x.read(0xB284, 1)[0], struct.unpack(">I", x.read(0xB220, 4))[0]


def test_config_read_through_the_chain_returns_the_ids_with_a_cpld_of_4_bytes():
    enc, ep = ram_enclosure(powered=True)
    last = number_buses(enc)
    status, cpl, count, kind, data = send(enc, regs.TLP_CFGRD1, regs.cfg_address(last, 0, 0, 0))
    assert (status, cpl, count, kind, data) == (2, Completion.SC, 4, 1, 0xABCD1234)


def test_unrouted_requests_complete_with_ur_and_no_data():
    enc, _ = ram_enclosure(powered=True)
    status, cpl, count, kind, _ = send(enc, regs.TLP_CFGRD1, regs.cfg_address(3, 0, 0, 0))
    assert (status, cpl, count, kind) == (2, Completion.UR, 4, 0)
    status, cpl, count, kind, _ = send(enc, regs.TLP_MRD64, 0x8_0000_0000, be=0b0110)
    assert (cpl, count, kind) == (Completion.UR, 2, 0)
    with pytest.raises(PcieError, match="posted write at 0x800000000 reaches no BAR"):
        send(enc, regs.TLP_MWR64, 0x8_0000_0000, data=1)


def test_memory_write_and_read_honour_byte_enables():
    enc, ep = ram_enclosure(powered=True)
    number_buses(enc)
    open_windows(enc)
    ep.mem[0x100:0x104] = [1, 2, 3, 4]
    send(enc, regs.TLP_MWR64, 0x8_0000_0100, be=0b0110, data=0xAABBCCDD)
    assert list(ep.mem[0x100:0x104]) == [1, 0xCC, 0xBB, 4]
    _, cpl, count, kind, data = send(enc, regs.TLP_MRD64, 0x8_0000_0100, be=0b1100)
    assert (cpl, count, kind, data) == (Completion.SC, 2, 1, 0x04BB0000)
    send(enc, regs.TLP_MWR32, 0x1000_0008, data=0x12345678)   # 3-DW header to the 32-bit BAR
    assert ep.regs[2] == 0x12345678 and ep.accesses == [("w", 8, 4)]


def test_link_down_sets_the_error_bit_and_sends_nothing():
    enc, _ = ram_enclosure()
    status, *_ = send(enc, regs.TLP_CFGRD0, 0)
    assert status == 1 and enc.tlp.sent == 0


def test_unmodelled_tlps_byte_enables_and_registers_fail_closed():
    enc, _ = ram_enclosure(powered=True)
    with pytest.raises(NotModelled, match="fmt/type 0x30"):
        send(enc, 0x30, 0)                                   # a message
    with pytest.raises(NotModelled, match="byte enables 0b1001"):
        send(enc, regs.TLP_CFGRD0, 0, be=0b1001)
    with pytest.raises(NotModelled, match="0xb224"):
        enc.xdata.read(0xB224, 1)
    with pytest.raises(NotModelled, match="0x7000"):
        enc.xdata.read(0x7000, 1)
    with pytest.raises(NotModelled, match="trigger value 0x01"):
        enc.xdata.write(0xB254, b"\x01")


def test_injected_completions_leave_the_target_untouched():
    enc, ep = ram_enclosure(powered=True)
    last = number_buses(enc)
    enc.tlp.inject(Completion.CRS, kind="config")
    _, cpl, count, kind, _ = send(enc, regs.TLP_CFGWR1, regs.cfg_address(last, 0, 0, 0x3C), data=0x55)
    assert (cpl, count, kind) == (Completion.CRS, 4, 0) and ep.config_read(0x3C) == 0
    _, cpl, *_ = send(enc, regs.TLP_CFGWR1, regs.cfg_address(last, 0, 0, 0x3C), data=0x55)
    assert cpl == Completion.SC and ep.config_read(0x3C) == 0x55


def test_streams_burst_into_prefetchable_bars_and_go_dword_by_dword_into_registers():
    enc, ep = ram_enclosure(powered=True)
    number_buses(enc)
    open_windows(enc)
    enc.tlp.address = 0x8_0000_0000
    enc.tlp.stream_write(bytes(range(64)))
    assert bytes(ep.mem[:64]) == bytes(range(64)) and enc.tlp.address == 0x8_0000_0040
    enc.tlp.address = 0x1000_0010
    enc.tlp.stream_write(bytes(12))
    assert ep.accesses == [("w", 0x10, 4), ("w", 0x14, 4), ("w", 0x18, 4)]
    enc.tlp.address = 0x8_0000_0000 + (2 << 20) - 8
    with pytest.raises(PcieError, match="streamed read at 0x800200000 reaches no BAR"):
        enc.tlp.stream_read(16)
