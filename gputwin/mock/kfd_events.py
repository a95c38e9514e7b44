"""Mock KFD events: CREATE/DESTROY/SET/RESET_EVENT, WAIT_EVENTS, and what the GPU's interrupts, faults and
hangs do to them (kfd_events.c semantics).

Signal events own a 64-bit slot in the event page (event_id == slot index). An end-of-pipe interrupt
(RELEASE_MEM INT_SEL, SDMA TRAP) carries a context id: the event with that id is signaled if its slot was
written (no longer UNSIGNALED_EVENT_SLOT); otherwise every signal event whose slot was written is. The slot
is re-armed when the event is signaled. Memory faults signal the process's memory-exception events with the
fault address; hangs, illegal instructions, traps and rejected packets signal hw-exception events (and memory
events, ErrorType KFD_MEM_ERR_GPU_HANG), as the reset of the faulting queue does. What amdgpu would print to
the kernel log about the fault also goes, as numbers, into the waiter's gputwin_fault_record when its event
data's kfd_event_data_ext points at one (gputwin.abi.kfd_fault_record; real KFD leaves that pointer alone).

WAIT_EVENTS first lets every GPU retry its parked queues (memory may have changed), then checks. The mock is
synchronous and deterministic: work happens only when the driver rings a doorbell or waits, so sleeping could
not change the outcome; an unsatisfied wait returns KFD_IOC_WAIT_RESULT_TIMEOUT at once, whatever its timeout
(a driver that waits in a loop just loops).
"""
from __future__ import annotations

import ctypes
import logging
import errno
from dataclasses import dataclass, field

from gputwin.abi import kfd_ioctl as k
from gputwin.abi.kfd_fault_record import GPUTWIN_FAULT_MAGIC, GPUTWIN_FAULT_VERSION, gputwin_fault_record, record_of
from gputwin.emu.amd.gpu import GpuEvent
from gputwin.mock.kfd_state import (KFD_MMAP_TYPE_EVENTS, UNSIGNALED_EVENT_SLOT, KfdProcess, SharedMemory, fail)

EVENT_PAGE_BYTES = k.KFD_SIGNAL_EVENT_LIMIT * 8


class EventPage:
    """The signal-event slots: KFD's own memory, or a buffer the process allocated and named by handle."""

    def __init__(self, addr: int, size: int, memory: SharedMemory | None = None, allocation=None):
        self.addr, self.size, self.memory, self.allocation = addr, size, memory, allocation

    @property
    def slots(self) -> int:
        return self.size // 8

    def slot(self, index: int) -> ctypes.c_uint64:
        return ctypes.c_uint64.from_address(self.addr + 8 * index)


@dataclass
class Event:
    event_id: int
    type: int
    auto_reset: bool
    signaled: bool = False
    age: int = 1
    data: k.kfd_event_data = field(default_factory=k.kfd_event_data)
    record: bytes | None = None     # the gputwin_fault_record of the fault that signalled it

    def set(self) -> None:
        self.signaled = True
        self.age += 1


