import ctypes
import errno
import os
import re

import pytest

from gputwin.abi.ioctl import IO, IOR, IOW, IOWR
from gputwin.drivers.kernel import MAP_PRIVATE, PROT_READ, PROT_WRITE, Mapping
from gputwin.mock.kernel import MockDevice, MockKernel


class Args(ctypes.Structure):
    _fields_ = [("a", ctypes.c_uint32), ("b", ctypes.c_uint32), ("ptr", ctypes.c_uint64)]


ADD = IOWR(ord("T"), 1, Args)
SET_ONLY = IOW(ord("T"), 2, Args)
GET_ONLY = IOR(ord("T"), 3, Args)
PING = IO(ord("T"), 4)


class Doorbell(Mapping):
    def __init__(self, dev, addr, size):
        super().__init__(addr, size)
        self.dev = dev

    def write32(self, offset, value):
        self.dev.rung.append((offset, value))


class AdderDevice(MockDevice):
    """A tiny device: adds, remembers, follows a user pointer, and has one doorbell page."""

    def __init__(self, kernel):
        self.kernel, self.rung, self.last = kernel, [], None

    def open(self, kernel, path, flags):
        return {"opened": path}

    def ioctl(self, state, request, arg):
        if request == ADD:
            s = Args.from_buffer(arg)
            s.b = s.a + s.b
            if s.ptr:
                self.kernel.copy_to_user(s.ptr, self.kernel.copy_from_user(s.ptr, 4)[::-1])
            return 0
        if request == SET_ONLY:
            self.last = Args.from_buffer_copy(arg).a
            Args.from_buffer(arg).a = 999  # a write-only ioctl must not copy back
            return 0
        if request == GET_ONLY:
            assert bytes(arg) == bytes(len(arg))  # nothing was copied in
            Args.from_buffer(arg).a = self.last
            return 0
        if request == PING:
            return 7
        return super().ioctl(state, request, arg)

    def mmap(self, state, addr, size, prot, flags, offset):
        if offset != 0x1000:
            raise OSError(errno.EINVAL, "unknown mmap offset")
        return Doorbell(self, 0xD00000, size)


@pytest.fixture
def kernel():
    k = MockKernel()
    k.mount_device("/dev/adder", AdderDevice(k))
    k.mount_file("/sys/adder/props", "answer 42\n")
    k.mount_file("/sys/adder/live", lambda: f"count {len(k.listdir('/sys/adder'))}\n")
    return k


def test_paths_route_to_files_and_devices(kernel):
    assert kernel.listdir("/") == ["dev", "sys"]
    assert kernel.listdir("/sys/adder") == ["live", "props"]
    assert kernel.read_text("/sys/adder/props") == "answer 42\n"
    assert kernel.read_text("/sys/adder/live") == "count 2\n"
    assert kernel.exists("/dev/adder") and not kernel.exists("/dev/nope")
    assert kernel.open("/sys/adder/props", os.O_RDONLY).read() == b"answer 42\n"


@pytest.mark.parametrize("call,code", [
    (lambda k: k.open("/dev/nope"), errno.ENOENT),
    (lambda k: k.read_text("/sys/none"), errno.ENOENT),
    (lambda k: k.listdir("/sys/adder/props"), errno.ENOTDIR),
    (lambda k: k.listdir("/nope"), errno.ENOENT),
    (lambda k: k.open("/sys/adder/props", os.O_RDWR), errno.EACCES),
    (lambda k: k.open("/sys"), errno.EISDIR),
])
def test_path_errors_follow_linux(kernel, call, code):
    with pytest.raises(OSError, match=re.escape(os.strerror(code))) as e:
        call(kernel)
    assert e.value.errno == code


def test_ioctl_copies_in_and_out_like_the_kernel(kernel):
    f = kernel.open("/dev/adder")
    word = ctypes.c_uint32(0x11223344)
    args = Args(2, 40, ctypes.addressof(word))
    assert f.ioctl(ADD, args) == 0
    assert args.b == 42 and word.value == 0x44332211
    assert f.ioctl(SET_ONLY, Args(5, 0, 0)) == 0
    sent = Args(5, 0, 0)
    f.ioctl(SET_ONLY, sent)
    assert sent.a == 5  # _IOW: nothing comes back
    got = Args(77, 77, 77)
    f.ioctl(GET_ONLY, got)
    assert got.a == 5
    assert f.ioctl(PING) == 7


def test_unknown_ioctl_is_enotty_naming_the_request(kernel):
    with pytest.raises(OSError, match=r"AdderDevice: unknown ioctl 0x[0-9a-f]+ \(type T, nr 0x55, size 16\)") as e:
        kernel.open("/dev/adder").ioctl(IOWR(ord("T"), 0x55, Args), Args())
    assert e.value.errno == errno.ENOTTY and "0x55" in str(e.value)


def test_short_ioctl_argument_is_efault(kernel):
    with pytest.raises(OSError, match=r"/dev/adder: ioctl 0x[0-9a-f]+ \(type T, nr 0x1, size 16\) with a 4-byte") as e:
        kernel.open("/dev/adder").ioctl(ADD, ctypes.c_uint32(0))
    assert e.value.errno == errno.EFAULT


def test_bad_user_pointer_is_efault_not_a_crash(kernel):
    with pytest.raises(OSError, match=r"copy_from_user\(0x10, 4\): Bad address") as e:
        kernel.open("/dev/adder").ioctl(ADD, Args(1, 1, 0x10))
    assert e.value.errno == errno.EFAULT


def test_device_mmap_calls_back_on_doorbell_writes(kernel):
    f = kernel.open("/dev/adder")
    bell = f.mmap(0, 4096, PROT_READ | PROT_WRITE, 0, 0x1000)
    bell.write32(8, 5)
    assert kernel._devices["/dev/adder"].rung == [(8, 5)]
    with pytest.raises(OSError, match="unknown mmap offset") as e:
        f.mmap(0, 4096, PROT_READ, 0, 0x2000)
    assert e.value.errno == errno.EINVAL


def test_anonymous_mmap_and_closed_files(kernel):
    m = kernel.mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE)
    m.write32(0, 3)
    assert m.read32(0) == 3
    kernel.munmap(m)
    f = kernel.open("/dev/adder")
    f.close()
    with pytest.raises(OSError, match="/dev/adder is closed") as e:
        f.ioctl(PING)
    assert e.value.errno == errno.EBADF


def test_mount_conflicts_are_rejected(kernel):
    with pytest.raises(ValueError, match="/sys/adder/props is already mounted"):
        kernel.mount_file("/sys/adder/props", "again")
    with pytest.raises(ValueError, match="/sys/adder/props is a file, cannot mount below it"):
        kernel.mount_file("/sys/adder/props/child", "x")


def test_file_finds_open_descriptors_only(kernel):
    f = kernel.open("/dev/adder")
    assert kernel.file(f.fd) is f
    f.close()
    with pytest.raises(OSError, match="is not an open device file") as e:
        kernel.file(f.fd)
    assert e.value.errno == errno.EBADF
