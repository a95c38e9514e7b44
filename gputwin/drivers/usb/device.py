"""A GPU behind an ASM2464 as a gputwin.drivers.pci.PciDevice: configuration space by configuration
requests, BARs by memory requests, and the bridge's SRAM as the DMA windows the GPU reaches.

BAR access picks the cheapest honest form: an aligned dword is one request (a write: one control
transfer; a read: two, with its completion status checked); anything longer streams the whole dwords
(one control transfer + one bulk transfer) and does a partial dword at either end as one request with
byte enables."""
from __future__ import annotations

import struct

from gputwin.abi import asm2464 as fw
from gputwin.drivers.usb.bringup import BarAssignment, Hierarchy
from gputwin.drivers.usb.protocol import Asm2464Protocol


class UsbBar:
    def __init__(self, proto: Asm2464Protocol, name: str, assignment: BarAssignment):
        self.proto, self.name, self.assignment = proto, name, assignment
        self.base, self.size = assignment.address, assignment.size

    def _check(self, offset: int, size: int) -> None:
        if offset < 0 or size < 0 or offset + size > self.size:
            raise ValueError(f"{self.name}: access of {size} bytes at {offset:#x} is outside its {self.size:#x} bytes")

    def read(self, offset: int, size: int) -> bytes:
        self._check(offset, size)
        address = self.base + offset
        if size == 4 and not address & 3:
            return struct.pack("<I", self.proto.mem_read(address, 4))
        out = []
        for a, n, whole in _pieces(address, size):
            out.append(self.proto.stream_read(a, n) if whole else self.proto.mem_read(a, n).to_bytes(n, "little"))
        return b"".join(out)

    def write(self, offset: int, data) -> None:
        self._check(offset, len(data))
        address = self.base + offset
        if len(data) == 4 and not address & 3:
            self.proto.mem_write(address, int.from_bytes(data, "little"), 4)
            return
        view = memoryview(data).cast("B")
        for a, n, whole in _pieces(address, len(view)):
            chunk = view[a - address:a - address + n]
            if whole:
                self.proto.stream_write(a, chunk)
            else:
                self.proto.mem_write(a, int.from_bytes(chunk, "little"), n)


def _pieces(address: int, size: int):
    """(address, size, whole dwords?) pieces covering [address, address + size)."""
    end = address + size
    head_end = min(end, -(-address // 4) * 4)
    if head_end > address:
        yield address, head_end - address, False
    body_end = max(head_end, end // 4 * 4)
    if body_end > head_end:
        yield head_end, body_end - head_end, True
    if end > body_end:
        yield body_end, end - body_end, False


class SramWindow:
    """The bridge's 512 KiB copy buffer, which the GPU reaches at bus address 0x200000. The 0xF2 engine
    moves whole sectors from 16 KiB slot boundaries; other offsets and sizes read the covering sectors
    first and write them back whole (read-modify-write)."""
    bus_address, size = fw.SRAM_BUS_ADDRESS, fw.SRAM_SIZE

    def __init__(self, proto: Asm2464Protocol):
        self.proto = proto

    def _span(self, offset: int, size: int) -> tuple[int, int]:
        if offset < 0 or size <= 0 or offset + size > self.size:
            raise ValueError(f"SRAM window access of {size} bytes at {offset:#x} is outside its {self.size:#x} bytes")
        start = offset - offset % fw.SRAM_SLOT
        return start, -(-(offset + size) // fw.SECTOR) * fw.SECTOR

    def read(self, offset: int, size: int) -> bytes:
        start, end = self._span(offset, size)
        data = self.proto.sram_read(start // fw.SRAM_SLOT, end - start)
        return data if (start, end) == (offset, offset + size) else data[offset - start:offset - start + size]

    def write(self, offset: int, data) -> None:
        start, end = self._span(offset, len(data))
        if start == offset and end == offset + len(data):
            self.proto.sram_write(start // fw.SRAM_SLOT, data)
            return
        merged = bytearray(self.proto.sram_read(start // fw.SRAM_SLOT, end - start))
        merged[offset - start:offset - start + len(data)] = data
        self.proto.sram_write(start // fw.SRAM_SLOT, merged)


class QueuePageWindow:
    """The 4 KiB page the GPU reaches at bus address 0x820000, through XDATA 0xA000 (0xE4 reads, one 0xE5
    per byte written: slow, for small shared structures)."""
    bus_address, size = fw.QUEUE_PAGE_BUS_ADDRESS, fw.QUEUE_PAGE_SIZE

    def __init__(self, proto: Asm2464Protocol):
        self.proto = proto

    def _check(self, offset: int, size: int) -> None:
        if offset < 0 or size < 0 or offset + size > self.size:
            raise ValueError(f"queue page access of {size} bytes at {offset:#x} is outside its {self.size:#x} bytes")

    def read(self, offset: int, size: int) -> bytes:
        self._check(offset, size)
        return self.proto.xdata_read(fw.XDATA_QUEUE_PAGE + offset, size)

    def write(self, offset: int, data) -> None:
        self._check(offset, len(data))
        self.proto.xdata_write(fw.XDATA_QUEUE_PAGE + offset, bytes(data))


class UsbPciDevice:
    """gputwin.drivers.pci.PciDevice for the endpoint behind an ASM2464 (see open_usb_pci)."""

    def __init__(self, proto: Asm2464Protocol, hierarchy: Hierarchy, bars: dict[int, BarAssignment]):
        self.proto, self.hierarchy, self.assignments = proto, hierarchy, bars
        self.bus = hierarchy.endpoint_bus
        self.name = (f"{hierarchy.vendor_id:04x}:{hierarchy.device_id:04x} at {self.bus:02x}:00.0 behind "
                     f"the ASM2464 at {proto.usb.where}")
        self._bars = {i: UsbBar(proto, f"{self.name} BAR{i}", a) for i, a in bars.items()}
        self._windows = [SramWindow(proto), QueuePageWindow(proto)]

    def config_read(self, offset: int, size: int = 4) -> int:
        return self.proto.config_read(self.bus, 0, 0, offset, size)

    def config_write(self, offset: int, value: int, size: int = 4) -> None:
        self.proto.config_write(self.bus, 0, 0, offset, value, size)

    def bar(self, index: int) -> UsbBar:
        if index not in self._bars:
            raise ValueError(f"{self.name}: BAR{index} is not an assigned memory BAR (have {sorted(self._bars)})")
        return self._bars[index]

    def dma_windows(self) -> list:
        return list(self._windows)

    def close(self) -> None:
        self.proto.usb.close()
