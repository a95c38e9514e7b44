"""The custom firmware's requests as the bridge model answers them (no pyusb in between)."""
import struct

import numpy as np
import pytest

from gputwin.abi import asm2464 as fw
from gputwin.abi import pcie as regs
from gputwin.emu.pcie import NotModelled, PcieError
from gputwin.emu.usb.firmware import EndpointNak
from tests.emu.usb.helpers import number_buses, open_windows, ram_enclosure

OUT, IN = 0x40, 0xC0


def tlp(f, fmt, address, value=0, be=0xF, mode=0):
    f.control_out(OUT, fw.REQ_TLP, fmt | be << 8, mode, struct.pack("<III", address & 0xFFFFFFFF, address >> 32, value))


def test_power_on_trains_the_link_and_a_second_power_on_is_not_modelled():
    enc, _ = ram_enclosure(train_polls=2)
    f = enc.firmware
    read_ltssm = lambda: f.control_in(IN, fw.REQ_XDATA_READ, fw.XDATA_LTSSM, 0, 1)[0]   # noqa: E731
    assert read_ltssm() == 0x00
    f.control_out(OUT, fw.REQ_PCIE_POWER, 1, 0, b"")
    assert [read_ltssm() for _ in range(3)] == [0x10, 0x10, fw.LTSSM_L0]
    f.control_out(OUT, fw.REQ_PCIE_POWER, 0, 0, b"")
    assert read_ltssm() == 0
    with pytest.raises(NotModelled, match="PERST"):
        f.control_out(OUT, fw.REQ_PCIE_POWER, 1, 0, b"")


def test_xdata_read_write_and_the_sram_window():
    enc, _ = ram_enclosure()
    f = enc.firmware
    f.control_out(OUT, fw.REQ_XDATA_WRITE, 0x0123, 0x5A, b"")
    f.control_out(OUT, fw.REQ_XDATA_WRITE, fw.XDATA_SRAM + 2, 0x77, b"")
    assert f.control_in(IN, fw.REQ_XDATA_READ, 0x0123, 0, 1) == b"\x5a"
    assert enc.sram.copy_buffer[2] == 0x77
    assert len(f.control_in(IN, fw.REQ_XDATA_READ, 0x1000, 0, 4096)) == fw.XDATA_READ_MAX   # data stage cap
    with pytest.raises(NotModelled, match="bank 1"):
        f.control_in(IN, fw.REQ_XDATA_READ, 0xB450, 0x100, 1)


def test_completion_reply_carries_data_status_and_return_code():
    enc, ep = ram_enclosure(powered=True)
    f = enc.firmware
    assert f.control_in(IN, fw.REQ_TLP, 0, 0, 8)[7] == fw.RET_TIMEOUT          # nothing sent yet
    last = number_buses(enc)
    tlp(f, regs.TLP_CFGRD1, regs.cfg_address(last, 0, 0, 0))
    assert f.control_in(IN, fw.REQ_TLP, 0, 0, 8) == struct.pack("<I", 0xABCD1234) + bytes([0x00, 4, 1, fw.RET_DONE])
    tlp(f, regs.TLP_CFGRD1, regs.cfg_address(last + 1, 0, 0, 0))
    assert f.control_in(IN, fw.REQ_TLP, 0, 0, 8)[4:] == bytes([0x20, 4, 0, fw.RET_DONE])   # UR
    enc.tlp.inject("no-completion")
    tlp(f, regs.TLP_CFGRD1, regs.cfg_address(last, 0, 0, 0))
    assert f.control_in(IN, fw.REQ_TLP, 0, 0, 8) == bytes(7) + bytes([fw.RET_ERROR])
    assert f.control_in(IN, fw.REQ_TLP, 0, 0, 8)[7] == fw.RET_TIMEOUT           # the error bit was cleared


