"""PCIe bring-up behind an ASM2464, done by the host over the bridge's request engine (no firmware or OS
does it for us): number the buses down the chain of bridges to the first endpoint, size its BARs,
grow its resizable BAR to the largest size that fits the prefetchable window, place the BARs, open the
bridges' windows over them and enable decoding and bus mastering on the way down.

The chain is found, not assumed: each bus's device 0 is read; a bridge gets primary = its bus,
secondary = bus + 1 and (until the end is known) subordinate = 0xFF, then the next bus is read. With a
Navi card that gives bridges on buses 0..3 and the GPU on bus 4, as tinygrad's fixed gpu_bus=4 expects.

Windows (bus addresses the bridge's request engine can emit; both stay clear of the SRAM the GPU
reaches at 0x200000..0x821000): 32-bit non-prefetchable BARs go from 256 MiB up, prefetchable ones
from 32 GiB up (tinygrad's mem_base / pref_mem_base). The prefetchable window's size is a choice of this
driver (default 96 GiB); the resizable BAR takes the largest supported size that fits it next to the
other prefetchable BARs and is aligned at the window base."""
from __future__ import annotations

from dataclasses import dataclass

from gputwin.abi import pcie as regs
from gputwin.abi.pcie import Completion
from gputwin.drivers.usb.errors import TlpError, UsbBridgeError
from gputwin.drivers.usb.protocol import Asm2464Protocol

GIB = 1 << 30
MEM_WINDOW = (0x1000_0000, 0xE000_0000)        # [start, end) for 32-bit non-prefetchable BARs
PREF_WINDOW = (32 * GIB, 128 * GIB)            # [start, end) for prefetchable BARs
MAX_DEPTH = 8                                  # bridges followed before giving up


@dataclass(frozen=True)
class BarAssignment:
    index: int
    address: int
    size: int
    is64: bool
    prefetchable: bool


@dataclass(frozen=True)
class Hierarchy:
    bridge_buses: tuple[int, ...]      # device 0 of each of these buses is a bridge on the way down
    endpoint_bus: int
    vendor_id: int
    device_id: int


