"""tinygrad's custom ASM2464 firmware ("handmade", asm2464pd-firmware handmade/src/main.c) as the USB host
sees it: what each control request and bulk transfer does to the bridge. Vendor requests:

  0xE4 IN   XDATA read: wValue = address, wLength = bytes (the data stage carries at most 512 on SuperSpeed,
            64 on USB 2)
  0xE5 OUT  XDATA write of one byte: wValue = address, wIndex low byte = value
  0xF0 OUT  PCIe request engine, 12 data bytes: address low, address high, value (little-endian dwords);
            wValue = fmt/type | byte enables << 8; wIndex bits 1:0 = mode: 0 one TLP with `value` as its
            data; 1 stream `value` dwords of bulk OUT 0x02 as 1-DW writes; 2 stream `value` dwords to bulk
            IN 0x81 as 1-DW reads. The address advances by 4 per dword.
  0xF0 IN   8 bytes: the completion of the last mode-0 TLP: data (little-endian dword), completion header
            bytes B22A and B22B (status in bits 7:5 of the first), B284 (bit 0: carried data), and a
            return code: 0 done, 1 error (no completion; the error bit is cleared), 0xFF the firmware's
            poll gave up (its bytes 0..6 then read 0)
  0xF2 OUT  arm the SRAM DMA engine for bulk OUT/IN (gputwin/emu/usb/sram.py)
  0xF3 OUT  PCIe power: wValue bit 0 (gputwin/emu/usb/link.py)
Standard requests: GET_DESCRIPTOR (device, configuration, string, BOS), SET_CONFIGURATION, SET_INTERFACE
and CLEAR_FEATURE(ENDPOINT_HALT), the last three also cancel a streamed transfer.

Where the real firmware does not answer (a GET_DESCRIPTOR of another type, a bulk transfer on an
endpoint nothing armed) the host's transfer times out: the model raises EndpointNak, which the mock
backend reports as a timeout. Requests the firmware ignores (any other request) raise NotModelled."""
from __future__ import annotations

import struct

from gputwin.abi import pcie as regs
from gputwin.abi.asm2464 import (EP_BULK_IN, EP_BULK_OUT, MODE_SINGLE, MODE_STREAM_READ, MODE_STREAM_WRITE,
                                 REQ_PCIE_POWER, REQ_SRAM_DMA, REQ_TLP, REQ_XDATA_READ, REQ_XDATA_WRITE, RET_DONE,
                                 RET_ERROR, RET_TIMEOUT, XDATA_READ_MAX, XDATA_READ_MAX_USB2)
from gputwin.emu.pcie import NotModelled
from gputwin.emu.usb import descriptors as desc
from gputwin.emu.usb.link import Link
from gputwin.emu.usb.sram import SramDma
from gputwin.emu.usb.tlp import (BYTE_EN, COMPL_STATUS, CPL_HDR_HI, CPL_HDR_LO, FMT_TYPE, REGS_START, STATUS,
                                STATUS_COMPLETE, STATUS_ERROR, TlpEngine)
from gputwin.emu.usb.xdata import XData

GET_DESCRIPTOR, SET_CONFIGURATION, SET_INTERFACE, CLEAR_FEATURE = 6, 9, 11, 1
VENDOR_OUT, VENDOR_IN = 0x40, 0xC0


class EndpointNak(RuntimeError):
    """The device never answers this transfer: the host sees it time out."""


