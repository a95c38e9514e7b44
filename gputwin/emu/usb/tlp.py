"""The ASM2464's PCIe request engine: XDATA registers at 0xB210..0xB296 that build one TLP, send it on
the link and hold its completion (register names from the asm2464pd-firmware reverse engineering,
src/include/registers.h; the protocol its custom firmware drives, handmade/src/main.c + pcie_pio.h).

  B210 fmt/type       B217 first-DW byte enables     B218..B21B address[31:0], MSB first
  B21C..B21F address[63:32], MSB first (the firmware loads B21C from the address's top byte and carries
             from B21B into B21F)
  B220..B223 data, B220 is the MSB                    B22A..B22B completion status[15:13], byte count[11:0]
  B254 trigger (0x0F sends)    B284 bit 0: the completion carried data (CplD)
  B296 status: bit 0 error (no completion: link down), bit 1 done; writing 1s clears them, bit 2 is a kick strobe

Modelled TLPs: MRd/MWr with 3- and 4-DW headers and CfgRd/CfgWr types 0 and 1, one dword each with
contiguous byte enables. Anything else raises NotModelled naming it. Completion statuses are real: a
request nothing claims completes with UR, a configuration request to a function that is not ready can
complete with CRS, a function's PcieError becomes its status. A posted write that nothing claims is
dropped by real hardware with no trace the requester can see; the model raises PcieError instead.

`stream_read`/`stream_write` are what the firmware's PIO loops do (one 1-DW TLP per dword, address
incremented by 4): done in bursts per BAR for speed. Per PCI, writes to a prefetchable BAR may be merged
and its reads have no side effects, so a burst there is one access; a non-prefetchable BAR (registers)
gets one access per dword, as the TLPs would."""
from __future__ import annotations

import struct
from collections import deque

from gputwin.abi import pcie as regs
from gputwin.emu.pcie import Completion, NotModelled, PcieError
from gputwin.emu.usb.topology import Topology

FMT_TYPE, TLP_CTRL, TLP_LENGTH, BYTE_EN = 0xB210, 0xB213, 0xB216, 0xB217
ADDR, ADDR_HIGH, DATA = 0xB218, 0xB21C, 0xB220
CPL_HDR_HI, CPL_HDR_LO, TRIGGER, COMPL_STATUS, STATUS = 0xB22A, 0xB22B, 0xB254, 0xB284, 0xB296
STATUS_ERROR, STATUS_COMPLETE = 0x01, 0x02
TRIGGER_EXEC = 0x0F
COMPL_HAS_DATA = 0x01
REGS_START, REGS_END = 0xB200, 0xB300
_WRITABLE = {FMT_TYPE, TLP_CTRL, TLP_LENGTH, BYTE_EN, *range(ADDR, DATA + 4), TRIGGER, STATUS}
_READABLE = _WRITABLE | {CPL_HDR_HI, CPL_HDR_LO, COMPL_STATUS}
_KNOWN_TLPS = {regs.TLP_MRD32, regs.TLP_MRD64, regs.TLP_MWR32, regs.TLP_MWR64,
               regs.TLP_CFGRD0, regs.TLP_CFGRD1, regs.TLP_CFGWR0, regs.TLP_CFGWR1}
# fault kinds the mock can inject into the next non-posted TLPs
NO_COMPLETION, ENGINE_TIMEOUT = "no-completion", "engine-timeout"


