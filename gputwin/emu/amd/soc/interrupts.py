"""What the engines report (GpuEvents of gputwin.emu.amd.gpu) as the chip reports it to a kernel-less driver:
an interrupt vector on the IH ring (CP end-of-pipe, SDMA trap, GFX-hub translation fault with its address,
SQ interrupt for wave traps and illegal instructions, CP bad-opcode for rejected packets), the GFX hub's
latched fault status, and gputwin's fault record.

The fault record (gputwin.abi.kfd_fault_record, NOT a register of the real chip) holds what amdgpu would
print to the kernel log: pc, wave, instruction, packet opcode and ring offset. It reads from a window at the
top of the MMIO BAR (FAULT_RECORD_OFFSET); the driver clears `valid` by writing its dword. On a real board
that window holds no record magic, and the driver reports what the interrupt vector and fault registers say.
The record's queue_id is the failing queue's doorbell (byte offset in BAR2), the identity the driver gave it.
A hang has no interrupt on the hardware (the driver's timeout finds it); here it leaves the record only."""
from __future__ import annotations

import ctypes

import numpy as np

from gputwin.abi.amdgpu import ih as iv
from gputwin.abi.kfd_fault_record import AM_MMIO_RECORD_OFFSET as FAULT_RECORD_OFFSET
from gputwin.abi.kfd_fault_record import gputwin_fault_record, record_of
from gputwin.errors import MemoryFault, PacketError

RECORD_BYTES = ctypes.sizeof(gputwin_fault_record)
_VALID_DWORD = gputwin_fault_record.valid.offset // 4


class InterruptRouter:
    def __init__(self, function):
        self.function = function
        self.blocks = function.blocks
        self.record = np.zeros(RECORD_BYTES, np.uint8)
        self.keeps_record = True   # False: a chip without gputwin's record, as real hardware is
        words = self.record.view("<u4")
        first = FAULT_RECORD_OFFSET // 4
        for i in range(RECORD_BYTES // 4):
            function.regs.add(first + i, f"gputwin_fault_record[{i}]", read=lambda i=i: int(words[i]),
                              write=self._clear if i == _VALID_DWORD else self._read_only)
        function.gpu.listener = self

    def reset(self) -> None:
        self.record[:] = 0

    def _clear(self, value: int) -> None:
        self.record[:] = 0

    def _read_only(self, value: int) -> None:
        pass   # only `valid` is the driver's to write

    def __call__(self, event) -> None:
        ih, queue = self.blocks["ih"], event.queue
        source = self.blocks["gfx"].ring_id(queue)
        if event.kind == "interrupt":
            if source is not None:
                ih.post(iv.InterruptVector(iv.SOC21_IH_CLIENTID_GRBM_CP, iv.GFX_11_0_0__SRCID__CP_EOP_INTERRUPT,
                                           source, src_data=(event.ctx_id, 0, 0, 0)))
            else:
                ih.post(iv.InterruptVector(iv.SOC21_IH_CLIENTID_GFX, iv.GFX_11_0_0__SRCID__SDMA_TRAP,
                                           self.blocks["sdma"].ring_id(queue), src_data=(event.ctx_id, 0, 0, 0)))
            return
        error = event.error
        if self.keeps_record and not self.record[:4].any():   # the first fault stays until the driver clears it
            r = record_of(error, self.function.arch)
            bell = self.blocks["gfx"].doorbell_of(queue)
            r.queue_id = bell if bell is not None else self.blocks["sdma"].doorbell_of(queue) or 0
            self.record[:] = np.frombuffer(bytes(r), np.uint8)
        if isinstance(error, MemoryFault):
            self.blocks["gmc"].record_fault(error.address, bool(error.write))
            ih.post(iv.InterruptVector(iv.SOC21_IH_CLIENTID_GFX, iv.UTCL2_1_0__SRCID__FAULT,
                                       src_data=iv.fault_src_data(error.address)))
        elif isinstance(error, PacketError):
            ih.post(iv.InterruptVector(iv.SOC21_IH_CLIENTID_GRBM_CP, iv.GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR,
                                       source or 0))
        elif event.kind == "error":
            ih.post(iv.InterruptVector(iv.SOC21_IH_CLIENTID_GRBM_CP, iv.GFX_11_0_0__SRCID__SQ_INTERRUPT_ID,
                                       source or 0))


def attach(function) -> InterruptRouter:
    return InterruptRouter(function)
