"""A pyusb backend that presents emulated ASM2464 enclosures (gputwin/emu/usb/) as USB devices, the way
libusb presents real ones. It is handed to pyusb the way pyusb allows: `usb.core.find(backend=...)`; no
part of pyusb or libusb is patched.

Each control and bulk transfer goes to the enclosure's firmware model. Errors surface as libusb's do
through pyusb's libusb1 backend: a stalled endpoint raises USBError errno EPIPE ("Pipe error") until the
host clears the halt, a transfer the device never answers raises USBTimeoutError (errno ETIMEDOUT) at
once (simulated time: nothing here sleeps or hangs). Model errors that name something unmodelled
propagate unchanged.

Fault injection (`backend.faults(i)`): stalls and timeouts on control or bulk transfers, with or without
the device having acted on the transfer, the enclosure being unplugged, and faulty completions of the
next PCIe requests (UR, CA, CRS, no completion, the firmware's poll giving up), so a driver's retry
paths can be driven."""
from __future__ import annotations

import errno
import struct
from dataclasses import dataclass
from types import SimpleNamespace

import usb.backend
import usb.core

from gputwin.emu.pcie import Completion
from gputwin.emu.usb.bridge import Asm2464Enclosure
from gputwin.emu.usb.descriptors import CONFIGURATION, DEVICE, ENDPOINT, INTERFACE
from gputwin.emu.usb.firmware import EndpointNak
from gputwin.emu.usb.tlp import ENGINE_TIMEOUT, NO_COMPLETION

CONTROL = 0                       # the "endpoint" a control-transfer fault targets
LIBUSB_ERROR_TIMEOUT, LIBUSB_ERROR_PIPE, LIBUSB_ERROR_IO, LIBUSB_ERROR_NO_DEVICE = -7, -9, -1, -4
SPEED_HIGH, SPEED_SUPER = 3, 4    # libusb_speed values, as pyusb reports them


def _timeout(what: str) -> usb.core.USBTimeoutError:
    return usb.core.USBTimeoutError(f"Operation timed out ({what})", LIBUSB_ERROR_TIMEOUT, errno.ETIMEDOUT)


def _pipe(what: str) -> usb.core.USBError:
    return usb.core.USBError(f"Pipe error ({what})", LIBUSB_ERROR_PIPE, errno.EPIPE)


@dataclass
class _UsbFault:
    kind: str               # "stall" or "timeout"
    endpoint: int           # CONTROL, 0x02 or 0x81
    request: int | None     # a control transfer's bRequest to match (None: any)
    request_type: int | None  # and its bmRequestType (None: any)
    delivered: bool         # a timeout after the device acted on the transfer (its answer was lost)


class Faults:
    """Faults to inject into the next transfers of one device, consumed in order of arrival."""

    def __init__(self, enclosure: Asm2464Enclosure):
        self._tlp = enclosure.tlp
        self._usb: list[_UsbFault] = []
        self.unplugged = False

    def unplug(self) -> None:
        """The enclosure is gone: every later transfer fails with LIBUSB_ERROR_NO_DEVICE."""
        self.unplugged = True

    def stall(self, endpoint: int, count: int = 1, request: int | None = None,
              request_type: int | None = None) -> None:
        """The next transfers on `endpoint` (CONTROL: those with this bRequest/bmRequestType) stall; a bulk
        endpoint stays halted until clear_halt."""
        self._usb += [_UsbFault("stall", endpoint, request, request_type, False)] * count

    def timeout(self, endpoint: int, count: int = 1, request: int | None = None, request_type: int | None = None,
                delivered: bool = False) -> None:
        """The next transfers time out: before the device saw them, or (delivered) after it acted."""
        self._usb += [_UsbFault("timeout", endpoint, request, request_type, delivered)] * count

    def tlp_completion(self, status: Completion, count: int = 1, kind: str | None = None) -> None:
        """The next non-posted PCIe requests ("config", "memory" or any) complete with `status`."""
        self._tlp.inject(Completion(status), count, kind)

    def tlp_no_completion(self, count: int = 1, kind: str | None = None) -> None:
        self._tlp.inject(NO_COMPLETION, count, kind)

    def tlp_engine_timeout(self, count: int = 1, kind: str | None = None) -> None:
        self._tlp.inject(ENGINE_TIMEOUT, count, kind)

    def take(self, endpoint: int, request: int | None = None, request_type: int | None = None) -> _UsbFault | None:
        for i, f in enumerate(self._usb):
            if f.endpoint == endpoint and f.request in (None, request) and f.request_type in (None, request_type):
                return self._usb.pop(i)
        return None


