"""AMDDevice end to end: open_device("MOCKAMD") -> mock KFD -> emulated gfx1100, with clang-19 kernels."""
import time

import numpy as np
import pytest

import gputwin
from gputwin.abi.code_object import CodeObjectError
from gputwin.drivers.amd.device import AMDDevice
from gputwin.drivers.hcq import DeviceLost


@pytest.fixture
def dev():
    d = gputwin.open_device("MOCKAMD")
    yield d
    d.close()


def saxpy_reference(a, x, y):
    """a*x+y rounded once, as V_FMAC_F32 does (the product is exact in float64)."""
    return (np.float64(a) * x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)


def run_saxpy(dev, blob, n=1000, a=1.75, block=128, seed=0):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    bx, by = dev.alloc(4 * n), dev.alloc(4 * n)
    dev.copyin(bx, x)
    dev.copyin(by, y)
    dev.load(blob, "saxpy")(by, bx, a, n, grid=((n + block - 1) // block, 1, 1), block=(block, 1, 1))
    out = np.empty(n, np.float32)
    dev.copyout(out, by)
    return out, saxpy_reference(np.float32(a), x, y)


@pytest.mark.parametrize("which", ["v5", "v4", "w64", "v6"])
def test_saxpy_is_bit_exact(dev, hsaco, which):
    out, want = run_saxpy(dev, hsaco[which], block=64 if which == "w64" else 128)
    assert out.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def test_device_reports_its_arch(dev):
    assert isinstance(dev, AMDDevice) and dev.arch == "gfx1100"


def test_hidden_arguments_follow_the_launch(dev, hsaco):
    o = dev.alloc(64)
    dev.load(hsaco["v5"], "hidden")(o, grid=(3, 2, 4), block=(8, 2, 1))
    got = np.empty(13, np.uint32)
    dev.copyout(got, o)
    assert got.tolist() == [3, 2, 4, 8, 2, 1, 0, 0, 0, 3, 0, 0, 0]


@pytest.mark.parametrize("which", ["v5", "v4"])
def test_kernel_sees_group_and_grid_sizes(dev, hsaco, which):
    grid, block = (3, 2, 2), (4, 2, 2)
    n = int(np.prod(grid) * np.prod(block))
    o = dev.alloc(32 * n)
    dev.load(hsaco[which], "sizes")(o, grid=grid, block=block)
    rec = np.empty((n, 8), np.uint32)
    dev.copyout(rec, o)
    gsize = [g * b for g, b in zip(grid, block)]
    z, y, x = np.meshgrid(*(np.arange(s) for s in gsize[::-1]), indexing="ij")
    x, y, z = x.ravel(), y.ravel(), z.ravel()
    want = np.stack([np.full(n, block[0]), np.full(n, block[1]), np.full(n, block[2]),
                     np.full(n, gsize[0]), np.full(n, gsize[1]), np.full(n, gsize[2]),
                     x % block[0] | (y % block[1]) << 10 | (z % block[2]) << 20,
                     x // block[0] | (y // block[1]) << 10 | (z // block[2]) << 20], axis=1)
    assert (rec == want).all()


def test_every_scalar_type_reaches_the_kernel(dev, hsaco):
    out = dev.alloc(80)
    vals = (-3, 250, -30000, 65000, -(2 ** 31), 2 ** 32 - 1, -(2 ** 63), 2 ** 64 - 1, 1.5, -0.1)
    dev.load(hsaco["v5"], "scalars")(out, *vals)
    got = np.empty(10, np.uint64)
    dev.copyout(got, out)
    want = [v & (2 ** 64 - 1) for v in vals[:8]] + [int(np.float32(1.5).view(np.uint32)),
                                                     int(np.float64(-0.1).view(np.uint64))]
    assert got.tolist() == want


def test_lds_barrier_and_relocated_data(dev, hsaco):
    a = np.arange(512, dtype=np.uint32) * 3
    buf = dev.alloc(a.nbytes)
    dev.copyin(buf, a)
    dev.load(hsaco["v5"], "reverse")(buf, grid=2, block=256)
    o = dev.alloc(64 * 4)
    dev.load(hsaco["v5"], "reloc")(o, grid=1, block=64)
    rev, tab = np.empty_like(a), np.empty(64, np.uint32)
    dev.copyout(rev, buf)
    dev.copyout(tab, o)
    assert (rev == np.concatenate([a[255::-1], a[:255:-1]])).all()
    assert (tab == np.tile([11, 22, 33, 44], 16)).all()


def test_private_memory_goes_through_scratch(dev, hsaco):
    n, k = 256, 7
    o = dev.alloc(4 * n)
    dev.load(hsaco["v5"], "scratch")(o, k, grid=4, block=64)
    got = np.empty(n, np.uint32)
    dev.copyout(got, o)
    g = np.arange(n, dtype=np.uint32)
    assert (got == ((g * 7 + k) & 63) * k + g).all()


def test_launches_and_copies_run_in_program_order(dev, hsaco):
    n = 256
    x = np.arange(n, dtype=np.float32)
    bx, by = dev.alloc(4 * n), dev.alloc(4 * n)
    dev.copyin(bx, x)
    dev.copyin(by, np.zeros(n, np.float32))
    prg = dev.load(hsaco["v5"], "saxpy")
    for _ in range(3):
        prg(by, bx, 2.0, n, grid=2, block=128)
    dev.copyin(bx, np.ones(n, np.float32))    # must wait for the kernels that read bx
    prg(by, bx, 1.0, n, grid=2, block=128)
    out = np.empty(n, np.float32)
    dev.copyout(out, by)
    assert (out == 6 * x + 1).all()


def test_kernarg_pool_wraps_after_synchronizing(monkeypatch, hsaco):
    monkeypatch.setattr(AMDDevice, "kernarg_pool_size", 4096)
    with gputwin.open_device("MOCKAMD") as dev:
        n = 64
        by, bx = dev.alloc(4 * n), dev.alloc(4 * n)
        dev.copyin(bx, np.ones(n, np.float32))
        dev.copyin(by, np.zeros(n, np.float32))
        prg = dev.load(hsaco["v5"], "saxpy")
        for _ in range(20):     # 20 slots of 320 bytes do not fit 4 KiB
            prg(by, bx, 1.0, n, grid=1, block=64)
        out = np.empty(n, np.float32)
        dev.copyout(out, by)
        assert (out == 20).all()


def test_rings_wrap_many_times(monkeypatch, hsaco):
    monkeypatch.setattr(AMDDevice, "ring_size", 4096)   # ~10 launches or ~40 copies per turn of the ring
    with gputwin.open_device("MOCKAMD") as dev:
        n = 64
        by, bx = dev.alloc(4 * n), dev.alloc(4 * n)
        dev.copyin(bx, np.full(n, 2, np.float32))
        dev.copyin(by, np.zeros(n, np.float32))
        prg = dev.load(hsaco["v5"], "saxpy")
        for i in range(60):
            prg(by, bx, 0.5, n, grid=1, block=64)
            dev.copyin(bx, np.full(n, 2 + i + 1, np.float32))   # read by the next launch only
        out = np.empty(n, np.float32)
        dev.copyout(out, by)
        assert (out == sum(0.5 * (2 + i) for i in range(60))).all()
        assert dev.compute_ring.put > 2 * dev.compute_ring.size_dw and dev.copy_ring.put > dev.copy_ring.size_dw


@pytest.mark.parametrize("size,offset", [(1, 0), (3, 1), (4097, 4093), (5 * 4096 + 7, 13)])
def test_copies_of_odd_sizes_and_offsets(dev, size, offset):
    check_odd_copy(dev, size, offset)


def check_odd_copy(dev, size, offset):
    """copyin/copyout of `size` bytes at `offset` inside a larger buffer leave its other bytes alone."""
    rng = np.random.default_rng(size)
    total = size + offset + 9
    base = rng.integers(0, 256, total, np.uint8)
    buf = dev.alloc(total)
    dev.copyin(buf, base)
    data = rng.integers(0, 256, size, np.uint8)
    dev.copyin(buf, data, offset)
    want = base.copy()
    want[offset:offset + size] = data
    whole, part = np.empty(total, np.uint8), bytearray(size)
    dev.copyout(whole, buf)
    dev.copyout(part, buf, offset)
    assert (whole == want).all() and bytes(part) == data.tobytes()


def test_copies_larger_than_the_staging_buffers(dev):
    n = 2 * dev.staging_size + 12345
    data = np.random.default_rng(5).integers(0, 256, n, np.uint8)
    buf = dev.alloc(n)
    dev.copyin(buf, data)
    out = np.empty(n, np.uint8)
    dev.copyout(out, buf)
    assert (out == data).all()


def test_freed_buffers_are_refused_and_their_memory_returned(dev, hsaco):
    bufs = [dev.alloc(1 << 20) for _ in range(3)]
    live = len(dev.gpu._live)
    dev.free(bufs[1])
    assert len(dev.gpu._live) == live - 1
    with pytest.raises(ValueError, match="freed"):
        dev.copyin(bufs[1], b"abc")
    with pytest.raises(TypeError, match="freed"):
        dev.load(hsaco["v5"], "hidden")(bufs[1], grid=1, block=1)
    dev.copyin(bufs[2], b"still fine")
    out = bytearray(10)
    dev.copyout(out, bufs[2])
    assert out == b"still fine"


def test_copy_outside_the_buffer_is_refused(dev):
    buf = dev.alloc(16)
    with pytest.raises(ValueError, match="do not fit"):
        dev.copyin(buf, b"x" * 10, offset=8)
    with pytest.raises(ValueError, match="do not fit"):
        dev.copyout(bytearray(17), buf)
    with pytest.raises(TypeError, match="writable"):
        dev.copyout(b"x" * 4, buf)
    with pytest.raises(ValueError, match="contiguous"):
        dev.copyout(np.zeros((4, 4), np.uint8)[:, 1], buf)
    dev.copyout(np.zeros(16, np.uint8), buf)   # nothing above broke the device


def test_wrong_arguments_raise_type_error_with_the_signature(dev, hsaco):
    prg = dev.load(hsaco["v5"], "saxpy")
    b = dev.alloc(16)
    with pytest.raises(TypeError, match=r"saxpy\(float\* y, float\* x, float a, int n\)"):
        prg(b, b, 1.0, grid=1, block=1)
    with pytest.raises(TypeError, match="got float"):
        prg(b, b, 1.0, 2.5, grid=1, block=1)
    with pytest.raises(TypeError, match="wants a buffer"):
        prg(b, np.zeros(4, np.float32), 1.0, 4, grid=1, block=1)
    with pytest.raises(ValueError, match="work-items"):
        prg(b, b, 1.0, 4, grid=1, block=(1024, 2, 1))


def test_loading_refuses_other_archs_and_unknown_kernels(dev, hsaco, tmp_path):
    with pytest.raises(KeyError, match="saxpy"):
        dev.load(hsaco["v5"], "nope")
    blob = bytearray(hsaco["v5"])
    blob[48] = 0x4C   # e_flags: EF_AMDGPU_MACH gfx942
    with pytest.raises(CodeObjectError, match="gfx942"):
        dev.load(bytes(blob), "saxpy")


def test_two_devices_at_once(hsaco):
    d0, d1 = gputwin.open_device("MOCKAMD,MOCKAMD")
    try:
        assert d0.gpu.gpu_id != d1.gpu.gpu_id
        (o0, w0), (o1, w1) = run_saxpy(d0, hsaco["v5"], seed=1), run_saxpy(d1, hsaco["w64"], seed=2, block=64)
        assert o0.tobytes() == w0.tobytes() and o1.tobytes() == w1.tobytes()
        with pytest.raises(TypeError, match="belongs to"):
            d1.load(hsaco["v5"], "fault")(d0.alloc(16), 0, grid=1, block=1)
    finally:
        d0.close()
        d1.close()


def test_memory_fault_names_the_address_and_a_fresh_device_works(hsaco):
    dev = gputwin.open_device("MOCKAMD")
    buf = dev.alloc(4096)
    dev.load(hsaco["v5"], "fault")(buf, 1 << 36, grid=1, block=32)
    with pytest.raises(gputwin.GpuFault, match="memory fault") as e:
        dev.synchronize()
    assert e.value.address == buf.va + (1 << 36)
    with pytest.raises(DeviceLost, match="earlier error"):
        dev.alloc(16)
    dev.close()
    out, want = run_saxpy(gputwin.open_device("MOCKAMD"), hsaco["v5"])
    assert out.tobytes() == want.tobytes()


@pytest.mark.parametrize("spec", ["MOCKAMD", "MOCKUSBAMD"])
def test_kernel_that_never_ends_is_a_hang(monkeypatch, hsaco, spec):
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "0.5")
    dev = gputwin.open_device(spec)
    flag = dev.alloc(4)
    dev.copyin(flag, np.zeros(1, np.uint32))
    t0 = time.monotonic()
    dev.load(hsaco["v5"], "spin")(flag, grid=1, block=32)
    with pytest.raises(gputwin.GpuHang, match=r"(?i)hang|hung|watchdog"):
        dev.synchronize()
    assert time.monotonic() - t0 < 10
    dev.close()
    monkeypatch.delenv("GPUTWIN_WATCHDOG_S")   # the default again: the next check must not race a short watchdog
    out, want = run_saxpy(gputwin.open_device(spec), hsaco["v5"])
    assert out.tobytes() == want.tobytes()


def test_local_pointer_arguments_get_lds_after_the_static_amount(dev, hsaco):
    from gputwin.abi.kernargs import LocalMemory
    a = np.arange(256, dtype=np.uint32) * 5
    buf = dev.alloc(a.nbytes)
    dev.copyin(buf, a)
    prg = dev.load(hsaco["v5"], "lrev")
    prg(buf, LocalMemory(128 * 4), LocalMemory(128 * 2), grid=2, block=128)
    out = np.empty_like(a)
    dev.copyout(out, buf)
    l = np.arange(128, dtype=np.uint32)
    want = np.concatenate([a[127::-1], a[:127:-1]]) + (np.tile(l[::-1] * 3, 2) << 20)
    assert (out == want).all()
    queued = dev.timeline_value
    with pytest.raises(TypeError, match=r"LocalMemory\(nbytes\)"):
        prg(buf, 512, LocalMemory(256), grid=2, block=128)
    with pytest.raises(ValueError, match="LDS"):
        prg(buf, LocalMemory(70000), LocalMemory(256), grid=2, block=128)
    assert dev.timeline_value == queued                                  # the refusals queued nothing
    prg(buf, LocalMemory(512), LocalMemory(256), grid=2, block=128)     # so one more pass, exactly
    again = np.empty_like(a)
    dev.copyout(again, buf)
    assert (again == np.concatenate([out[127::-1], out[:127:-1]]) + (np.tile(l[::-1] * 3, 2) << 20)).all()


def test_hip_kernels_with_unnamed_arguments_and_dynamic_shared_memory(dev, hsaco):
    n = 100
    a, b = np.arange(n, dtype=np.float32), np.full(n, 0.25, np.float32)
    ba, bb, bc = dev.alloc(4 * n), dev.alloc(4 * n), dev.alloc(4 * n)
    dev.copyin(ba, a)
    dev.copyin(bb, b)
    vadd = dev.load(hsaco["hip"], "vadd")
    vadd(bc, ba, bb, n, grid=4, block=32)
    out = np.empty(n, np.float32)
    dev.copyout(out, bc)
    assert (out == a + b).all()
    with pytest.raises(TypeError, match=r"vadd\(void\* arg0, void\* arg1, void\* arg2, <4-byte by_value> arg3\)"):
        vadd(bc, ba, bb, grid=1, block=1)
    o = dev.alloc(4 * 128)
    dev.load(hsaco["hip"], "dyn")(o, grid=2, block=64, lds=64 * 4)    # extern __shared__ unsigned s[]
    got = np.empty(128, np.uint32)
    dev.copyout(got, o)
    l = np.arange(64, dtype=np.uint32)
    assert (got == np.concatenate([(63 - l) * 7, (63 - l) * 7 + 1])).all()


def test_emulated_gpu_counts_what_a_launch_executed(hsaco):
    from gputwin.device import emulated_gpu, open_device
    first, second = open_device("MOCKAMD,MOCKAMD")
    gpu = emulated_gpu(second)
    assert gpu is not None and gpu is not emulated_gpu(first)
    before = (gpu.stats.dispatches, gpu.stats.wave_insts, gpu.stats.lane_ops)
    out, want = run_saxpy(second, hsaco["v5"], n=256, block=64)
    assert out.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert gpu.stats.dispatches == before[0] + 1
    assert gpu.stats.wave_insts > before[1] and gpu.stats.lane_ops >= 256 + before[2]
    assert emulated_gpu(first).stats.dispatches == 0
