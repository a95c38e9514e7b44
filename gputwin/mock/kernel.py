"""The mock side of seam 1: a virtual kernel that routes paths to virtual files and devices.

A `MockKernel` holds a tree of mounted paths: plain files (sysfs-style text, fixed or computed on each
read) and character devices (`MockDevice` subclasses). Drivers use it exactly as they use the host kernel;
errors follow Linux: unknown path -> ENOENT, unknown ioctl -> ENOTTY, mmap of an offset the device does
not know -> EINVAL.

ioctl arguments cross the seam the way the kernel's copy_from_user / copy_to_user move them: the device
sees a `bytearray` of the request's _IOC_SIZE bytes and whatever it leaves there is copied back for
_IOC_READ requests. Pointers inside structs are followed with `copy_from_user` / `copy_to_user`, which honour
page protections as the kernel's do (gputwin.mock.usermem): a bad address is EFAULT, never a host crash.
"""
from __future__ import annotations

import ctypes
import errno
import itertools
import os
import posixpath
from typing import Callable

from gputwin.abi.ioctl import IOC_DIR, IOC_NR, IOC_READ, IOC_SIZE, IOC_TYPE, IOC_WRITE
from gputwin.drivers.kernel import MAP_ANONYMOUS, MAP_FIXED, File, Kernel, Mapping, libc_mmap, libc_munmap
from gputwin.mock import usermem


def _oserror(code: int, what: str) -> OSError:
    return OSError(code, f"{what}: {os.strerror(code)}")


def describe_request(request: int) -> str:
    t = IOC_TYPE(request)
    return (f"ioctl {request:#010x} (type {chr(t) if 32 <= t < 127 else hex(t)!s}, nr {IOC_NR(request):#x}, "
            f"size {IOC_SIZE(request)})")


# Memory the mock kernel keeps for itself (buffer backing, doorbell, event and MMIO pages) lives in this
# process's address space, where on Linux it would be kernel memory no process can reach. munmap of it fails
# as for a kernel address (EINVAL) and MAP_FIXED over it as mmap beyond TASK_SIZE does (ENOMEM), so a stale
# or forged user Mapping cannot pull pages out from under the emulated GPU.
_kernel_memory: dict[int, int] = {}     # addr -> size


def claim_kernel_memory(addr: int, size: int) -> None:
    _kernel_memory[addr] = size


def release_kernel_memory(addr: int) -> None:
    _kernel_memory.pop(addr, None)


def _kernel_memory_in(addr: int, size: int) -> int | None:
    """The start of kernel memory overlapping [addr, addr+size), if any."""
    return next((a for a, n in _kernel_memory.items() if a < addr + size and addr < a + n), None)


class MockDevice:
    """A character device in a MockKernel. Subclasses override what they support; the rest fails as
    Linux does for a device without that operation."""

    def open(self, kernel: "MockKernel", path: str, flags: int):
        """Per-open state (returned object is handed back to the other calls)."""
        return None

    def ioctl(self, state, request: int, arg: bytearray) -> int:
        raise _oserror(errno.ENOTTY, f"{type(self).__name__}: unknown {describe_request(request)}")

    def ioctl_layout(self, state, request: int) -> tuple[int, int]:
        """(bytes to copy, _IOC direction) of a request. Linux drivers whose request numbers carry no size
        (nvidia-uvm) copy their own parameter size; such a mock overrides this."""
        return IOC_SIZE(request), IOC_DIR(request)

    def mmap(self, state, addr: int, size: int, prot: int, flags: int, offset: int) -> Mapping:
        raise _oserror(errno.ENODEV, f"{type(self).__name__}: mmap not supported")

    def read(self, state, n: int) -> bytes:
        raise _oserror(errno.EINVAL, f"{type(self).__name__}: read not supported")

    def write(self, state, data: bytes) -> int:
        raise _oserror(errno.EINVAL, f"{type(self).__name__}: write not supported")

    def close(self, state) -> None:
        pass


