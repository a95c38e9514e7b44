"""The emulated SDMA engines' queue 0 ring registers (SDMA0_QUEUE0_RB_* in the GC register space; engine n
at SDMA_ENGINE_STRIDE * n).

Writing RB_CNTL with RB_ENABLE maps the ring: base RB_BASE(_HI) << 8, 2 ** RB_SIZE dwords, read pointer
written back at RB_RPTR_ADDR_LO/HI (RPTR_WRITEBACK_ENABLE), doorbell at DOORBELL_OFFSET when DOORBELL.ENABLE.
It becomes a queue of the shared SDMA engine (GPU.create_sdma_queue); its doorbell carries the write pointer
in bytes (without DOORBELL.ENABLE the engine would poll the write pointer: not modelled, RB_ENABLE fails
closed). Clearing RB_ENABLE unmaps it. Nothing runs unless the PSP loaded the SDMA microcode."""
from __future__ import annotations

from gputwin.abi.amdgpu import ip_bases, mqd, versions
from gputwin.emu.amd.soc.regfile import RegisterError

SDMA_FIRMWARE = "SDMA_UCODE_TH0"
_REGS = ("RB_CNTL", "RB_BASE", "RB_BASE_HI", "RB_RPTR", "RB_RPTR_HI", "RB_WPTR", "RB_WPTR_HI", "RB_RPTR_ADDR_HI",
         "RB_RPTR_ADDR_LO", "DOORBELL", "DOORBELL_OFFSET")


class SdmaEngine:
    def __init__(self, function, index: int):
        self.function, self.index = function, index
        gc, bases = versions.gc(function.arch), ip_bases(function.arch)
        self._addr = {}
        for name in _REGS:
            reg = getattr(gc, f"regSDMA0_QUEUE0_{name}")
            self._addr[name] = reg.address(bases) + gc.SDMA_ENGINE_STRIDE * index
            function.regs.add(self._addr[name], reg.name.replace("SDMA0", f"SDMA{index}"),
                              read=self._rptr_read if name == "RB_RPTR" else None,
                              write=self._cntl_write if name == "RB_CNTL" else None)
        self.queue = None
        self._doorbell: int | None = None

    def _value(self, name: str) -> int:
        return self.function.regs.value(self._addr[name])

    def _rptr_read(self) -> int:
        return self.queue.rptr & 0xFFFFFFFF if self.queue is not None else self._value("RB_RPTR")

    def _cntl_write(self, value: int) -> None:
        """RB_ENABLE reads back 1 only once the ring is mapped (a refused enable leaves it 0)."""
        reg = self.function.regs.get(self._addr["RB_CNTL"])
        self._unmap()
        reg.value = value & ~mqd.SDMA_QUEUE_RB_CNTL__RB_ENABLE.mask
        if mqd.SDMA_QUEUE_RB_CNTL__RB_ENABLE.get(value):
            self._map(value)
            reg.value = value

    def _map(self, cntl: int) -> None:
        f = self.function
        if SDMA_FIRMWARE not in f.firmware:
            raise RegisterError(f"{f.name}: SDMA{self.index} RB_ENABLE: the SDMA microcode ({SDMA_FIRMWARE}) was "
                                f"not loaded by the PSP, the engine does not run")
        if not mqd.SDMA_QUEUE_DOORBELL__ENABLE.get(self._value("DOORBELL")):
            raise RegisterError(f"{f.name}: SDMA{self.index} RB_ENABLE without DOORBELL.ENABLE: a ring the engine "
                                f"finds by polling its write pointer is not modelled")
        ring = (self._value("RB_BASE") | self._value("RB_BASE_HI") << 32) << 8
        size = 4 << mqd.SDMA_QUEUE_RB_CNTL__RB_SIZE.get(cntl)
        rptr = (self._value("RB_RPTR_ADDR_LO") | self._value("RB_RPTR_ADDR_HI") << 32) & ~3
        self.queue = f.gpu.create_sdma_queue(ring, size, rptr, rptr, name=f"sdma{self.index}.0")
        self._doorbell = 4 * mqd.SDMA_QUEUE_DOORBELL_OFFSET__OFFSET.get(self._value("DOORBELL_OFFSET"))
        f.doorbells.claim(self._doorbell, lambda value, q=self.queue: f.gpu.ring_doorbell(q, value))

    def _unmap(self) -> None:
        if self.queue is not None:
            self.function.gpu.destroy_queue(self.queue)
            self.queue = None
        if self._doorbell is not None:
            self.function.doorbells.release(self._doorbell)
            self._doorbell = None


class SdmaBlock:
    def __init__(self, function):
        self.engines = [SdmaEngine(function, i) for i in range(function.profile.num_sdma_engines)]

    def reset(self) -> None:
        for e in self.engines:
            e._unmap()
            for addr in e._addr.values():
                e.function.regs.get(addr).value = 0

    def doorbell_of(self, queue) -> int | None:
        return next((e._doorbell for e in self.engines if e.queue is queue), None)

    def ring_id(self, queue) -> int:
        """The IV ring_id of an SDMA queue: its engine's index."""
        return next(i for i, e in enumerate(self.engines) if e.queue is queue)


def attach(function) -> SdmaBlock:
    return SdmaBlock(function)
