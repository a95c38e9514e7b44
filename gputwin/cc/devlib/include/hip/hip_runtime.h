/* gputwin's HIP device header: the device side of hip_runtime.h for kernels built with `gputwin cc`
   (clang -x hip --cuda-device-only -nogpuinc), without a ROCm installation. It defines the HIP keywords,
   the built-in index variables, __syncthreads and fences, atomics, a set of math functions that LLVM's
   AMDGPU back end expands itself, and printf (buffered: clang writes records into the printf buffer the
   driver prints at synchronize). Sizes come from the hidden kernel arguments (code object v5) or the
   HSA dispatch packet (v4), chosen by GT_COV, which `gputwin cc` sets. docs/cc.md lists what is here. */
#ifndef GPUTWIN_HIP_RUNTIME_H
#define GPUTWIN_HIP_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(max_threads, ...) __attribute__((amdgpu_flat_work_group_size(1, max_threads)))
#define __GT_DEV static __device__ __forceinline__

#ifndef GT_COV
#define GT_COV 5
#endif

struct dim3 {
  unsigned x, y, z;
  __host__ __device__ constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

__GT_DEV const char *__gt_implicit(void) { return (const char *)__builtin_amdgcn_implicitarg_ptr(); }
__GT_DEV unsigned __gt_num_groups(int d) {
#if GT_COV >= 5   /* hidden_block_count (whole groups) and hidden_remainder (a partial one) */
  unsigned whole = ((const unsigned *)__gt_implicit())[d];
  return whole + (((const unsigned short *)(__gt_implicit() + 18))[d] != 0);
#else
  unsigned size = d == 0 ? __builtin_amdgcn_workgroup_size_x() : d == 1 ? __builtin_amdgcn_workgroup_size_y()
                                                                        : __builtin_amdgcn_workgroup_size_z();
  unsigned grid = d == 0 ? __builtin_amdgcn_grid_size_x() : d == 1 ? __builtin_amdgcn_grid_size_y()
                                                                   : __builtin_amdgcn_grid_size_z();
  return (grid + size - 1) / size;
#endif
}

#define __GT_BUILTIN_VAR(type, X, Y, Z)                                                       \
  struct type {                                                                               \
    __declspec(property(get = __get_x)) unsigned x;                                           \
    __declspec(property(get = __get_y)) unsigned y;                                           \
    __declspec(property(get = __get_z)) unsigned z;                                           \
    __GT_DEV unsigned __get_x(void) { return X; }                                             \
    __GT_DEV unsigned __get_y(void) { return Y; }                                             \
    __GT_DEV unsigned __get_z(void) { return Z; }                                             \
    __device__ operator dim3() const { return dim3(X, Y, Z); }                                \
  };
__GT_BUILTIN_VAR(__gt_thread_idx, __builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(),
                 __builtin_amdgcn_workitem_id_z())
__GT_BUILTIN_VAR(__gt_block_idx, __builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(),
                 __builtin_amdgcn_workgroup_id_z())
__GT_BUILTIN_VAR(__gt_block_dim, __builtin_amdgcn_workgroup_size_x(), __builtin_amdgcn_workgroup_size_y(),
                 __builtin_amdgcn_workgroup_size_z())
__GT_BUILTIN_VAR(__gt_grid_dim, __gt_num_groups(0), __gt_num_groups(1), __gt_num_groups(2))
extern const __device__ __attribute__((weak)) __gt_thread_idx threadIdx;
extern const __device__ __attribute__((weak)) __gt_block_idx blockIdx;
extern const __device__ __attribute__((weak)) __gt_block_dim blockDim;
extern const __device__ __attribute__((weak)) __gt_grid_dim gridDim;
#define warpSize __builtin_amdgcn_wavefrontsize()

/* ---- synchronisation ---- */
__GT_DEV void __syncthreads(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
__GT_DEV void __threadfence_block(void) { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup"); }
__GT_DEV void __threadfence(void) { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
__GT_DEV void __threadfence_system(void) { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, ""); }

/* ---- atomics: relaxed, device (agent) scope, as HIP's are ---- */
#define __GT_SCOPE __HIP_MEMORY_SCOPE_AGENT
#define __GT_RMW(name, builtin, T) \
  __GT_DEV T name(T *p, T v) { return builtin(p, v, __ATOMIC_RELAXED, __GT_SCOPE); }
#define __GT_INT_ATOMICS(T) \
  __GT_RMW(atomicAdd, __hip_atomic_fetch_add, T) __GT_RMW(atomicSub, __hip_atomic_fetch_sub, T) \
  __GT_RMW(atomicExch, __hip_atomic_exchange, T) __GT_RMW(atomicMin, __hip_atomic_fetch_min, T) \
  __GT_RMW(atomicMax, __hip_atomic_fetch_max, T) __GT_RMW(atomicAnd, __hip_atomic_fetch_and, T) \
  __GT_RMW(atomicOr, __hip_atomic_fetch_or, T) __GT_RMW(atomicXor, __hip_atomic_fetch_xor, T) \
  __GT_DEV T atomicCAS(T *p, T expected, T v) { \
    __hip_atomic_compare_exchange_strong(p, &expected, v, __ATOMIC_RELAXED, __ATOMIC_RELAXED, __GT_SCOPE); \
    return expected; }
__GT_INT_ATOMICS(int) __GT_INT_ATOMICS(unsigned) __GT_INT_ATOMICS(unsigned long long) __GT_INT_ATOMICS(long long)
__GT_RMW(atomicAdd, __hip_atomic_fetch_add, float) __GT_RMW(atomicAdd, __hip_atomic_fetch_add, double)
__GT_RMW(atomicSub, __hip_atomic_fetch_sub, float) __GT_RMW(atomicExch, __hip_atomic_exchange, float)
/* atomicInc/atomicDec wrap at `limit` (CUDA semantics): the hardware's inc/dec instructions */
__GT_DEV unsigned atomicInc(unsigned *p, unsigned limit) {
  return __builtin_amdgcn_atomic_inc32(p, limit, __ATOMIC_RELAXED, "agent");
}
__GT_DEV unsigned atomicDec(unsigned *p, unsigned limit) {
  return __builtin_amdgcn_atomic_dec32(p, limit, __ATOMIC_RELAXED, "agent");
}

/* ---- warp (wavefront) functions: lanes exchange values through ds_bpermute; the wave runs in lockstep,
   so __syncwarp only orders memory. Semantics as HIP's (width: a power of two up to warpSize) ---- */
__GT_DEV unsigned __lane_id(void) {
  unsigned lo = __builtin_amdgcn_mbcnt_lo(~0u, 0u);
  return __builtin_amdgcn_wavefrontsize() == 64 ? __builtin_amdgcn_mbcnt_hi(~0u, lo) : lo;
}
__GT_DEV int __gt_bpermute(int lane, int v) { return __builtin_amdgcn_ds_bpermute(lane << 2, v); }
__GT_DEV int __shfl(int v, int src, int width = warpSize) {
  int lane = __lane_id();
  return __gt_bpermute((lane & ~(width - 1)) + (src & (width - 1)), v);
}
__GT_DEV int __shfl_up(int v, unsigned delta, int width = warpSize) {
  int lane = __lane_id();
  return __gt_bpermute((int)(lane & (width - 1)) >= (int)delta ? lane - (int)delta : lane, v);
}
__GT_DEV int __shfl_down(int v, unsigned delta, int width = warpSize) {
  int lane = __lane_id();
  return __gt_bpermute((lane & (width - 1)) + (int)delta < width ? lane + (int)delta : lane, v);
}
__GT_DEV int __shfl_xor(int v, int mask, int width = warpSize) {
  int lane = __lane_id(), target = lane ^ mask;
  return __gt_bpermute(target < ((lane + width) & ~(width - 1)) ? target : lane, v);
}
#define __GT_SHFL_AS(T, U) \
  __GT_DEV T __shfl(T v, int s, int w = warpSize) { return __builtin_bit_cast(T, __shfl(__builtin_bit_cast(U, v), s, w)); } \
  __GT_DEV T __shfl_up(T v, unsigned d, int w = warpSize) { return __builtin_bit_cast(T, __shfl_up(__builtin_bit_cast(U, v), d, w)); } \
  __GT_DEV T __shfl_down(T v, unsigned d, int w = warpSize) { return __builtin_bit_cast(T, __shfl_down(__builtin_bit_cast(U, v), d, w)); } \
  __GT_DEV T __shfl_xor(T v, int m, int w = warpSize) { return __builtin_bit_cast(T, __shfl_xor(__builtin_bit_cast(U, v), m, w)); }
__GT_SHFL_AS(unsigned, int) __GT_SHFL_AS(float, int)
__GT_DEV unsigned long long __ballot(int pred) {
#if __AMDGCN_WAVEFRONT_SIZE == 64
  return __builtin_amdgcn_ballot_w64(pred != 0);
#else
  return __builtin_amdgcn_ballot_w32(pred != 0);
#endif
}
__GT_DEV int __any(int pred) { return __ballot(pred) != 0; }
__GT_DEV int __all(int pred) { return __ballot(pred) == __ballot(1); }
__GT_DEV void __syncwarp(void) { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "wavefront"); }
__GT_DEV int __popc(unsigned x) { return __builtin_popcount(x); }
__GT_DEV int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
__GT_DEV int __clz(int x) { return x ? __builtin_clz(x) : 32; }
__GT_DEV int __clzll(long long x) { return x ? __builtin_clzll(x) : 64; }
__GT_DEV int __ffs(int x) { return __builtin_ffs(x); }
__GT_DEV int __ffsll(long long x) { return __builtin_ffsll(x); }

/* ---- math the AMDGPU back end expands itself ---- */
#define __GT_F1(name, builtin, T) __GT_DEV T name(T x) { return builtin(x); }
#define __GT_F2(name, builtin, T) __GT_DEV T name(T x, T y) { return builtin(x, y); }
__GT_F1(sqrtf, __builtin_sqrtf, float) __GT_F1(fabsf, __builtin_fabsf, float) __GT_F1(floorf, __builtin_floorf, float)
__GT_F1(ceilf, __builtin_ceilf, float) __GT_F1(truncf, __builtin_truncf, float) __GT_F1(roundf, __builtin_roundf, float)
__GT_F1(rintf, __builtin_rintf, float) __GT_F1(expf, __builtin_expf, float) __GT_F1(exp2f, __builtin_exp2f, float)
__GT_F1(exp10f, __builtin_exp10f, float) __GT_F1(logf, __builtin_logf, float) __GT_F1(log2f, __builtin_log2f, float)
__GT_F1(log10f, __builtin_log10f, float)
__GT_F2(fminf, __builtin_fminf, float) __GT_F2(fmaxf, __builtin_fmaxf, float) __GT_F2(copysignf, __builtin_copysignf, float)
__GT_F1(sqrt, __builtin_sqrt, double) __GT_F1(fabs, __builtin_fabs, double) __GT_F1(floor, __builtin_floor, double)
__GT_F1(ceil, __builtin_ceil, double) __GT_F1(trunc, __builtin_trunc, double) __GT_F1(round, __builtin_round, double)
__GT_F1(rint, __builtin_rint, double)
__GT_F2(fmin, __builtin_fmin, double) __GT_F2(fmax, __builtin_fmax, double) __GT_F2(copysign, __builtin_copysign, double)
__GT_DEV float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__GT_DEV double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
__GT_DEV float rsqrtf(float x) { return 1.0f / __builtin_sqrtf(x); }
/* the fast intrinsics: hardware approximations (v_exp_f32, v_log_f32, v_sin_f32 in revolutions, v_rcp_f32) */
__GT_DEV float __expf(float x) { return __builtin_amdgcn_exp2f(x * 1.4426950408889634f); }
__GT_DEV float __exp2f(float x) { return __builtin_amdgcn_exp2f(x); }
__GT_DEV float __logf(float x) { return __builtin_amdgcn_logf(x) * 0.6931471805599453f; }
__GT_DEV float __log2f(float x) { return __builtin_amdgcn_logf(x); }
__GT_DEV float __sinf(float x) { return __builtin_amdgcn_sinf(x * 0.15915494309189535f); }
__GT_DEV float __cosf(float x) { return __builtin_amdgcn_cosf(x * 0.15915494309189535f); }
__GT_DEV float __fdividef(float x, float y) { return x * __builtin_amdgcn_rcpf(y); }
__GT_DEV int min(int a, int b) { return a < b ? a : b; }
__GT_DEV int max(int a, int b) { return a > b ? a : b; }
__GT_DEV unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
__GT_DEV unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
__GT_DEV float min(float a, float b) { return __builtin_fminf(a, b); }
__GT_DEV float max(float a, float b) { return __builtin_fmaxf(a, b); }

/* the transcendental functions of gputwin's device library (gtmath.h, shared with OpenCL C): the float
   forms, and the double forms of those it has for double; no float overloads of the C++ names, so that a
   double argument is never silently narrowed to float */
#include "../../gtmath.h"
#define __GT_MATH1(name) __GT_DEV float name##f(float x) { return gt_##name##f(x); }
#define __GT_MATH2(name) __GT_DEV float name##f(float x, float y) { return gt_##name##f(x, y); }
__GT_MATH1(sin) __GT_MATH1(cos) __GT_MATH1(tan) __GT_MATH1(asin) __GT_MATH1(acos) __GT_MATH1(atan) __GT_MATH1(sinh)
__GT_MATH1(cosh) __GT_MATH1(tanh) __GT_MATH1(asinh) __GT_MATH1(acosh) __GT_MATH1(atanh) __GT_MATH1(expm1)
__GT_MATH1(log1p) __GT_MATH1(cbrt) __GT_MATH1(erf) __GT_MATH1(erfc) __GT_MATH1(lgamma) __GT_MATH1(tgamma) __GT_MATH1(sinpi) __GT_MATH1(cospi)
__GT_MATH2(atan2) __GT_MATH2(pow) __GT_MATH2(hypot) __GT_MATH2(fmod) __GT_MATH2(remainder)
__GT_DEV float remquof(float x, float y, int *q) { return gt_remquof(x, y, q); }
__GT_DEV void sincosf(float x, float *s, float *c) { *s = gt_sinf(x); *c = gt_cosf(x); }
#define __GT_MATHD(name) __GT_DEV double name(double x) { return gt_##name(x); }
__GT_MATHD(asin) __GT_MATHD(acos) __GT_MATHD(atan) __GT_MATHD(sinh) __GT_MATHD(cosh) __GT_MATHD(tanh) __GT_MATHD(asinh)
__GT_MATHD(acosh) __GT_MATHD(atanh) __GT_MATHD(expm1) __GT_MATHD(log1p) __GT_MATHD(exp10) __GT_MATHD(cbrt)
__GT_MATHD(sin) __GT_MATHD(cos) __GT_MATHD(tan) __GT_MATHD(lgamma) __GT_MATHD(tgamma) __GT_MATHD(erf) __GT_MATHD(erfc)
__GT_MATHD(sinpi) __GT_MATHD(cospi)
__GT_DEV void sincos(double x, double *s, double *c) { *s = gt_sin(x); *c = gt_cos(x); }
__GT_DEV double atan2(double y, double x) { return gt_atan2_d(y, x); }
__GT_DEV double hypot(double x, double y) { return gt_hypot(x, y); }
__GT_DEV double fmod(double x, double y) { return gt_fmod(x, y); }
__GT_DEV double remainder(double x, double y) { return gt_remainder(x, y); }
__GT_DEV double remquo(double x, double y, int *q) { return gt_remquo(x, y, q); }
__GT_DEV double pow(double x, double y) { return gt_pow_d(x, y); }
__GT_DEV double powi(double x, int n) { return gt_pown_d(x, n); }
__GT_DEV float powif(float x, int n) { return gt_pownf(x, n); }

/* printf: clang lowers it (-mprintf-kind=buffered) into a record in the printf buffer */
extern "C" __device__ int printf(const char *format, ...);

#endif
