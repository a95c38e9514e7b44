"""The NV driver end to end on the mock nvidia.ko + emulated GPU + PTX emulator (DEV=MOCKNV)."""

import numpy as np
import pytest

import gputwin
from gputwin import device as devmod
from gputwin.drivers.hcq import DeviceLost
from gputwin.drivers.nv.device import NVDevice
from gputwin.drivers.nv.rm import RmVersionMismatch
from gputwin.errors import GpuHang, MemoryFault
from gputwin.mock.kernel import MockKernel
from gputwin.mock.nvidia import install


@pytest.fixture(params=["sm_90", "sm_80"])
def dev(request):
    d = gputwin.open_device(f"MOCKNV:{request.param}")
    yield d
    d.close()


def test_open_reports_arch_and_rm_objects(dev):
    assert dev.arch in ("sm_90", "sm_80") and dev.name.endswith(f"({dev.arch})")
    gpu = devmod.emulated_gpu(dev)
    assert gpu.arch == dev.arch and len(gpu.channels) == 2       # compute + copy channels in one TSG


@pytest.mark.parametrize("size,offset", [(1, 0), (3, 5), (4097, 3), (3 << 20, 1), (65536, 65535)])
def test_odd_copies_round_trip(dev, size, offset):
    rng = np.random.default_rng(size + offset)
    data = rng.integers(0, 256, size, np.uint8)
    buf = dev.alloc(size + offset)
    dev.copyin(buf, data, offset)
    out = np.zeros(size, np.uint8)
    dev.copyout(out, buf, offset)
    assert np.array_equal(out, data)


def test_saxpy_is_bit_exact(dev, ptx):
    rng = np.random.default_rng(7)
    n = 1000
    y0 = rng.integers(-1000, 1000, n).astype(np.float32) / np.float32(8)
    x = rng.integers(-1000, 1000, n).astype(np.float32) / np.float32(16)
    y, xb = dev.alloc(4 * n), dev.alloc(4 * n)
    dev.copyin(y, y0)
    dev.copyin(xb, x)
    dev.load(ptx[dev.arch], "saxpy")(y, xb, 2.5, n, grid=(8, 1, 1), block=(128, 1, 1))
    out = np.empty(n, np.float32)
    dev.copyout(out, y)
    want = np.float32(2.5) * x + y0          # exact in float32 for these values (no rounding to differ)
    assert np.array_equal(out.view(np.uint32), want.view(np.uint32))


def test_grid_and_block_geometry(dev, ptx):
    grid, block = (3, 2, 2), (4, 2, 3)
    w, h, d = (g * b for g, b in zip(grid, block))
    out = dev.alloc(4 * w * h * d)
    dev.load(ptx[dev.arch], "ids")(out, w, grid=grid, block=block)
    got = np.empty(w * h * d, np.uint32)
    dev.copyout(got, out)
    z, y, x = np.meshgrid(np.arange(d), np.arange(h), np.arange(w), indexing="ij")
    assert np.array_equal(got, ((z << 20) | (y << 10) | x).reshape(-1).astype(np.uint32))


def test_dynamic_shared_memory(dev, ptx):
    data = np.arange(256, dtype=np.int32)
    buf = dev.alloc(data.nbytes)
    dev.copyin(buf, data)
    dev.load(ptx[dev.arch], "reverse")(buf, grid=4, block=64, lds=64 * 4)
    out = np.empty_like(data)
    dev.copyout(out, buf)
    assert np.array_equal(out, data.reshape(4, 64)[:, ::-1].reshape(-1))


def test_mixed_parameter_types_are_laid_out_per_ptx(dev, ptx):
    out = dev.alloc(5 * 8)
    dev.load(ptx[dev.arch], "mixed")(out, -5, -300, -70000, -(1 << 40), 1.25, grid=1, block=1)
    got = np.empty(5, np.int64)
    dev.copyout(got, out)
    assert got.tolist() == [-5, -300, -70000, -(1 << 40), 2]