class CustomFirmware:
    def __init__(self, xdata: XData, tlp: TlpEngine, dma: SramDma, link: Link, serial: str = "ffffffff",
                 usb2: bool = False):
        self.xdata, self.tlp, self.dma, self.link, self.serial, self.usb2 = xdata, tlp, dma, link, serial, usb2
        self.configured = False
        self.stream: tuple[int, int] | None = None    # (mode, dwords left)
        self._vendor_out = {REQ_XDATA_WRITE: self._xdata_write, REQ_TLP: self._tlp, REQ_SRAM_DMA: self._arm_dma,
                            REQ_PCIE_POWER: self._power}

    # --- control transfers ---------------------------------------------------------------------------
    def control_in(self, bm_request_type: int, request: int, value: int, index: int, length: int) -> bytes:
        if bm_request_type == 0x80 and request == GET_DESCRIPTOR:
            return self._descriptor(value >> 8, value & 0xFF)[:length]
        if bm_request_type == VENDOR_IN and request == REQ_XDATA_READ:
            self._bank(index)
            return self.xdata.read(value, min(length, XDATA_READ_MAX_USB2 if self.usb2 else XDATA_READ_MAX))
        if bm_request_type == VENDOR_IN and request == REQ_TLP:
            return self._completion()[:length]
        raise NotModelled(f"ASM2464 custom firmware: control IN request {bm_request_type:#04x}/{request:#04x} "
                          f"(wValue {value:#06x}, wIndex {index:#06x}) is not one it answers")

    def control_out(self, bm_request_type: int, request: int, value: int, index: int, data: bytes) -> None:
        if bm_request_type == VENDOR_OUT:
            handler = self._vendor_out.get(request)
            if handler is not None:
                handler(value, index, data)
                return
        elif (bm_request_type, request) in ((0x00, SET_CONFIGURATION), (0x01, SET_INTERFACE)):
            self.configured = self.configured or request == SET_CONFIGURATION
            self._cancel()
            return
        elif (bm_request_type, request, value) == (0x02, CLEAR_FEATURE, 0):
            self.clear_halt(index & 0xFF)
            return
        raise NotModelled(f"ASM2464 custom firmware: control OUT request {bm_request_type:#04x}/{request:#04x} "
                          f"(wValue {value:#06x}, wIndex {index:#06x}) is not one it handles")

    def clear_halt(self, endpoint: int) -> None:
        """CLEAR_FEATURE(ENDPOINT_HALT) on a bulk endpoint: resets it and cancels any stream."""
        if endpoint not in (EP_BULK_OUT, EP_BULK_IN):
            raise NotModelled(f"ASM2464 custom firmware: clear halt of endpoint {endpoint:#04x}")
        self._cancel()

    def _cancel(self) -> None:
        self.stream = None
        self.dma.disarm()

    def _descriptor(self, kind: int, index: int) -> bytes:
        if kind == desc.DEVICE:
            return desc.DEVICE_DESCRIPTOR[self.usb2]
        if kind == desc.CONFIGURATION:
            return desc.CONFIG_DESCRIPTOR[self.usb2]
        if kind == desc.BOS:
            return desc.BOS_DESCRIPTOR
        if kind == desc.STRING:
            texts = {desc.STR_MANUFACTURER: desc.MANUFACTURER, desc.STR_PRODUCT: desc.PRODUCT,
                     desc.STR_SERIAL: self.serial}
            return desc.LANGUAGES if index == 0 else desc.string(texts.get(index, ""))
        raise EndpointNak(f"ASM2464 custom firmware does not answer GET_DESCRIPTOR of type {kind:#04x}")

    @staticmethod
    def _bank(index: int) -> None:
        if index >> 8:
            raise NotModelled(f"ASM2464 XDATA bank {index >> 8} (PHY/switch registers via DPX) is not modelled")

    def _xdata_write(self, value: int, index: int, data: bytes) -> None:
        self._bank(index)
        self.xdata.write(value, bytes([index & 0xFF]))

    def _power(self, value: int, index: int, data: bytes) -> None:
        self.link.power(bool(value & 1))

    def _arm_dma(self, value: int, index: int, data: bytes) -> None:
        self.stream = None
        self.dma.arm(value, index)

    # --- the PCIe request engine ---------------------------------------------------------------------
    def _tlp(self, value: int, index: int, data: bytes) -> None:
        if len(data) != 12:
            raise NotModelled(f"ASM2464 0xF0 request with {len(data)} data bytes (it takes 12)")
        address_lo, address_hi, payload = struct.unpack("<III", data)
        mode = index & 3
        self.stream = None
        self.dma.disarm()
        tlp = self.tlp
        tlp.regs[FMT_TYPE - REGS_START], tlp.regs[BYTE_EN - REGS_START] = value & 0xFF, value >> 8
        tlp.address = address_hi << 32 | address_lo
        if mode == MODE_SINGLE:
            if value & regs.FMT_HAS_DATA:
                tlp.data = payload
            tlp.regs[STATUS - REGS_START] = 0      # the firmware clears error and done, then kicks
            tlp.execute()
        elif mode in (MODE_STREAM_WRITE, MODE_STREAM_READ):
            wants = regs.TLP_MWR64 if mode == MODE_STREAM_WRITE else regs.TLP_MRD64
            if value & 0xDF != wants & 0xDF or value >> 8 != 0xF:
                raise NotModelled(f"ASM2464 0xF0 stream mode {mode} with fmt/type {value & 0xFF:#04x} and byte "
                                  f"enables {value >> 8:#x} (streams are whole-dword memory "
                                  f"{'writes' if mode == MODE_STREAM_WRITE else 'reads'})")
            self.stream = (mode, payload) if payload else None
        else:
            raise NotModelled("ASM2464 0xF0 request mode 3 (the firmware defines modes 0..2)")

    def _completion(self) -> bytes:
        status = self.tlp.read(STATUS, 1)[0]
        if status & STATUS_ERROR:
            self.tlp.write(STATUS, bytes([STATUS_ERROR]))
            return bytes(7) + bytes([RET_ERROR])
        if not status & STATUS_COMPLETE:
            return bytes(7) + bytes([RET_TIMEOUT])
        header = bytes(self.tlp.regs[a - REGS_START] for a in (CPL_HDR_HI, CPL_HDR_LO, COMPL_STATUS))
        return struct.pack("<I", self.tlp.data) + header + bytes([RET_DONE])

    # --- bulk transfers ------------------------------------------------------------------------------
    def bulk_out(self, endpoint: int, data) -> int:
        if endpoint != EP_BULK_OUT:
            raise NotModelled(f"ASM2464 custom firmware: bulk OUT on endpoint {endpoint:#04x}")
        if self.stream is not None and self.stream[0] == MODE_STREAM_WRITE:
            left = self.stream[1]
            if len(data) % 4 or len(data) > 4 * left:
                raise NotModelled(f"ASM2464 streamed write of {len(data)} bytes with {4 * left} bytes armed "
                                  f"(the firmware drops such a transfer)")
            self.tlp.stream_write(data)
            self.stream = (MODE_STREAM_WRITE, left - len(data) // 4) if len(data) < 4 * left else None
            return len(data)
        if self.dma.expects(to_host=False):
            return self.dma.write(data)
        raise EndpointNak("ASM2464 bulk OUT with nothing armed (send 0xF0 mode 1 or 0xF2 first)")

    def bulk_in(self, endpoint: int, length: int) -> bytes:
        if endpoint != EP_BULK_IN:
            raise NotModelled(f"ASM2464 custom firmware: bulk IN on endpoint {endpoint:#04x}")
        if self.stream is not None and self.stream[0] == MODE_STREAM_READ:
            left = self.stream[1]
            n = min(length // 4, left)
            data = self.tlp.stream_read(4 * n)
            self.stream = (MODE_STREAM_READ, left - n) if n < left else None
            return data
        if self.dma.expects(to_host=True):
            return self.dma.read(length)
        raise EndpointNak("ASM2464 bulk IN with nothing armed (send 0xF0 mode 2 or 0xF2 with bit 15 first)")
