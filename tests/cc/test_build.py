"""`gputwin cc`: OpenCL C and HIP kernels built with gputwin's device library run on every emulated arch,
and the built-ins they call return what OpenCL / HIP define."""
import numpy as np
import pytest

from gputwin import cc
from gputwin.abi.code_object import CodeObject
from tests.cc.conftest import ARCHS, float_ulps

IDS_CL = r"""
__kernel void ids(__global uint *o) {
  uint i = get_global_id(0) + get_global_size(0) * get_global_id(1);
  __global uint *r = o + 12 * i;
  r[0] = get_global_id(0); r[1] = get_global_id(1); r[2] = get_local_id(0); r[3] = get_local_id(1);
  r[4] = get_group_id(0); r[5] = get_group_id(1); r[6] = get_local_size(0); r[7] = get_local_size(1);
  r[8] = get_num_groups(0); r[9] = get_global_size(1); r[10] = get_work_dim(); r[11] = get_local_linear_id();
}
"""


def expected_ids(grid, block) -> np.ndarray:
    gx, gy = grid[0] * block[0], grid[1] * block[1]
    y, x = np.mgrid[0:gy, 0:gx]
    cols = [x, y, x % block[0], y % block[1], x // block[0], y // block[1], np.full_like(x, block[0]),
            np.full_like(x, block[1]), np.full_like(x, grid[0]), np.full_like(x, gy), np.full_like(x, 2),
            (y % block[1]) * block[0] + x % block[0]]
    return np.stack(cols, -1).reshape(-1).astype(np.uint32)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("cov", [5, 4])
def test_work_item_functions_on_every_arch(toolchain, devices, arch, cov):
    dev = devices(arch)
    prg = dev.load(cc.compile_source(IDS_CL, "opencl", arch, cov=cov), "ids")
    grid, block = (3, 2, 1), (8, 4, 1)
    n = grid[0] * block[0] * grid[1] * block[1]
    out = np.zeros(12 * n, np.uint32)
    buf = dev.alloc(out.nbytes)
    prg(buf, grid=grid[:2], block=block[:2])
    dev.copyout(out, buf)
    dev.synchronize()
    np.testing.assert_array_equal(out, expected_ids(grid, block))