class TlpEngine:
    def __init__(self, topology: Topology, link):
        self.topology, self.link = topology, link
        self.regs = bytearray(REGS_END - REGS_START)
        self._faults: deque = deque()
        self.sent = 0   # TLPs put on the link (a count benchmarks and tests read)

    # --- XDATA side ------------------------------------------------------------------------------
    def read(self, addr: int, size: int) -> bytes:
        for a in range(addr, addr + size):
            if a not in _READABLE:
                raise NotModelled(f"ASM2464 XDATA register {a:#06x} (PCIe request engine) is not modelled")
        return bytes(self.regs[addr - REGS_START:addr - REGS_START + size])

    def write(self, addr: int, data: bytes) -> None:
        for i, value in enumerate(data):
            a = addr + i
            if a not in _WRITABLE:
                raise NotModelled(f"ASM2464 XDATA register {a:#06x} (PCIe request engine) is not modelled")
            if a == STATUS:
                self.regs[STATUS - REGS_START] &= ~value & (STATUS_ERROR | STATUS_COMPLETE)
            elif a == TRIGGER:
                if value != TRIGGER_EXEC:
                    raise NotModelled(f"ASM2464 PCIe trigger value {value:#04x} (only 0x0F sends a TLP)")
                self.execute()
            else:
                self.regs[a - REGS_START] = value

    # --- the register file as numbers ------------------------------------------------------------
    def _reg(self, addr: int) -> int:
        return self.regs[addr - REGS_START]

    @property
    def address(self) -> int:
        lo, = struct.unpack_from(">I", self.regs, ADDR - REGS_START)
        hi, = struct.unpack_from(">I", self.regs, ADDR_HIGH - REGS_START)
        return hi << 32 | lo

    @address.setter
    def address(self, value: int) -> None:
        struct.pack_into(">I", self.regs, ADDR - REGS_START, value & 0xFFFFFFFF)
        struct.pack_into(">I", self.regs, ADDR_HIGH - REGS_START, value >> 32 & 0xFFFFFFFF)

    @property
    def data(self) -> int:
        return struct.unpack_from(">I", self.regs, DATA - REGS_START)[0]

    @data.setter
    def data(self, value: int) -> None:
        struct.pack_into(">I", self.regs, DATA - REGS_START, value & 0xFFFFFFFF)

    def _set_status(self, bits: int) -> None:
        self.regs[STATUS - REGS_START] |= bits

    def _complete(self, status: Completion, byte_count: int, with_data: bool) -> None:
        self.regs[CPL_HDR_HI - REGS_START] = int(status) << 5 | (byte_count >> 8 & 0xF)
        self.regs[CPL_HDR_LO - REGS_START] = byte_count & 0xFF
        self.regs[COMPL_STATUS - REGS_START] = COMPL_HAS_DATA if with_data else 0
        self._set_status(STATUS_COMPLETE)

    # --- fault injection (the mock's hook; see gputwin/mock/usb.py) ---------------------------------
    def inject(self, fault, count: int = 1, kind: str | None = None) -> None:
        """The next `count` non-posted TLPs (of `kind` "config"/"memory", or any) complete with `fault`:
        a Completion status (no effect on the target), NO_COMPLETION (status error bit, as with the link
        down) or ENGINE_TIMEOUT (neither status bit ever sets)."""
        for _ in range(count):
            self._faults.append((fault, kind))

    def _take_fault(self, kind: str):
        if self._faults and self._faults[0][1] in (None, kind):
            return self._faults.popleft()[0]
        return None

    # --- one TLP ---------------------------------------------------------------------------------
    def execute(self) -> None:
        fmt, be = self._reg(FMT_TYPE), self._reg(BYTE_EN)
        if fmt not in _KNOWN_TLPS:
            raise NotModelled(f"ASM2464 TLP fmt/type {fmt:#04x} is not modelled (MRd/MWr/CfgRd/CfgWr only)")
        offset, size = _byte_enables(be, fmt)
        address, is_write, is_config = self.address, bool(fmt & regs.FMT_HAS_DATA), fmt & 0x1F != 0
        if not fmt & regs.FMT_4DW:
            address &= 0xFFFFFFFF   # a 3-DW header carries 32 address bits
        if not self.link.up:
            self._set_status(STATUS_ERROR)
            return
        self.sent += 1
        posted = is_write and not is_config
        fault = None if posted or not self._faults else self._take_fault("config" if is_config else "memory")
        if fault == NO_COMPLETION:
            self._set_status(STATUS_ERROR)
        elif fault == ENGINE_TIMEOUT:
            pass
        elif fault is not None:
            self._complete(Completion(fault), 4 if is_config else size, False)
        elif is_config:
            self._config(fmt, address, offset, size, is_write)
        elif is_write:
            route = self._route(address + offset, size, "posted write")
            route.function.bar_write(route.bar, address + offset - route.bar_base,
                                     (self.data >> 8 * offset).to_bytes(4, "little")[:size])
            self._set_status(STATUS_COMPLETE)
        else:
            self._memory_read(address, offset, size)

    def _config(self, fmt: int, address: int, offset: int, size: int, is_write: bool) -> None:
        bus, dev, fn, reg = address >> 24 & 0xFF, address >> 19 & 0x1F, address >> 16 & 0x7, address & 0xFFC
        target = self.topology.config_target(bus, dev, fn, type1=bool(fmt & 1))
        if target is None:
            self._complete(Completion.UR, 4, False)
            return
        try:
            if is_write:
                target.config_write(reg + offset, (self.data >> 8 * offset) & ((1 << 8 * size) - 1), size)
                self.topology.invalidate()
            else:
                self.data = target.config_read(reg, 4)
        except PcieError as e:
            self._complete(e.status, 4, False)
            return
        self._complete(Completion.SC, 4, not is_write)

    def _memory_read(self, address: int, offset: int, size: int) -> None:
        route = self.topology.route(address + offset, size)
        if route is None:
            self._complete(Completion.UR, size, False)
            return
        try:
            data = _exactly(route, address + offset - route.bar_base, size)
        except PcieError as e:
            self._complete(e.status, size, False)
            return
        self.data = int.from_bytes(data, "little") << 8 * offset
        self._complete(Completion.SC, size, True)

    # --- streams of 1-DW TLPs (the firmware's PIO loops) ---------------------------------------------
    def stream_read(self, nbytes: int) -> bytes:
        """nbytes (a multiple of 4) from the address in B218..B21F onward; the address advances."""
        out, address = [], self.address
        for start, size, route in self._segments(address, nbytes, "streamed read"):
            offset = start - route.bar_base
            if route.function.bars[route.bar].prefetchable:
                out.append(_exactly(route, offset, size))
            else:
                out.extend(_exactly(route, offset + i, 4) for i in range(0, size, 4))
        self._after_stream(address + nbytes, nbytes)
        return b"".join(out)

    def stream_write(self, data: bytes) -> None:
        address, view = self.address, memoryview(data)
        pos = 0
        for start, size, route in self._segments(address, len(data), "streamed write"):
            offset, chunk = start - route.bar_base, view[pos:pos + size]
            if route.function.bars[route.bar].prefetchable:
                route.function.bar_write(route.bar, offset, chunk)
            else:
                for i in range(0, size, 4):
                    route.function.bar_write(route.bar, offset + i, chunk[i:i + 4])
            pos += size
        self._after_stream(address + len(data), len(data))
        if data:
            self.data = int.from_bytes(data[-4:], "little")

    def _segments(self, address: int, nbytes: int, what: str):
        if not self.link.up:
            raise PcieError(f"ASM2464 {what} of {nbytes} bytes at {address:#x} with the PCIe link down",
                            Completion.UR)
        end = address + nbytes
        while address < end:
            route = self._route(address, 4, what)
            size = min(end, route.end) - address
            yield address, size, route
            address += size

    def _route(self, address: int, size: int, what: str):
        route = self.topology.route(address, size)
        if route is None:
            # the firmware does not check streamed or posted completions; a real bridge would return stale
            # data or drop the write silently, the model names the access instead
            raise PcieError(f"ASM2464 {what} at {address:#x} reaches no BAR", Completion.UR)
        return route

    def _after_stream(self, next_address: int, nbytes: int) -> None:
        self.address = next_address
        self.sent += nbytes // 4
        self._set_status(STATUS_COMPLETE)


def _exactly(route, offset: int, size: int) -> bytes:
    """A BAR read that must return `size` bytes: a function answering short is a model bug, named here."""
    data = route.function.bar_read(route.bar, offset, size)
    if len(data) != size:
        raise NotModelled(f"{route.function.name}: BAR{route.bar} read of {size} bytes at {offset:#x} returned "
                          f"{len(data)} bytes (nothing backs that part of the BAR)")
    return data


def _lanes(be: int) -> tuple[int, int] | None:
    offset = (be & -be).bit_length() - 1
    lanes = be >> offset if be else 0
    return None if not lanes or lanes & (lanes + 1) else (offset, lanes.bit_length())


_BYTE_ENABLES = {be: _lanes(be) for be in range(16) if _lanes(be)}


def _byte_enables(be: int, fmt: int) -> tuple[int, int]:
    """(offset, size) of a contiguous, non-empty first-DW byte enable."""
    lanes = _BYTE_ENABLES.get(be)
    if lanes is None:
        raise NotModelled(f"ASM2464 TLP {fmt:#04x} with byte enables {be:#06b} (only contiguous, non-empty)")
    return lanes
