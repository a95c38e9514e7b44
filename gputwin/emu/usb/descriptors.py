"""USB descriptors of the ASM2464 running tinygrad's custom firmware ("handmade", asm2464pd-firmware
handmade/src/usb.h), SuperSpeed variant: VID:PID ADD1:0001, bcdDevice 0x0001, strings "tiny" /
"custom v0.1" / an 8-hex-digit serial from OTP ("ffffffff" when blank), one configuration with one
vendor-class interface: alternate 0 has bulk IN 0x81 and bulk OUT 0x02 (what the custom protocol uses),
alternate 1 is the UAS layout (four bulk endpoints with streams, unused by the custom protocol).
When SuperSpeed fails the firmware falls back to USB 2 (high speed): bcdUSB 2.00, a 64-byte EP0, and one
interface with four 512-byte bulk endpoints (0x81, 0x02, 0x83, 0x04)."""
from __future__ import annotations

import struct

VID, PID, BCD_DEVICE = 0xADD1, 0x0001, 0x0001
MANUFACTURER, PRODUCT = "tiny", "custom v0.1"
STR_MANUFACTURER, STR_PRODUCT, STR_SERIAL = 1, 2, 3
LANG_EN_US = 0x0409
DEVICE, CONFIGURATION, STRING, INTERFACE, ENDPOINT, BOS = 1, 2, 3, 4, 5, 15
SS_EP_COMPANION, UAS_PIPE_USAGE = 0x30, 0x24
BULK = 0x02
VENDOR_CLASS = 0xFF


def _device(usb2: bool) -> bytes:
    return struct.pack("<BBHBBBBHHHBBBB", 18, DEVICE, 0x0200 if usb2 else 0x0320, 0, 0, 0, 64 if usb2 else 9,
                       VID, PID, BCD_DEVICE, STR_MANUFACTURER, STR_PRODUCT, STR_SERIAL, 1)


def _interface(alt: int, endpoints: int) -> bytes:
    return struct.pack("<BBBBBBBBB", 9, INTERFACE, 0, alt, endpoints, VENDOR_CLASS, VENDOR_CLASS, VENDOR_CLASS, 0)


def _bulk(address: int, streams_log2: int = 0, pipe: int | None = None, burst: int = 15) -> bytes:
    d = struct.pack("<BBBBHB", 7, ENDPOINT, address, BULK, 1024, 0)
    d += struct.pack("<BBBBH", 6, SS_EP_COMPANION, burst, streams_log2, 0)
    if pipe is not None:
        d += struct.pack("<BBBB", 4, UAS_PIPE_USAGE, pipe, 0)
    return d


def _configuration(usb2: bool) -> bytes:
    if usb2:
        body = _interface(0, 4) + b"".join(struct.pack("<BBBBHB", 7, ENDPOINT, ep, BULK, 512, 0)
                                           for ep in (0x81, 0x02, 0x83, 0x04))
    else:
        body = _interface(0, 2) + _bulk(0x81) + _bulk(0x02)
        body += (_interface(1, 4) + _bulk(0x81, 5, 3) + _bulk(0x02, 5, 4) + _bulk(0x83, 5, 2)
                 + _bulk(0x04, 0, 1, burst=0))
    return struct.pack("<BBHBBBBB", 9, CONFIGURATION, 9 + len(body), 1, 1, 0, 0xC0, 0) + body


def _bos() -> bytes:
    usb2_ext = struct.pack("<BBBI", 7, 0x10, 0x02, 0x02)
    superspeed = struct.pack("<BBBBHBBH", 10, 0x10, 0x03, 0x00, 0x000E, 0x03, 0x00, 0x0000)
    return struct.pack("<BBHB", 5, BOS, 5 + len(usb2_ext) + len(superspeed), 2) + usb2_ext + superspeed


def string(text: str) -> bytes:
    encoded = text.encode("utf-16-le")
    return bytes([2 + len(encoded), STRING]) + encoded


DEVICE_DESCRIPTOR = {False: _device(False), True: _device(True)}          # by "fell back to USB 2"
CONFIG_DESCRIPTOR = {False: _configuration(False), True: _configuration(True)}
BOS_DESCRIPTOR = _bos()
LANGUAGES = struct.pack("<BBH", 4, STRING, LANG_EN_US)
