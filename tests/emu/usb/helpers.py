"""An enclosure with a small RAM-backed endpoint, and config helpers that act as the host would."""
import numpy as np

from gputwin.abi import pcie as regs
from gputwin.emu.pcie import MIB, BarSpec, PcieFunction
from gputwin.emu.usb import Asm2464Enclosure


class RamEndpoint(PcieFunction):
    """BAR0: 2 MiB prefetchable memory; BAR2: 4 KiB non-prefetchable registers that log each access."""

    def __init__(self):
        super().__init__("ram endpoint", 0x1234, 0xABCD, 0x120000, [
            BarSpec(0, 2 * MIB, name="mem"), BarSpec(2, 4096, is64=False, prefetchable=False, name="regs")])
        self.mem = np.zeros(2 * MIB, np.uint8)
        self.regs = np.zeros(1024, np.uint32)
        self.accesses = []

    def bar_read(self, bar, offset, size):
        if bar == 0:
            return self.mem[offset:offset + size].tobytes()
        self.accesses.append(("r", offset, size))
        return self.regs.view(np.uint8)[offset:offset + size].tobytes()

    def bar_write(self, bar, offset, data):
        target = self.mem if bar == 0 else self.regs.view(np.uint8)
        if bar:
            self.accesses.append(("w", offset, len(data)))
        target[offset:offset + len(data)] = np.frombuffer(bytes(data), np.uint8)


def chain(enclosure):
    """The bridges from the root down, and the endpoint."""
    fns = enclosure.topology.functions()
    return fns[:-1], fns[-1]


def number_buses(enclosure):
    """primary/secondary/subordinate on each bridge, written directly (as bring-up would over TLPs)."""
    bridges, _ = chain(enclosure)
    last = len(bridges)
    for bus, b in enumerate(bridges):
        b.config_write(regs.PRIMARY_BUS, bus | (bus + 1) << 8 | last << 16)
    enclosure.topology.invalidate()
    return last


def open_windows(enclosure, bar0=0x8_0000_0000, bar2=0x1000_0000):
    """Place the endpoint's BARs and open every bridge's windows over them, decoding enabled."""
    bridges, ep = chain(enclosure)
    ep.config_write(0x10, bar0 & 0xFFFFFFFF)
    ep.config_write(0x14, bar0 >> 32)
    ep.config_write(0x18, bar2)
    for b in bridges:
        b.config_write(regs.MEMORY_BASE, (bar2 >> 16) | (bar2 >> 16) << 16)
        last = bar0 + ep.bars[0].size - 1
        b.config_write(regs.PREF_MEMORY_BASE, (bar0 >> 16 & 0xFFF0) | (last >> 16 & 0xFFF0) << 16)
        b.config_write(regs.PREF_BASE_UPPER32, bar0 >> 32)
        b.config_write(regs.PREF_LIMIT_UPPER32, bar0 >> 32)
        b.config_write(regs.COMMAND, regs.COMMAND_MEM | regs.COMMAND_MASTER, 2)
    ep.config_write(regs.COMMAND, regs.COMMAND_MEM | regs.COMMAND_MASTER, 2)
    enclosure.topology.invalidate()


def ram_enclosure(**kw):
    ep = RamEndpoint()
    return Asm2464Enclosure(ep, **kw), ep