SYNC_CL = r"""
__kernel void reverse(__global int *a) {           /* barrier + LDS */
  __local int t[64];
  size_t l = get_local_id(0), n = get_local_size(0);
  t[l] = a[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  a[get_global_id(0)] = t[n - 1 - l];
}
__kernel void counts(__global int *bins, __global const int *in, __global uint *c, __global int *mm) {
  int v = in[get_global_id(0)];
  atomic_add(&bins[v & 7], 1);                     /* OpenCL 1.x atomics */
  atomic_inc(&c[0]);
  atomic_max(&mm[0], v); atomic_min(&mm[1], v);
  atomic_fetch_add((volatile __global atomic_uint *)&c[1], 2u);   /* OpenCL 2.0 atomics */
  __local int l;
  if (get_local_id(0) == 0) l = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_add(&l, v);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) atomic_add(&mm[2], l);
}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_barriers_and_atomics(toolchain, devices, rng, arch):
    dev = devices(arch)
    image = cc.compile_source(SYNC_CL, "opencl", arch)
    a = rng.integers(-1000, 1000, 256).astype(np.int32)
    buf = dev.alloc(a.nbytes)
    dev.copyin(buf, a)
    dev.load(image, "reverse")(buf, grid=4, block=64)
    got = np.empty_like(a)
    dev.copyout(got, buf)
    np.testing.assert_array_equal(got, a.reshape(4, 64)[:, ::-1].reshape(-1))
    bins, c, mm = dev.alloc(32), dev.alloc(8), dev.alloc(12)
    dev.copyin(bins, np.zeros(8, np.int32))
    dev.copyin(c, np.zeros(2, np.uint32))
    dev.copyin(mm, np.array([-(1 << 31), (1 << 31) - 1, 0], np.int32))
    dev.load(image, "counts")(bins, buf, c, mm, grid=4, block=64)
    out = [np.empty(8, np.int32), np.empty(2, np.uint32), np.empty(3, np.int32)]
    for host, b in zip(out, (bins, c, mm)):
        dev.copyout(host, b)
    dev.synchronize()
    np.testing.assert_array_equal(out[0], np.bincount(a & 7, minlength=8))
    np.testing.assert_array_equal(out[1], [256, 512])
    np.testing.assert_array_equal(out[2], [a.max(), a.min(), a.sum()])


MATH_CL = r"""
__kernel void exact(__global float *o, __global const float *x, __global const float *y) {
  size_t i = get_global_id(0), n = get_global_size(0);
  float a = x[i], b = y[i];
  o[i] = floor(a); o[n + i] = ceil(a); o[2 * n + i] = trunc(a); o[3 * n + i] = rint(a);
  o[4 * n + i] = round(a); o[5 * n + i] = fabs(a); o[6 * n + i] = sqrt(fabs(a));
  o[7 * n + i] = fma(a, b, a); o[8 * n + i] = fmin(a, b); o[9 * n + i] = fmax(a, b);
  o[10 * n + i] = copysign(a, b); o[11 * n + i] = clamp(a, -1.0f, 1.0f);
}
__kernel void explog(__global float *o, __global const float *x) {
  size_t i = get_global_id(0), n = get_global_size(0);
  float a = x[i];
  o[i] = exp(a); o[n + i] = exp2(a); o[2 * n + i] = log(fabs(a)); o[3 * n + i] = log2(fabs(a));
  o[4 * n + i] = log10(fabs(a));
}
__kernel void converts(__global int *o, __global float *f, __global const float *x, __global const int *y) {
  size_t i = get_global_id(0), n = get_global_size(0);
  o[i] = convert_int(x[i]); f[i] = convert_float(y[i] * 16777217);
  if (i % 4 == 0) {
    int4 v = convert_int4(*(__global const float4 *)(x + i));
    *(__global int4 *)(o + n + i) = v;
    *(__global uchar4 *)(o + 2 * n + i / 4) = convert_uchar4(v);
  }
}
__kernel void ints(__global int *o, __global const int *x, __global const int *y) {
  size_t i = get_global_id(0), n = get_global_size(0);
  o[i] = min(x[i], y[i]); o[n + i] = max(x[i], y[i]); o[2 * n + i] = clamp(x[i], -5, 5); o[3 * n + i] = abs(x[i]);
}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_math_matches_numpy(toolchain, devices, rng, arch):
    dev = devices(arch)
    image = cc.compile_source(MATH_CL, "opencl", arch)
    n = 256
    x = (rng.standard_normal(n) * 8).astype(np.float32)
    x[:6] = [0.5, -0.5, 1.5, 2.5, -2.5, 0.0]        # round-half cases: rint to even, round away from zero
    y = (rng.standard_normal(n) * 8).astype(np.float32)
    bx, by, bo = dev.alloc(4 * n), dev.alloc(4 * n), dev.alloc(4 * n * 12)
    dev.copyin(bx, x)
    dev.copyin(by, y)
    dev.load(image, "exact")(bo, bx, by, grid=n // 64, block=64)
    got = np.empty(12 * n, np.float32)
    dev.copyout(got, bo)
    want = [np.floor(x), np.ceil(x), np.trunc(x), np.rint(x), np.copysign(np.floor(np.abs(x) + 0.5), x), np.abs(x),
            np.sqrt(np.abs(x)), (x.astype(np.float64) * y + x).astype(np.float32), np.fmin(x, y), np.fmax(x, y),
            np.copysign(x, y), np.clip(x, -1, 1)]
    np.testing.assert_array_equal(got.view(np.uint32), np.concatenate(want).astype(np.float32).view(np.uint32))
    dev.load(image, "explog")(bo, bx, grid=n // 64, block=64)
    got = np.empty(5 * n, np.float32)
    dev.copyout(got, bo)
    x64, ax = x.astype(np.float64), np.abs(x.astype(np.float64))
    with np.errstate(divide="ignore"):
        want = np.concatenate([np.exp(x64), np.exp2(x64), np.log(ax), np.log2(ax), np.log10(ax)])
    assert float_ulps(got, want).max() <= 3            # OpenCL C's limit for exp, exp2, log, log2, log10 (7.4)
    yi = rng.integers(-100, 100, n).astype(np.int32)
    bf = dev.alloc(4 * n)
    dev.copyin(by, yi)
    dev.load(image, "converts")(bo, bf, bx, by, grid=n // 64, block=64)
    got, gotf = np.empty(2 * n + n // 4, np.int32), np.empty(n, np.float32)
    dev.copyout(got, bo)
    dev.copyout(gotf, bf)
    t = np.trunc(x).astype(np.int32)                 # default rounding to integers: toward zero, as a cast
    np.testing.assert_array_equal(got[:n], t)
    np.testing.assert_array_equal(got[n:2 * n], t)
    np.testing.assert_array_equal(got[2 * n:].view(np.uint8), t.astype(np.uint8))
    np.testing.assert_array_equal(gotf, (yi * 16777217).astype(np.float32))   # to float: nearest even
    xi, yi = rng.integers(-100, 100, (2, n)).astype(np.int32)
    dev.copyin(bx, xi)
    dev.copyin(by, yi)
    dev.load(image, "ints")(bo, bx, by, grid=n // 64, block=64)
    got = np.empty(4 * n, np.int32)
    dev.copyout(got, bo)
    dev.synchronize()
    np.testing.assert_array_equal(got, np.concatenate([np.minimum(xi, yi), np.maximum(xi, yi), np.clip(xi, -5, 5),
                                                       np.abs(xi)]))


HIP = r"""
#include <hip/hip_runtime.h>
__global__ void scan(float *out, const float *in, unsigned *hits, int n) {
  __shared__ float t[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  t[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (unsigned k = 0; k < blockDim.x; k++) s += t[k];
    out[blockIdx.x] = s;
    atomicAdd(&hits[0], 1u);
    atomicMax(&hits[1], gridDim.x * 100 + blockIdx.x);
  }
  if (i < n) out[gridDim.x + i] = sqrtf(fabsf(in[i])) + fminf(in[i], 0.0f);
}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_hip_kernel_by_its_cpp_name(toolchain, devices, rng, arch):
    dev = devices(arch)
    image = cc.compile_source(HIP, "hip", arch)
    assert list(CodeObject.parse(image).kernels) == ["_Z4scanPfPKfPji"]
    x = rng.standard_normal(200).astype(np.float32)
    bi, bo, bh = dev.alloc(800), dev.alloc(4 * 204), dev.alloc(8)
    dev.copyin(bi, x)
    dev.copyin(bh, np.zeros(2, np.uint32))
    dev.load(image, "scan")(bo, bi, bh, 200, grid=4, block=64)
    out, hits = np.empty(204, np.float32), np.empty(2, np.uint32)
    dev.copyout(out, bo)
    dev.copyout(hits, bh)
    dev.synchronize()
    sums = [np.float32(0)] * 4
    for b in range(4):
        for v in np.pad(x, (0, 56))[64 * b:64 * b + 64]:
            sums[b] = np.float32(sums[b] + v)
    np.testing.assert_array_equal(out[:4], sums)
    np.testing.assert_array_equal(out[4:], np.sqrt(np.abs(x)) + np.fmin(x, np.float32(0)))
    np.testing.assert_array_equal(hits, [4, 403])


def test_builds_are_reproducible_and_wave64_is_honoured(toolchain):
    a = cc.compile_source(IDS_CL, "opencl", "gfx1100")
    assert a == cc.compile_source(IDS_CL, "opencl", "gfx1100")
    assert cc.compile_source(HIP, "hip", "gfx1100") == cc.compile_source(HIP, "hip", "gfx1100")
    assert CodeObject.parse(a).kernels["ids"].wavefront_size == 32
    w64 = CodeObject.parse(cc.compile_source(IDS_CL, "opencl", "gfx1100", wave64=True))
    assert w64.kernels["ids"].wavefront_size == 64


def test_only_what_the_kernel_calls_is_linked(toolchain):
    co = CodeObject.parse(cc.compile_source(IDS_CL, "opencl", "gfx1100"))
    names = {s.name for s in co.symbols if s.name}
    assert "__printf_alloc" not in names and not any(n.startswith("_Z") for n in names)


WARP_HIP = r"""
#include <hip/hip_runtime.h>
__global__ void warp(int *o, const int *in) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  for (int m = 1; m < warpSize; m <<= 1) v += __shfl_xor(v, m);      /* butterfly: every lane gets the sum */
  o[i] = v;
  o[256 + i] = __shfl_down(in[i], 1, 16);
  o[512 + i] = __shfl_up(in[i], 2);
  o[768 + i] = __shfl(in[i], 3, 8);
  unsigned long long b = __ballot(in[i] & 1);          /* over the lanes active here: all of them */
  int votes = __any(in[i] > 90) + 2 * __all(in[i] >= 0);
  if (__lane_id() == 0) {
    o[1024 + i / warpSize] = __popcll(b);
    o[1100 + i / warpSize] = votes;
  }
}
"""


@pytest.mark.parametrize("arch, wave", [("gfx1100", 32), ("gfx942", 64)])
def test_hip_warp_functions(toolchain, devices, rng, arch, wave):
    dev = devices(arch)
    x = rng.integers(0, 100, 256).astype(np.int32)
    bi, bo = dev.alloc(x.nbytes), dev.alloc(4 * 1200)
    dev.copyin(bi, x)
    dev.copyin(bo, np.zeros(1200, np.int32))
    dev.load(cc.compile_source(WARP_HIP, "hip", arch), "warp")(bo, bi, grid=2, block=128)
    out = np.empty(1200, np.int32)
    dev.copyout(out, bo)
    dev.synchronize()
    lane, w = np.arange(256) % wave, x.reshape(-1, wave)
    np.testing.assert_array_equal(out[:256], np.repeat(w.sum(1), wave))
    down = np.where(lane % 16 + 1 < 16, np.arange(256) + 1, np.arange(256))
    np.testing.assert_array_equal(out[256:512], x[down])
    np.testing.assert_array_equal(out[512:768], x[np.where(lane >= 2, np.arange(256) - 2, np.arange(256))])
    np.testing.assert_array_equal(out[768:1024], x[np.arange(256) // 8 * 8 + 3])
    n = 256 // wave
    np.testing.assert_array_equal(out[1024:1024 + n], (w & 1).sum(1))
    np.testing.assert_array_equal(out[1100:1100 + n], (w > 90).any(1) + 2)


VECTORS_CL = r"""
__kernel void vec(__global float *o, __global const float *x, __constant int *c) {
  size_t i = get_global_id(0);
  vstore3(vload3(i, x) * 2.0f, i, o);                 /* element-aligned, 12-byte steps */
  int4 w = vload4(1, c);
  o[300 + i] = (float)(w.x - w.y + w.z * w.w);
}
"""


def test_vload_vstore(toolchain, devices, rng):
    dev = devices("gfx1100")
    x = rng.standard_normal(300).astype(np.float32)
    c = np.arange(8, dtype=np.int32) + 1
    bx, bo, bc = dev.alloc(x.nbytes), dev.alloc(4 * 400), dev.alloc(c.nbytes)
    dev.copyin(bx, x)
    dev.copyin(bc, c)
    dev.load(cc.compile_source(VECTORS_CL, "opencl"), "vec")(bo, bx, bc, grid=1, block=100)
    out = np.empty(400, np.float32)
    dev.copyout(out, bo)
    dev.synchronize()
    np.testing.assert_array_equal(out[:300], x * 2)
    np.testing.assert_array_equal(out[300:], np.full(100, 5 - 6 + 7 * 8, np.float32))