def test_wrong_arguments_raise_typeerror_naming_the_signature(dev, ptx):
    prg = dev.load(ptx[dev.arch], "saxpy")
    buf = dev.alloc(16)
    with pytest.raises(TypeError, match=r"saxpy\(\.u64 saxpy_param_0, .*takes 4 arguments, got 2"):
        prg(buf, buf)
    with pytest.raises(TypeError, match=r"saxpy_param_3: -8589934592 does not fit \.u32"):
        prg(buf, buf, 1.0, -(1 << 33))
    with pytest.raises(TypeError, match="saxpy_param_2: wants a number"):
        prg(buf, buf, "x", 1)
    with pytest.raises(KeyError, match="no kernel 'nope'"):
        dev.load(ptx[dev.arch], "nope")


def test_copies_and_launches_are_ordered_by_the_timeline(dev, ptx):
    """copy -> kernel -> copy -> kernel on two channels: each waits for the previous semaphore value."""
    n = 256
    y, x = dev.alloc(4 * n), dev.alloc(4 * n)
    prg = dev.load(ptx[dev.arch], "saxpy")
    dev.copyin(y, np.zeros(n, np.float32))
    dev.copyin(x, np.ones(n, np.float32))
    prg(y, x, 1.0, n, grid=2, block=128)
    dev.copyin(x, np.full(n, 2, np.float32))
    prg(y, x, 1.0, n, grid=2, block=128)
    out = np.empty(n, np.float32)
    dev.copyout(out, y)
    assert np.array_equal(out, np.full(n, 3, np.float32))
    assert dev.timeline_signal.value == dev.timeline_value - 1


def test_two_devices_at_once(ptx):
    a, b = gputwin.open_device("MOCKNV:sm_90,MOCKNV:sm_80")
    try:
        assert (a.arch, b.arch) == ("sm_90", "sm_80")
        ba, bb = a.alloc(64), b.alloc(64)
        a.copyin(ba, np.full(16, 1, np.uint32))
        b.copyin(bb, np.full(16, 2, np.uint32))
        with pytest.raises(TypeError, match="belongs to"):
            a.load(ptx["sm_90"], "poke")(bb, 1)
        oa, ob = np.empty(16, np.uint32), np.empty(16, np.uint32)
        a.copyout(oa, ba)
        b.copyout(ob, bb)
        assert oa.tolist() == [1] * 16 and ob.tolist() == [2] * 16
    finally:
        a.close()
        b.close()


def test_fault_reports_the_address_then_the_device_is_lost(ptx):
    dev = gputwin.open_device("MOCKNV")
    dev.load(ptx["sm_90"], "poke")(dev.alloc(4), 1, grid=1, block=1)
    dev.synchronize()
    prg = dev.load(ptx["sm_90"], "poke")
    bad = 0xDEAD0000
    with pytest.raises(MemoryFault, match="MMU fault") as e:
        prg(bad, 7, grid=1, block=1)        # a .u64 parameter also takes a plain integer address
        dev.synchronize()
    assert e.value.address == bad
    with pytest.raises(DeviceLost, match="unusable after an earlier error"):
        dev.alloc(16)
    fresh = gputwin.open_device("MOCKNV")
    b = fresh.alloc(4)
    fresh.copyin(b, b"abcd")
    out = bytearray(4)
    fresh.copyout(out, b)
    assert out == b"abcd"
    fresh.close()


def test_hang_is_reported_by_the_watchdog(ptx, monkeypatch):
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "0.5")
    dev = gputwin.open_device("MOCKNV")
    flag = dev.alloc(4)
    dev.copyin(flag, b"\0\0\0\0")
    dev.load(ptx["sm_90"], "spin")(flag, grid=1, block=1)
    with pytest.raises(GpuHang):
        dev.synchronize()
    with pytest.raises(DeviceLost):
        dev.synchronize()


