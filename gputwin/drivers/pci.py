"""What a userspace PCI driver holds once a device is reachable: configuration space, BAR windows, and
host-side DMA windows the device can reach. Two transports implement it: the ASM2464 USB bridge
(gputwin/drivers/usb/) and an in-process attachment of an emulated function (gputwin/mock/pci.py).
The kernel-less AMD driver (gputwin/drivers/amd/am/) is written against this interface only."""
from __future__ import annotations

import struct
from typing import Protocol


class BarIO(Protocol):
    """One BAR as the driver reaches it: byte-addressed reads and writes relative to the BAR's start."""
    name: str
    size: int

    def read(self, offset: int, size: int) -> bytes: ...

    def write(self, offset: int, data: bytes) -> None: ...


class DmaWindow(Protocol):
    """Host-side memory the device reaches at `bus_address` (e.g. the bridge's SRAM): the driver fills or
    drains it, the device's copy engine moves data between it and VRAM."""
    bus_address: int
    size: int

    def read(self, offset: int, size: int) -> bytes: ...

    def write(self, offset: int, data: bytes) -> None: ...


class PciDevice(Protocol):
    name: str

    def config_read(self, offset: int, size: int = 4) -> int: ...

    def config_write(self, offset: int, value: int, size: int = 4) -> None: ...

    def bar(self, index: int) -> BarIO: ...

    def dma_windows(self) -> list[DmaWindow]: ...


def read32(bar: BarIO, offset: int) -> int:
    return struct.unpack("<I", bar.read(offset, 4))[0]


def write32(bar: BarIO, offset: int, value: int) -> None:
    bar.write(offset, struct.pack("<I", value & 0xFFFFFFFF))
