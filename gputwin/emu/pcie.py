"""PCI Express functions as the rest of the emulated hardware sees them: a 4 KiB configuration space with
the standard type-0 header, BARs that size and move the way the spec says, and memory reads and writes that
land in whichever BAR decodes the address.

Facts (PCI Local Bus 3.0 / PCIe Base 4.0): BAR sizing writes all ones and reads back the size mask with the
type bits; a 64-bit BAR spans two slots; memory decoding only happens with COMMAND.MEM (bit 1) set; the
Resizable BAR extended capability (ID 0x15) lists supported sizes as bit (n + 4) = 2**n MiB and selects one
in its control register's bits 13:8. A request nothing claims completes with Unsupported Request.

Subclasses provide what sits behind each BAR (`bar_read` / `bar_write`). PcieBridge is the type-1 header of
a root or switch port: bus numbers and memory windows (PCI-to-PCI Bridge 1.2); the topology that routes
TLPs through bridges lives with the bridge model (gputwin/emu/usb/topology.py)."""
from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from gputwin.abi.pcie import (BAR0, CAP_PTR, CLASS_CODE, COMMAND, COMMAND_MASTER, COMMAND_MEM,  # noqa: F401
                              DEVICE_ID, EXT_CAP_REBAR, EXT_CAP_START, HEADER_TYPE, REVISION_ID, STATUS,
                              SUBSYSTEM_ID, SUBSYSTEM_VENDOR_ID, VENDOR_ID, Completion)
from gputwin.abi import pcie as regs


class NotModelled(RuntimeError):
    """A configuration or request the model does not implement (named), rather than a guess at it."""


class PcieError(RuntimeError):
    """A request that completed with a status other than SC; names the request and the status."""

    def __init__(self, message: str, status: Completion):
        self.status = Completion(status)
        super().__init__(f"{message}: completion {self.status.name}")


MIB = 1 << 20


@dataclass
class BarSpec:
    """One BAR: its slot, size in bytes (a power of two), and kind. A resizable BAR lists the sizes it
    supports (bytes, powers of two of at least 1 MiB) and starts at `size`."""
    index: int
    size: int
    is64: bool = True
    prefetchable: bool = True
    name: str = ""
    resizable: tuple[int, ...] = ()

    def type_bits(self) -> int:
        return (0b100 if self.is64 else 0) | (0b1000 if self.prefetchable else 0)


