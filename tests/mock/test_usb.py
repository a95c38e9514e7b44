"""The pyusb backend: enumeration and descriptors through pyusb's own API, transfers routed to the
firmware model, and injected stalls and timeouts surfacing as libusb's errors do."""
import errno

import pytest
import usb.core
import usb.util

from gputwin.abi import asm2464 as fw
from gputwin.mock.usb import MockUsbBackend
from tests.emu.usb.helpers import ram_enclosure


def open_bridge(**kw):
    enc, ep = ram_enclosure(**kw)
    backend = MockUsbBackend(enc)
    dev = usb.core.find(idVendor=0xADD1, idProduct=0x0001, backend=backend)
    dev.set_configuration(1)
    return dev, backend, enc


def test_pyusb_finds_the_bridge_and_reads_its_descriptors_and_strings():
    backend = MockUsbBackend(ram_enclosure()[0], ram_enclosure(serial="00c0ffee")[0])
    devs = list(usb.core.find(find_all=True, idVendor=0xADD1, backend=backend))
    assert [d.address for d in devs] == [2, 3]
    d = devs[1]
    assert (d.manufacturer, d.product, d.serial_number) == ("tiny", "custom v0.1", "00c0ffee")
    assert d.bcdUSB == 0x0320 and d.speed == 4
    intf0 = d[0][(0, 0)]
    assert [e.bEndpointAddress for e in intf0] == [0x81, 0x02] and intf0.bInterfaceClass == 0xFF
    assert [e.bEndpointAddress for e in d[0][(0, 1)]] == [0x81, 0x02, 0x83, 0x04]
    assert list(intf0[0].extra_descriptors) == [6, 0x30, 15, 0, 0, 0]          # SuperSpeed companion
    assert usb.core.find(idVendor=0x174C, backend=backend) is None


def test_control_and_bulk_transfers_reach_the_firmware():
    dev, _, enc = open_bridge()
    dev.ctrl_transfer(0x40, fw.REQ_XDATA_WRITE, fw.XDATA_SRAM, 0x42)
    assert bytes(dev.ctrl_transfer(0xC0, fw.REQ_XDATA_READ, fw.XDATA_SRAM, 0, 1)) == b"\x42"
    dev.ctrl_transfer(0x40, fw.REQ_SRAM_DMA, 1, 0)
    assert dev.write(fw.EP_BULK_OUT, bytes(range(256)) * 2) == 512
    dev.ctrl_transfer(0x40, fw.REQ_SRAM_DMA, 1 | fw.SRAM_DMA_TO_HOST, 0)
    assert bytes(dev.read(fw.EP_BULK_IN, 512)) == bytes(range(256)) * 2


def test_a_stalled_endpoint_stays_halted_until_clear_halt():
    dev, backend, _ = open_bridge()
    backend.faults().stall(fw.EP_BULK_IN)
    dev.ctrl_transfer(0x40, fw.REQ_SRAM_DMA, 1 | fw.SRAM_DMA_TO_HOST, 0)
    for _ in range(2):
        with pytest.raises(usb.core.USBError) as e:
            dev.read(fw.EP_BULK_IN, 512)
        assert e.value.errno == errno.EPIPE and not isinstance(e.value, usb.core.USBTimeoutError)
    dev.clear_halt(fw.EP_BULK_IN)
    with pytest.raises(usb.core.USBTimeoutError):     # clearing the halt also cancelled the DMA
        dev.read(fw.EP_BULK_IN, 512)


def test_timeouts_are_immediate_and_say_whether_the_device_acted():
    dev, backend, enc = open_bridge()
    backend.faults().timeout(0, request=fw.REQ_XDATA_WRITE)
    with pytest.raises(usb.core.USBTimeoutError) as e:
        dev.ctrl_transfer(0x40, fw.REQ_XDATA_WRITE, 0x10, 0x01)
    assert e.value.errno == errno.ETIMEDOUT and enc.xdata.ram[0x10] == 0
    backend.faults().timeout(0, request=fw.REQ_XDATA_WRITE, delivered=True)
    with pytest.raises(usb.core.USBTimeoutError, match="after the device acted"):
        dev.ctrl_transfer(0x40, fw.REQ_XDATA_WRITE, 0x10, 0x01)
    assert enc.xdata.ram[0x10] == 1
    with pytest.raises(usb.core.USBTimeoutError, match="nothing armed"):
        dev.read(fw.EP_BULK_IN, 512)                   # the device would NAK forever: a timeout, not a hang


def test_bulk_before_set_configuration_fails():
    enc, _ = ram_enclosure()
    dev = usb.core.find(idVendor=0xADD1, backend=MockUsbBackend(enc))
    with pytest.raises(usb.core.USBError, match="Configuration not set"):
        dev.write(fw.EP_BULK_OUT, bytes(512))
    assert enc.firmware.configured is False


def test_usb2_fallback_descriptors_and_a_smaller_xdata_data_stage():
    enc, _ = ram_enclosure(usb2=True)
    dev = usb.core.find(idVendor=0xADD1, backend=MockUsbBackend(enc))
    assert (dev.bcdUSB, dev.bMaxPacketSize0, dev.speed) == (0x0200, 64, 3)
    assert [(e.bEndpointAddress, e.wMaxPacketSize) for e in dev[0][(0, 0)]] == \
        [(0x81, 512), (0x02, 512), (0x83, 512), (0x04, 512)]
    assert len(dev.ctrl_transfer(0xC0, fw.REQ_XDATA_READ, 0x100, 0, 512)) == 64
