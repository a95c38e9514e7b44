"""ioctl request numbers as asm-generic/ioctl.h builds them (x86-64 / arm64 layout).

request = dir << 30 | size << 16 | type << 8 | nr, with dir bit 0 = write (user -> kernel) and
bit 1 = read (kernel -> user), as the kernel's _IOC_WRITE / _IOC_READ.
"""
import ctypes

IOC_NONE, IOC_WRITE, IOC_READ = 0, 1, 2
_NRBITS, _TYPEBITS, _SIZEBITS = 8, 8, 14
_NRSHIFT = 0
_TYPESHIFT = _NRSHIFT + _NRBITS
_SIZESHIFT = _TYPESHIFT + _TYPEBITS
_DIRSHIFT = _SIZESHIFT + _SIZEBITS


def IOC(direction: int, type_: int, nr: int, size: int) -> int:
    if size >= 1 << _SIZEBITS:
        raise ValueError(f"ioctl argument of {size} bytes does not fit the size field")
    return direction << _DIRSHIFT | size << _SIZESHIFT | type_ << _TYPESHIFT | nr << _NRSHIFT


def _size(struct) -> int:
    return struct if isinstance(struct, int) else ctypes.sizeof(struct)


def IO(type_: int, nr: int) -> int:
    return IOC(IOC_NONE, type_, nr, 0)


def IOR(type_: int, nr: int, struct) -> int:
    return IOC(IOC_READ, type_, nr, _size(struct))


def IOW(type_: int, nr: int, struct) -> int:
    return IOC(IOC_WRITE, type_, nr, _size(struct))


def IOWR(type_: int, nr: int, struct) -> int:
    return IOC(IOC_READ | IOC_WRITE, type_, nr, _size(struct))


def IOC_DIR(request: int) -> int:
    return (request >> _DIRSHIFT) & 3


def IOC_TYPE(request: int) -> int:
    return (request >> _TYPESHIFT) & 0xFF


def IOC_NR(request: int) -> int:
    return (request >> _NRSHIFT) & 0xFF


def IOC_SIZE(request: int) -> int:
    return (request >> _SIZESHIFT) & ((1 << _SIZEBITS) - 1)