class PcieFunction:
    """One PCIe function. Config accesses are dword-aligned or naturally aligned sub-dword accesses."""

    def __init__(self, name: str, vendor_id: int, device_id: int, class_code: int, bars: list[BarSpec],
                 *, revision: int = 0, subsystem: tuple[int, int] = (0, 0), header_type: int = 0):
        self.name = name
        self.upstream: HostMemory | None = None   # what bus-mastering reaches; set by whoever attaches it
        self.config = bytearray(4096)
        self.bars = {b.index: b for b in bars}
        struct.pack_into("<HH", self.config, VENDOR_ID, vendor_id, device_id)
        self.config[REVISION_ID] = revision
        self.config[CLASS_CODE:CLASS_CODE + 3] = class_code.to_bytes(3, "little")
        self.config[HEADER_TYPE] = header_type
        if header_type == 0:
            struct.pack_into("<HH", self.config, SUBSYSTEM_VENDOR_ID, *subsystem)
            for b in bars:
                self._write_bar_dwords(b, 0)
        self._rebar = self._add_rebar_capability([b for b in bars if b.resizable])

    # --- configuration space -----------------------------------------------------------------------
    def config_read(self, offset: int, size: int = 4) -> int:
        self._check_config(offset, size)
        return int.from_bytes(self.config[offset:offset + size], "little")

    def config_write(self, offset: int, value: int, size: int = 4) -> None:
        self._check_config(offset, size)
        dword = offset & ~3
        old = int.from_bytes(self.config[dword:dword + 4], "little")
        shift = 8 * (offset - dword)
        mask = ((1 << 8 * size) - 1) << shift
        new = (old & ~mask) | ((value << shift) & mask)
        self._config_dword_write(dword, old, new)

    def _check_config(self, offset: int, size: int) -> None:
        if size not in (1, 2, 4) or offset % size or not 0 <= offset <= 4096 - size:
            raise PcieError(f"{self.name}: config access of {size} bytes at {offset:#x}", Completion.UR)

    def _config_dword_write(self, dword: int, old: int, new: int) -> None:
        """Apply a dword write: BARs keep their size mask and type bits, read-only fields stay."""
        if self.config[HEADER_TYPE] & 0x7F == 0 and BAR0 <= dword < BAR0 + 24:
            self._bar_slot_write(dword, new)
        elif dword == COMMAND:
            struct.pack_into("<H", self.config, COMMAND, new & 0x0547)   # IO, MEM, MASTER, PERR, SERR, INTx off
        elif self._rebar and self._rebar_write(dword, new):
            pass
        elif dword in self.writable_config_dwords():
            struct.pack_into("<I", self.config, dword, new)
        # everything else is read-only on this model (writes are dropped, as the hardware drops them)

    def writable_config_dwords(self) -> tuple[int, ...]:
        return (0x3C,)   # interrupt line

    # --- BARs --------------------------------------------------------------------------------------
    def _bar_slot_write(self, dword: int, value: int) -> None:
        slot = (dword - BAR0) // 4
        for b in self.bars.values():
            if slot == b.index:
                lo = value & ~(b.size - 1) & 0xFFFFFFF0
                high = int.from_bytes(self.config[dword + 4:dword + 8], "little") if b.is64 else 0
                self._write_bar_dwords(b, lo | high << 32)
                return
            if b.is64 and slot == b.index + 1:
                high = value & (~(b.size - 1) >> 32) & 0xFFFFFFFF
                low = int.from_bytes(self.config[BAR0 + 4 * b.index:BAR0 + 4 * b.index + 4], "little") & ~0xF
                self._write_bar_dwords(b, low | high << 32)
                return
        # unimplemented BAR slots read as zero and ignore writes

    def _write_bar_dwords(self, b: BarSpec, address: int) -> None:
        address &= ~(b.size - 1)
        struct.pack_into("<I", self.config, BAR0 + 4 * b.index, (address & 0xFFFFFFF0) | b.type_bits())
        if b.is64:
            struct.pack_into("<I", self.config, BAR0 + 4 * b.index + 4, address >> 32)

    def bar_address(self, index: int) -> int:
        b = self.bars[index]
        low = int.from_bytes(self.config[BAR0 + 4 * index:BAR0 + 4 * index + 4], "little") & ~0xF
        high = int.from_bytes(self.config[BAR0 + 4 * index + 4:BAR0 + 4 * index + 8], "little") if b.is64 else 0
        return low | high << 32

    def memory_enabled(self) -> bool:
        return bool(self.config_read(COMMAND, 2) & COMMAND_MEM)

    def bus_master(self) -> bool:
        return bool(self.config_read(COMMAND, 2) & COMMAND_MASTER)

    def decode(self, address: int, size: int) -> tuple[int, int] | None:
        """(bar index, offset) of a memory request this function claims, or None."""
        if not self.memory_enabled():
            return None
        for b in self.bars.values():
            base = self.bar_address(b.index)
            if base and base <= address and address + size <= base + b.size:
                return b.index, address - base
        return None

    def mem_read(self, address: int, size: int) -> bytes:
        hit = self.decode(address, size)
        if hit is None:
            raise PcieError(f"{self.name}: memory read of {size} bytes at {address:#x} hits no BAR", Completion.UR)
        return self.bar_read(*hit, size)

    def mem_write(self, address: int, data: bytes) -> None:
        hit = self.decode(address, len(data))
        if hit is None:
            raise PcieError(f"{self.name}: memory write of {len(data)} bytes at {address:#x} hits no BAR",
                            Completion.UR)
        self.bar_write(*hit, data)

    def bar_read(self, bar: int, offset: int, size: int) -> bytes:
        raise NotImplementedError

    def bar_write(self, bar: int, offset: int, data: bytes) -> None:
        raise NotImplementedError

    # --- Resizable BAR -----------------------------------------------------------------------------
    def _add_rebar_capability(self, bars: list[BarSpec]) -> int:
        """Place the Resizable BAR capability at 0x100 when a BAR is resizable; its offset (0 if none)."""
        if not bars:
            return 0
        struct.pack_into("<I", self.config, EXT_CAP_START, EXT_CAP_REBAR | 1 << 16)   # version 1, last cap
        for i, b in enumerate(bars):
            sizes = 0
            for s in b.resizable:
                sizes |= 1 << ((s // MIB).bit_length() - 1 + 4)
            struct.pack_into("<II", self.config, EXT_CAP_START + 4 + 8 * i, sizes,
                             b.index | len(bars) << 5 | ((b.size // MIB).bit_length() - 1) << 8)
        return EXT_CAP_START

    def _rebar_write(self, dword: int, value: int) -> bool:
        first = self._rebar + 4
        if not first <= dword < first + 8 * sum(1 for b in self.bars.values() if b.resizable):
            return False
        if (dword - first) % 8 != 4:
            return True   # the capability registers are read-only
        control = int.from_bytes(self.config[dword:dword + 4], "little")
        b = self.bars[control & 7]
        size = MIB << ((value >> 8) & 0x3F)
        if size not in b.resizable:
            return True   # an unsupported size is not taken (the control keeps the old size)
        struct.pack_into("<I", self.config, dword, (control & ~(0x3F << 8)) | (value & (0x3F << 8)))
        b.size = size
        self._write_bar_dwords(b, self.bar_address(b.index))
        self.bar_resized(b)
        return True

    def bar_resized(self, bar: BarSpec) -> None:
        """Hook for a function whose BAR window follows its size (e.g. how much VRAM BAR0 shows)."""


class PcieBridge(PcieFunction):
    """A PCI-to-PCI bridge function (type-1 header): a root port or a switch's upstream/downstream port.
    Software programs its primary/secondary/subordinate bus numbers and its two memory windows; the
    topology forwards configuration requests by bus number and memory requests that fall in a window
    (only with COMMAND.MEM set). The prefetchable window is 64-bit (base/limit low nibbles read 1).
    The I/O window is not implemented (reads zero, as on a bridge without I/O decoding)."""

    def __init__(self, name: str, vendor_id: int, device_id: int, *, revision: int = 0):
        super().__init__(name, vendor_id, device_id, 0x060400, [], revision=revision, header_type=1)
        struct.pack_into("<HH", self.config, regs.PREF_MEMORY_BASE, 1, 1)
        self.downstream: dict[tuple[int, int], PcieFunction] = {}   # (device, function) on the secondary bus
        self._windows: list[tuple[int, int]] | None = None

    def attach(self, function: PcieFunction, device: int = 0, fn: int = 0) -> PcieFunction:
        self.downstream[(device, fn)] = function
        return function

    @property
    def secondary_bus(self) -> int:
        return self.config[regs.SECONDARY_BUS]

    @property
    def subordinate_bus(self) -> int:
        return self.config[regs.SUBORDINATE_BUS]

    def _config_dword_write(self, dword: int, old: int, new: int) -> None:
        self._windows = None
        if dword in (regs.PRIMARY_BUS, regs.PREF_BASE_UPPER32, regs.PREF_LIMIT_UPPER32):
            struct.pack_into("<I", self.config, dword, new)
        elif dword == regs.MEMORY_BASE:
            struct.pack_into("<I", self.config, dword, new & 0xFFF0FFF0)
        elif dword == regs.PREF_MEMORY_BASE:
            struct.pack_into("<I", self.config, dword, (new & 0xFFF0FFF0) | 0x00010001)
        elif dword == regs.BRIDGE_CONTROL & ~3:
            if (new >> 16) & regs.BRIDGE_CTL_BUS_RESET:
                raise NotModelled(f"{self.name}: secondary bus reset (bridge control bit 6) is not modelled")
            struct.pack_into("<I", self.config, dword, new)
        else:
            super()._config_dword_write(dword, old, new)

    def windows(self) -> list[tuple[int, int]]:
        """The [start, end) memory ranges this bridge forwards downstream (empty while COMMAND.MEM is off)."""
        if self._windows is None:
            spans = [(self._window_bits(regs.MEMORY_BASE), self._window_bits(regs.MEMORY_LIMIT) | 0xFFFFF),
                     (self._window_bits(regs.PREF_MEMORY_BASE) | self.config_read(regs.PREF_BASE_UPPER32) << 32,
                      self._window_bits(regs.PREF_MEMORY_LIMIT) | 0xFFFFF
                      | self.config_read(regs.PREF_LIMIT_UPPER32) << 32)]
            self._windows = [(lo, hi + 1) for lo, hi in spans if lo <= hi] if self.memory_enabled() else []
        return self._windows

    def _window_bits(self, offset: int) -> int:
        """Address bits 31:20 of a base or limit register (its bits 15:4)."""
        return (self.config_read(offset, 2) & 0xFFF0) << 16

    def forwards(self, address: int, size: int) -> bool:
        return any(lo <= address and address + size <= hi for lo, hi in self.windows())


class HostMemory:
    """What a bus-master function reaches upstream: bus-address ranges backed by memory (the USB bridge's
    SRAM, or host RAM for a function attached in-process). Views are numpy byte arrays, so an emulated GPU
    can map them into its address spaces and reach them at memory speed."""

    def __init__(self, name: str = "host", path_enabled=None):
        self.name = name
        self._ranges: list[tuple[int, np.ndarray]] = []
        # () -> bool: whether bus mastering is enabled on every function between the requester and this
        # memory (a bridge forwards upstream requests only with COMMAND.MASTER set); None: always
        self.path_enabled = path_enabled

    def add(self, bus_address: int, data: np.ndarray) -> None:
        data = np.asarray(data).reshape(-1).view(np.uint8)
        for base, other in self._ranges:
            if base < bus_address + data.size and bus_address < base + other.size:
                raise ValueError(f"{self.name}: bus range {bus_address:#x}+{data.size:#x} overlaps {base:#x}")
        self._ranges.append((bus_address, data))

    def view(self, bus_address: int, size: int) -> np.ndarray:
        if self.path_enabled is not None and not self.path_enabled():
            raise PcieError(f"{self.name}: DMA of {size} bytes at bus address {bus_address:#x} with bus mastering "
                            f"disabled on its path", Completion.UR)
        for base, data in self._ranges:
            if base <= bus_address and bus_address + size <= base + data.size:
                return data[bus_address - base:bus_address - base + size]
        raise PcieError(f"{self.name}: DMA of {size} bytes at bus address {bus_address:#x} reaches no memory",
                        Completion.UR)
