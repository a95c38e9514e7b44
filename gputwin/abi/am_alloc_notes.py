"""gputwin's allocation notes: how a kernel-less AM driver tells an emulated GPU the exact byte size of each
allocation it maps, for the sanitizers (docs/sanitizers.md).

NOT a register block of the real chip. The AM driver owns VRAM and the page tables, so the emulated GPU sees
only pages; memcheck needs the byte count the user asked for, and initcheck needs to know when memory is
(re)allocated. The window sits below gputwin's fault record at the top of the 1 MiB MMIO BAR (BAR5). Its
first dword reads ALLOC_NOTES_MAGIC on an emulated board; a driver writes notes only after it read the magic,
so on a real board (where the dword holds something else) it never writes there and depends on nothing.

A note is one write of NOTE_BYTES at NOTE_OFFSET (the command dword last, which acts on the note):
  va (u64), size (u64), command (u32): NOTE_ALLOCATED: [va, va+size) is a fresh allocation (its contents
  are undefined until written); NOTE_FREED: the allocation at va is gone (size ignored).
Send NOTE_ALLOCATED before the TLB invalidate that maps it and NOTE_FREED after the one that unmaps it."""
from __future__ import annotations

import struct

from gputwin.abi.kfd_fault_record import AM_MMIO_RECORD_OFFSET

ALLOC_NOTES_OFFSET = AM_MMIO_RECORD_OFFSET - 4096   # byte offset in BAR5 of the window (its magic dword)
ALLOC_NOTES_MAGIC = 0x4E415447                      # "GTAN" little-endian
NOTE_OFFSET = ALLOC_NOTES_OFFSET + 8                # the note: after the magic and a reserved dword
NOTE = struct.Struct("<QQI")
NOTE_BYTES = NOTE.size
NOTE_ALLOCATED, NOTE_FREED = 1, 2