def test_rm_version_mismatch_is_refused_with_both_versions():
    kernel = MockKernel()
    install(kernel, ["sm_90"], version="570.86.15")
    with pytest.raises(RmVersionMismatch, match="'570.86.15'.*written for '580.105.08'"):
        NVDevice(kernel, 0, ptx_native=True)


def test_close_frees_every_rm_object_and_uvm_mapping():
    kernel = MockKernel()
    rm = install(kernel, ["sm_90"])
    dev = NVDevice(kernel, 0, ptx_native=True)
    dev.alloc(1 << 20)
    assert rm.clients and rm.gpus[0].emu.mem.regions()
    dev.close()
    assert not rm.clients and not rm.gpus[0].emu.mem.regions() and not rm.gpus[0].emu.channels


def test_trap_is_a_gpu_fault_reported_through_the_error_notifier(ptx):
    from gputwin.errors import GpuFault
    dev = gputwin.open_device("MOCKNV")
    out = dev.alloc(64)
    dev.load(ptx["sm_90"], "trapper")(out, grid=1, block=8)
    with pytest.raises(GpuFault, match="robust-channel code 13") as e:
        dev.synchronize()
    assert e.value.kind == "rc13" and not isinstance(e.value, MemoryFault)
    with pytest.raises(DeviceLost, match="robust-channel code 13"):
        dev.copyin(out, b"1234")


def test_gpfifo_pushbuffer_and_launch_pool_wrap(ptx, monkeypatch):
    """A small pushbuffer and many submissions: GPFIFO (1024 entries), pushbuffer and launch-slot pool all wrap."""
    import gputwin.drivers.nv.channel as channel_mod
    import gputwin.drivers.nv.device as device_mod
    monkeypatch.setattr(channel_mod, "PUSHBUF_BYTES", 4096)
    monkeypatch.setattr(device_mod, "PUSHBUF_BYTES", 4096)
    dev = gputwin.open_device("MOCKNV")
    out = dev.alloc(4 * 64)
    prg = dev.load(ptx["sm_90"], "poke")
    for i in range(1100):
        prg(out.va + 4 * (i % 64), i, grid=1, block=1)
    got = np.empty(64, np.uint32)
    dev.copyout(got, out)
    assert got.tolist() == [max(i for i in range(1100) if i % 64 == j) for j in range(64)]
    assert dev.compute_channel.put == 1101 % 1024                 # SET_OBJECT + 1100 launches
    dev.close()


def test_free_unmaps_the_buffer_from_the_gpu(ptx):
    dev = gputwin.open_device("MOCKNV")
    gpu = devmod.emulated_gpu(dev)
    buf = dev.alloc(1 << 20)
    assert gpu.mem.find(buf.va) is not None
    dev.free(buf)
    assert gpu.mem.find(buf.va) is None
    with pytest.raises(ValueError, match="was freed"):
        dev.copyin(buf, b"x")
    dev.close()


def test_two_devices_on_one_gpu_share_it_safely(ptx):
    a, b = gputwin.open_device("MOCKNV:0,MOCKNV:0")
    try:
        assert devmod.emulated_gpu(a) is devmod.emulated_gpu(b) and len(devmod.emulated_gpu(a).channels) == 4
        xa, xb = a.alloc(256), b.alloc(256)
        assert not (xa.va < xb.va + xb.size and xb.va < xa.va + xa.size)
        a.load(ptx["sm_90"], "poke")(xa, 11, grid=1, block=1)
        b.load(ptx["sm_90"], "poke")(xb, 22, grid=1, block=1)
        ga, gb = np.empty(1, np.uint32), np.empty(1, np.uint32)
        a.copyout(ga, xa)
        b.copyout(gb, xb)
        assert (ga[0], gb[0]) == (11, 22)
    finally:
        a.close()
        b.close()
