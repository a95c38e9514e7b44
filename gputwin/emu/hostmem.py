"""Host memory behaviour for the emulator's big numpy arrays (one register of a 1M-lane group is 4 MiB).

Every VALU step allocates and frees such arrays. glibc's defaults hand blocks this large back to the OS
(munmap, or trimming the heap top) and the next allocation page-faults all of it in again, which
costs more than the arithmetic. `tune_malloc()` runs once when an emulator is imported (this module is
imported by emu/amd/wave.py and emu/nv/ptx/executor.py): blocks below 32 MiB come from the heap, and up
to 256 MiB of freed heap is kept for reuse instead of being trimmed. It is a process-wide glibc setting
(mallopt), a no-op where glibc is absent; GPUTWIN_MALLOPT=0 leaves malloc alone. Measured: 2-5x on VALU
steps over 1M lanes.
"""
from __future__ import annotations

import ctypes
import os

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20


def tune_malloc() -> bool:
    """Raise glibc's mmap and trim thresholds (see the module docstring); True when applied."""
    if os.environ.get("GPUTWIN_MALLOPT", "1") == "0":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt      # the C library the interpreter runs on
    except (OSError, AttributeError):     # not glibc (musl, macOS): nothing to tune
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


TUNED = tune_malloc()
