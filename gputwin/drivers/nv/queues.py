"""Pushbuffers for the NV channels: the host semaphores every submission waits on and signals, copy-class
LAUNCH_DMA copies and compute-class QMD launches, encoded with the method headers of gputwin.abi.nv_methods.
Under racecheck a submission starts with gputwin's host-observed marker (NOP data; the hardware ignores it)."""
from __future__ import annotations

from gputwin.abi import nv_methods as m
from gputwin.abi.nv_sanitizer_report import host_observed_marker
from gputwin.drivers.hcq import HWComputeQueue, HWCopyQueue, TimelineSignal


def inc(subc: int, method: int, *data: int) -> list[int]:
    return [m.method_header(m.SEC_OP_INC_METHOD, subc, method, len(data)), *data]


def sem_acquire(signal: TimelineSignal, value: int) -> list[int]:
    """Wait until the 64-bit timeline is >= value (SEM_EXECUTE ACQ_STRICT_GEQ, 64-bit payload)."""
    return inc(0, m.NVC56F_SEM_ADDR_LO, signal.va & 0xFFFFFFFF, signal.va >> 32, value & 0xFFFFFFFF, value >> 32,
               m.SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ | m.SEM_EXECUTE_ACQUIRE_SWITCH_TSG | m.SEM_EXECUTE_PAYLOAD_SIZE_64BIT)


def sem_release(signal: TimelineSignal, value: int) -> list[int]:
    """Write the 64-bit timeline value once all earlier work is done (RELEASE_WFI)."""
    return inc(0, m.NVC56F_SEM_ADDR_LO, signal.va & 0xFFFFFFFF, signal.va >> 32, value & 0xFFFFFFFF, value >> 32,
               m.SEM_EXECUTE_OPERATION_RELEASE | m.SEM_EXECUTE_RELEASE_WFI | m.SEM_EXECUTE_PAYLOAD_SIZE_64BIT)


class HostMethods:
    """What both channels' queues share: the host class's semaphores, and the marker first."""

    def wait(self, signal, value):
        return self.q(*sem_acquire(signal, value))

    def signal(self, signal, value):
        return self.q(*sem_release(signal, value))

    def announce_observed(self, signal, value):
        self.cmds[:0] = host_observed_marker(signal.va, value)
        return self


class NVCopyQueue(HostMethods, HWCopyQueue):
    def copy(self, dst_va: int, src_va: int, size: int):
        s = m.SUBCHANNEL_COPY
        self.q(*inc(s, m.COPY_OFFSET_IN_UPPER, src_va >> 32, src_va & 0xFFFFFFFF, dst_va >> 32, dst_va & 0xFFFFFFFF))
        self.q(*inc(s, m.COPY_LINE_LENGTH_IN, size, 1))
        return self.q(*inc(s, m.COPY_LAUNCH_DMA, m.LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED | m.LAUNCH_DMA_FLUSH_ENABLE
                           | m.LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH | m.LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH))

    def submit(self, device):
        device.copy_channel.push(self.cmds)
        return self


class NVComputeQueue(HostMethods, HWComputeQueue):
    def launch(self, qmd_va: int):
        s = m.SUBCHANNEL_COMPUTE
        self.q(*inc(s, m.COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI, 0))
        return self.q(*inc(s, m.COMPUTE_SEND_PCAS_A, qmd_va >> 8),
                      *inc(s, m.COMPUTE_SEND_SIGNALING_PCAS2_B, m.PCAS2_B_ACTION_INVALIDATE_COPY_SCHEDULE))

    def submit(self, device):
        device.compute_channel.push(self.cmds)
        return self
