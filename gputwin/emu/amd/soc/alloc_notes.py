"""gputwin's allocation notes window (gputwin.abi.am_alloc_notes; NOT a block of the real chip): the AM driver
tells the emulated GPU the exact byte size of each allocation it maps.

The GMC (gmc.py) uses the notes only while a sanitizer is on: it cuts its regions at allocation boundaries
and gives each its extent (memcheck), and clears the initcheck record of a fresh allocation's VRAM when it
is first mapped (its contents are undefined: VRAM may hold what a freed allocation left)."""
from __future__ import annotations

import bisect
import struct

from gputwin.abi.am_alloc_notes import (ALLOC_NOTES_MAGIC, ALLOC_NOTES_OFFSET, NOTE, NOTE_ALLOCATED, NOTE_FREED,
                                        NOTE_OFFSET)
from gputwin.emu.amd.soc.regfile import RegisterError

_FIELDS = ("va_lo", "va_hi", "size_lo", "size_hi", "command")


class AllocationNotes:
    def __init__(self, function):
        self.function = function
        self.sizes: dict[int, int] = {}   # va -> bytes the driver asked for
        self._starts: list[int] = []      # sorted keys of sizes
        self.fresh: set[int] = set()      # allocations whose initcheck record is cleared when next mapped
        regs = function.regs
        regs.add_read_only(ALLOC_NOTES_OFFSET // 4, "gputwin_alloc_notes.magic", ALLOC_NOTES_MAGIC)
        first = NOTE_OFFSET // 4
        for i, name in enumerate(_FIELDS[:-1]):
            regs.add(first + i, f"gputwin_alloc_notes.{name}")
        regs.add(first + len(_FIELDS) - 1, "gputwin_alloc_notes.command", write=self._command)

    def reset(self) -> None:
        self.sizes, self._starts, self.fresh = {}, [], set()

    def _command(self, command: int) -> None:
        first = NOTE_OFFSET // 4
        raw = struct.pack("<4I", *(self.function.regs.value(first + i) for i in range(4))) + struct.pack("<I", command)
        va, size, _ = NOTE.unpack(raw)
        if command == NOTE_ALLOCATED and size > 0:
            if va in self.sizes:
                raise RegisterError(f"{self.function.name}: allocation note for {va:#x}, which is already allocated")
            bisect.insort(self._starts, va)
            self.sizes[va] = size
            self.fresh.add(va)
        elif command == NOTE_FREED and va in self.sizes:
            del self.sizes[va]
            self._starts.remove(va)
            self.fresh.discard(va)
        else:
            raise RegisterError(f"{self.function.name}: gputwin allocation note {command} for va {va:#x} size "
                                f"{size:#x}: valid are {NOTE_ALLOCATED} (allocated, size > 0) and {NOTE_FREED} "
                                f"(freed, of an allocated va)")
        self.function.blocks["gmc"].noted(va)

    def pieces(self, va: int, size: int) -> list[tuple[int, int, int | None, int | None]]:
        """[va, va+size) cut where allocations start and where their pages end: (va, size, extent, owner) with
        the bytes of the allocation from the piece's start as extent and the allocation's va as owner; None
        and None for a piece no note covers."""
        out, at, end = [], va, va + size
        starts, i = self._starts, max(bisect.bisect_right(self._starts, va) - 1, 0)
        while at < end:
            if i < len(starts) and starts[i] <= at:
                start, asked = starts[i], self.sizes[starts[i]]
                stop = min(end, _page_end(start + asked), starts[i + 1] if i + 1 < len(starts) else end)
                if stop > at:
                    out.append((at, stop - at, max(0, start + asked - at), start))
                    at = stop
                i += 1
                continue
            stop = min(end, starts[i]) if i < len(starts) else end
            out.append((at, stop - at, None, None))
            at = stop
        return out


def _page_end(address: int) -> int:
    return -(-address // 4096) * 4096


def attach(function) -> AllocationNotes:
    return AllocationNotes(function)
