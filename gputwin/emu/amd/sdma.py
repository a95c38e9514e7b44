"""The SDMA engine (v6, gfx11 packet layouts from gputwin.abi.amd_sdma): linear copies, constant fills,
fences, traps, memory polls and timestamps. Pointers of an SDMA ring count bytes.

Anything not modelled raises PacketError naming the opcode, the queue and the ring offset.
"""
from __future__ import annotations

from gputwin.abi import amd_sdma as s
from gputwin.emu.amd.gpu import GpuEvent, Queue
from gputwin.emu.amd.memops import COMPARE
from gputwin.emu.memops import copy, fill
from gputwin.emu.sanitizer.queues import engine_op, host_observed, released, waited
from gputwin.errors import PacketError

_FILL_BYTES = {0: 1, 1: 2, 2: 4}   # CONSTANT_FILL fillsize -> bytes of the pattern taken from src data


class SdmaQueue(Queue):
    kind = "sdma"
    ptr_unit = 1

    opcode: int | None = None   # of the packet being processed, for PacketError

    def _bad(self, message: str) -> PacketError:
        return PacketError(f"{message} ({self.describe()})", queue=self.name, opcode=self.opcode,
                           ring_offset=self.ring_offset())

    def step(self) -> bool:
        if self.available() < 4:
            return False
        header = self.ring_dwords(self.rptr, 1)[0]
        op, sub_op = s.SDMA_PKT_HEADER_op.get(header), s.SDMA_PKT_HEADER_sub_op.get(header)
        self.opcode = op
        entry = _PACKETS.get((op, sub_op))
        if entry is None:
            raise self._bad(f"SDMA opcode {op} ({s.OP_NAMES.get(op, 'unknown')}) sub-op {sub_op} is not modelled")
        length, handler = entry
        n = length(self, header) if callable(length) else length
        if self.available() < 4 * n:
            return False
        done = handler(self, self.ring_dwords(self.rptr, n))
        self.parked = not done
        if done:
            self.rptr += 4 * n
            self.report_rptr()
            self.gpu.stats.packets += 1
        return done

    # --- packets (p[0] is the header) --------------------------------------------------------------
    def _nop_length(self, header: int) -> int:
        return 1 + s.SDMA_PKT_NOP_HEADER_count.get(header)

    def _nop(self, p):
        host_observed(self, p[1:])
        return True

    def _copy_linear(self, p):
        size = s.SDMA_PKT_COPY_LINEAR_COUNT_count.get(p[1]) + 1
        dst, src = p[5] | p[6] << 32, p[3] | p[4] << 32
        engine_op(self, f"the SDMA copy of {size} bytes from {src:#x} to {dst:#x}", ((src, size, False), (dst, size, True)))
        copy(self.gpu.mem, dst, src, size)
        return True

    def _constant_fill(self, p):
        width = _FILL_BYTES.get(s.SDMA_PKT_CONSTANT_FILL_HEADER_fillsize.get(p[0]))
        if width is None:
            raise self._bad(f"CONSTANT_FILL fillsize {s.SDMA_PKT_CONSTANT_FILL_HEADER_fillsize.get(p[0])}")
        size = s.SDMA_PKT_CONSTANT_FILL_COUNT_count.get(p[4]) + 1
        engine_op(self, f"the SDMA fill of {size} bytes at {p[1] | p[2] << 32:#x}", ((p[1] | p[2] << 32, size, True),))
        fill(self.gpu.mem, p[1] | p[2] << 32, p[3].to_bytes(4, "little")[:width], size)
        return True

    def _fence(self, p):
        self.gpu.mem.write_u32((p[1] | p[2] << 32) & ~3, p[3])
        released(self, (p[1] | p[2] << 32) & ~3, p[3], 4)
        return True

    def _trap(self, p):
        self.gpu.report(GpuEvent("interrupt", self, ctx_id=s.SDMA_PKT_TRAP_INT_CONTEXT_int_context.get(p[1])))
        return True

    def _poll_regmem(self, p):
        if not s.SDMA_PKT_POLL_REGMEM_HEADER_mem_poll.get(p[0]):
            raise self._bad("POLL_REGMEM of a register is not modelled")
        func = s.SDMA_PKT_POLL_REGMEM_HEADER_func.get(p[0])
        if func not in COMPARE:
            raise self._bad(f"POLL_REGMEM function {func} is reserved")
        value = self.gpu.mem.read_u32((p[1] | p[2] << 32) & ~3)
        return waited(self, (p[1] | p[2] << 32) & ~3, COMPARE[func](value & p[4], p[3]))

    def _timestamp(self, p):
        self.gpu.mem.write_u64((p[1] | p[2] << 32) & ~7, self.gpu.gpu_clock())
        return True

    def _write_length(self, header: int) -> int:
        count = s.SDMA_PKT_WRITE_UNTILED_DW_3_count.get(self.ring_dwords(self.rptr + 12, 1)[0]) \
            if self.available() >= 16 else 0
        return 4 + count + 1

    def _write_linear(self, p):
        self.gpu.mem.write((p[1] | p[2] << 32) & ~3, b"".join(v.to_bytes(4, "little") for v in p[4:]))
        return True

    def _gcr_req(self, p):
        return True   # cache control: emulated memory is coherent


_PACKETS = {
    (s.SDMA_OP_NOP, 0): (SdmaQueue._nop_length, SdmaQueue._nop),
    (s.SDMA_OP_COPY, s.SDMA_SUBOP_COPY_LINEAR): (s.SDMA_PKT_COPY_LINEAR_DWORDS, SdmaQueue._copy_linear),
    (s.SDMA_OP_CONST_FILL, 0): (s.SDMA_PKT_CONSTANT_FILL_DWORDS, SdmaQueue._constant_fill),
    (s.SDMA_OP_FENCE, 0): (s.SDMA_PKT_FENCE_DWORDS, SdmaQueue._fence),
    (s.SDMA_OP_TRAP, 0): (s.SDMA_PKT_TRAP_DWORDS, SdmaQueue._trap),
    (s.SDMA_OP_POLL_REGMEM, 0): (s.SDMA_PKT_POLL_REGMEM_DWORDS, SdmaQueue._poll_regmem),
    (s.SDMA_OP_TIMESTAMP, s.SDMA_SUBOP_TIMESTAMP_GET): (s.SDMA_PKT_TIMESTAMP_DWORDS, SdmaQueue._timestamp),
    (s.SDMA_OP_TIMESTAMP, s.SDMA_SUBOP_TIMESTAMP_GET_GLOBAL): (s.SDMA_PKT_TIMESTAMP_DWORDS, SdmaQueue._timestamp),
    (s.SDMA_OP_WRITE, s.SDMA_SUBOP_WRITE_LINEAR): (SdmaQueue._write_length, SdmaQueue._write_linear),
    (s.SDMA_OP_GCR_REQ, 0): (s.SDMA_PKT_GCR_REQ_DWORDS, SdmaQueue._gcr_req),
}
