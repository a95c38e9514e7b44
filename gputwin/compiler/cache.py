"""The compile cache: images keyed by LLVM IR text + target, in memory and on disk.

Disk location: $GPUTWIN_CACHE_DIR, else ~/.cache/gputwin. The key also covers the llvmlite/LLVM
version and the source of the back-end modules (llvm.py, elf.py, cpuimage.py), so changing how an
image is produced invalidates old entries without a hand-bumped version number. Writes go through a
temporary file and os.replace, so concurrent pytest-xdist workers never see half-written entries.
"""
from __future__ import annotations

import hashlib
import os
import pathlib
import threading
from collections import Counter

import llvmlite

_BACKEND_FILES = ("llvm.py", "elf.py", "cpuimage.py", "cache.py")
_mem: dict[str, bytes] = {}
_lock = threading.Lock()
stats: Counter = Counter()     # memory_hits, disk_hits, compiles


def _backend_hash() -> str:
    here = pathlib.Path(__file__).parent
    h = hashlib.sha256(llvmlite.__version__.encode())
    for name in _BACKEND_FILES:
        h.update((here / name).read_bytes())
    return h.hexdigest()


_BACKEND = _backend_hash()


def cache_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("GPUTWIN_CACHE_DIR") or pathlib.Path.home() / ".cache" / "gputwin")


def key(ir_text: str, target: str) -> str:
    return hashlib.sha256(f"{_BACKEND}\0{target}\0{ir_text}".encode()).hexdigest()


def get_or_build(ir_text: str, target: str, build) -> bytes:
    """The cached image for (ir_text, target), calling build() only on a miss everywhere."""
    k = key(ir_text, target)
    with _lock:
        hit = _mem.get(k)
    if hit is not None:
        stats["memory_hits"] += 1
        return hit
    path = cache_dir() / f"{k}.{target}"
    try:
        image = path.read_bytes()
        stats["disk_hits"] += 1
    except OSError:
        image = build()
        stats["compiles"] += 1
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}.{threading.get_ident()}")
            tmp.write_bytes(image)
            os.replace(tmp, path)
        except OSError:
            pass   # a read-only or full cache directory only costs recompiles
    with _lock:
        _mem[k] = image
    return image


def clear_memory() -> None:
    """Forget the in-memory layer (tests and benchmarks use it to measure the disk layer)."""
    with _lock:
        _mem.clear()
