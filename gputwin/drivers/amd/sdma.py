"""SDMA (v6, gfx11) copy-queue packets: the AMD HCQ copy queue. Layouts in gputwin.abi.amd_sdma."""
from __future__ import annotations

from gputwin.abi import amd_pm4 as pm4
from gputwin.abi import amd_sdma as sdma
from gputwin.drivers.hcq import HWCopyQueue, TimelineSignal

POLL_INTERVAL, POLL_RETRY = 0x04, 0xFFF


class AMDCopyQueue(HWCopyQueue):
    def __init__(self, event: tuple[int, int] | None = None):
        super().__init__()
        self.event = event   # (KFD event id, its mailbox address) a signal wakes; None: no interrupt

    def copy(self, dst_va: int, src_va: int, size: int) -> AMDCopyQueue:
        """COPY_LINEAR in pieces of at most 2^30 bytes (the COUNT field holds bytes - 1)."""
        for off in range(0, size, sdma.SDMA_COPY_LINEAR_MAX_BYTES):
            n = min(size - off, sdma.SDMA_COPY_LINEAR_MAX_BYTES)
            s, d = src_va + off, dst_va + off
            self.q(sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_COPY, sdma.SDMA_SUBOP_COPY_LINEAR),
                   sdma.SDMA_PKT_COPY_LINEAR_COUNT_count(n - 1), 0,
                   s & 0xFFFFFFFF, s >> 32, d & 0xFFFFFFFF, d >> 32)
        return self

    def wait(self, signal: TimelineSignal, value: int) -> AMDCopyQueue:
        """POLL_REGMEM until the signal's low dword is >= value."""
        return self.q(sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_POLL_REGMEM)
                      | sdma.SDMA_PKT_POLL_REGMEM_HEADER_func(
                          pm4.PACKET3_WAIT_REG_MEM__FUNCTION__GREATER_THAN_OR_EQUAL_REFERENCE_VALUE)
                      | sdma.SDMA_PKT_POLL_REGMEM_HEADER_mem_poll(1),
                      signal.va & 0xFFFFFFFC, signal.va >> 32, value, 0xFFFFFFFF,
                      sdma.SDMA_PKT_POLL_REGMEM_DW5_interval(POLL_INTERVAL)
                      | sdma.SDMA_PKT_POLL_REGMEM_DW5_retry_count(POLL_RETRY))

    def signal(self, signal: TimelineSignal, value: int) -> AMDCopyQueue:
        """FENCE writes the value's low dword (the high dword of a timeline stays 0 below 2^32); then a
        FENCE to the event's mailbox and a TRAP whose context id names the KFD event wake a sleeping host."""
        if value >> 32:
            raise ValueError(f"SDMA fences write 32 bits; timeline value {value:#x} is too large")
        self.fence(signal.va, value)
        if self.event is not None:
            event_id, mailbox = self.event
            self.fence(mailbox, event_id)
            self.q(sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_TRAP), sdma.SDMA_PKT_TRAP_INT_CONTEXT_int_context(event_id))
        return self

    def fence(self, address: int, value: int) -> AMDCopyQueue:
        return self.q(sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_FENCE) | sdma.SDMA_PKT_FENCE_HEADER_mtype(3),
                      address & 0xFFFFFFFC, address >> 32, value)

    def announce_observed(self, signal: TimelineSignal, value: int) -> AMDCopyQueue:
        """An SDMA NOP whose count covers the marker's five dwords (the engine skips them), first."""
        self.cmds[:0] = [sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_NOP) | sdma.SDMA_PKT_NOP_HEADER_count(5),
                         pm4.GPUTWIN_NOP_HOST_OBSERVED, signal.va & 0xFFFFFFFF, signal.va >> 32,
                         value & 0xFFFFFFFF, value >> 32]
        return self

    def submit(self, device) -> AMDCopyQueue:
        device.copy_ring.push(self.cmds)
        return self
