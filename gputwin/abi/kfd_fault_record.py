"""gputwin's fault record: what the emulated GPU knows about a fault, handed through KFD event data.

NOT a Linux structure. `kfd_event_data.kfd_event_data_ext` is, in linux/kfd_ioctl.h, "a pointer to an
extension structure for future exception types"; amdkfd (through 6.x) neither reads nor writes it: its
WAIT_EVENTS copies back only the union of memory / hw-exception / signal data. gputwin's mock KFD gives the
pointer this meaning: when a memory-exception or hw-exception event fires and the waiter's
kfd_event_data_ext points at a record whose `magic` and `size` the waiter filled in, the mock writes the
facts amdgpu would print to the kernel log (faulting PC and wave, the instruction, the packet opcode and
ring offset, ...) into it and sets `valid`. A driver on a real kernel finds the record untouched (valid 0)
and reports what the standard event data says. The exception codes are KFD's own
(`enum kfd_dbg_trap_exception_code`, gputwin.abi.kfd_ioctl.EC_*), as KFD raises them to the runtime.
"""
from __future__ import annotations

import ctypes
from ctypes import c_char, c_uint32 as u32, c_uint64 as u64

from gputwin.abi import kfd_ioctl as k
from gputwin.errors import GpuFault, GpuHang, IllegalInstruction, MemoryFault, PacketError

GPUTWIN_FAULT_MAGIC = 0x52465447   # "GTFR" little-endian
GPUTWIN_FAULT_VERSION = 2   # 2: a 2048-byte message (a sanitizer report lists several findings)

MESSAGE_BYTES = 2048

# which optional facts the record holds (`facts` bits)
FACT_PC = 1 << 0
FACT_WAVE = 1 << 1
FACT_ADDRESS = 1 << 2
FACT_WRITE = 1 << 3
FACT_CODE_ADDRESS = 1 << 4
FACT_TRAP_ID = 1 << 5
FACT_OPCODE = 1 << 6
FACT_RING_OFFSET = 1 << 7

# (record field, FACT bit) of every numeric fact; a GpuFault attribute of the same name holds it
NUMERIC_FACTS = (("pc", FACT_PC), ("wave", FACT_WAVE), ("address", FACT_ADDRESS), ("write", FACT_WRITE),
                 ("code_address", FACT_CODE_ADDRESS), ("trap_id", FACT_TRAP_ID), ("opcode", FACT_OPCODE),
                 ("ring_offset", FACT_RING_OFFSET))


class gputwin_fault_record(ctypes.Structure):
    _fields_ = [
        ("magic", u32),           # GPUTWIN_FAULT_MAGIC, written by the waiter
        ("size", u32),            # sizeof(gputwin_fault_record), written by the waiter
        ("version", u32),         # GPUTWIN_FAULT_VERSION, written by the waiter
        ("valid", u32),           # 1 once the mock KFD filled the record in
        ("exception_code", u32),  # EC_* of kfd_dbg_trap_exception_code; EC_NONE for a hang
        ("facts", u32),           # FACT_* bits: which of the fields below are known
        ("gpu_id", u32),
        ("queue_id", u32),
        ("wave", u32),            # dispatch-global wave id
        ("write", u32),           # memory faults: 1 for a write
        ("trap_id", u32),         # s_trap's immediate
        ("opcode", u32),          # PM4 IT opcode / SDMA op of the rejected packet
        ("pc", u64),              # faulting instruction
        ("code_address", u64),    # the dispatch's first instruction (COMPUTE_PGM_LO/HI << 8)
        ("address", u64),         # memory faults: the faulting address
        ("ring_offset", u64),     # rejected packets: byte offset in the ring
        ("kind", c_char * 24),    # gputwin.errors GpuFault.kind, "hang" for a hang, "error" otherwise
        ("arch", c_char * 16),
        ("instruction", c_char * 96),   # LLVM text of the instruction, or ".long 0x..." for a bad word
        ("message", c_char * MESSAGE_BYTES),   # what the emulator said, as amdgpu's log line would
    ]


assert ctypes.sizeof(gputwin_fault_record) == 216 + MESSAGE_BYTES


# Where an emulated AM board (no KFD in between) shows the record: a read-only window at this byte offset of
# its 1 MiB MMIO BAR (BAR5), `valid` cleared by a write (gputwin/emu/amd/soc/interrupts.py). Not a register of
# the real chip: a driver trusts it only when magic and version match.
AM_MMIO_RECORD_OFFSET = (1 << 20) - 4096

_WIDE = ("pc", "code_address", "address", "ring_offset")   # 64-bit record fields


def exception_code(error: BaseException | None) -> int:
    """The EC_* KFD raises to the runtime for this error (kfd_dbg_trap_exception_code)."""
    if isinstance(error, MemoryFault):   # a wave's access has a pc; the CP's or SDMA's has none
        return k.EC_QUEUE_WAVE_MEMORY_VIOLATION if error.pc is not None else k.EC_DEVICE_MEMORY_VIOLATION
    if isinstance(error, IllegalInstruction):
        return k.EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION
    if isinstance(error, PacketError):
        return k.EC_QUEUE_PACKET_UNSUPPORTED
    if isinstance(error, GpuFault) and error.kind == "trap":
        return k.EC_QUEUE_WAVE_TRAP
    if isinstance(error, GpuHang):
        return k.EC_NONE                 # a hang is a reset (hw-exception data), not a queue exception
    return k.EC_QUEUE_WAVE_ABORT


def record_of(error: BaseException | None, arch: str) -> gputwin_fault_record:
    """A valid record of what `error` (a GpuFault, a GpuHang or any emulator error) says; the reporter adds
    gpu_id and queue_id."""
    r = gputwin_fault_record(magic=GPUTWIN_FAULT_MAGIC, size=ctypes.sizeof(gputwin_fault_record),
                             version=GPUTWIN_FAULT_VERSION, valid=1, arch=arch.encode(),
                             exception_code=exception_code(error))
    if isinstance(error, GpuFault):
        r.kind = error.kind.encode()[:23]
        for name, bit in NUMERIC_FACTS:
            value = getattr(error, name)
            if value is not None:
                setattr(r, name, int(value) & (0xFFFFFFFFFFFFFFFF if name in _WIDE else 0xFFFFFFFF))
                r.facts |= bit
        r.instruction = (error.instruction or "").encode()[:95]
        r.message = error.reason.encode()[:MESSAGE_BYTES - 1]
    else:
        r.kind = b"hang" if isinstance(error, GpuHang) else b"error"
        r.message = (str(error) if isinstance(error, GpuHang) else f"{type(error).__name__}: {error}").encode()[:MESSAGE_BYTES - 1]
    return r