def create_event(kfd, p: KfdProcess, a: k.kfd_ioctl_create_event_args) -> None:
    what = "AMDKFD_IOC_CREATE_EVENT"
    if a.event_type > k.KFD_IOC_EVENT_MEMORY:
        raise fail(errno.EINVAL, f"{what}: event_type {a.event_type}")
    if a.event_page_offset:
        if p.event_page is not None:
            raise fail(errno.EINVAL, f"{what}: the event page is already set")
        alloc = p.allocations.get(a.event_page_offset)
        if alloc is None or not alloc.flags & k.KFD_IOC_ALLOC_MEM_FLAGS_GTT:
            # KFD kmaps the page by pinning it in GTT: userptr, VRAM, doorbell or MMIO buffers cannot be it
            raise fail(errno.EINVAL, f"{what}: event_page_offset {a.event_page_offset:#x} is no GTT buffer handle")
        p.event_page = EventPage(alloc.host_addr, min(alloc.size, EVENT_PAGE_BYTES), allocation=alloc)
    if a.event_type in (k.KFD_IOC_EVENT_SIGNAL, k.KFD_IOC_EVENT_DEBUG_EVENT):
        if p.event_page is None:
            memory = SharedMemory(EVENT_PAGE_BYTES, "kfd-events")
            p.event_page = EventPage(memory.addr, EVENT_PAGE_BYTES, memory=memory)
        event_id = next((i for i in range(p.event_page.slots) if i not in p.events), None)
        if event_id is None:
            raise fail(errno.ENOSPC, f"{what}: all {p.event_page.slots} signal event slots are in use")
        p.event_page.slot(event_id).value = UNSIGNALED_EVENT_SLOT
        a.event_page_offset = KFD_MMAP_TYPE_EVENTS
        a.event_trigger_data = a.event_slot_index = event_id
    else:
        event_id = p.next_other_event
        p.next_other_event += 1
        a.event_trigger_data = a.event_slot_index = 0
    p.events[event_id] = Event(event_id, a.event_type, bool(a.auto_reset))
    a.event_id = event_id


def _event(p: KfdProcess, event_id: int, what: str) -> Event:
    ev = p.events.get(event_id)
    if ev is None:
        raise fail(errno.EINVAL, f"{what}: no event {event_id}")
    return ev


def destroy_event(kfd, p: KfdProcess, a: k.kfd_ioctl_destroy_event_args) -> None:
    _event(p, a.event_id, "AMDKFD_IOC_DESTROY_EVENT")
    del p.events[a.event_id]


def set_event(kfd, p: KfdProcess, a: k.kfd_ioctl_set_event_args) -> None:
    ev = _event(p, a.event_id, "AMDKFD_IOC_SET_EVENT")
    if ev.type not in (k.KFD_IOC_EVENT_SIGNAL, k.KFD_IOC_EVENT_DEBUG_EVENT):
        raise fail(errno.EINVAL, f"AMDKFD_IOC_SET_EVENT: event {a.event_id} cannot be signaled by the CPU")
    ev.set()


def reset_event(kfd, p: KfdProcess, a: k.kfd_ioctl_reset_event_args) -> None:
    _event(p, a.event_id, "AMDKFD_IOC_RESET_EVENT").signaled = False


def wait_events(kfd, p: KfdProcess, a: k.kfd_ioctl_wait_events_args) -> None:
    what = "AMDKFD_IOC_WAIT_EVENTS"
    size = ctypes.sizeof(k.kfd_event_data)
    if a.num_events > k.KFD_SIGNAL_EVENT_LIMIT:
        raise fail(errno.EINVAL, f"{what}: {a.num_events} events")
    raw = kfd.kernel.copy_from_user(a.events_ptr, size * a.num_events)
    datas = [k.kfd_event_data.from_buffer_copy(raw, i * size) for i in range(a.num_events)]
    events = [_event(p, d.event_id, what) for d in datas]
    kfd.run_gpus()
    fired = [ev.signaled or (ev.type == k.KFD_IOC_EVENT_SIGNAL and d.signal_event_data.last_event_age not in
                             (0, ev.age)) for ev, d in zip(events, datas)]
    done = all(fired) if a.wait_for_all else (any(fired) or not events)
    a.wait_result = k.KFD_IOC_WAIT_RESULT_COMPLETE if done else k.KFD_IOC_WAIT_RESULT_TIMEOUT
    out = bytearray(raw)
    for i, (ev, d, hit) in enumerate(zip(events, datas, fired)):
        if ev.type in (k.KFD_IOC_EVENT_MEMORY, k.KFD_IOC_EVENT_HW_EXCEPTION) and hit:
            d._u = ev.data._u
            if d.kfd_event_data_ext and ev.record is not None:
                _write_record(kfd, d.kfd_event_data_ext, ev.record)
        if ev.type == k.KFD_IOC_EVENT_SIGNAL:
            d.signal_event_data.last_event_age = ev.age
        if done and hit and ev.auto_reset:
            ev.signaled = False
        out[i * size:(i + 1) * size] = bytes(d)
    kfd.kernel.copy_to_user(a.events_ptr, bytes(out))


