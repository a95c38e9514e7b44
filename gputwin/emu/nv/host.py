"""The host class of a channel (AMPERE/HOPPER_CHANNEL_GPFIFO_A methods below 0x100): semaphores
(SEM_ADDR/PAYLOAD/EXECUTE: release and acquire, 32- and 64-bit payloads, timestamps), NON_STALL_INTERRUPT,
WFI, MEM_OP barriers and NOP.

Release with RELEASE_TIMESTAMP writes the payload and, at +8, the 64-bit GPU time in ns (the four-word
semaphore layout). Acquires compare the memory value with the payload at the payload's width:
ACQUIRE (equal), ACQ_STRICT_GEQ (unsigned >=), ACQ_CIRC_GEQ (wrap-aware: (value - payload) taken as a
signed number >= 0), ACQ_AND (value & payload != 0), ACQ_NOR (~(value | payload) != 0). An acquire that
fails parks the channel at SEM_EXECUTE.

Racecheck across channels (gputwin.emu.sanitizer.queues): a release is a signal write, a satisfied acquire
joins the clock of the value it saw, and NOP data carrying gputwin's host-observed marker (the hardware
ignores NOP data; gputwin.abi.nv_sanitizer_report.host_observed_marker) is the host's wait.
"""
from __future__ import annotations

from gputwin.abi import nv_methods as m
from gputwin.abi.nv_sanitizer_report import HOST_OBSERVED, HOST_OBSERVED_DWORDS
from gputwin.emu.nv.channel import MethodError
from gputwin.emu.sanitizer.queues import host_observed, released, waited

_MEM_OP_D_ACCEPTED = {0x5: "MEMBAR", 0x9: "MMU_TLB_INVALIDATE", 0xA: "MMU_TLB_INVALIDATE_TARGETED",
                      0xE: "L2_SYSMEM_INVALIDATE", 0xD: "L2_PEERMEM_INVALIDATE", 0x10: "L2_FLUSH_DIRTY",
                      0x15: "L2_WAIT_FOR_SYS_PENDING_READS"}   # memory is coherent in the emulator: no-ops


def acquire_ok(op: int, value: int, payload: int, bits: int) -> bool:
    mask = (1 << bits) - 1
    value, payload = value & mask, payload & mask
    if op == m.SEM_EXECUTE_OPERATION_ACQUIRE:
        return value == payload
    if op == m.SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ:
        return value >= payload
    if op == m.SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ:
        return ((value - payload) & mask) < 1 << (bits - 1)
    if op == m.SEM_EXECUTE_OPERATION_ACQ_AND:
        return value & payload != 0
    if op == m.SEM_EXECUTE_OPERATION_ACQ_NOR:
        return ~(value | payload) & mask != 0
    raise ValueError(op)


def release(ch, address: int, payload: int, wide: bool, timestamp: bool, what: str) -> None:
    """Write a semaphore for channel `ch`: payload (4 or 8 bytes), and with `timestamp` the GPU time at +8."""
    gpu = ch.gpu
    align = 16 if timestamp else 8 if wide else 4
    if address % align:
        raise MethodError(f"{what}: semaphore address {address:#x} is not {align}-byte aligned", address=address)
    if wide:
        gpu.mem.write_u64(address, payload)
    else:
        gpu.mem.write_u32(address, payload)
    if timestamp:
        gpu.mem.write_u64(address + 8, gpu.timestamp_ns())
    released(ch, address, payload, 8 if wide else 4)


class Host:
    def __init__(self, channel):
        self.ch, self.gpu = channel, channel.gpu
        self.regs: dict[int, int] = {}
        self.upper_mask = m.UPPER_ADDRESS_MASK[self.gpu.profile.channel_class]
        self._marker: list[int] | None = None     # the host-observed marker's dwords so far (NOP data)

    def method(self, method: int, data: int, addr: int) -> bool:
        if method == m.NVC56F_NOP:
            self._nop(data)
            return True
        self._marker = None
        if method in (m.NVC56F_SEM_ADDR_LO, m.NVC56F_SEM_ADDR_HI, m.NVC56F_SEM_PAYLOAD_LO, m.NVC56F_SEM_PAYLOAD_HI,
                      m.NVC56F_MEM_OP_A, m.NVC56F_MEM_OP_B, m.NVC56F_MEM_OP_C):
            self.regs[method] = data
            return True
        if method == m.NVC56F_SEM_EXECUTE:
            return self._sem_execute(data, addr)
        if method == m.NVC56F_NON_STALL_INTERRUPT:
            from gputwin.emu.nv.gpu import GpuEvent
            self.gpu.report(GpuEvent("nonstall", self.ch))
            return True
        if method == m.NVC56F_WFI:
            return True
        if method == m.NVC56F_MEM_OP_D:
            op = data >> 27
            if op not in _MEM_OP_D_ACCEPTED:
                raise MethodError(f"MEM_OP_D operation {op:#x} is not modelled ({self.ch.describe(addr)})",
                                  queue=self.ch.name, address=addr)
            return True
        raise MethodError(f"host method {method:#x} is not modelled ({self.ch.describe(addr)})",
                          queue=self.ch.name, address=addr)

    def _nop(self, data: int) -> None:
        """NOP data does nothing on hardware; consecutive NOP dwords starting with gputwin's magic are the
        driver's host-observed marker (only under racecheck does anything read it)."""
        if self._marker is None:
            if data == HOST_OBSERVED:
                self._marker = [data]
            return
        self._marker.append(data)
        if len(self._marker) == HOST_OBSERVED_DWORDS:
            host_observed(self.ch, self._marker)
            self._marker = None

    def _sem_execute(self, data: int, addr: int) -> bool:
        op = data & 7
        address = (self.regs.get(m.NVC56F_SEM_ADDR_HI, 0) & self.upper_mask) << 32 | self.regs.get(m.NVC56F_SEM_ADDR_LO, 0) & ~3
        wide = bool(data & m.SEM_EXECUTE_PAYLOAD_SIZE_64BIT)
        payload = self.regs.get(m.NVC56F_SEM_PAYLOAD_LO, 0) | (self.regs.get(m.NVC56F_SEM_PAYLOAD_HI, 0) << 32 if wide else 0)
        if op == m.SEM_EXECUTE_OPERATION_RELEASE:
            release(self.ch, address, payload, wide, bool(data & m.SEM_EXECUTE_RELEASE_TIMESTAMP),
                    f"SEM_EXECUTE release on {self.ch.name}")
            return True
        if op in (m.SEM_EXECUTE_OPERATION_ACQUIRE, m.SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ,
                  m.SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ, m.SEM_EXECUTE_OPERATION_ACQ_AND, m.SEM_EXECUTE_OPERATION_ACQ_NOR):
            if address % (8 if wide else 4):
                raise MethodError(f"SEM_EXECUTE acquire at misaligned {address:#x}", queue=self.ch.name, address=addr)
            value = self.gpu.mem.read_u64(address) if wide else self.gpu.mem.read_u32(address)
            return waited(self.ch, address, acquire_ok(op, value, payload, 64 if wide else 32))
        raise MethodError(f"SEM_EXECUTE operation {op} ({'REDUCTION' if op == 6 else 'reserved'}) is not modelled "
                          f"({self.ch.describe(addr)})", queue=self.ch.name, address=addr)
