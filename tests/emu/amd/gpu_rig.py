"""A hand-built emulated GPU for front-end tests: a ring, pointer words and a data buffer mapped in the
GPU address space, and helpers that write packets and ring the doorbell."""
from __future__ import annotations

import numpy as np

from gputwin.abi import amd_pm4 as pm4
from gputwin.abi import amd_regs as regs
from gputwin.emu.amd.gpu import GPU

RING, PTRS, DATA, CODE = 0x10_0000, 0x20_0000, 0x30_0000, 0x40_0000
RING_BYTES, DATA_BYTES = 0x1000, 0x10000


class Rig:
    def __init__(self, kind: str = "compute", arch: str = "gfx1100", listen: bool = True):
        self.gpu = GPU(arch)
        self.events = []
        if listen:
            self.gpu.listener = self.events.append
        mem = self.gpu.mem
        mem.map(RING, RING_BYTES, name="ring")
        mem.map(PTRS, 0x1000, name="pointers")
        self.data = mem.map(DATA, DATA_BYTES, name="data")
        mem.map(CODE, 0x1000, name="code")
        create = self.gpu.create_compute_queue if kind == "compute" else self.gpu.create_sdma_queue
        self.q = create(RING, RING_BYTES, PTRS, PTRS + 8)
        self.unit = self.q.ptr_unit
        self.wptr = 0   # bytes

    def u32(self, offset: int = 0, n: int = 1) -> np.ndarray:
        return self.data[offset:offset + 4 * n].view(np.uint32)

    def submit(self, *dwords: int, ring: bool = True) -> None:
        for d in dwords:
            self.gpu.mem.write_u32(RING + self.wptr % RING_BYTES, d)
            self.wptr += 4
        if ring:
            self.doorbell()

    def doorbell(self) -> None:
        self.gpu.ring_doorbell(self.q, self.wptr // self.unit)

    @property
    def rptr(self) -> int:
        return self.gpu.mem.read_u64(PTRS) * self.unit


def set_sh(reg: int, *values: int) -> list[int]:
    return [pm4.PACKET3(pm4.PACKET3_SET_SH_REG, len(values)), regs.sh_reg_offset(reg), *values]


def release_mem(addr: int, value: int, *, data_sel=pm4.DATA_SEL_64, int_sel=pm4.INT_SEL_NONE, ctx=0) -> list[int]:
    return [pm4.PACKET3(pm4.PACKET3_RELEASE_MEM, 6),
            pm4.PACKET3_RELEASE_MEM_EVENT_TYPE(pm4.CACHE_FLUSH_AND_INV_TS_EVENT)
            | pm4.PACKET3_RELEASE_MEM_EVENT_INDEX(pm4.EVENT_INDEX_END_OF_PIPE),
            pm4.PACKET3_RELEASE_MEM_DATA_SEL(data_sel) | pm4.PACKET3_RELEASE_MEM_INT_SEL(int_sel),
            addr & 0xFFFFFFFF, addr >> 32, value & 0xFFFFFFFF, value >> 32, ctx]


def wait_reg_mem(addr: int, ref: int, func: int = 3, mask: int = 0xFFFFFFFF) -> list[int]:
    return [pm4.PACKET3(pm4.PACKET3_WAIT_REG_MEM, 5),
            pm4.WAIT_REG_MEM_FUNCTION(func) | pm4.WAIT_REG_MEM_MEM_SPACE(1),
            addr & 0xFFFFFFFF, addr >> 32, ref, mask, 4]


def write_data(addr: int, *values: int, one_addr: bool = False) -> list[int]:
    ctl = pm4.WRITE_DATA_DST_SEL(pm4.PACKET3_WRITE_DATA__DST_SEL__MEMORY) | pm4.WR_CONFIRM
    return [pm4.PACKET3(pm4.PACKET3_WRITE_DATA, 2 + len(values)), ctl | (pm4.WR_ONE_ADDR if one_addr else 0),
            addr & 0xFFFFFFFF, addr >> 32, *values]