dmesg = logging.getLogger("gputwin.mock.kfd")


# --- what the GPU reports --------------------------------------------------------------------------
def on_gpu_event(kfd, node, event: GpuEvent) -> None:
    p = kfd.queue_owner.get(event.queue)
    if p is None:
        return
    if event.kind == "interrupt":
        _interrupt(p, event.ctx_id)
        return
    kfd.faults.append((node.gpu_id, event))
    # amdgpu's dmesg line: events only say "fault" or "reset", the log says which instruction or packet
    dmesg.error("gpu_id %#x: %s on queue %s: %s", node.gpu_id, event.kind, event.queue.name, event.error)
    record = fault_record(p, node, event)
    for ev in p.events.values():
        if ev.type in (k.KFD_IOC_EVENT_MEMORY, k.KFD_IOC_EVENT_HW_EXCEPTION):
            ev.record = record
        if event.kind == "memory_fault" and ev.type == k.KFD_IOC_EVENT_MEMORY:
            m = ev.data.memory_exception_data
            readonly = bool(event.error.write) and node.gpu.mem.find(event.error.address) is not None
            m.failure.NotPresent, m.failure.ReadOnly = int(not readonly), int(readonly)
            m.failure.NoExecute = m.failure.imprecise = 0
            m.va, m.gpu_id, m.ErrorType = event.error.address, node.gpu_id, k.KFD_MEM_ERR_NO_RAS
            ev.set()
        elif event.kind != "memory_fault" and ev.type == k.KFD_IOC_EVENT_HW_EXCEPTION:
            h = ev.data.hw_exception_data
            h.reset_type, h.reset_cause = k.KFD_HW_EXCEPTION_PER_ENGINE_RESET, k.KFD_HW_EXCEPTION_GPU_HANG
            h.memory_lost, h.gpu_id = 0, node.gpu_id
            ev.set()
        elif event.kind != "memory_fault" and ev.type == k.KFD_IOC_EVENT_MEMORY:
            m = ev.data.memory_exception_data
            ctypes.memset(ctypes.addressof(m), 0, ctypes.sizeof(m))
            m.gpu_id, m.ErrorType = node.gpu_id, k.KFD_MEM_ERR_GPU_HANG
            ev.set()


def fault_record(p: KfdProcess, node, event: GpuEvent) -> bytes:
    """The gputwin_fault_record (gputwin.abi.kfd_fault_record) for a fault, hang or rejected packet."""
    r = record_of(event.error, node.gpu.arch)
    r.gpu_id = node.gpu_id
    r.queue_id = next((q.queue_id for q in p.queues.values() if q.hw is event.queue), 0)
    return bytes(r)


def _write_record(kfd, ptr: int, record: bytes) -> None:
    """Fill the waiter's record if it says it is one (magic, size, version); leave anything else alone."""
    head = gputwin_fault_record.from_buffer_copy(kfd.kernel.copy_from_user(ptr, 12).ljust(len(record), b"\0"))
    if head.magic == GPUTWIN_FAULT_MAGIC and head.size >= len(record) and head.version >= GPUTWIN_FAULT_VERSION:
        kfd.kernel.copy_to_user(ptr, record)


def _interrupt(p: KfdProcess, ctx_id: int) -> None:
    page = p.event_page
    if page is None:
        return
    ev = p.events.get(ctx_id)
    if ev is not None and ev.type == k.KFD_IOC_EVENT_SIGNAL and page.slot(ctx_id).value != UNSIGNALED_EVENT_SLOT:
        page.slot(ctx_id).value = UNSIGNALED_EVENT_SLOT
        ev.set()
        return
    for ev in p.events.values():   # the id did not match: search every written slot, as KFD does
        if ev.type == k.KFD_IOC_EVENT_SIGNAL and page.slot(ev.event_id).value != UNSIGNALED_EVENT_SLOT:
            page.slot(ev.event_id).value = UNSIGNALED_EVENT_SLOT
            ev.set()
