"""User memory as a kernel driver reaches it: copy_from_user / copy_to_user and access checks.

The mock kernel lives in the same process as its "user", so a bad pointer must not become a host crash.
Copies go through process_vm_readv / process_vm_writev on this process: like the kernel's uaccess they
walk the page tables and honour each mapping's protection (a read of PROT_NONE or write-only memory, a
write to read-only memory, is EFAULT), which /proc/self/mem does not (it forces access). Checks over a
whole range (what get_user_pages does when KFD pins USERPTR memory) read /proc/self/maps.
"""
from __future__ import annotations

import ctypes
import errno
import os

PROT_READ, PROT_WRITE = 1, 2
_USER_LIMIT = 1 << 47          # x86-64 TASK_SIZE (4-level paging): above it nothing is user memory


class _iovec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


_libc = ctypes.CDLL(None, use_errno=True)
_vm_args = [ctypes.c_int, ctypes.POINTER(_iovec), ctypes.c_ulong, ctypes.POINTER(_iovec), ctypes.c_ulong,
            ctypes.c_ulong]
for _fn in (_libc.process_vm_readv, _libc.process_vm_writev):
    _fn.restype, _fn.argtypes = ctypes.c_ssize_t, _vm_args


def _efault(what: str) -> OSError:
    return OSError(errno.EFAULT, f"{what}: {os.strerror(errno.EFAULT)}")


def _in_user_range(addr: int, size: int) -> bool:
    return 0 < addr and addr + size <= _USER_LIMIT


def _transfer(fn, addr: int, local: int, size: int) -> bool:
    """All size bytes moved between local and user addr (partial moves count as failure)."""
    here, there = _iovec(local, size), _iovec(addr, size)
    return fn(os.getpid(), ctypes.byref(here), 1, ctypes.byref(there), 1, 0) == size


def copy_from_user(addr: int, size: int) -> bytes:
    """Bytes at a user address; OSError(EFAULT) unless every one is mapped readable."""
    if size == 0:
        return b""
    buf = ctypes.create_string_buffer(size)
    if not _in_user_range(addr, size) or not _transfer(_libc.process_vm_readv, addr, ctypes.addressof(buf), size):
        raise _efault(f"copy_from_user({addr:#x}, {size})")
    return buf.raw


def copy_to_user(addr: int, data: bytes) -> None:
    """Store bytes at a user address; OSError(EFAULT) unless every one is mapped writable (nothing is written
    past the first bad page, as with the kernel's copy_to_user)."""
    if not data:
        return
    buf = ctypes.create_string_buffer(bytes(data), len(data))
    if not _in_user_range(addr, len(data)) or not _transfer(_libc.process_vm_writev, addr, ctypes.addressof(buf),
                                                            len(data)):
        raise _efault(f"copy_to_user({addr:#x}, {len(data)})")


def read_maps() -> list[tuple[int, int, bytes]]:
    """This process's mappings as (start, end, "rw" permission bytes), in address order."""
    maps = []
    with open("/proc/self/maps", "rb") as f:
        for line in f:
            span, perms = line.split(b" ", 2)[:2]
            lo, hi = (int(x, 16) for x in span.split(b"-"))
            maps.append((lo, hi, perms[:2]))
    return maps


def mapped_with(addr: int, size: int, prot: int, maps: list | None = None) -> bool:
    """Whether [addr, addr+size) is covered, without holes, by mappings that allow every bit of prot.
    `maps` (read_maps()) lets a caller checking several ranges read /proc/self/maps once."""
    if size <= 0 or not _in_user_range(addr, size):
        return False
    need = ("r" if prot & PROT_READ else "") + ("w" if prot & PROT_WRITE else "")
    pos, end = addr, addr + size
    for lo, hi, perms in read_maps() if maps is None else maps:
        if hi <= pos:
            continue
        if lo > pos or not all(c.encode() in perms for c in need):
            return False
        pos = hi
        if pos >= end:
            return True
    return False
