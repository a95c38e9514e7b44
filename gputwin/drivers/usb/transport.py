"""USB transfers to an ASM2464 running tinygrad's custom firmware, on pyusb: find the bridge by USB ids,
claim its interface, vendor control transfers and the two bulk endpoints (OUT 0x02, IN 0x81). pyusb
errors become UsbTimeout / UsbStall / UsbTransferError naming the transfer. Which backend pyusb uses is
the caller's choice (`backend=None`: libusb on this machine; gputwin/mock/usb.py: emulated bridges)."""
from __future__ import annotations

import array
import errno

import usb.core
import usb.util

from gputwin.drivers.usb.errors import (BridgeNotFound, UsbBridgeError, UsbDisconnected, UsbStall, UsbTimeout,
                                       UsbTransferError)

# USB ids of ASM2464 enclosures flashed with the custom firmware (tinygrad ops_amd.py USBIface)
CUSTOM_FIRMWARE_IDS = ((0xADD1, 0x0001), (0x3801, 0x0001))
# the stock ASMedia firmware (UAS mass storage; needs USB bulk streams, which pyusb cannot drive)
STOCK_FIRMWARE_IDS = ((0x174C, 0x2463), (0x174C, 0x2464))
EP_OUT, EP_IN = 0x02, 0x81
VENDOR_OUT, VENDOR_IN = 0x40, 0xC0


def find_bridges(backend=None, ids=CUSTOM_FIRMWARE_IDS) -> list[usb.core.Device]:
    try:
        found = usb.core.find(find_all=True, backend=backend,
                              custom_match=lambda d: (d.idVendor, d.idProduct) in ids)
        return sorted(found, key=lambda d: (d.bus or 0, d.address or 0))
    except usb.core.NoBackendError as e:
        raise BridgeNotFound(f"no libusb backend for pyusb on this machine ({e}); cannot look for ASM2464 "
                             f"bridges") from None


class UsbTransport:
    def __init__(self, device: usb.core.Device, timeout_ms: int = 1000):
        self.device, self.timeout_ms = device, timeout_ms
        self._buffers: dict[int, array.array] = {}   # IN buffers by length: pyusb fills a given array in place
        self.where = f"USB {device.idVendor:04x}:{device.idProduct:04x} at bus {device.bus} address {device.address}"
        try:
            self.product = device.product or ""
        except (usb.core.USBError, ValueError) as e:
            raise UsbBridgeError(f"{self.where}: cannot read the product string ({e})") from None
        if not self.product.startswith("custom"):
            raise UsbBridgeError(f"{self.where}: product {self.product!r} is not the custom ASM2464 firmware")
        if self._call("kernel driver check", device.is_kernel_driver_active, 0):
            self._call("detach kernel driver", device.detach_kernel_driver, 0)
        self._call("SET_CONFIGURATION", device.set_configuration, 1)
        self._call("claim interface 0", usb.util.claim_interface, device, 0)
        self._call("SET_INTERFACE alt 0", device.set_interface_altsetting, 0, 0)

    def _call(self, what: str, fn, *args):
        try:
            return fn(*args)
        except usb.core.USBTimeoutError as e:
            raise UsbTimeout(f"{self.where}: {what} timed out ({e})") from None
        except usb.core.USBError as e:
            kind = {errno.EPIPE: UsbStall, errno.ENODEV: UsbDisconnected}.get(e.errno, UsbTransferError)
            raise kind(f"{self.where}: {what} failed ({e})") from None

    def control_out(self, request: int, value: int = 0, index: int = 0, data: bytes = b"",
                    timeout_ms: int | None = None) -> None:
        self._call(f"control OUT {request:#04x}", self.device.ctrl_transfer, VENDOR_OUT, request, value, index,
                   data, timeout_ms or self.timeout_ms)

    def control_in(self, request: int, length: int, value: int = 0, index: int = 0,
                   timeout_ms: int | None = None) -> bytes:
        buf = self._buffer(length)
        n = self._call(f"control IN {request:#04x}", self.device.ctrl_transfer, VENDOR_IN, request, value, index,
                       buf, timeout_ms or self.timeout_ms)
        return buf.tobytes() if n == length else buf[:n].tobytes()

    def _buffer(self, length: int) -> array.array:
        buf = self._buffers.get(length)
        if buf is None:
            if len(self._buffers) >= 16:
                self._buffers.clear()
            buf = self._buffers[length] = array.array("B", bytes(length))
        return buf

    def bulk_out(self, data, timeout_ms: int | None = None) -> None:
        if not isinstance(data, array.array):
            # pyusb copies anything but bytes/array element by element; one memcpy instead
            data, raw = array.array("B"), data
            data.frombytes(raw)
        n = self._call(f"bulk OUT {EP_OUT:#04x}", self.device.write, EP_OUT, data, timeout_ms or self.timeout_ms)
        if n != len(data):
            raise UsbTransferError(f"{self.where}: bulk OUT sent {n} of {len(data)} bytes")

    def bulk_in(self, length: int, timeout_ms: int | None = None) -> bytes:
        buf = self._buffer(length)
        n = self._call(f"bulk IN {EP_IN:#04x}", self.device.read, EP_IN, buf, timeout_ms or self.timeout_ms)
        return buf.tobytes() if n == length else buf[:n].tobytes()

    def clear_halt(self, endpoint: int) -> None:
        self._call(f"clear halt {endpoint:#04x}", self.device.clear_halt, endpoint)

    def close(self) -> None:
        usb.util.dispose_resources(self.device)
