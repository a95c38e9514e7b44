"""The CPU device (gputwin.drivers.cpu): the public device API over host memory and JIT-ed kernels."""
import numpy as np
import pytest

import gputwin
from gputwin.compiler import compile_kernel, ir, load_kernel
from gputwin.drivers.cpu import CPUDevice
from gputwin.errors import KernelNotFound, MemoryFault, OutOfMemory


@pytest.fixture(scope="module", autouse=True)
def _private_compile_cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("GPUTWIN_CACHE_DIR", str(tmp_path_factory.mktemp("gputwin-cache")))
    yield
    mp.undo()


@pytest.fixture(scope="module")
def dev():
    return CPUDevice()


@pytest.fixture(scope="module")
def axpy():
    k = ir.KernelBuilder("axpy", local_size=(32, 1, 1))
    x, y = k.buffer("x", ir.float32), k.buffer("y", ir.float32)
    a, n = k.scalar("a", ir.float32), k.scalar("n", ir.int32)
    i = k.global_id(0)
    with k.if_(i < n):
        y[i] = a * x[i] + y[i]
    return k.build()


def test_open_device_cpu_gives_the_cpu_device():
    d = gputwin.open_device("CPU")
    assert isinstance(d, CPUDevice) and d.arch == "cpu"


def test_copyin_copyout_round_trip_with_offsets(dev):
    buf = dev.alloc(64)
    data = np.arange(8, dtype=np.int32)
    dev.copyin(buf, data, offset=16)
    out = np.zeros(8, np.int32)
    dev.copyout(out, buf, offset=16)
    assert np.array_equal(out, data) and buf.va % 64 == 0 and buf.size == 64
    raw = bytearray(4)
    dev.copyout(raw, buf, offset=20)
    assert raw == (1).to_bytes(4, "little")


def test_copies_outside_the_buffer_are_refused(dev):
    buf = dev.alloc(16)
    with pytest.raises(ValueError, match="do not fit"):
        dev.copyin(buf, bytes(17))
    with pytest.raises(ValueError, match="do not fit"):
        dev.copyout(bytearray(8), buf, offset=12)


def test_program_runs_with_buffers_and_scalars(dev, axpy):
    x = np.arange(100, dtype=np.float32)
    y = np.ones(100, np.float32)
    bx, by = dev.alloc(400), dev.alloc(400)
    dev.copyin(bx, x)
    dev.copyin(by, y)
    prg = load_kernel(dev, axpy)
    prg(bx, by, 2.5, 100, grid=(4, 1, 1), block=(32, 1, 1))
    dev.synchronize()
    out = np.empty(100, np.float32)
    dev.copyout(out, by)
    assert np.array_equal(out, np.float32(2.5) * x + y)


def test_out_of_bounds_access_raises_memory_fault_not_a_crash(dev, axpy):
    bx, by = dev.alloc(40), dev.alloc(40)
    prg = load_kernel(dev, axpy)
    with pytest.raises(MemoryFault, match="CPU kernel axpy accessed memory outside its buffers") as e:
        prg(bx, by, 1.0, 11, grid=(1, 1, 1), block=(32, 1, 1))
    assert e.value.address == bx.va + 40 and e.value.write is False


def test_bad_arguments_are_refused_before_running(dev, axpy):
    prg = load_kernel(dev, axpy)
    b = dev.alloc(8)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        prg(b, b, 1.0, grid=(1, 1, 1), block=(32, 1, 1))
    with pytest.raises(TypeError, match="buffer of this CPU device"):
        prg(b, CPUDevice().alloc(8), 1.0, 2, grid=(1, 1, 1), block=(32, 1, 1))
    with pytest.raises(TypeError, match="int32, got the float"):
        prg(b, b, 1.0, 2.0, grid=(1, 1, 1), block=(32, 1, 1))
    with pytest.raises(OverflowError, match="does not fit int32"):
        prg(b, b, 1.0, 1 << 40, grid=(1, 1, 1), block=(32, 1, 1))
    with pytest.raises(ValueError, match="compiled for block"):
        prg(b, b, 1.0, 2, grid=(1, 1, 1), block=(64, 1, 1))


def test_load_refuses_foreign_images_and_wrong_names(dev, axpy):
    with pytest.raises(ValueError, match="not a gputwin CPU image"):
        dev.load(compile_kernel(axpy, "gfx1100"), "axpy")
    with pytest.raises(KernelNotFound, match="no kernel 'other' in the CPU image; it has "):
        dev.load(compile_kernel(axpy, "cpu"), "other")
    with pytest.raises(ValueError, match="corrupt"):
        dev.load(b"GTCPUIMG" + (5).to_bytes(4, "little") + b"\xc1xxxx", "axpy")


def test_many_programs_can_be_loaded_and_dropped(dev, axpy):
    """Each load gets its own JIT engine that runs; a dropped program is freed (the device keeps no
    reference to it) and the next load works."""
    import gc
    import weakref
    x = np.arange(64, dtype=np.float32)
    bx, by = dev.alloc(256), dev.alloc(256)
    dev.copyin(bx, x)
    dev.copyin(by, np.zeros(64, np.float32))
    for _ in range(3):
        prg = load_kernel(dev, axpy)
        prg(bx, by, 1.0, 64, grid=(2, 1, 1), block=(32, 1, 1))
        dropped = weakref.ref(prg)
        del prg
        gc.collect()
        assert dropped() is None
    out = np.empty(64, np.float32)
    dev.copyout(out, by)
    assert np.array_equal(out, 3 * x)


def test_runaway_loop_is_a_gpu_hang_not_a_hung_host(dev, monkeypatch):
    from gputwin.errors import GpuHang
    k = ir.KernelBuilder("spin", local_size=(1, 1, 1))
    out, n = k.buffer("out", ir.int64), k.scalar("n", ir.int64)
    acc = k.var(ir.int64, 0)
    with k.range(n) as i:
        acc.set(acc.get() + i)
    out[0] = acc.get()
    prg = load_kernel(dev, k.build())
    b = dev.alloc(8)
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "0.001")           # 200k iterations
    with pytest.raises(GpuHang, match="watchdog"):
        prg(b, 1 << 62, grid=(1, 1, 1), block=(1, 1, 1))
    prg(b, 1000, grid=(1, 1, 1), block=(1, 1, 1))                # within budget: runs
    got = np.zeros(1, np.int64)
    dev.copyout(got, b)
    assert got[0] == sum(range(1000))


def test_an_allocation_larger_than_the_host_can_give_is_out_of_memory(dev):
    with pytest.raises(OutOfMemory, match=f"cannot allocate {1 << 62} bytes of host memory") as e:
        dev.alloc(1 << 62)
    assert isinstance(e.value, MemoryError) and e.value.size == 1 << 62 and e.value.heap == "host"
