"""PM4 compute-queue packets (gfx10/11/12 forms): the AMD HCQ compute queue.

Packet layouts and opcodes are in gputwin.abi.amd_pm4 (nvd.h), register offsets in gputwin.abi.amd_regs
(gc_11_0_0). A launch programs the kernel's registers with SET_SH_REG and starts it with DISPATCH_DIRECT,
as the CP's compute pipe (MEC) expects on a non-AQL queue.
"""
from __future__ import annotations

from gputwin.abi import amd_pm4 as pm4
from gputwin.abi import amd_regs as regs
from gputwin.drivers.hcq import HWComputeQueue, TimelineSignal

WAIT_POLL_INTERVAL = 0x04   # CP poll interval for WAIT_REG_MEM (clocks x 16)


class AMDComputeQueue(HWComputeQueue):
    def __init__(self, event: tuple[int, int] | None = None):
        super().__init__()
        self.event = event   # (KFD event id, its mailbox address) a signal wakes; None: no interrupt

    def pkt3(self, op: int, *payload: int) -> AMDComputeQueue:
        self.q(pm4.PACKET3(op, len(payload) - 1), *payload)
        return self

    def set_sh_reg(self, reg: int, *values: int) -> AMDComputeQueue:
        return self.pkt3(pm4.PACKET3_SET_SH_REG, regs.sh_reg_offset(reg), *values)

    def acquire_mem(self) -> AMDComputeQueue:
        """Write back and invalidate the caches over the whole address range before a dispatch reads memory
        (the copy engine and the CPU write around them)."""
        gcr = (pm4.PACKET3_ACQUIRE_MEM_GCR_CNTL_GLI_INV(1) | pm4.PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_INV(1)
               | pm4.PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_WB(1) | pm4.PACKET3_ACQUIRE_MEM_GCR_CNTL_GLV_INV(1)
               | pm4.PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_INV(1) | pm4.PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV(1)
               | pm4.PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB(1) | pm4.PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_INV(1)
               | pm4.PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_WB(1))
        return self.pkt3(pm4.PACKET3_ACQUIRE_MEM, 0, 0xFFFFFFFF, 0xFFFFFF, 0, 0, 0x0A, gcr)

    def wait(self, signal: TimelineSignal, value: int) -> AMDComputeQueue:
        """Stall the queue until the signal's low dword is >= value."""
        return self.pkt3(pm4.PACKET3_WAIT_REG_MEM,
                         pm4.WAIT_REG_MEM_FUNCTION(pm4.PACKET3_WAIT_REG_MEM__FUNCTION__GREATER_THAN_OR_EQUAL_REFERENCE_VALUE)
                         | pm4.WAIT_REG_MEM_MEM_SPACE(pm4.PACKET3_WAIT_REG_MEM__MEM_SPACE__MEMORY_SPACE),
                         signal.va & 0xFFFFFFFC, signal.va >> 32, value, 0xFFFFFFFF, WAIT_POLL_INTERVAL)

    def release_mem(self, address: int, value: int, interrupt_ctxid: int | None = None) -> AMDComputeQueue:
        """At end of pipe (all prior waves done, caches written back) write the 64-bit value, then,
        if interrupt_ctxid is given, raise an interrupt with that context id."""
        event = (pm4.PACKET3_RELEASE_MEM_EVENT_TYPE(pm4.CACHE_FLUSH_AND_INV_TS_EVENT)
                 | pm4.PACKET3_RELEASE_MEM_EVENT_INDEX(pm4.EVENT_INDEX_END_OF_PIPE)
                 | pm4.PACKET3_RELEASE_MEM_GCR_GLV_INV | pm4.PACKET3_RELEASE_MEM_GCR_GL1_INV
                 | pm4.PACKET3_RELEASE_MEM_GCR_GL2_INV | pm4.PACKET3_RELEASE_MEM_GCR_GL2_WB
                 | pm4.PACKET3_RELEASE_MEM_GCR_GLM_INV | pm4.PACKET3_RELEASE_MEM_GCR_GLM_WB
                 | pm4.PACKET3_RELEASE_MEM_GCR_SEQ)
        int_sel = pm4.INT_SEL_NONE if interrupt_ctxid is None else pm4.INT_SEL_INTERRUPT_AFTER_WRITE_CONFIRM
        data = pm4.PACKET3_RELEASE_MEM_DATA_SEL(pm4.DATA_SEL_64) | pm4.PACKET3_RELEASE_MEM_INT_SEL(int_sel)
        return self.pkt3(pm4.PACKET3_RELEASE_MEM, event, data, address & 0xFFFFFFFF, address >> 32,
                         value & 0xFFFFFFFF, value >> 32, interrupt_ctxid or 0)

    def signal(self, signal: TimelineSignal, value: int) -> AMDComputeQueue:
        """Write the timeline value; then write the event's mailbox and interrupt, which wakes a sleeping
        host (the second write is ordered after the first: both are end-of-pipe)."""
        self.release_mem(signal.va, value)
        if self.event is not None:
            event_id, mailbox = self.event
            self.release_mem(mailbox, event_id, interrupt_ctxid=event_id)
        return self

    def dispatch(self, code_va: int, rsrc1: int, rsrc2: int, rsrc3: int, user_data: list[int],
                 grid: tuple[int, int, int], block: tuple[int, int, int], wave32: bool,
                 tmpring_size: int = 0, scratch_va: int = 0, group_segment: int | None = None) -> AMDComputeQueue:
        """Program the compute registers for one kernel and start grid[0]*grid[1]*grid[2] workgroups."""
        if code_va & 0xFF:
            raise ValueError(f"kernel code at {code_va:#x} is not 256-byte aligned (COMPUTE_PGM_LO holds addr >> 8)")
        if len(user_data) > regs.COMPUTE_USER_DATA_COUNT:
            raise ValueError(f"{len(user_data)} user SGPRs, the hardware has {regs.COMPUTE_USER_DATA_COUNT}")
        self.acquire_mem()
        self.set_sh_reg(regs.regCOMPUTE_PGM_LO, (code_va >> 8) & 0xFFFFFFFF, code_va >> 40)
        self.set_sh_reg(regs.regCOMPUTE_PGM_RSRC1, rsrc1, rsrc2)
        self.set_sh_reg(regs.regCOMPUTE_PGM_RSRC3, rsrc3)
        self.set_sh_reg(regs.regCOMPUTE_TMPRING_SIZE, tmpring_size)
        self.set_sh_reg(regs.regCOMPUTE_DISPATCH_SCRATCH_BASE_LO, (scratch_va >> 8) & 0xFFFFFFFF, scratch_va >> 40)
        self.set_sh_reg(regs.regCOMPUTE_RESTART_X, 0, 0, 0)
        if user_data:
            self.set_sh_reg(regs.regCOMPUTE_USER_DATA_0, *user_data)
        self.set_sh_reg(regs.regCOMPUTE_RESOURCE_LIMITS, 0)
        self.set_sh_reg(regs.regCOMPUTE_START_X, 0, 0, 0, *block)
        if group_segment is not None:   # a marker the CP skips: the exact LDS bytes, for gputwin's sanitizers
            self.pkt3(pm4.PACKET3_NOP, pm4.GPUTWIN_NOP_GROUP_SEGMENT, group_segment)
        initiator = (regs.COMPUTE_DISPATCH_INITIATOR__COMPUTE_SHADER_EN(1)
                     | regs.COMPUTE_DISPATCH_INITIATOR__FORCE_START_AT_000(1)
                     | regs.COMPUTE_DISPATCH_INITIATOR__CS_W32_EN(int(wave32)))
        self.pkt3(pm4.PACKET3_DISPATCH_DIRECT, *grid, initiator)
        return self.pkt3(pm4.PACKET3_EVENT_WRITE, pm4.EVENT_TYPE(pm4.CS_PARTIAL_FLUSH)
                         | pm4.EVENT_INDEX(pm4.PACKET3_EVENT_WRITE__EVENT_INDEX__CS_PARTIAL_FLUSH))

    def exec(self, program, kernargs_va: int, grid, block, lds: int = 0) -> AMDComputeQueue:
        return self.dispatch(**program.dispatch_args(kernargs_va, grid, block, lds))

    def announce_observed(self, signal, value: int) -> AMDComputeQueue:
        """A NOP the CP skips (gputwin.abi.amd_pm4.GPUTWIN_NOP_HOST_OBSERVED), first in the queue."""
        marker = AMDComputeQueue().pkt3(pm4.PACKET3_NOP, pm4.GPUTWIN_NOP_HOST_OBSERVED, signal.va & 0xFFFFFFFF,
                                        signal.va >> 32, value & 0xFFFFFFFF, value >> 32).cmds
        self.cmds[:0] = marker
        return self

    def submit(self, device) -> AMDComputeQueue:
        device.compute_ring.push(self.cmds)
        return self