class MockUsbDevice:
    """One enclosure on the mock bus: what pyusb calls the device identification and the open handle."""

    def __init__(self, enclosure: Asm2464Enclosure, bus: int, address: int):
        self.enclosure, self.firmware = enclosure, enclosure.firmware
        self.bus, self.address = bus, address
        self.faults = Faults(enclosure)
        self.halted: set[int] = set()
        self.claimed: set[int] = set()
        self.device_descriptor = self._device_descriptor()
        self.configurations = [self._configuration()]

    def _get(self, kind: int, index: int = 0) -> bytes:
        return self.firmware.control_in(0x80, 6, kind << 8 | index, 0, 0xFFFF)

    def _device_descriptor(self) -> SimpleNamespace:
        names = ("bLength", "bDescriptorType", "bcdUSB", "bDeviceClass", "bDeviceSubClass", "bDeviceProtocol",
                 "bMaxPacketSize0", "idVendor", "idProduct", "bcdDevice", "iManufacturer", "iProduct",
                 "iSerialNumber", "bNumConfigurations")
        values = struct.unpack("<BBHBBBBHHHBBBB", self._get(DEVICE))
        return SimpleNamespace(**dict(zip(names, values)), bus=self.bus, address=self.address, port_number=1,
                               port_numbers=(1,), speed=SPEED_HIGH if self.firmware.usb2 else SPEED_SUPER)

    def _configuration(self) -> tuple[SimpleNamespace, list[list[tuple[SimpleNamespace, list]]]]:
        """(configuration, interfaces[i][alt] = (interface, [endpoints])) with the class- and
        companion-descriptors that follow each one as its extra_descriptors."""
        raw, pos, items = self._get(CONFIGURATION), 0, []
        while pos < len(raw):
            items.append(raw[pos:pos + raw[pos]])
            pos += raw[pos]
        cfg, interfaces, current = None, [], None
        for d in items:
            if d[1] == CONFIGURATION:
                cfg = SimpleNamespace(bLength=d[0], bDescriptorType=d[1], wTotalLength=int.from_bytes(d[2:4], "little"),
                                      bNumInterfaces=d[4], bConfigurationValue=d[5], iConfiguration=d[6],
                                      bmAttributes=d[7], bMaxPower=d[8], extra_descriptors=[])
                current = cfg
            elif d[1] == INTERFACE:
                intf = SimpleNamespace(bLength=d[0], bDescriptorType=d[1], bInterfaceNumber=d[2],
                                       bAlternateSetting=d[3], bNumEndpoints=d[4], bInterfaceClass=d[5],
                                       bInterfaceSubClass=d[6], bInterfaceProtocol=d[7], iInterface=d[8],
                                       extra_descriptors=[])
                while len(interfaces) <= d[2]:
                    interfaces.append([])
                interfaces[d[2]].append((intf, []))
                current = intf
            elif d[1] == ENDPOINT:
                ep = SimpleNamespace(bLength=d[0], bDescriptorType=d[1], bEndpointAddress=d[2], bmAttributes=d[3],
                                     wMaxPacketSize=int.from_bytes(d[4:6], "little"), bInterval=d[6], bRefresh=0,
                                     bSynchAddress=0, extra_descriptors=[])
                interfaces[-1][-1][1].append(ep)
                current = ep
            else:
                current.extra_descriptors.extend(d)
        return cfg, interfaces