class MockFile(File):
    _fds = itertools.count(1000)

    def __init__(self, kernel: "MockKernel", path: str, device: MockDevice | None, content: bytes = b""):
        self.kernel, self.path, self.device = kernel, path, device
        self.fd = next(self._fds)
        self._content, self._pos, self.closed = content, 0, False
        self.state = None

    def _live(self) -> None:
        if self.closed:
            raise _oserror(errno.EBADF, f"{self.path} is closed")

    def ioctl(self, request: int, arg=None) -> int:
        self._live()
        if self.device is None:
            raise _oserror(errno.ENOTTY, f"{self.path}: {describe_request(request)} on a regular file")
        size, direction = self.device.ioctl_layout(self.state, request)
        buf = bytearray(size)
        if size:
            if arg is None or ctypes.sizeof(arg) < size:
                raise _oserror(errno.EFAULT, f"{self.path}: {describe_request(request)} with a "
                                             f"{0 if arg is None else ctypes.sizeof(arg)}-byte argument")
            if direction & IOC_WRITE:
                buf[:] = ctypes.string_at(ctypes.addressof(arg), size)
        try:
            ret = self.device.ioctl(self.state, request, buf)
        except OSError as e:   # some drivers (nvidia.ko) copy the block back even when the ioctl fails
            if getattr(e, "copy_out", False) and size and direction & IOC_READ:
                ctypes.memmove(ctypes.addressof(arg), bytes(buf), size)
            raise
        if size and direction & IOC_READ:
            ctypes.memmove(ctypes.addressof(arg), bytes(buf), size)
        return ret

    def mmap(self, addr: int, size: int, prot: int, flags: int, offset: int = 0) -> Mapping:
        return self.kernel.mmap(addr, size, prot, flags, self, offset)

    def read(self, n: int = -1) -> bytes:
        self._live()
        if self.device is not None:
            return self.device.read(self.state, n)
        end = len(self._content) if n < 0 else self._pos + n
        data, self._pos = self._content[self._pos:end], min(end, len(self._content))
        return data

    def write(self, data: bytes) -> int:
        self._live()
        if self.device is None:
            raise _oserror(errno.EACCES, f"{self.path} is read-only")
        return self.device.write(self.state, data)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.kernel._open.pop(self.fd, None)
            if self.device is not None:
                self.device.close(self.state)