class BringUp:
    def __init__(self, proto: Asm2464Protocol, mem_window=MEM_WINDOW, pref_window=PREF_WINDOW):
        self.proto, self.mem_window, self.pref_window = proto, mem_window, pref_window

    def cfg_read(self, bus: int, offset: int, size: int = 4) -> int:
        return self.proto.config_read(bus, 0, 0, offset, size)

    def cfg_write(self, bus: int, offset: int, value: int, size: int = 4) -> None:
        self.proto.config_write(bus, 0, 0, offset, value, size)

    def run(self) -> tuple[Hierarchy, dict[int, BarAssignment]]:
        hierarchy = self.number_buses()
        bus = hierarchy.endpoint_bus
        self.cfg_write(bus, regs.COMMAND, 0, 2)    # no decoding while BARs move
        self.resize_bars(bus)
        bars = self.assign_bars(bus, self.size_bars(bus))
        self.open_windows(hierarchy, bars.values())
        for b in hierarchy.bridge_buses:
            self.cfg_write(b, regs.COMMAND, regs.COMMAND_MEM | regs.COMMAND_MASTER, 2)
        self.cfg_write(bus, regs.COMMAND, regs.COMMAND_MEM | regs.COMMAND_MASTER, 2)
        return hierarchy, bars

    # --- buses -------------------------------------------------------------------------------------
    def number_buses(self) -> Hierarchy:
        bridges: list[int] = []
        for bus in range(MAX_DEPTH + 1):
            try:
                ids = self.cfg_read(bus, regs.VENDOR_ID)
            except TlpError as e:
                if e.status != Completion.UR:
                    raise
                ids = 0xFFFFFFFF
            if ids & 0xFFFF in (0xFFFF, 0):
                raise UsbBridgeError(f"no PCIe device at {bus:02x}:00.0 behind the bridge "
                                     f"(bridges found on buses {bridges}); is a card seated and powered?")
            header = self.cfg_read(bus, regs.HEADER_TYPE, 1) & 0x7F
            if header == 0:
                for b in bridges:
                    self.cfg_write(b, regs.SUBORDINATE_BUS, bus, 1)
                return Hierarchy(tuple(bridges), bus, ids & 0xFFFF, ids >> 16)
            if header != 1:
                raise UsbBridgeError(f"{bus:02x}:00.0 has header type {header} (neither endpoint nor bridge)")
            latency = self.cfg_read(bus, regs.PRIMARY_BUS) & 0xFF000000
            self.cfg_write(bus, regs.PRIMARY_BUS, latency | 0xFF << 16 | (bus + 1) << 8 | bus)
            bridges.append(bus)
        raise UsbBridgeError(f"more than {MAX_DEPTH} bridges behind the bridge: no endpoint found")

    # --- BARs --------------------------------------------------------------------------------------
    def size_bars(self, bus: int) -> dict[int, tuple[int, bool, bool]]:
        """{index: (size, is64, prefetchable)} of the endpoint's memory BARs (I/O BARs are skipped: the
        bridge has no I/O space)."""
        found, slot = {}, 0
        while slot < regs.BAR_SLOTS:
            off = regs.BAR0 + 4 * slot
            original = self.cfg_read(bus, off)
            if original & regs.BAR_SPACE_IO:
                slot += 1
                continue
            is64 = bool(original & regs.BAR_MEM_TYPE_64)
            self.cfg_write(bus, off, 0xFFFFFFFF)
            mask = self.cfg_read(bus, off) & 0xFFFFFFF0
            self.cfg_write(bus, off, original)
            if not mask and not is64:
                slot += 1          # an unimplemented slot reads back zero
                continue
            if is64:
                high = self.cfg_read(bus, off + 4)
                self.cfg_write(bus, off + 4, 0xFFFFFFFF)
                mask |= self.cfg_read(bus, off + 4) << 32
                self.cfg_write(bus, off + 4, high)
            else:
                mask |= 0xFFFFFFFF << 32
            found[slot] = ((~mask & 0xFFFFFFFF_FFFFFFFF) + 1, is64, bool(original & regs.BAR_MEM_PREFETCH))
            slot += 2 if is64 else 1
        return found

    def resize_bars(self, bus: int) -> None:
        cap = self._find_ext_cap(bus, regs.EXT_CAP_REBAR)
        if cap is None:
            return
        sizes = self.size_bars(bus)
        count = (self.cfg_read(bus, cap + regs.REBAR_CTRL) >> 5) & 7
        for i in range(count):
            supported = self.cfg_read(bus, cap + regs.REBAR_CAP + 8 * i)
            ctrl = self.cfg_read(bus, cap + regs.REBAR_CTRL + 8 * i)
            index = ctrl & 7
            others = sum(s for j, (s, _, pref) in sizes.items() if pref and j != index)
            base, end = self.pref_window
            choices = [n for n in range(20) if supported >> (n + 4) & 1
                       and base % ((1 << 20) << n) == 0 and ((1 << 20) << n) + others <= end - base]
            if not choices:
                raise UsbBridgeError(f"BAR{index} supports no size that fits the prefetchable window "
                                     f"{base:#x}..{end:#x} (sizes bitmap {supported:#x})")
            new = (ctrl & ~regs.REBAR_CTRL_SIZE_MASK) | max(choices) << regs.REBAR_CTRL_SIZE_SHIFT
            if new != ctrl:
                self.cfg_write(bus, cap + regs.REBAR_CTRL + 8 * i, new)

    def _find_ext_cap(self, bus: int, cap_id: int) -> int | None:
        offset, seen = regs.EXT_CAP_START, set()
        while offset and offset not in seen:
            seen.add(offset)
            header = self.cfg_read(bus, offset)
            if header in (0, 0xFFFFFFFF):
                return None
            if regs.ext_cap_id(header) == cap_id:
                return offset
            offset = regs.ext_cap_next(header)
        return None

    def assign_bars(self, bus: int, sizes: dict[int, tuple[int, bool, bool]]) -> dict[int, BarAssignment]:
        cursors = {True: self.pref_window[0], False: self.mem_window[0]}
        ends = {True: self.pref_window[1], False: self.mem_window[1]}
        bars = {}
        for index, (size, is64, pref) in sorted(sizes.items(), key=lambda kv: -kv[1][0]):
            kind = pref and is64     # a 32-bit prefetchable BAR cannot live above 4 GiB: non-prefetchable window
            address = -(-cursors[kind] // size) * size
            if address + size > ends[kind]:
                raise UsbBridgeError(f"BAR{index} ({size:#x} bytes) does not fit the "
                                     f"{'prefetchable' if kind else 'non-prefetchable'} window")
            cursors[kind] = address + size
            self.cfg_write(bus, regs.BAR0 + 4 * index, address & 0xFFFFFFFF)
            if is64:
                self.cfg_write(bus, regs.BAR0 + 4 * index + 4, address >> 32)
            bars[index] = BarAssignment(index, address, size, is64, pref)
        return bars

    # --- bridge windows ----------------------------------------------------------------------------------
    def open_windows(self, hierarchy: Hierarchy, bars) -> None:
        spans = {}
        for kind in (False, True):
            mine = [b for b in bars if (b.prefetchable and b.is64) == kind]
            if mine:
                g = regs.WINDOW_GRANULE
                spans[kind] = (min(b.address for b in mine) // g * g,
                               -(-max(b.address + b.size for b in mine) // g) * g - 1)
        for bus in hierarchy.bridge_buses:
            lo, hi = spans.get(False, (0xFFF00000, 0))     # base above limit: window closed
            self.cfg_write(bus, regs.MEMORY_BASE, (lo >> 16 & 0xFFF0) | (hi >> 16 & 0xFFF0) << 16)
            lo, hi = spans.get(True, (0xFFF00000, 0))
            self.cfg_write(bus, regs.PREF_MEMORY_BASE, (lo >> 16 & 0xFFF0) | (hi >> 16 & 0xFFF0) << 16)
            self.cfg_write(bus, regs.PREF_BASE_UPPER32, lo >> 32)
            self.cfg_write(bus, regs.PREF_LIMIT_UPPER32, hi >> 32)