def test_streams_move_dwords_between_bulk_endpoints_and_a_bar():
    enc, ep = ram_enclosure(powered=True)
    f = enc.firmware
    number_buses(enc)
    open_windows(enc)
    data = np.arange(256, dtype=np.uint32).tobytes()
    tlp(f, regs.TLP_MWR64, 0x8_0000_1000, value=len(data) // 4, mode=fw.MODE_STREAM_WRITE)
    assert f.bulk_out(fw.EP_BULK_OUT, data[:512]) == 512 and f.bulk_out(fw.EP_BULK_OUT, data[512:]) == 512
    assert bytes(ep.mem[0x1000:0x1400]) == data
    with pytest.raises(EndpointNak):
        f.bulk_out(fw.EP_BULK_OUT, data)                                         # the stream is done
    tlp(f, regs.TLP_MRD64, 0x8_0000_1000, value=len(data) // 4, mode=fw.MODE_STREAM_READ)
    assert f.bulk_in(fw.EP_BULK_IN, 4096) == data                                 # short: only what is armed
    tlp(f, regs.TLP_MWR64, 0x8_0000_1000, value=4, mode=fw.MODE_STREAM_WRITE)
    f.clear_halt(fw.EP_BULK_OUT)                                                  # cancels the stream
    with pytest.raises(EndpointNak):
        f.bulk_out(fw.EP_BULK_OUT, bytes(16))
    with pytest.raises(NotModelled, match="stream mode 2 with fmt/type 0x60"):
        tlp(f, regs.TLP_MWR64, 0, value=4, mode=fw.MODE_STREAM_READ)
    with pytest.raises(NotModelled, match="mode 3"):
        tlp(f, regs.TLP_MRD64, 0, value=4, mode=3)


def test_sram_dma_moves_whole_sectors_from_a_slot_and_the_gpu_sees_them():
    enc, ep = ram_enclosure()
    f = enc.firmware
    with pytest.raises(PcieError, match="bus mastering disabled"):
        ep.upstream.view(fw.SRAM_BUS_ADDRESS, 4)
    number_buses(enc)
    open_windows(enc)                                                             # sets COMMAND.MASTER too
    payload = bytes(range(256)) * 8                                               # 4 sectors
    f.control_out(OUT, fw.REQ_SRAM_DMA, 4, 2 | 1 << 8, b"")
    assert f.bulk_out(fw.EP_BULK_OUT, payload) == len(payload)
    assert ep.upstream.view(fw.SRAM_BUS_ADDRESS + 2 * fw.SRAM_SLOT, len(payload)).tobytes() == payload
    f.control_out(OUT, fw.REQ_SRAM_DMA, 4 | fw.SRAM_DMA_TO_HOST, 2, b"")
    assert f.bulk_in(fw.EP_BULK_IN, len(payload)) == payload
    with pytest.raises(EndpointNak):
        f.bulk_in(fw.EP_BULK_IN, 512)
    with pytest.raises(NotModelled, match="runs past"):
        f.control_out(OUT, fw.REQ_SRAM_DMA, 33, 0, b"")                          # 33 sectors > one slot
    ep.upstream.view(fw.QUEUE_PAGE_BUS_ADDRESS, 4)[:] = [9, 8, 7, 6]              # a GPU write to the page
    assert f.control_in(IN, fw.REQ_XDATA_READ, fw.XDATA_QUEUE_PAGE, 0, 4) == bytes([9, 8, 7, 6])


def test_descriptors_and_unknown_requests():
    enc, _ = ram_enclosure(serial="0badcafe")
    f = enc.firmware
    device = f.control_in(0x80, 6, 1 << 8, 0, 18)
    assert struct.unpack_from("<HH", device, 8) == (0xADD1, 0x0001) and device[7] == 9
    assert f.control_in(0x80, 6, 3 << 8 | 3, 0x409, 255).decode("utf-16-le")[1:] == "0badcafe"
    with pytest.raises(EndpointNak):
        f.control_in(0x80, 6, 6 << 8, 0, 10)                                      # device qualifier: no answer
    with pytest.raises(NotModelled, match="0xe7"):
        f.control_out(OUT, 0xE7, 0, 0, b"")


def test_a_request_leaves_its_address_in_b218_msb_first_low_then_high_dword():
    enc, _ = ram_enclosure(powered=True)
    tlp(enc.firmware, regs.TLP_MRD64, 0x12_3456_789C)                                # UR, but the registers are set
    assert enc.xdata.read(0xB218, 8) == bytes([0x34, 0x56, 0x78, 0x9C, 0x00, 0x00, 0x00, 0x12])
    assert enc.xdata.read(0xB210, 1) == b"\x20" and enc.xdata.read(0xB217, 1) == b"\x0f"
