"""The copy engine class (AMPERE_DMA_COPY_A / HOPPER_DMA_COPY_A): LAUNCH_DMA of 1D copies (LINE_LENGTH_IN
bytes) and pitch-linear 2D copies (MULTI_LINE_ENABLE: LINE_COUNT lines of LINE_LENGTH_IN bytes, PITCH_IN /
PITCH_OUT apart), virtual addresses, with an optional semaphore release after the copy (one word, or four
words with a timestamp; on Hopper two-word 64-bit payloads) and a non-blocking interrupt.

Block-linear layouts, physical addresses, semaphore reductions, blocking interrupts and remapping are not
modelled and raise MethodError naming the LAUNCH_DMA field.
"""
from __future__ import annotations

from gputwin.abi import nv_methods as m
from gputwin.abi.nv_classes import HOPPER_DMA_COPY_A
from gputwin.emu import watchdog
from gputwin.emu.memops import copy as mem_copy
from gputwin.emu.nv.channel import MethodError
from gputwin.emu.nv.host import release
from gputwin.emu.sanitizer.queues import engine_op
from gputwin.errors import GpuHang

_STATE = (m.COPY_SET_SEMAPHORE_A, m.COPY_SET_SEMAPHORE_B, m.COPY_SET_SEMAPHORE_PAYLOAD, m.COPY_OFFSET_IN_UPPER,
          m.COPY_OFFSET_IN_LOWER, m.COPY_OFFSET_OUT_UPPER, m.COPY_OFFSET_OUT_LOWER, m.COPY_PITCH_IN, m.COPY_PITCH_OUT,
          m.COPY_LINE_LENGTH_IN, m.COPY_LINE_COUNT)


class CopyEngine:
    def __init__(self, channel, class_id: int):
        self.ch, self.gpu, self.class_id = channel, channel.gpu, class_id
        self.hopper = class_id == HOPPER_DMA_COPY_A
        self.regs: dict[int, int] = {}

    def _bad(self, what: str, addr: int) -> MethodError:
        return MethodError(f"copy class {self.class_id:#x}: {what} ({self.ch.describe(addr)})",
                           queue=self.ch.name, address=addr)

    def method(self, method: int, data: int, addr: int) -> bool:
        if method in _STATE or (self.hopper and method == m.COPY_SET_SEMAPHORE_PAYLOAD_UPPER):
            self.regs[method] = data
        elif method == m.COPY_LAUNCH_DMA:
            self._launch(data, addr)
        elif method != m.COPY_NOP:
            raise self._bad(f"method {method:#x} is not modelled", addr)
        return True

    def _lines(self, lines: int, addr: int):
        """0..lines-1, under the watchdog (a runaway LINE_COUNT is a hang, not a host hang)."""
        wd = watchdog.current() or watchdog.Watchdog()
        for line in range(lines):
            yield line
            if line % 4096 == 4095 and wd.expired():
                raise GpuHang(f"copy class: LAUNCH_DMA of {lines} lines still copying after the watchdog "
                              f"({self.ch.describe(addr)})")

    def _addr(self, upper: int, lower: int) -> int:
        return (self.regs.get(upper, 0) & m.UPPER_ADDRESS_MASK[self.class_id]) << 32 | self.regs.get(lower, 0)

    def _launch(self, d: int, addr: int) -> None:
        transfer = d & m.LAUNCH_DMA_DATA_TRANSFER_TYPE_MASK
        if transfer == 3:
            raise self._bad("LAUNCH_DMA DATA_TRANSFER_TYPE 3 is reserved", addr)
        if d & (m.LAUNCH_DMA_SRC_TYPE_PHYSICAL | m.LAUNCH_DMA_DST_TYPE_PHYSICAL):
            raise self._bad("LAUNCH_DMA with physical SRC_TYPE/DST_TYPE is not modelled", addr)
        if d & m.LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE:
            raise self._bad("LAUNCH_DMA SEMAPHORE_REDUCTION is not modelled", addr)
        if d & (1 << 10) or d & (1 << 11):
            raise self._bad("LAUNCH_DMA REMAP_ENABLE / FORCE_RMWDISABLE is not modelled", addr)
        if transfer:
            if not (d & m.LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH and d & m.LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH):
                raise self._bad("LAUNCH_DMA with a BLOCKLINEAR SRC/DST_MEMORY_LAYOUT is not modelled", addr)
            src = self._addr(m.COPY_OFFSET_IN_UPPER, m.COPY_OFFSET_IN_LOWER)
            dst = self._addr(m.COPY_OFFSET_OUT_UPPER, m.COPY_OFFSET_OUT_LOWER)
            length = self.regs.get(m.COPY_LINE_LENGTH_IN, 0)
            lines = self.regs.get(m.COPY_LINE_COUNT, 1) if d & m.LAUNCH_DMA_MULTI_LINE_ENABLE else 1
            pitch_in, pitch_out = self.regs.get(m.COPY_PITCH_IN, 0), self.regs.get(m.COPY_PITCH_OUT, 0)
            if self.gpu.mem.queue_races is not None:   # racecheck across channels: the copy is one operation
                engine_op(self.ch, f"the copy engine's copy of {length * lines} bytes from {src:#x} to {dst:#x}",
                          ((a, length, write) for line in self._lines(lines if length else 0, addr)
                           for a, write in ((src + line * pitch_in, False), (dst + line * pitch_out, True))))
            for line in self._lines(lines if length else 0, addr):
                mem_copy(self.gpu.mem, dst + line * pitch_out, src + line * pitch_in, length)
            self.gpu.stats.copies += 1
            self.gpu.stats.copy_bytes += length * lines
        sem = (d >> m.LAUNCH_DMA_SEMAPHORE_TYPE_SHIFT) & 3
        if sem == 3:
            raise self._bad("LAUNCH_DMA SEMAPHORE_TYPE RELEASE_CONDITIONAL_INTR_SEMAPHORE is not modelled", addr)
        if sem:
            wide = bool(d & m.LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD)
            if wide and not self.hopper:
                raise self._bad("LAUNCH_DMA SEMAPHORE_PAYLOAD_SIZE (bit 27) does not exist on Ampere", addr)
            payload = self.regs.get(m.COPY_SET_SEMAPHORE_PAYLOAD, 0)
            if wide:
                payload |= self.regs.get(m.COPY_SET_SEMAPHORE_PAYLOAD_UPPER, 0) << 32
            release(self.ch, self._addr(m.COPY_SET_SEMAPHORE_A, m.COPY_SET_SEMAPHORE_B), payload, wide, sem == 2,
                    f"LAUNCH_DMA semaphore on {self.ch.name}")
        intr = (d >> m.LAUNCH_DMA_INTERRUPT_TYPE_SHIFT) & 3
        if intr == 2:
            from gputwin.emu.nv.gpu import GpuEvent
            self.gpu.report(GpuEvent("nonstall", self.ch))
        elif intr:
            raise self._bad(f"LAUNCH_DMA INTERRUPT_TYPE {intr} is not modelled", addr)