class MockKernel(Kernel):
    """A virtual kernel: mount files and devices at absolute paths, then hand it to a driver."""

    def __init__(self):
        self._files: dict[str, str | Callable[[], str]] = {}
        self._devices: dict[str, MockDevice] = {}
        self._dirs: set[str] = {"/"}
        self._open: dict[int, MockFile] = {}

    # --- mounting --------------------------------------------------------------------------------
    def _add_parents(self, path: str) -> str:
        path = posixpath.normpath(path)
        if not path.startswith("/"):
            raise ValueError(f"mount paths are absolute, got {path!r}")
        if path in self._files or path in self._devices or path in self._dirs:
            raise ValueError(f"{path} is already mounted")
        parent = posixpath.dirname(path)
        while parent not in self._dirs:
            if parent in self._files or parent in self._devices:
                raise ValueError(f"{parent} is a file, cannot mount below it")
            self._dirs.add(parent)
            parent = posixpath.dirname(parent)
        return path

    def mount_file(self, path: str, content: str | Callable[[], str]) -> None:
        self._files[self._add_parents(path)] = content

    def mount_dir(self, path: str) -> None:
        path = self._add_parents(path)
        self._dirs.add(path)

    def mount_device(self, path: str, device: MockDevice) -> None:
        self._devices[self._add_parents(path)] = device

    # --- the Kernel interface ----------------------------------------------------------------------
    def open(self, path: str, flags: int = os.O_RDWR) -> MockFile:
        path = posixpath.normpath(path)
        if path in self._devices:
            f = MockFile(self, path, self._devices[path])
            f.state = f.device.open(self, path, flags)
            self._open[f.fd] = f
            return f
        if path in self._files:
            if flags & (os.O_WRONLY | os.O_RDWR):
                raise _oserror(errno.EACCES, f"open {path} for writing")
            return MockFile(self, path, None, self.read_text(path).encode())
        if path in self._dirs:
            raise _oserror(errno.EISDIR, f"open {path}")
        raise _oserror(errno.ENOENT, f"open {path}")

    def file(self, fd: int) -> MockFile:
        """The open device file behind a descriptor number (as fget() finds it), or EBADF."""
        f = self._open.get(fd)
        if f is None or f.closed:
            raise _oserror(errno.EBADF, f"fd {fd} is not an open device file")
        return f

    def listdir(self, path: str) -> list[str]:
        path = posixpath.normpath(path)
        if path not in self._dirs:
            raise _oserror(errno.ENOTDIR if self.exists(path) else errno.ENOENT, f"listdir {path}")
        names = itertools.chain(self._dirs, self._files, self._devices)
        return sorted({posixpath.basename(p) for p in names if p != path and posixpath.dirname(p) == path})

    def exists(self, path: str) -> bool:
        path = posixpath.normpath(path)
        return path in self._dirs or path in self._files or path in self._devices

    def read_text(self, path: str) -> str:
        path = posixpath.normpath(path)
        if path in self._files:
            content = self._files[path]
            return content() if callable(content) else content
        if path in self._dirs:
            raise _oserror(errno.EISDIR, f"read {path}")
        if path in self._devices:
            raise _oserror(errno.EINVAL, f"read_text of device {path}")
        raise _oserror(errno.ENOENT, f"read {path}")

    def mmap(self, addr: int, size: int, prot: int, flags: int, file: File | None = None, offset: int = 0) -> Mapping:
        if size <= 0:
            raise _oserror(errno.EINVAL, f"mmap of {size} bytes")
        if flags & MAP_FIXED and (taken := _kernel_memory_in(addr, size)) is not None:
            raise _oserror(errno.ENOMEM, f"mmap MAP_FIXED [{addr:#x}, +{size:#x}) over kernel memory at {taken:#x}")
        if file is None:
            return Mapping(libc_mmap(addr, size, prot, flags | MAP_ANONYMOUS), size)
        if not isinstance(file, MockFile) or file.kernel is not self:
            raise _oserror(errno.EBADF, f"mmap of {file!r}, not a file of this kernel")
        file._live()
        if file.device is None:
            raise _oserror(errno.ENODEV, f"mmap of regular file {file.path}")
        return file.device.mmap(file.state, addr, size, prot, flags, offset)

    def munmap(self, mapping: Mapping) -> None:
        if (taken := _kernel_memory_in(mapping.addr, mapping.size)) is not None:
            raise _oserror(errno.EINVAL, f"munmap of {mapping!r}: kernel memory at {taken:#x}")
        unmap = getattr(mapping, "unmap", None)
        if unmap is not None:  # device mappings know how to undo themselves
            unmap()
        else:
            libc_munmap(mapping.addr, mapping.size)

    # --- user memory, as a kernel driver reaches it ------------------------------------------------
    def copy_from_user(self, addr: int, size: int) -> bytes:
        """Bytes at a user address; OSError(EFAULT) if any of them is not mapped readable."""
        return usermem.copy_from_user(addr, size)

    def copy_to_user(self, addr: int, data: bytes) -> None:
        """Store bytes at a user address; OSError(EFAULT) if any of them is not mapped writable."""
        usermem.copy_to_user(addr, data)

    def user_mapped(self, addr: int, size: int, prot: int, maps: list | None = None) -> bool:
        """Whether the user has [addr, addr+size) mapped with every access in prot (get_user_pages' test);
        `maps` is a usermem.read_maps() snapshot when several ranges are checked at once."""
        return usermem.mapped_with(addr, size, prot, maps)