class MockUsbBackend(usb.backend.IBackend):
    """pyusb backend over emulated enclosures: `usb.core.find(idVendor=..., backend=MockUsbBackend(enc))`."""

    def __init__(self, *enclosures: Asm2464Enclosure):
        super().__init__()
        self.devices = [MockUsbDevice(e, bus=1, address=2 + i) for i, e in enumerate(enclosures)]

    def faults(self, index: int = 0) -> Faults:
        return self.devices[index].faults

    # --- enumeration and descriptors ---------------------------------------------------------------
    def enumerate_devices(self):
        return iter(self.devices)

    def get_parent(self, dev):
        return None

    def get_device_descriptor(self, dev):
        return dev.device_descriptor

    def get_configuration_descriptor(self, dev, config):
        return self._config(dev, config)[0]

    def get_interface_descriptor(self, dev, intf, alt, config):
        interfaces = self._config(dev, config)[1]
        if intf >= len(interfaces) or alt >= len(interfaces[intf]):
            raise IndexError(f"interface {intf} alternate {alt}")
        return interfaces[intf][alt][0]

    def get_endpoint_descriptor(self, dev, ep, intf, alt, config):
        self.get_interface_descriptor(dev, intf, alt, config)
        endpoints = self._config(dev, config)[1][intf][alt][1]
        if ep >= len(endpoints):
            raise IndexError(f"endpoint {ep}")
        return endpoints[ep]

    @staticmethod
    def _config(dev, config):
        if config >= len(dev.configurations):
            raise IndexError(f"configuration {config}")
        return dev.configurations[config]

    # --- handles and interfaces ----------------------------------------------------------------------
    def open_device(self, dev):
        return dev

    def close_device(self, dev_handle):
        dev_handle.claimed.clear()

    def set_configuration(self, dev_handle, config_value):
        self._control(dev_handle, 0x00, 9, config_value, 0, b"")

    def get_configuration(self, dev_handle):
        return 1 if dev_handle.firmware.configured else 0

    def set_interface_altsetting(self, dev_handle, intf, altsetting):
        self._control(dev_handle, 0x01, 11, altsetting, intf, b"")

    def claim_interface(self, dev_handle, intf):
        dev_handle.claimed.add(intf)

    def release_interface(self, dev_handle, intf):
        dev_handle.claimed.discard(intf)

    def is_kernel_driver_active(self, dev_handle, intf):
        return False

    def detach_kernel_driver(self, dev_handle, intf):
        pass

    def reset_device(self, dev_handle):
        raise usb.core.USBError("USB port reset of the ASM2464 is not modelled", LIBUSB_ERROR_IO, errno.EIO)

    def clear_halt(self, dev_handle, ep):
        """CLEAR_FEATURE(ENDPOINT_HALT): a standard control request, so it can fail like one."""
        def act():
            dev_handle.firmware.control_out(0x02, 1, 0, ep, b"")
            dev_handle.halted.discard(ep)
            return 0
        self._transfer(dev_handle, CONTROL, (1, 0x02), act, f"clear halt {ep:#04x}")

    # --- transfers -----------------------------------------------------------------------------------
    def ctrl_transfer(self, dev_handle, bmRequestType, bRequest, wValue, wIndex, data, timeout):
        if bmRequestType & 0x80:
            def act():
                reply = dev_handle.firmware.control_in(bmRequestType, bRequest, wValue, wIndex, len(data))
                memoryview(data)[:len(reply)] = reply
                return len(reply)
        else:
            def act():
                dev_handle.firmware.control_out(bmRequestType, bRequest, wValue, wIndex, bytes(data))
                return len(data)
        return self._transfer(dev_handle, CONTROL, (bRequest, bmRequestType), act, f"control request {bRequest:#04x}")

    def _control(self, dev_handle, bm, request, value, index, data):
        self.ctrl_transfer(dev_handle, bm, request, value, index, data, 1000)

    def bulk_write(self, dev_handle, ep, intf, data, timeout):
        return self._transfer(dev_handle, ep, None, lambda: dev_handle.firmware.bulk_out(ep, memoryview(data)),
                              f"bulk OUT {ep:#04x}")

    def bulk_read(self, dev_handle, ep, intf, buff, timeout):
        def act():
            got = dev_handle.firmware.bulk_in(ep, len(buff))
            memoryview(buff)[:len(got)] = got
            return len(got)
        return self._transfer(dev_handle, ep, None, act, f"bulk IN {ep:#04x}")

    def _transfer(self, dev, endpoint: int, request: tuple[int, int] | None, act, what: str) -> int:
        if dev.faults.unplugged:
            raise usb.core.USBError(f"No such device ({what})", LIBUSB_ERROR_NO_DEVICE, errno.ENODEV)
        if endpoint != CONTROL:
            if not dev.firmware.configured:
                raise usb.core.USBError(f"{what} before SET_CONFIGURATION", LIBUSB_ERROR_IO, errno.EIO)
            if endpoint in dev.halted:
                raise _pipe(f"{what} is halted")
        fault = dev.faults.take(endpoint, *(request or (None, None)))
        if fault is not None and fault.kind == "stall":
            if endpoint != CONTROL:
                dev.halted.add(endpoint)
            raise _pipe(what)
        if fault is not None and not fault.delivered:
            raise _timeout(what)
        try:
            n = act()
        except EndpointNak as e:
            raise _timeout(f"{what}: {e}") from None
        if fault is not None:
            raise _timeout(f"{what}, after the device acted on it")
        return n


def usb_gpu(function, **enclosure_options) -> tuple[MockUsbBackend, Asm2464Enclosure]:
    """A backend with one enclosure holding `function` (e.g. an AmdGpuFunction): what MOCKUSBAMD opens."""
    enclosure = Asm2464Enclosure(function, **enclosure_options)
    return MockUsbBackend(enclosure), enclosure
