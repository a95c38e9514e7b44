"""The AM driver's interrupt handler ring (ih_v6_0.c / ih_v7_0.c ring 0): a ring of 32-byte interrupt
vectors in VRAM that the chip's IH writes at MC addresses, with its write pointer copied to a dword next to it.
`poll()` returns the vectors since the last poll and hands the space back through IH_RB_RPTR."""
from __future__ import annotations

import numpy as np

from gputwin.abi.amdgpu import ih as iv

IH_RING_BYTES = 64 << 10


class IhRing:
    def __init__(self, mmio, vram, regs, ring_at: int, wptr_at: int, mc_base: int):
        """`ring_at` / `wptr_at`: VRAM offsets of the ring (IH_RING_BYTES) and the write-pointer copy."""
        self.mmio, self.vram, self.regs, self.ring_at, self.wptr_at = mmio, vram, regs, ring_at, wptr_at
        self.rptr = 0
        ring_mc, wptr_mc = mc_base + ring_at, mc_base + wptr_at
        vram.write(wptr_at, bytes(4))
        mmio.write(regs.regIH_RB_BASE, (ring_mc >> 8) & 0xFFFFFFFF)
        mmio.write(regs.regIH_RB_BASE_HI, ring_mc >> 40)
        mmio.write(regs.regIH_RB_WPTR_ADDR_LO, wptr_mc & 0xFFFFFFFF)
        mmio.write(regs.regIH_RB_WPTR_ADDR_HI, wptr_mc >> 32)
        mmio.write(regs.regIH_RB_RPTR, 0)
        mmio.write(regs.regIH_RB_WPTR, 0)
        self.cntl = iv.IH_RB_CNTL__RB_ENABLE(1) | iv.IH_RB_CNTL__RB_SIZE((IH_RING_BYTES // 4).bit_length() - 1) \
            | iv.IH_RB_CNTL__WPTR_WRITEBACK_ENABLE(1) | iv.IH_RB_CNTL__WPTR_OVERFLOW_ENABLE(1) \
            | iv.IH_RB_CNTL__ENABLE_INTR(1) | iv.IH_RB_CNTL__MC_SPACE(iv.MC_SPACE_PHYSICAL)
        mmio.write(regs.regIH_RB_CNTL, self.cntl)
        self.overflows = 0   # how often vectors were lost to a full ring

    def poll(self) -> list[iv.InterruptVector]:
        """The vectors since the last poll. A ring that overflowed lost vectors: the overflow is counted and
        cleared (WPTR_OVERFLOW_CLEAR, as ih_v6_0_get_wptr does) so the IH writes again."""
        wptr = int.from_bytes(self.vram.read(self.wptr_at, 4), "little")
        if iv.IH_RB_WPTR__RB_OVERFLOW.get(wptr):
            self.overflows += 1
            self.mmio.write(self.regs.regIH_RB_CNTL, self.cntl | iv.IH_RB_CNTL__WPTR_OVERFLOW_CLEAR(1))
        end = iv.IH_RB_WPTR__OFFSET.get(wptr) << 2
        if end == self.rptr:
            return []
        if end > self.rptr:
            raw = self.vram.read(self.ring_at + self.rptr, end - self.rptr)
        else:   # wrapped
            raw = self.vram.read(self.ring_at + self.rptr, IH_RING_BYTES - self.rptr) + self.vram.read(self.ring_at, end)
        self.rptr = end
        self.mmio.write(self.regs.regIH_RB_RPTR, end)
        words = np.frombuffer(raw, np.uint8)
        return [iv.InterruptVector.unpack(words[i:i + iv.IV_BYTES].tobytes()) for i in range(0, len(raw), iv.IV_BYTES)]
