"""The ASM2464's 8051 external data space (XDATA, 64 KiB) as the USB host reaches it through the custom
firmware's 0xE4 (read) and 0xE5 (write) requests. Below 0x6000 it is the firmware's RAM; above are
memory-mapped registers and buffers (asm2464pd-firmware README "XDATA Memory Map"). Only the regions a
driver uses are modelled: the PCIe request engine, the LTSSM state, and the two SRAM windows. Any other
register raises NotModelled naming its address."""
from __future__ import annotations

import numpy as np

from gputwin.emu.pcie import NotModelled

RAM_END = 0x6000


class XData:
    def __init__(self):
        self.ram = bytearray(RAM_END)
        self._regions: list[tuple[int, int, object, object]] = []   # (start, end, read, write)

    def map(self, start: int, size: int, read, write) -> None:
        """read(addr, n) -> bytes and write(addr, data) for [start, start + size); addresses are absolute."""
        self._regions.append((start, start + size, read, write))

    def map_memory(self, start: int, data: np.ndarray) -> None:
        def read(addr, n):
            return data[addr - start:addr - start + n].tobytes()

        def write(addr, values):
            data[addr - start:addr - start + len(values)] = np.frombuffer(bytes(values), np.uint8)
        self.map(start, data.size, read, write)

    def read(self, addr: int, size: int) -> bytes:
        return b"".join(self._split(addr, size, lambda rd, wr, a, n: rd(a, n)))

    def write(self, addr: int, data: bytes) -> None:
        pos = 0

        def one(rd, wr, a, n):
            nonlocal pos
            wr(a, data[pos:pos + n])
            pos += n
        self._split(addr, len(data), one)

    def _split(self, addr: int, size: int, fn) -> list:
        if not 0 <= addr and addr + size <= 0x10000:
            raise NotModelled(f"ASM2464 XDATA access of {size} bytes at {addr:#x} is outside the 64 KiB space")
        out, end = [], addr + size
        while addr < end:
            if addr < RAM_END:
                n = min(end, RAM_END) - addr
                out.append(fn(self._ram_read, self._ram_write, addr, n))
            else:
                region = next((r for r in self._regions if r[0] <= addr < r[1]), None)
                if region is None:
                    raise NotModelled(f"ASM2464 XDATA register {addr:#06x} is not modelled")
                n = min(end, region[1]) - addr
                out.append(fn(region[2], region[3], addr, n))
            addr += n
        return out

    def _ram_read(self, addr: int, n: int) -> bytes:
        return bytes(self.ram[addr:addr + n])

    def _ram_write(self, addr: int, data: bytes) -> None:
        self.ram[addr:addr + len(data)] = data
