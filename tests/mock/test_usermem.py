"""copy_from_user / copy_to_user honour page protections as the kernel's uaccess does (EFAULT), which
/proc/self/mem does not; mapped_with sees holes and missing permissions."""
import ctypes
import errno
import mmap

import pytest

from gputwin.mock import usermem

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
PAGE = mmap.PAGESIZE


@pytest.fixture
def pages():
    """Three adjacent pages, filled with 0x5A and left read-write: the test mprotects them as it needs."""
    addr = _libc.mmap(None, 3 * PAGE, 3, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    ctypes.memset(addr, 0x5A, 3 * PAGE)
    yield addr
    _libc.munmap(addr, 3 * PAGE)


def protect(addr, prot, n=1):
    assert ctypes.CDLL(None).mprotect(ctypes.c_void_p(addr), n * PAGE, prot) == 0


@pytest.mark.parametrize("prot", [0, 2])   # PROT_NONE, write-only: neither may be read by the kernel
def test_copy_from_unreadable_memory_is_efault(pages, prot):
    protect(pages, prot)
    with pytest.raises(OSError, match="copy_from_user") as e:
        usermem.copy_from_user(pages + 8, 16)
    assert e.value.errno == errno.EFAULT


def test_copy_from_user_reads_what_is_there(pages):
    protect(pages, 1)
    assert usermem.copy_from_user(pages + PAGE - 4, 8) == b"\x5a" * 8


def test_a_copy_crossing_into_an_unreadable_page_is_efault(pages):
    protect(pages + PAGE, 0)
    with pytest.raises(OSError, match="copy_from_user") as e:
        usermem.copy_from_user(pages + PAGE - 4, 8)
    assert e.value.errno == errno.EFAULT


@pytest.mark.parametrize("prot", [0, 1])   # PROT_NONE, read-only
def test_copy_to_unwritable_memory_is_efault_and_writes_nothing(pages, prot):
    protect(pages, prot)
    with pytest.raises(OSError, match="copy_to_user") as e:
        usermem.copy_to_user(pages + 8, b"\x11" * 16)
    assert e.value.errno == errno.EFAULT
    protect(pages, 3)
    assert ctypes.string_at(pages, PAGE) == b"\x5a" * PAGE


def test_copy_to_user_writes(pages):
    usermem.copy_to_user(pages + 3, b"abc")
    assert ctypes.string_at(pages, 8) == b"\x5a\x5a\x5aabc\x5a\x5a"


@pytest.mark.parametrize("addr", [0, 8, 1 << 47, (1 << 64) - 8])
def test_null_kernel_and_non_canonical_addresses_are_efault(addr):
    for call in (lambda: usermem.copy_from_user(addr, 4), lambda: usermem.copy_to_user(addr, b"1234")):
        with pytest.raises(OSError, match="_user") as e:
            call()
        assert e.value.errno == errno.EFAULT


def test_mapped_with_needs_every_page_and_every_permission(pages):
    assert usermem.mapped_with(pages, 3 * PAGE, 3)
    protect(pages + PAGE, 1)
    assert usermem.mapped_with(pages, 3 * PAGE, 1)
    assert not usermem.mapped_with(pages, 3 * PAGE, 3)
    assert usermem.mapped_with(pages + 2 * PAGE, PAGE, 3)
    protect(pages + PAGE, 3)
    _libc.munmap(pages + PAGE, PAGE)          # a hole in the middle
    assert not usermem.mapped_with(pages, 3 * PAGE, 1)
    assert usermem.mapped_with(pages, PAGE, 3) and not usermem.mapped_with(pages, 0, 1)
