"""The PM4 command processor of a compute queue (MEC): fetches type-3 packets from the ring (and from
indirect buffers), keeps the SH / UCONFIG register state, and turns DISPATCH_DIRECT into a run of the
shader emulator. Packet layouts are in gputwin.abi.amd_pm4 (one source for the driver and this model).

Anything not modelled raises PacketError naming the opcode, the queue and the ring offset.
"""
from __future__ import annotations

import numpy as np

from gputwin.abi import amd_pm4 as pm4
from gputwin.abi import amd_regs as regs
from gputwin.emu.amd.cp_dispatch import build_dispatch
from gputwin.emu.amd.gpu import Queue
from gputwin.emu.amd.memops import COMPARE
from gputwin.emu.sanitizer.queues import host_observed, released, waited
from gputwin.errors import PacketError

SH_WINDOW = pm4.PACKET3_SET_SH_REG_END - pm4.PACKET3_SET_SH_REG_START
UCONFIG_WINDOW = pm4.PACKET3_SET_UCONFIG_REG_END - pm4.PACKET3_SET_UCONFIG_REG_START
MAX_IB_DEPTH = 4

# EVENT_WRITE events that only order or flush caches: dispatches here finish before the next packet and
# emulated memory is coherent, so they have nothing left to do.
_ORDERING_EVENTS = {pm4.CS_PARTIAL_FLUSH, pm4.CACHE_FLUSH, pm4.CACHE_FLUSH_AND_INV_EVENT}
_EOP_EVENTS = {pm4.CACHE_FLUSH_TS, pm4.CACHE_FLUSH_AND_INV_TS_EVENT, pm4.BOTTOM_OF_PIPE_TS, pm4.CS_DONE}


