"""The PCIe hierarchy behind an ASM2464 enclosure, and how requests from the bridge's TLP engine reach
a function in it.

What a real enclosure with a Navi card shows (tinygrad asm2464pd-firmware app/README.md scan):
  bus 0  00.0  ASMedia port (1b21:2461)           the port the TLP engine sits on
  bus 1  00.0  ASMedia downstream port (1b21:2461)
  bus 2  00.0  GPU card's switch, upstream port (1002:1478)
  bus 3  00.0  GPU card's switch, downstream port (1002:1479)
  bus 4  00.0  the GPU (e.g. 1002:744c)
Every port resets with bus numbers 0, so nothing below bus 0 answers until software numbers the buses.

Routing rules (PCIe Base 4.0 sections 2.2.8 and 7.5.1.3): a type-0 configuration request addresses the
root bus (the ASMedia port answers whatever the device number: the scan sees it 32 times); a type-1
request is claimed by the bridge whose secondary bus equals the target bus (it becomes type 0 on that
link, where only device 0 exists) or passed down by the bridge whose secondary..subordinate range holds
the bus. A memory request travels down only through bridges whose window holds it and ends at the BAR
that decodes it. Whatever nothing claims completes with Unsupported Request."""
from __future__ import annotations

from dataclasses import dataclass

from gputwin.emu.pcie import PcieBridge, PcieFunction


@dataclass(frozen=True)
class Route:
    """A bus-address range [start, end) that reaches one BAR of one function."""
    start: int
    end: int
    function: PcieFunction
    bar: int
    bar_base: int


class Topology:
    def __init__(self, root: PcieFunction):
        self.root = root          # the function on bus 0 (any device number), normally a PcieBridge
        self._routes: list[Route] | None = None

    def invalidate(self) -> None:
        """Forget the memory routes: call after any configuration write (bus numbers, windows, BARs)."""
        self._routes = None

    # --- configuration requests --------------------------------------------------------------------
    def config_target(self, bus: int, dev: int, fn: int, type1: bool) -> PcieFunction | None:
        if not type1:
            return self.root if fn == 0 else None
        bridge = self.root
        while isinstance(bridge, PcieBridge):
            if bus == bridge.secondary_bus and bridge.secondary_bus:
                return bridge.downstream.get((dev, fn))
            if not bridge.secondary_bus < bus <= bridge.subordinate_bus:
                return None
            bridge = next((f for f in bridge.downstream.values() if isinstance(f, PcieBridge)
                           and f.secondary_bus <= bus <= f.subordinate_bus), None)
        return None

    # --- memory requests ---------------------------------------------------------------------------
    def routes(self) -> list[Route]:
        if self._routes is None:
            self._routes = []
            self._collect(self.root, [(0, 1 << 64)])
        return self._routes

    def _collect(self, function: PcieFunction, windows: list[tuple[int, int]]) -> None:
        if isinstance(function, PcieBridge):
            inner = [(max(a, c), min(b, d)) for a, b in windows for c, d in function.windows()]
            inner = [(a, b) for a, b in inner if a < b]
            for child in function.downstream.values():
                if inner:
                    self._collect(child, inner)
            return
        if not function.memory_enabled():
            return
        for bar in function.bars.values():
            base = function.bar_address(bar.index)
            if not base:
                continue
            for lo, hi in windows:
                start, end = max(lo, base), min(hi, base + bar.size)
                if start < end:
                    self._routes.append(Route(start, end, function, bar.index, base))

    def route(self, address: int, size: int) -> Route | None:
        for r in self.routes():
            if r.start <= address and address + size <= r.end:
                return r
        return None

    def functions(self) -> list[PcieFunction]:
        """Every function in the hierarchy, root first."""
        found, todo = [], [self.root]
        while todo:
            f = todo.pop(0)
            found.append(f)
            if isinstance(f, PcieBridge):
                todo.extend(f.downstream.values())
        return found
