"""Allocation notes for an emulated GPU's sanitizers (gputwin.abi.am_alloc_notes): the exact byte size of each
allocation the driver maps. A real board has no such window: `present` is False there and nothing is written."""
from __future__ import annotations

import struct

from gputwin.abi.am_alloc_notes import (ALLOC_NOTES_MAGIC, ALLOC_NOTES_OFFSET, NOTE, NOTE_ALLOCATED, NOTE_FREED,
                                        NOTE_OFFSET)


class AllocationNotes:
    def __init__(self, bar):
        self.bar = bar
        self.present = struct.unpack("<I", bar.read(ALLOC_NOTES_OFFSET, 4))[0] == ALLOC_NOTES_MAGIC

    def allocated(self, va: int, size: int) -> None:
        """[va, va+size) is a fresh allocation; before the TLB invalidate that maps it."""
        if self.present:
            self.bar.write(NOTE_OFFSET, NOTE.pack(va, size, NOTE_ALLOCATED))

    def freed(self, va: int) -> None:
        """The allocation at va is gone; after the TLB invalidate that unmapped it."""
        if self.present:
            self.bar.write(NOTE_OFFSET, NOTE.pack(va, 0, NOTE_FREED))
