"""An emulated PCIe function attached in-process, the way a userspace driver on Linux reaches a real one
through sysfs (config, resourceN mmaps): BARs are assigned once at fixed bus addresses, and the function's
bus-master accesses reach a host DMA window of plain memory. Used to run the kernel-less AMD driver
(gputwin/drivers/amd/am/) without the USB bridge in between, and to test it block by block."""
from __future__ import annotations

import numpy as np

from gputwin.emu.pcie import COMMAND, COMMAND_MASTER, COMMAND_MEM, HostMemory, PcieFunction

BAR_BASE_64 = 1 << 40         # where 64-bit BARs are placed (above any DMA window)
BAR_BASE_32 = 0xE000_0000     # and 32-bit ones, below 4 GiB
HOST_WINDOW_BUS = 0x1000_0000  # the host DMA window's bus address


class DirectBar:
    def __init__(self, function: PcieFunction, index: int):
        self.function, self.index = function, index
        self.name = f"{function.name} BAR{index}"

    @property
    def size(self) -> int:
        return self.function.bars[self.index].size

    def read(self, offset: int, size: int) -> bytes:
        return self.function.mem_read(self.function.bar_address(self.index) + offset, size)

    def write(self, offset: int, data: bytes) -> None:
        self.function.mem_write(self.function.bar_address(self.index) + offset, bytes(data))


class HostWindow:
    def __init__(self, bus_address: int, data: np.ndarray):
        self.bus_address, self.data, self.size = bus_address, data, data.size

    def read(self, offset: int, size: int) -> bytes:
        return self.data[offset:offset + size].tobytes()

    def write(self, offset: int, data: bytes) -> None:
        self.data[offset:offset + len(data)] = np.frombuffer(data, np.uint8)


class DirectPciDevice:
    """`gputwin.drivers.pci.PciDevice` over an emulated function in this process."""

    def __init__(self, function: PcieFunction, host_window_bytes: int = 1 << 20):
        self.function, self.name = function, f"{function.name} (in-process)"
        bases = {True: BAR_BASE_64, False: BAR_BASE_32}
        for b in sorted(function.bars.values(), key=lambda b: -b.size):   # largest first keeps alignment
            base = -(-bases[b.is64] // b.size) * b.size
            function.config_write(0x10 + 4 * b.index, base & 0xFFFFFFFF)
            if b.is64:
                function.config_write(0x14 + 4 * b.index, base >> 32)
            bases[b.is64] = base + b.size
        function.config_write(COMMAND, COMMAND_MEM | COMMAND_MASTER, 2)
        self._window = HostWindow(HOST_WINDOW_BUS, np.zeros(host_window_bytes, np.uint8))
        function.upstream = HostMemory(f"{self.name} host memory")
        function.upstream.add(HOST_WINDOW_BUS, self._window.data)

    def config_read(self, offset: int, size: int = 4) -> int:
        return self.function.config_read(offset, size)

    def config_write(self, offset: int, value: int, size: int = 4) -> None:
        self.function.config_write(offset, value, size)

    def bar(self, index: int) -> DirectBar:
        return DirectBar(self.function, index)

    def dma_windows(self) -> list[HostWindow]:
        return [self._window]
