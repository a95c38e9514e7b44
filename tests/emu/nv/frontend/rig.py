"""An emulated NV GPU with one channel whose GPFIFO, USERD and pushbuffers live in plain numpy memory."""
from __future__ import annotations

import numpy as np

from gputwin.abi import nv_methods as m
from gputwin.emu.nv.compute import ComputeEngine
from gputwin.emu.nv.copy import CopyEngine
from gputwin.emu.nv.gpu import NVGPU

GPFIFO_VA, PB_VA, MEM_VA = 0x10000, 0x20000, 0x100000
ENTRIES = 16


class Rig:
    def __init__(self, arch: str = "sm_90"):
        self.gpu = NVGPU(arch)
        self.gpu.mem.map(GPFIFO_VA, 8 * ENTRIES)
        self.pb = self.gpu.mem.map(PB_VA, 0x10000)
        self.mem = self.gpu.mem.map(MEM_VA, 0x100000)
        self.userd = np.zeros(0x200, np.uint8)
        self.ch = self.gpu.create_channel(GPFIFO_VA, ENTRIES, self.userd)
        p = self.gpu.profile
        self.ch.bind_object(p.compute_class, ComputeEngine(self.ch, p.compute_class))
        self.ch.bind_object(p.copy_class, CopyEngine(self.ch, p.copy_class))
        self.pb_used = 0
        self.put = 0

    def submit(self, dwords: list[int]) -> None:
        """Put dwords in the pushbuffer, add a GPFIFO entry, write GP_PUT, ring the doorbell."""
        va = PB_VA + self.pb_used
        self.gpu.mem.write(va, np.array(dwords, "<u4").tobytes())
        self.pb_used += 4 * len(dwords)
        e0, e1 = m.gp_entry(va, len(dwords))
        self.gpu.mem.write(GPFIFO_VA + 8 * (self.put % ENTRIES), np.array([e0, e1], "<u4").tobytes())
        self.put += 1
        self.userd.view(np.uint32)[m.USERD_GP_PUT // 4] = self.put % ENTRIES
        self.gpu.doorbell(self.ch.token)

    def u32(self, off: int) -> int:
        return int(self.mem[off:off + 4].view(np.uint32)[0])

    def u64(self, off: int) -> int:
        return int(self.mem[off:off + 8].view(np.uint64)[0])


def inc(subc: int, method: int, *data: int) -> list[int]:
    return [m.method_header(m.SEC_OP_INC_METHOD, subc, method, len(data)), *data]


def non_inc(subc: int, method: int, *data: int) -> list[int]:
    return [m.method_header(m.SEC_OP_NON_INC_METHOD, subc, method, len(data)), *data]


def one_inc(subc: int, method: int, *data: int) -> list[int]:
    return [m.method_header(m.SEC_OP_ONE_INC, subc, method, len(data)), *data]


def immd(subc: int, method: int, value: int) -> list[int]:
    return [m.method_header(m.SEC_OP_IMMD_DATA_METHOD, subc, method, value)]


def sem_release(va: int, payload: int, wide: bool = False, timestamp: bool = False) -> list[int]:
    flags = m.SEM_EXECUTE_OPERATION_RELEASE | (m.SEM_EXECUTE_PAYLOAD_SIZE_64BIT if wide else 0) | \
        (m.SEM_EXECUTE_RELEASE_TIMESTAMP if timestamp else 0)
    return inc(0, m.NVC56F_SEM_ADDR_LO, va & 0xFFFFFFFF, va >> 32, payload & 0xFFFFFFFF, payload >> 32, flags)


def sem_acquire(va: int, payload: int, op: int, wide: bool = False) -> list[int]:
    flags = op | (m.SEM_EXECUTE_PAYLOAD_SIZE_64BIT if wide else 0)
    return inc(0, m.NVC56F_SEM_ADDR_LO, va & 0xFFFFFFFF, va >> 32, payload & 0xFFFFFFFF, payload >> 32, flags)
