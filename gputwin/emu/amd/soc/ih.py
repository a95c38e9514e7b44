"""The emulated interrupt handler (OSSSYS IH ring 0): interrupt vectors written into a ring in VRAM.

The driver programs IH_RB_BASE(_HI) (MC address >> 8), IH_RB_CNTL (RB_SIZE = log2 of the ring's dwords,
RB_ENABLE, WPTR_WRITEBACK_ENABLE, MC_SPACE physical) and IH_RB_WPTR_ADDR_LO/HI (where the write pointer is
copied), and consumes entries by writing IH_RB_RPTR. `post` appends one 32-byte vector at the write pointer,
then writes the pointer back. A full ring drops the vector and sets RB_OVERFLOW in IH_RB_WPTR, as the
hardware does with WPTR_OVERFLOW_ENABLE; a disabled ring drops it silently (interrupts off)."""
from __future__ import annotations

import numpy as np

from gputwin.abi.amdgpu import ih as iv
from gputwin.abi.amdgpu import ip_bases, versions
from gputwin.emu.amd.soc.regfile import RegisterError


class InterruptHandler:
    def __init__(self, function):
        self.function = function
        self.wptr = 0          # byte offset of the next entry
        self.overflow = False
        self.posted: list[iv.InterruptVector] = []   # every vector written, for tests and stats
        os, bases, regs = versions.osssys(function.arch), ip_bases(function.arch), function.regs
        self._addr = {}
        for name in ("IH_RB_CNTL", "IH_RB_BASE", "IH_RB_BASE_HI", "IH_RB_RPTR", "IH_RB_WPTR_ADDR_LO",
                     "IH_RB_WPTR_ADDR_HI", "IH_DOORBELL_RPTR"):
            reg = getattr(os, f"reg{name}")
            self._addr[name] = reg.address(bases)
            regs.add(self._addr[name], reg.name, write=self._cntl_write if name == "IH_RB_CNTL" else None)
        regs.add(os.regIH_RB_WPTR.address(bases), os.regIH_RB_WPTR.name, read=self._wptr_read,
                 write=self._wptr_write)

    def reset(self) -> None:
        for addr in self._addr.values():
            self.function.regs.get(addr).value = 0
        self.wptr, self.overflow = 0, False

    def _value(self, name: str) -> int:
        return self.function.regs.value(self._addr[name])

    def _cntl_write(self, value: int) -> None:
        if iv.IH_RB_CNTL__RB_ENABLE.get(value) and iv.IH_RB_CNTL__MC_SPACE.get(value) != iv.MC_SPACE_PHYSICAL:
            raise RegisterError(f"{self.function.name}: IH_RB_CNTL {value:#x}: MC_SPACE "
                                f"{iv.IH_RB_CNTL__MC_SPACE.get(value)} is not modelled (4, physical, is)")
        if iv.IH_RB_CNTL__WPTR_OVERFLOW_CLEAR.get(value):
            self.overflow = False
        self.function.regs.get(self._addr["IH_RB_CNTL"]).value = value & ~iv.IH_RB_CNTL__WPTR_OVERFLOW_CLEAR.mask

    def _wptr_read(self) -> int:
        return iv.IH_RB_WPTR__OFFSET(self.wptr >> 2) | iv.IH_RB_WPTR__RB_OVERFLOW(int(self.overflow))

    def _wptr_write(self, value: int) -> None:
        self.wptr = iv.IH_RB_WPTR__OFFSET.get(value) << 2
        self.overflow = bool(iv.IH_RB_WPTR__RB_OVERFLOW.get(value))

    def ring_bytes(self) -> int:
        return 4 << iv.IH_RB_CNTL__RB_SIZE.get(self._value("IH_RB_CNTL"))

    def post(self, vector: iv.InterruptVector) -> None:
        cntl = self._value("IH_RB_CNTL")
        if not iv.IH_RB_CNTL__RB_ENABLE.get(cntl):
            return
        size = self.ring_bytes()
        rptr = (self._value("IH_RB_RPTR") & ~3) % size
        nxt = (self.wptr + iv.IV_BYTES) % size
        if nxt == rptr:
            self.overflow = True
            self._write_back(cntl)   # the copy shows RB_OVERFLOW too
            return
        base = (self._value("IH_RB_BASE") | self._value("IH_RB_BASE_HI") << 32) << 8
        ring = self.function.fb.vram_view(base, size, "IH ring")
        ring[self.wptr:self.wptr + iv.IV_BYTES] = np.frombuffer(vector.pack(), np.uint8)
        self.wptr = nxt
        self.posted.append(vector)
        self._write_back(cntl)

    def _write_back(self, cntl: int) -> None:
        if iv.IH_RB_CNTL__WPTR_WRITEBACK_ENABLE.get(cntl):
            where = self._value("IH_RB_WPTR_ADDR_LO") | self._value("IH_RB_WPTR_ADDR_HI") << 32
            copy = self.function.fb.vram_view(where & ~3, 4, "IH write-pointer copy")
            copy[:] = np.frombuffer(self._wptr_read().to_bytes(4, "little"), np.uint8)


def attach(function) -> InterruptHandler:
    return InterruptHandler(function)
