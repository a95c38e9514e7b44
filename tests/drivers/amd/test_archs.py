"""The driver end to end on the other emulated archs: gfx1201 (RDNA4, wave32) and gfx942 (CDNA3, wave64
only), with the same clang-19 kernels rebuilt for each (fixtures/drivers/build.sh)."""
import numpy as np
import pytest

import gputwin
from gputwin.abi.code_object import CodeObjectError
from tests.drivers.amd.conftest import FIX
from tests.drivers.amd.test_device import check_odd_copy, run_saxpy

ARCHS = {"gfx1201": 128, "gfx942": 64}   # arch -> a saxpy block of whole waves


@pytest.fixture(scope="module", params=sorted(ARCHS))
def arch_dev(request):
    """(arch, device, OpenCL blob, HIP blob) for one arch; one device per arch keeps the file fast."""
    arch = request.param
    d = gputwin.open_device(f"MOCKAMD:{arch}")
    yield arch, d, (FIX / f"kernels_{arch}_v5.hsaco").read_bytes(), (FIX / f"kernels_hip_{arch}.hsaco").read_bytes()
    d.close()


def test_device_reports_the_requested_arch(arch_dev):
    arch, dev, _, _ = arch_dev
    assert dev.arch == arch


def test_saxpy_is_bit_exact(arch_dev):
    arch, dev, cl, _ = arch_dev
    out, want = run_saxpy(dev, cl, n=1000, block=ARCHS[arch])
    assert out.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def test_hidden_arguments_follow_the_launch(arch_dev):
    _, dev, cl, _ = arch_dev
    o = dev.alloc(64)
    dev.load(cl, "hidden")(o, grid=(3, 2, 4), block=(8, 2, 1))
    got = np.empty(13, np.uint32)
    dev.copyout(got, o)
    assert got.tolist() == [3, 2, 4, 8, 2, 1, 0, 0, 0, 3, 0, 0, 0]


def test_kernel_sees_group_and_grid_sizes(arch_dev):
    _, dev, cl, _ = arch_dev
    grid, block = (3, 2, 2), (4, 2, 2)
    n = int(np.prod(grid) * np.prod(block))
    o = dev.alloc(32 * n)
    dev.load(cl, "sizes")(o, grid=grid, block=block)
    rec = np.empty((n, 8), np.uint32)
    dev.copyout(rec, o)
    gsize = [g * b for g, b in zip(grid, block)]
    z, y, x = (a.ravel() for a in np.meshgrid(*(np.arange(s) for s in gsize[::-1]), indexing="ij"))
    want = np.stack([np.full(n, block[0]), np.full(n, block[1]), np.full(n, block[2]),
                     np.full(n, gsize[0]), np.full(n, gsize[1]), np.full(n, gsize[2]),
                     x % block[0] | (y % block[1]) << 10 | (z % block[2]) << 20,
                     x // block[0] | (y // block[1]) << 10 | (z // block[2]) << 20], axis=1)
    assert (rec == want).all()


def test_lds_barrier_and_relocated_data(arch_dev):
    _, dev, cl, _ = arch_dev
    a = np.arange(512, dtype=np.uint32) * 3
    buf = dev.alloc(a.nbytes)
    dev.copyin(buf, a)
    dev.load(cl, "reverse")(buf, grid=2, block=256)
    o = dev.alloc(64 * 4)
    dev.load(cl, "reloc")(o, grid=1, block=64)
    rev, tab = np.empty_like(a), np.empty(64, np.uint32)
    dev.copyout(rev, buf)
    dev.copyout(tab, o)
    assert (rev == np.concatenate([a[255::-1], a[:255:-1]])).all()
    assert (tab == np.tile([11, 22, 33, 44], 16)).all()


def test_private_memory_goes_through_scratch(arch_dev):
    _, dev, cl, _ = arch_dev
    n, k = 256, 7
    o = dev.alloc(4 * n)
    dev.load(cl, "scratch")(o, k, grid=4, block=64)
    got = np.empty(n, np.uint32)
    dev.copyout(got, o)
    g = np.arange(n, dtype=np.uint32)
    assert (got == ((g * 7 + k) & 63) * k + g).all()


def test_hip_kernels_and_dynamic_shared_memory(arch_dev):
    _, dev, _, hip = arch_dev
    n = 100
    a, b = np.arange(n, dtype=np.float32), np.full(n, 0.25, np.float32)
    ba, bb, bc = dev.alloc(4 * n), dev.alloc(4 * n), dev.alloc(4 * n)
    dev.copyin(ba, a)
    dev.copyin(bb, b)
    dev.load(hip, "vadd")(bc, ba, bb, n, grid=4, block=32)
    out = np.empty(n, np.float32)
    dev.copyout(out, bc)
    assert out.view(np.uint32).tolist() == (a + b).view(np.uint32).tolist()
    o = dev.alloc(4 * 128)
    dev.load(hip, "dyn")(o, grid=2, block=64, lds=64 * 4)    # extern __shared__ unsigned s[]
    got = np.empty(128, np.uint32)
    dev.copyout(got, o)
    l = np.arange(64, dtype=np.uint32)
    assert (got == np.concatenate([(63 - l) * 7, (63 - l) * 7 + 1])).all()


@pytest.mark.parametrize("size,offset", [(1, 0), (3, 1), (4097, 4093)])
def test_copies_of_odd_sizes_and_offsets(arch_dev, size, offset):
    _, dev, _, _ = arch_dev
    check_odd_copy(dev, size, offset)


def test_gfx1100_code_object_is_refused_on_gfx942(hsaco):
    with gputwin.open_device("MOCKAMD:gfx942") as dev:
        with pytest.raises(CodeObjectError, match="gfx1100") as e:
            dev.load(hsaco["v5"], "saxpy")
        assert "gfx942" in str(e.value)
        out, want = run_saxpy(dev, (FIX / "kernels_gfx942_v5.hsaco").read_bytes(), n=64, block=64)
        assert out.tobytes() == want.tobytes()    # the refusal left the device usable
