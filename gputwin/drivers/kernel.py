"""Seam 1, the kernel interface: what a userspace driver may ask of the operating system.

Drivers receive a `Kernel` and never call os/fcntl/mmap themselves, so the same driver code runs on real
Linux (`HostKernel`, here) or on mock kernel drivers (`gputwin.mock.kernel.MockKernel`). Failures are
`OSError`s carrying the errno the kernel returned.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import mmap as _mmap
import os

PROT_NONE, PROT_READ, PROT_WRITE = 0, _mmap.PROT_READ, _mmap.PROT_WRITE
MAP_SHARED, MAP_PRIVATE, MAP_ANONYMOUS = _mmap.MAP_SHARED, _mmap.MAP_PRIVATE, _mmap.MAP_ANONYMOUS
MAP_FIXED = 0x10
MAP_NORESERVE = getattr(_mmap, "MAP_NORESERVE", 0x4000)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_size_t     # c_void_p would make a mapping at address 0 None, like a failure
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.restype = ctypes.c_int
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_MAP_FAILED = ctypes.c_size_t(-1).value   # (void *) -1; 0 is a valid result (MAP_FIXED at 0, as root)


def libc_mmap(addr: int, size: int, prot: int, flags: int, fd: int = -1, offset: int = 0) -> int:
    """mmap(2); returns the address or raises OSError with the kernel's errno."""
    res = _libc.mmap(addr or None, size, prot, flags, fd, offset)
    if res == _MAP_FAILED:
        err = ctypes.get_errno()
        raise OSError(err, f"mmap(addr={addr:#x}, size={size:#x}, flags={flags:#x}): {os.strerror(err)}")
    return res


def libc_munmap(addr: int, size: int) -> None:
    if _libc.munmap(addr, size) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"munmap({addr:#x}, {size:#x}): {os.strerror(err)}")


class Mapping:
    """A mapped range of a file or of anonymous memory. Registers and doorbells are touched only through
    read32/write32/read64/write64 (so a mock device can notice); ordinary memory is plain host memory."""

    def __init__(self, addr: int, size: int):
        self.addr, self.size = addr, size

    def _check(self, offset: int, width: int) -> int:
        if offset < 0 or offset + width > self.size or offset % width:
            raise ValueError(f"access of {width} bytes at offset {offset:#x} outside or misaligned in a "
                             f"mapping of {self.size:#x} bytes")
        return self.addr + offset

    def read32(self, offset: int) -> int:
        return ctypes.c_uint32.from_address(self._check(offset, 4)).value

    def write32(self, offset: int, value: int) -> None:
        ctypes.c_uint32.from_address(self._check(offset, 4)).value = value & 0xFFFFFFFF

    def read64(self, offset: int) -> int:
        return ctypes.c_uint64.from_address(self._check(offset, 8)).value

    def write64(self, offset: int, value: int) -> None:
        ctypes.c_uint64.from_address(self._check(offset, 8)).value = value & 0xFFFFFFFFFFFFFFFF

    def __repr__(self) -> str:
        return f"{type(self).__name__}(addr={self.addr:#x}, size={self.size:#x})"


class File:
    """An open file of the kernel interface."""
    fd: int

    def ioctl(self, request: int, arg=None) -> int:
        raise NotImplementedError

    def mmap(self, addr: int, size: int, prot: int, flags: int, offset: int = 0) -> Mapping:
        raise NotImplementedError

    def read(self, n: int = -1) -> bytes:
        raise NotImplementedError

    def write(self, data: bytes) -> int:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Kernel:
    """What a driver may ask of the operating system (see docs/contracts.md, Seam 1)."""

    def open(self, path: str, flags: int = os.O_RDWR) -> File:
        raise NotImplementedError

    def listdir(self, path: str) -> list[str]:
        raise NotImplementedError

    def exists(self, path: str) -> bool:
        raise NotImplementedError

    def read_text(self, path: str) -> str:
        raise NotImplementedError

    def mmap(self, addr: int, size: int, prot: int, flags: int, file: File | None = None, offset: int = 0) -> Mapping:
        raise NotImplementedError

    def munmap(self, mapping: Mapping) -> None:
        raise NotImplementedError


# --- the real operating system --------------------------------------------------------------------
class HostFile(File):
    def __init__(self, kernel: "HostKernel", path: str, fd: int):
        self.kernel, self.path, self.fd = kernel, path, fd

    def ioctl(self, request: int, arg=None) -> int:
        if arg is None:
            return fcntl.ioctl(self.fd, request, 0)
        return fcntl.ioctl(self.fd, request, arg, True)  # mutate the ctypes struct in place

    def mmap(self, addr: int, size: int, prot: int, flags: int, offset: int = 0) -> Mapping:
        return self.kernel.mmap(addr, size, prot, flags, self, offset)

    def read(self, n: int = -1) -> bytes:
        if n >= 0:
            return os.read(self.fd, n)
        chunks = []
        while chunk := os.read(self.fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)

    def write(self, data: bytes) -> int:
        return os.write(self.fd, data)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class HostKernel(Kernel):
    """The real Linux kernel, through os, fcntl and libc mmap."""

    def open(self, path: str, flags: int = os.O_RDWR) -> HostFile:
        return HostFile(self, path, os.open(path, flags | os.O_CLOEXEC))

    def listdir(self, path: str) -> list[str]:
        return sorted(os.listdir(path))

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def read_text(self, path: str) -> str:
        with open(path) as f:
            return f.read()

    def mmap(self, addr: int, size: int, prot: int, flags: int, file: File | None = None, offset: int = 0) -> Mapping:
        if file is None:
            flags |= MAP_ANONYMOUS
        elif not isinstance(file, HostFile):
            raise OSError(errno.EBADF, f"{file!r} is not a file of this kernel")
        return Mapping(libc_mmap(addr, size, prot, flags, -1 if file is None else file.fd, offset), size)

    def munmap(self, mapping: Mapping) -> None:
        libc_munmap(mapping.addr, mapping.size)