class ComputeQueue(Queue):
    kind = "compute"
    ptr_unit = 4   # PM4 doorbells and read pointers count dwords

    def __init__(self, *args):
        super().__init__(*args)
        self.sh = np.zeros(SH_WINDOW, np.uint32)
        self.uconfig = np.zeros(UCONFIG_WINDOW, np.uint32)
        self.ibs: list[list[int]] = []   # [address of next dword, end address] per active indirect buffer
        self.opcode: int | None = None   # of the packet being processed, for PacketError
        self.group_segment: int | None = None   # from a GPUTWIN_NOP_GROUP_SEGMENT marker, for the next dispatch

    # --- fetch -------------------------------------------------------------------------------------
    def _where(self) -> str:
        if self.ibs:
            return f"compute queue {self.name} in indirect buffer at {self.ibs[-1][0]:#x}"
        return self.describe()

    def _bad(self, message: str) -> PacketError:
        """The error for the current packet: its opcode, and its ring offset (or address in an IB)."""
        where = dict(address=self.ibs[-1][0]) if self.ibs else dict(ring_offset=self.ring_offset())
        return PacketError(f"{message} ({self._where()})", queue=self.name, opcode=self.opcode, **where)

    def _fetch(self) -> list[int] | None:
        """The next whole packet (header + payload) or None if the ring does not hold one yet."""
        if self.ibs:
            addr, end = self.ibs[-1]
            header = self.gpu.mem.read_u32(addr)
            n = self._packet_dwords(header)
            if addr + 4 * n > end:
                raise PacketError(f"PM4 packet {header:#010x} runs past the end of its indirect buffer",
                                  address=addr, queue=self.name, opcode=pm4.CP_PACKET3_GET_OPCODE(header))
            return self.gpu.mem.view(addr, 4 * n).view("<u4").tolist()
        if self.available() < 4:
            return None
        header = self.ring_dwords(self.rptr, 1)[0]
        n = self._packet_dwords(header)
        if self.available() < 4 * n:
            return None
        return self.ring_dwords(self.rptr, n)

    def _packet_dwords(self, header: int) -> int:
        kind = pm4.CP_PACKET_GET_TYPE(header)
        if header == pm4.CP_PACKET2 or kind == pm4.PACKET_TYPE2:
            return 1
        if kind != pm4.PACKET_TYPE3:
            raise self._bad(f"PM4 type-{kind} packet {header:#010x} is not modelled")
        return pm4.CP_PACKET_GET_COUNT(header) + 2

    def _consume(self, n: int) -> None:
        if self.ibs:
            self.ibs[-1][0] += 4 * n
            while self.ibs and self.ibs[-1][0] >= self.ibs[-1][1]:
                self.ibs.pop()
        else:
            self.rptr += 4 * n
            self.report_rptr()

    def step(self) -> bool:
        self.opcode = None
        packet = self._fetch()
        if packet is None:
            return False
        header = packet[0]
        if len(packet) == 1:            # type-2 filler
            self._consume(1)
            return True
        op = self.opcode = pm4.CP_PACKET3_GET_OPCODE(header)
        handler = _HANDLERS.get(op)
        if handler is None:
            name = pm4.OPCODE_NAMES.get(op, "unknown")
            raise self._bad(f"PM4 opcode {op:#04x} ({name}) is not modelled")
        done = handler(self, packet[1:])
        self.parked = not done
        if not done:
            return False
        self.gpu.stats.packets += 1
        if op != pm4.PACKET3_INDIRECT_BUFFER:   # INDIRECT_BUFFER moves the fetch position itself
            self._consume(len(packet))
        return True

    # --- packets -----------------------------------------------------------------------------------
    def _nop(self, p):
        if len(p) == 2 and p[0] == pm4.GPUTWIN_NOP_GROUP_SEGMENT:
            self.group_segment = p[1]
        host_observed(self, p)
        return True

    def _set_reg(self, file: np.ndarray, what: str, p):
        if not p:
            raise self._bad(f"{what} without a register offset")
        start, values = p[0] & 0xFFFF, p[1:]
        if start + len(values) > file.size:
            raise self._bad(f"{what} of {len(values)} registers at offset {start:#x} leaves the "
                              f"{what} window")
        file[start:start + len(values)] = values
        return True

    def _set_sh_reg(self, p):
        return self._set_reg(self.sh, "SET_SH_REG", p)

    def _set_uconfig_reg(self, p):
        return self._set_reg(self.uconfig, "SET_UCONFIG_REG", p)

    def sh_reg(self, reg: int) -> int:
        """Value of a COMPUTE_* register (regX offset, BASE_IDX 0) as last set by SET_SH_REG."""
        return int(self.sh[regs.sh_reg_offset(reg)])

    def _dispatch_direct(self, p):
        if len(p) != 4:
            raise self._bad(f"DISPATCH_DIRECT with {len(p)} payload dwords, expected 4")
        dispatch = build_dispatch(self, p[0], p[1], p[2], p[3])
        if dispatch is not None:
            from gputwin.emu.amd.dispatch import run_dispatch
            self.gpu.stats.dispatches += 1
            races = self.gpu.mem.queue_races
            if races is not None:
                races.begin(self.name, f"the kernel at {dispatch.code_address:#x}")
            try:
                counters = run_dispatch(self.gpu.mem, dispatch, arch=self.gpu.arch)
            finally:
                if races is not None:
                    races.end()
            stats = self.gpu.stats
            stats.wave_insts += counters.wave_insts
            stats.lane_ops += counters.lane_ops
            stats.waves += counters.waves
        return True

    def _acquire_mem(self, p):
        if len(p) not in (6, pm4.ACQUIRE_MEM_PAYLOAD_DWORDS):   # gfx9 form has no GCR_CNTL dword
            raise self._bad(f"ACQUIRE_MEM with {len(p)} payload dwords")
        return True   # cache invalidation: emulated memory is coherent

    def _release_mem(self, p):
        if len(p) != 7:
            raise self._bad(f"RELEASE_MEM with {len(p)} payload dwords, expected 7")
        event = pm4.PACKET3_RELEASE_MEM_EVENT_TYPE.get(p[0])
        if event not in _EOP_EVENTS:
            raise self._bad(f"RELEASE_MEM event type {event:#x} is not modelled")
        data_sel, int_sel = pm4.PACKET3_RELEASE_MEM_DATA_SEL.get(p[1]), pm4.PACKET3_RELEASE_MEM_INT_SEL.get(p[1])
        addr = p[2] | p[3] << 32
        mem = self.gpu.mem
        if data_sel == pm4.DATA_SEL_LOW_32:
            mem.write_u32(addr & ~3, p[4])
            released(self, addr & ~3, p[4], 4)
        elif data_sel == pm4.DATA_SEL_64:
            mem.write_u64(addr & ~7, p[4] | p[5] << 32)
            released(self, addr & ~7, p[4] | p[5] << 32, 8)
        elif data_sel in (pm4.DATA_SEL_GPU_COUNTER_64, pm4.DATA_SEL_SYSTEM_COUNTER_64):
            mem.write_u64(addr & ~7, self.gpu.gpu_clock())
        elif data_sel != pm4.DATA_SEL_DISCARD:
            raise self._bad(f"RELEASE_MEM DATA_SEL {data_sel} is not modelled")
        if int_sel > pm4.INT_SEL_INTERRUPT_AFTER_WRITE_CONFIRM_3:
            raise self._bad(f"RELEASE_MEM INT_SEL {int_sel} is not modelled")
        if int_sel != pm4.INT_SEL_NONE:
            from gputwin.emu.amd.gpu import GpuEvent
            self.gpu.report(GpuEvent("interrupt", self, ctx_id=p[6]))
        return True

    def _wait_reg_mem(self, p):
        if len(p) != 6:
            raise self._bad(f"WAIT_REG_MEM with {len(p)} payload dwords, expected 6")
        if pm4.WAIT_REG_MEM_MEM_SPACE.get(p[0]) != pm4.PACKET3_WAIT_REG_MEM__MEM_SPACE__MEMORY_SPACE:
            raise self._bad("WAIT_REG_MEM on a register is not modelled")
        if pm4.WAIT_REG_MEM_OPERATION.get(p[0]) != pm4.PACKET3_WAIT_REG_MEM__OPERATION__WAIT_REG_MEM:
            raise self._bad(f"WAIT_REG_MEM operation {pm4.WAIT_REG_MEM_OPERATION.get(p[0])} is not modelled")
        value = self.gpu.mem.read_u32((p[1] | p[2] << 32) & ~3)
        func = pm4.WAIT_REG_MEM_FUNCTION.get(p[0])
        if func not in COMPARE:
            raise self._bad(f"WAIT_REG_MEM function {func} is reserved")
        return waited(self, (p[1] | p[2] << 32) & ~3, COMPARE[func](value & p[4], p[3]))

    def _write_data(self, p):
        if len(p) < 4:
            raise self._bad(f"WRITE_DATA with {len(p)} payload dwords")
        dst = pm4.WRITE_DATA_DST_SEL.get(p[0])
        if dst not in (pm4.PACKET3_WRITE_DATA__DST_SEL__MEMORY_SYNC, pm4.PACKET3_WRITE_DATA__DST_SEL__TC_L2,
                       pm4.PACKET3_WRITE_DATA__DST_SEL__MEMORY):
            raise self._bad(f"WRITE_DATA DST_SEL {dst} is not modelled")
        addr, data = (p[1] | p[2] << 32) & ~3, p[3:]
        if p[0] & pm4.WR_ONE_ADDR:
            self.gpu.mem.write_u32(addr, data[-1])
            released(self, addr, data[-1], 4)
        else:
            self.gpu.mem.write(addr, np.asarray(data, "<u4"))
            for i, v in enumerate(data):
                released(self, addr + 4 * i, v, 4)
        return True

    def _copy_data(self, p):
        if len(p) != 5:
            raise self._bad(f"COPY_DATA with {len(p)} payload dwords, expected 5")
        c = pm4.PACKET3_COPY_DATA__SRC_SEL, pm4.PACKET3_COPY_DATA__DST_SEL, pm4.PACKET3_COPY_DATA__COUNT_SEL
        src_sel, dst_sel, wide = c[0].get(p[0]), c[1].get(p[0]), c[2].get(p[0])
        mem, size = self.gpu.mem, 8 if wide else 4
        if src_sel in (pm4.PACKET3_COPY_DATA__SRC_SEL__MEMORY, pm4.PACKET3_COPY_DATA__SRC_SEL__TC_L2):
            value = int.from_bytes(mem.read((p[1] | p[2] << 32) & ~(size - 1), size), "little")
        elif src_sel == pm4.PACKET3_COPY_DATA__SRC_SEL__IMMEDIATE_DATA:
            value = p[1] | (p[2] << 32 if wide else 0)
        elif src_sel == pm4.PACKET3_COPY_DATA__SRC_SEL__GPU_CLOCK_COUNT:
            value = self.gpu.gpu_clock() & ((1 << 8 * size) - 1)
        else:
            raise self._bad(f"COPY_DATA SRC_SEL {src_sel} is not modelled")
        if dst_sel not in (pm4.PACKET3_COPY_DATA__DST_SEL__TC_L2, pm4.PACKET3_COPY_DATA__DST_SEL__MEMORY):
            raise self._bad(f"COPY_DATA DST_SEL {dst_sel} is not modelled")
        mem.write((p[3] | p[4] << 32) & ~(size - 1), value.to_bytes(size, "little"))
        return True

    def _indirect_buffer(self, p):
        if len(p) != 3:
            raise self._bad(f"INDIRECT_BUFFER with {len(p)} payload dwords, expected 3")
        if not pm4.PACKET3_INDIRECT_BUFFER__VALID.get(p[2]):
            raise self._bad("INDIRECT_BUFFER without VALID is not modelled")
        addr = (p[0] & ~3) | (p[1] & 0xFFFF) << 32
        size = pm4.PACKET3_INDIRECT_BUFFER__IB_SIZE.get(p[2])
        if pm4.PACKET3_INDIRECT_BUFFER__CHAIN.get(p[2]) and self.ibs:
            self.ibs.pop()               # a chained IB replaces the IB that named it
        else:
            self._consume(4)             # past the INDIRECT_BUFFER packet itself
        if len(self.ibs) >= MAX_IB_DEPTH:
            raise self._bad(f"INDIRECT_BUFFER nesting deeper than {MAX_IB_DEPTH}")
        if size:
            self.gpu.mem.view(addr, 4 * size)   # fault now if the IB is not mapped
            self.ibs.append([addr, addr + 4 * size])
        return True

    def _event_write(self, p):
        event = pm4.EVENT_TYPE.get(p[0]) if p else None
        if event not in _ORDERING_EVENTS:
            raise self._bad(f"EVENT_WRITE event type {event} is not modelled")
        return True


_HANDLERS = {
    pm4.PACKET3_NOP: ComputeQueue._nop,
    pm4.PACKET3_SET_SH_REG: ComputeQueue._set_sh_reg,
    pm4.PACKET3_SET_UCONFIG_REG: ComputeQueue._set_uconfig_reg,
    pm4.PACKET3_DISPATCH_DIRECT: ComputeQueue._dispatch_direct,
    pm4.PACKET3_ACQUIRE_MEM: ComputeQueue._acquire_mem,
    pm4.PACKET3_RELEASE_MEM: ComputeQueue._release_mem,
    pm4.PACKET3_WAIT_REG_MEM: ComputeQueue._wait_reg_mem,
    pm4.PACKET3_WRITE_DATA: ComputeQueue._write_data,
    pm4.PACKET3_COPY_DATA: ComputeQueue._copy_data,
    pm4.PACKET3_INDIRECT_BUFFER: ComputeQueue._indirect_buffer,
    pm4.PACKET3_EVENT_WRITE: ComputeQueue._event_write,
}
