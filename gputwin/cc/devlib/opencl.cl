/* gputwin's OpenCL C device library: the built-in functions clang-19 declares for OpenCL but does not
   expand itself, for AMDGPU HSA code objects (amdgcn-amd-amdhsa). `gputwin cc` compiles this file to
   bitcode once per target (cached) and links it into each kernel with -mlink-builtin-bitcode, the way
   ROCm links its device libraries: only the functions a kernel calls end up in its code object.

   Sizes come from the hidden kernel arguments (implicit.h). printf's buffer allocation lives in
   printf.cl: the back end emits its calls after bitcode linking, so it is linked as an object. */

#include "implicit.h"
#include "gtmath.h"

#define OVL __attribute__((overloadable))
#define ALWAYS __attribute__((always_inline))

/* ---- work-item functions (OpenCL C 3.0 section 6.15.1); out-of-range dimensions give 0 or 1 ---- */
static ALWAYS uint gt_local_id(uint d) {
  return d == 0 ? __builtin_amdgcn_workitem_id_x() : d == 1 ? __builtin_amdgcn_workitem_id_y()
                                                            : __builtin_amdgcn_workitem_id_z();
}
static ALWAYS uint gt_group_id(uint d) {
  return d == 0 ? __builtin_amdgcn_workgroup_id_x() : d == 1 ? __builtin_amdgcn_workgroup_id_y()
                                                             : __builtin_amdgcn_workgroup_id_z();
}
static ALWAYS uint gt_enqueued_size(uint d) {
  return d == 0 ? __builtin_amdgcn_workgroup_size_x() : d == 1 ? __builtin_amdgcn_workgroup_size_y()
                                                               : __builtin_amdgcn_workgroup_size_z();
}
#if GT_COV >= 5
static ALWAYS ulong gt_global_size(uint d) {
  return (ulong)GT_BLOCK_COUNT(d) * GT_GROUP_SIZE(d) + GT_REMAINDER(d);
}
#else
static ALWAYS ulong gt_global_size(uint d) {
  return d == 0 ? __builtin_amdgcn_grid_size_x() : d == 1 ? __builtin_amdgcn_grid_size_y()
                                                           : __builtin_amdgcn_grid_size_z();
}
#endif
static ALWAYS uint gt_local_size(uint d) {   /* the last group of a dimension may be partial */
  ulong rest = gt_global_size(d) - (ulong)gt_group_id(d) * gt_enqueued_size(d);
  uint n = gt_enqueued_size(d);
  return rest < n ? (uint)rest : n;
}

uint OVL get_work_dim(void) { return GT_WORK_DIM(); }
size_t OVL get_global_size(uint d) { return d < 3 ? gt_global_size(d) : 1; }
size_t OVL get_local_size(uint d) { return d < 3 ? gt_local_size(d) : 1; }
size_t OVL get_enqueued_local_size(uint d) { return d < 3 ? gt_enqueued_size(d) : 1; }
size_t OVL get_num_groups(uint d) {
  if (d >= 3) return 1;
  ulong n = gt_enqueued_size(d);
  return (gt_global_size(d) + n - 1) / n;
}
size_t OVL get_group_id(uint d) { return d < 3 ? gt_group_id(d) : 0; }
size_t OVL get_local_id(uint d) { return d < 3 ? gt_local_id(d) : 0; }
size_t OVL get_global_offset(uint d) { return d < 3 ? GT_GLOBAL_OFFSET(d) : 0; }
size_t OVL get_global_id(uint d) {
  return d < 3 ? (size_t)gt_group_id(d) * gt_enqueued_size(d) + gt_local_id(d) + GT_GLOBAL_OFFSET(d) : 0;
}
size_t OVL get_local_linear_id(void) {
  return (gt_local_id(2) * gt_local_size(1) + gt_local_id(1)) * gt_local_size(0) + gt_local_id(0);
}
size_t OVL get_global_linear_id(void) {
  size_t x = get_global_id(0) - GT_GLOBAL_OFFSET(0), y = get_global_id(1) - GT_GLOBAL_OFFSET(1);
  size_t z = get_global_id(2) - GT_GLOBAL_OFFSET(2);
  return (z * gt_global_size(1) + y) * gt_global_size(0) + x;
}

/* ---- synchronisation: a workgroup barrier with the fences OpenCL's flags ask for ---- */
static ALWAYS void gt_fence(cl_mem_fence_flags flags, int order) {
  if (flags & CLK_GLOBAL_MEM_FENCE) {
    if (order == __ATOMIC_RELEASE) __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent");
    else if (order == __ATOMIC_ACQUIRE) __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "agent");
    else __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent");
  } else if (flags & (CLK_LOCAL_MEM_FENCE | CLK_IMAGE_MEM_FENCE)) {
    if (order == __ATOMIC_RELEASE) __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    else if (order == __ATOMIC_ACQUIRE) __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    else __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup");
  }
}
void OVL barrier(cl_mem_fence_flags flags) {
  gt_fence(flags, __ATOMIC_RELEASE);
  __builtin_amdgcn_s_barrier();
  gt_fence(flags, __ATOMIC_ACQUIRE);
}
void OVL work_group_barrier(cl_mem_fence_flags flags) { barrier(flags); }
void OVL work_group_barrier(cl_mem_fence_flags flags, memory_scope scope) { barrier(flags); }
void OVL mem_fence(cl_mem_fence_flags flags) { gt_fence(flags, __ATOMIC_SEQ_CST); }
void OVL read_mem_fence(cl_mem_fence_flags flags) { gt_fence(flags, __ATOMIC_ACQUIRE); }
void OVL write_mem_fence(cl_mem_fence_flags flags) { gt_fence(flags, __ATOMIC_RELEASE); }

/* ---- OpenCL 1.x atomics (atomic_* and the cl_khr_*_atomics atom_* spellings), relaxed, device scope ---- */
#define GT_RMW(name, builtin, T, AS) \
  T OVL atomic_##name(volatile AS T *p, T v) { return builtin(p, v, __ATOMIC_RELAXED); } \
  T OVL atom_##name(volatile AS T *p, T v) { return builtin(p, v, __ATOMIC_RELAXED); }
#define GT_ATOMICS(T, AS) \
  GT_RMW(add, __atomic_fetch_add, T, AS) GT_RMW(sub, __atomic_fetch_sub, T, AS) \
  GT_RMW(xchg, __atomic_exchange_n, T, AS) GT_RMW(min, __atomic_fetch_min, T, AS) \
  GT_RMW(max, __atomic_fetch_max, T, AS) GT_RMW(and, __atomic_fetch_and, T, AS) \
  GT_RMW(or, __atomic_fetch_or, T, AS) GT_RMW(xor, __atomic_fetch_xor, T, AS) \
  T OVL atomic_inc(volatile AS T *p) { return __atomic_fetch_add(p, (T)1, __ATOMIC_RELAXED); } \
  T OVL atom_inc(volatile AS T *p) { return __atomic_fetch_add(p, (T)1, __ATOMIC_RELAXED); } \
  T OVL atomic_dec(volatile AS T *p) { return __atomic_fetch_sub(p, (T)1, __ATOMIC_RELAXED); } \
  T OVL atom_dec(volatile AS T *p) { return __atomic_fetch_sub(p, (T)1, __ATOMIC_RELAXED); } \
  T OVL atomic_cmpxchg(volatile AS T *p, T cmp, T v) { \
    __atomic_compare_exchange_n(p, &cmp, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED); return cmp; } \
  T OVL atom_cmpxchg(volatile AS T *p, T cmp, T v) { \
    __atomic_compare_exchange_n(p, &cmp, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED); return cmp; }
GT_ATOMICS(int, __global) GT_ATOMICS(uint, __global) GT_ATOMICS(int, __local) GT_ATOMICS(uint, __local)
GT_ATOMICS(long, __global) GT_ATOMICS(ulong, __global) GT_ATOMICS(long, __local) GT_ATOMICS(ulong, __local)
float OVL atomic_xchg(volatile __global float *p, float v) {
  return as_float(__atomic_exchange_n((volatile __global uint *)p, as_uint(v), __ATOMIC_RELAXED));
}
float OVL atomic_xchg(volatile __local float *p, float v) {
  return as_float(__atomic_exchange_n((volatile __local uint *)p, as_uint(v), __ATOMIC_RELAXED));
}

/* ---- OpenCL 2.0 atomics on generic pointers: memory order and scope as given (defaults seq_cst, device) ---- */
#define GT_C11_RMW(name, T, A, V) \
  T OVL atomic_##name(volatile A *p, V v) { \
    return __opencl_atomic_##name(p, v, memory_order_seq_cst, memory_scope_device); } \
  T OVL atomic_##name##_explicit(volatile A *p, V v, memory_order o) { \
    return __opencl_atomic_##name(p, v, o, memory_scope_device); } \
  T OVL atomic_##name##_explicit(volatile A *p, V v, memory_order o, memory_scope s) { \
    return __opencl_atomic_##name(p, v, o, s); }
#define GT_C11_COMMON(T, A) \
  void OVL atomic_init(volatile A *p, T v) { __opencl_atomic_init(p, v); } \
  void OVL atomic_store(volatile A *p, T v) { __opencl_atomic_store(p, v, memory_order_seq_cst, memory_scope_device); } \
  void OVL atomic_store_explicit(volatile A *p, T v, memory_order o) { __opencl_atomic_store(p, v, o, memory_scope_device); } \
  void OVL atomic_store_explicit(volatile A *p, T v, memory_order o, memory_scope s) { __opencl_atomic_store(p, v, o, s); } \
  T OVL atomic_load(volatile A *p) { return __opencl_atomic_load(p, memory_order_seq_cst, memory_scope_device); } \
  T OVL atomic_load_explicit(volatile A *p, memory_order o) { return __opencl_atomic_load(p, o, memory_scope_device); } \
  T OVL atomic_load_explicit(volatile A *p, memory_order o, memory_scope s) { return __opencl_atomic_load(p, o, s); } \
  GT_C11_RMW(exchange, T, A, T) \
  bool OVL atomic_compare_exchange_strong(volatile A *p, T *e, T v) { \
    return __opencl_atomic_compare_exchange_strong(p, e, v, memory_order_seq_cst, memory_order_seq_cst, memory_scope_device); } \
  bool OVL atomic_compare_exchange_strong_explicit(volatile A *p, T *e, T v, memory_order s, memory_order f) { \
    return __opencl_atomic_compare_exchange_strong(p, e, v, s, f, memory_scope_device); } \
  bool OVL atomic_compare_exchange_strong_explicit(volatile A *p, T *e, T v, memory_order s, memory_order f, memory_scope sc) { \
    return __opencl_atomic_compare_exchange_strong(p, e, v, s, f, sc); } \
  bool OVL atomic_compare_exchange_weak(volatile A *p, T *e, T v) { \
    return __opencl_atomic_compare_exchange_weak(p, e, v, memory_order_seq_cst, memory_order_seq_cst, memory_scope_device); } \
  bool OVL atomic_compare_exchange_weak_explicit(volatile A *p, T *e, T v, memory_order s, memory_order f) { \
    return __opencl_atomic_compare_exchange_weak(p, e, v, s, f, memory_scope_device); } \
  bool OVL atomic_compare_exchange_weak_explicit(volatile A *p, T *e, T v, memory_order s, memory_order f, memory_scope sc) { \
    return __opencl_atomic_compare_exchange_weak(p, e, v, s, f, sc); }
#define GT_C11_INT(T, A) GT_C11_COMMON(T, A) \
  GT_C11_RMW(fetch_add, T, A, T) GT_C11_RMW(fetch_sub, T, A, T) GT_C11_RMW(fetch_or, T, A, T) \
  GT_C11_RMW(fetch_xor, T, A, T) GT_C11_RMW(fetch_and, T, A, T) GT_C11_RMW(fetch_min, T, A, T) \
  GT_C11_RMW(fetch_max, T, A, T)
GT_C11_INT(int, atomic_int) GT_C11_INT(uint, atomic_uint) GT_C11_INT(long, atomic_long) GT_C11_INT(ulong, atomic_ulong)
GT_C11_COMMON(float, atomic_float) GT_C11_COMMON(double, atomic_double)
bool OVL atomic_flag_test_and_set(volatile atomic_flag *f) {
  return __opencl_atomic_exchange((volatile atomic_int *)f, 1, memory_order_seq_cst, memory_scope_device);
}
void OVL atomic_flag_clear(volatile atomic_flag *f) {
  __opencl_atomic_store((volatile atomic_int *)f, 0, memory_order_seq_cst, memory_scope_device);
}
void OVL atomic_work_item_fence(cl_mem_fence_flags flags, memory_order order, memory_scope scope) {
  gt_fence(flags, order == memory_order_acquire ? __ATOMIC_ACQUIRE : order == memory_order_release
                  ? __ATOMIC_RELEASE : __ATOMIC_SEQ_CST);
}

/* ---- math: what LLVM's AMDGPU back end expands to within OpenCL's accuracy (AMDGPUUsage, OpenCL C
   7.4): exact operations for float and double, exp/log families for float; native_* map to the
   hardware approximations. sin, cos, pow and the rest are not here: see docs/cc.md. ---- */
#define GT_VEC(M, T) M(T) M(T##2) M(T##3) M(T##4) M(T##8) M(T##16)
#define GT_UNARY(name, builtin, T) T OVL name(T x) { return builtin(x); }
#define GT_BINARY(name, builtin, T) T OVL name(T x, T y) { return builtin(x, y); }
#define GT_EXACT(T) \
  GT_UNARY(fabs, __builtin_elementwise_abs, T) GT_UNARY(floor, __builtin_elementwise_floor, T) \
  GT_UNARY(ceil, __builtin_elementwise_ceil, T) GT_UNARY(trunc, __builtin_elementwise_trunc, T) \
  GT_UNARY(round, __builtin_elementwise_round, T) GT_UNARY(rint, __builtin_elementwise_rint, T) \
  GT_UNARY(sqrt, __builtin_elementwise_sqrt, T) \
  GT_BINARY(fmin, __builtin_elementwise_min, T) GT_BINARY(fmax, __builtin_elementwise_max, T) \
  GT_BINARY(min, __builtin_elementwise_min, T) GT_BINARY(max, __builtin_elementwise_max, T) \
  GT_BINARY(copysign, __builtin_elementwise_copysign, T) \
  T OVL clamp(T x, T lo, T hi) { return __builtin_elementwise_min(__builtin_elementwise_max(x, lo), hi); } \
  T OVL fma(T a, T b, T c) { return __builtin_elementwise_fma(a, b, c); } \
  T OVL mad(T a, T b, T c) { return __builtin_elementwise_fma(a, b, c); } \
  T OVL rsqrt(T x) { return (T)1 / __builtin_elementwise_sqrt(x); }
#define GT_EXPLOG(T) \
  GT_UNARY(exp, __builtin_elementwise_exp, T) GT_UNARY(exp2, __builtin_elementwise_exp2, T) \
  GT_UNARY(log, __builtin_elementwise_log, T) GT_UNARY(log2, __builtin_elementwise_log2, T) \
  GT_UNARY(log10, __builtin_elementwise_log10, T)
#define GT_NATIVE(T) \
  GT_UNARY(native_exp2, __builtin_elementwise_exp2, T) GT_UNARY(native_log2, __builtin_elementwise_log2, T) \
  GT_UNARY(native_exp, __builtin_elementwise_exp, T) GT_UNARY(native_log, __builtin_elementwise_log, T) \
  GT_UNARY(native_sqrt, __builtin_elementwise_sqrt, T) \
  T OVL native_rsqrt(T x) { return (T)1 / __builtin_elementwise_sqrt(x); } \
  T OVL native_recip(T x) { return (T)1 / x; } \
  T OVL native_divide(T x, T y) { return x / y; }
GT_VEC(GT_EXACT, float) GT_VEC(GT_EXACT, double) GT_VEC(GT_EXPLOG, float) GT_VEC(GT_NATIVE, float)
/* the transcendental functions of gtmath.h, vectors element by element */
#define GT_VEC_LOOP(N, expr) float##N r; for (int k = 0; k < N; k++) r[k] = expr; return r;
#define GT_F1(name) float OVL name(float x) { return gt_##name##f(x); } GT_VN(GT_F1_N, name)
#define GT_F1_N(name, N) float##N OVL name(float##N x) { GT_VEC_LOOP(N, gt_##name##f(x[k])) }
#define GT_F2(name) float OVL name(float x, float y) { return gt_##name##f(x, y); } GT_VN(GT_F2_N, name)
#define GT_F2_N(name, N) float##N OVL name(float##N x, float##N y) { GT_VEC_LOOP(N, gt_##name##f(x[k], y[k])) }
#define GT_FI(name) float OVL name(float x, int n) { return gt_##name##f(x, n); } GT_VN(GT_FI_N, name)
#define GT_FI_N(name, N) float##N OVL name(float##N x, int##N n) { GT_VEC_LOOP(N, gt_##name##f(x[k], n[k])) }
#define GT_VN(M, name) M(name, 2) M(name, 3) M(name, 4) M(name, 8) M(name, 16)
#define GT_D1(name) double OVL name(double x) { return gt_##name(x); } GT_VN(GT_D1_N, name)
#define GT_D1_N(name, N) double##N OVL name(double##N x) { double##N r; for (int k = 0; k < N; k++) r[k] = gt_##name(x[k]); return r; }
#define GT_D2(name, f) double OVL name(double x, double y) { return f(x, y); } \
  GT_D2_N(name, f, 2) GT_D2_N(name, f, 3) GT_D2_N(name, f, 4) GT_D2_N(name, f, 8) GT_D2_N(name, f, 16)
#define GT_D2_N(name, f, N) double##N OVL name(double##N x, double##N y) { \
    double##N r; for (int k = 0; k < N; k++) r[k] = f(x[k], y[k]); return r; }
GT_F1(sin) GT_F1(cos) GT_F1(tan) GT_F1(asin) GT_F1(acos) GT_F1(atan) GT_F1(sinh) GT_F1(cosh) GT_F1(tanh)
GT_F1(asinh) GT_F1(acosh) GT_F1(atanh) GT_F1(expm1) GT_F1(log1p) GT_F1(exp10) GT_F1(cbrt) GT_F1(erf) GT_F1(erfc)
GT_F2(atan2) GT_F2(pow) GT_F2(powr) GT_F2(hypot) GT_FI(pown) GT_FI(rootn)
GT_D1(asin) GT_D1(acos) GT_D1(atan) GT_D1(sinh) GT_D1(cosh) GT_D1(tanh) GT_D1(asinh) GT_D1(acosh) GT_D1(atanh)
GT_D1(erf) GT_D1(erfc) GT_D1(expm1) GT_D1(log1p) GT_D1(exp10) GT_D1(cbrt) GT_D1(sin) GT_D1(cos) GT_D1(tan) GT_D2(atan2, gt_atan2_d) GT_D2(hypot, gt_hypot)
GT_D2(pow, gt_pow_d) GT_D2(powr, gt_powr_d)
#define GT_DI(name) double OVL name(double x, int n) { return gt_##name##_d(x, n); } GT_VN(GT_DI_N, name)
#define GT_DI_N(name, N) double##N OVL name(double##N x, int##N n) { \
    double##N r; for (int k = 0; k < N; k++) r[k] = gt_##name##_d(x[k], n[k]); return r; }
GT_DI(pown) GT_DI(rootn)
GT_F2(fmod) GT_F2(remainder) GT_D2(fmod, gt_fmod) GT_D2(remainder, gt_remainder)
#define GT_REMQUO(T, I, f) \
  T OVL remquo(T x, T y, int *q) { return f(x, y, q); } GT_REMQUO_N(T, I, f, 2) GT_REMQUO_N(T, I, f, 3) \
  GT_REMQUO_N(T, I, f, 4) GT_REMQUO_N(T, I, f, 8) GT_REMQUO_N(T, I, f, 16)
#define GT_REMQUO_N(T, I, f, N) T##N OVL remquo(T##N x, T##N y, I##N *q) { \
    T##N r; I##N qq; for (int k = 0; k < N; k++) { int e; r[k] = f(x[k], y[k], &e); qq[k] = e; } *q = qq; return r; }
GT_REMQUO(float, int, gt_remquof) GT_REMQUO(double, int, gt_remquo)
GT_F1(lgamma) GT_F1(tgamma) GT_D1(lgamma) GT_D1(tgamma)
GT_F1(sinpi) GT_F1(cospi) GT_F1(tanpi) GT_F1(asinpi) GT_F1(acospi) GT_F1(atanpi) GT_F2(atan2pi)
GT_D1(sinpi) GT_D1(cospi) GT_D1(tanpi) GT_D1(asinpi) GT_D1(acospi) GT_D1(atanpi) GT_D2(atan2pi, gt_atan2pi)
#define GT_LGAMMA_R(T, f) \
  T OVL lgamma_r(T x, int *s) { return f(x, s); } GT_LGAMMA_R_N(T, f, 2) GT_LGAMMA_R_N(T, f, 3) \
  GT_LGAMMA_R_N(T, f, 4) GT_LGAMMA_R_N(T, f, 8) GT_LGAMMA_R_N(T, f, 16)
#define GT_LGAMMA_R_N(T, f, N) T##N OVL lgamma_r(T##N x, int##N *s) { \
    T##N r; int##N ss; for (int k = 0; k < N; k++) { int e; r[k] = f(x[k], &e); ss[k] = e; } *s = ss; return r; }
GT_LGAMMA_R(float, gt_lgamma_rf) GT_LGAMMA_R(double, gt_lgamma_r)
#define GT_SINCOS(N) \
  float##N OVL sincos(float##N x, float##N *c) { *c = cos(x); return sin(x); }
float OVL sincos(float x, float *c) { *c = gt_cosf(x); return gt_sinf(x); }
GT_SINCOS(2) GT_SINCOS(3) GT_SINCOS(4) GT_SINCOS(8) GT_SINCOS(16)
#define GT_SINCOS_D(N) \
  double##N OVL sincos(double##N x, double##N *c) { *c = cos(x); return sin(x); }
double OVL sincos(double x, double *c) { *c = gt_cos(x); return gt_sin(x); }
GT_SINCOS_D(2) GT_SINCOS_D(3) GT_SINCOS_D(4) GT_SINCOS_D(8) GT_SINCOS_D(16)

/* the hardware's v_sin_f32/v_cos_f32 take revolutions */
float OVL native_sin(float x) { return __builtin_amdgcn_sinf(x * 0.15915494309189535f); }
float OVL native_cos(float x) { return __builtin_amdgcn_cosf(x * 0.15915494309189535f); }

/* ---- integer functions (OpenCL C 6.15.3) for the 32- and 64-bit types ---- */
#define GT_VEC2(M, T, U) M(T, U) M(T##2, U##2) M(T##3, U##3) M(T##4, U##4) M(T##8, U##8) M(T##16, U##16)
#define GT_INT(T, U) \
  GT_BINARY(min, __builtin_elementwise_min, T) GT_BINARY(max, __builtin_elementwise_max, T) \
  T OVL clamp(T x, T lo, T hi) { return __builtin_elementwise_min(__builtin_elementwise_max(x, lo), hi); } \
  U OVL abs(T x) { return __builtin_astype(__builtin_elementwise_abs(x), U); }
#define GT_UINT(T, U) \
  GT_BINARY(min, __builtin_elementwise_min, T) GT_BINARY(max, __builtin_elementwise_max, T) \
  T OVL clamp(T x, T lo, T hi) { return __builtin_elementwise_min(__builtin_elementwise_max(x, lo), hi); } \
  T OVL abs(T x) { return x; }
GT_VEC2(GT_INT, int, uint) GT_VEC2(GT_INT, long, ulong) GT_VEC2(GT_UINT, uint, uint) GT_VEC2(GT_UINT, ulong, ulong)

/* ---- conversions (OpenCL C 6.4.3) with the default rounding: what C's casts do (round toward zero to
   integers, to nearest even to floating point); _sat and the explicit rounding modes are in convert.cl ---- */
#define GT_CONVERT_VEC(D, S, N) D##N OVL convert_##D##N(S##N x) { return __builtin_convertvector(x, D##N); }
#define GT_CONVERT(D, S) \
  D OVL convert_##D(S x) { return (D)x; } \
  GT_CONVERT_VEC(D, S, 2) GT_CONVERT_VEC(D, S, 3) GT_CONVERT_VEC(D, S, 4) GT_CONVERT_VEC(D, S, 8) \
  GT_CONVERT_VEC(D, S, 16)
#define GT_CONVERT_TO(D) \
  GT_CONVERT(D, char) GT_CONVERT(D, uchar) GT_CONVERT(D, short) GT_CONVERT(D, ushort) GT_CONVERT(D, int) \
  GT_CONVERT(D, uint) GT_CONVERT(D, long) GT_CONVERT(D, ulong) GT_CONVERT(D, float) GT_CONVERT(D, double)
GT_CONVERT_TO(char) GT_CONVERT_TO(uchar) GT_CONVERT_TO(short) GT_CONVERT_TO(ushort) GT_CONVERT_TO(int)
GT_CONVERT_TO(uint) GT_CONVERT_TO(long) GT_CONVERT_TO(ulong) GT_CONVERT_TO(float) GT_CONVERT_TO(double)

/* ---- vloadN / vstoreN (OpenCL C 6.15.7): element-aligned vector access through generic and constant
   pointers ---- */
#define GT_VLOAD(T, N) \
  T##N OVL vload##N(size_t i, const T *p) { \
    T##N r; for (int k = 0; k < N; k++) r[k] = p[i * N + k]; return r; } \
  T##N OVL vload##N(size_t i, const __constant T *p) { \
    T##N r; for (int k = 0; k < N; k++) r[k] = p[i * N + k]; return r; } \
  void OVL vstore##N(T##N v, size_t i, T *p) { for (int k = 0; k < N; k++) p[i * N + k] = v[k]; }
#define GT_VLOADS(T) GT_VLOAD(T, 2) GT_VLOAD(T, 3) GT_VLOAD(T, 4) GT_VLOAD(T, 8) GT_VLOAD(T, 16)
GT_VLOADS(char) GT_VLOADS(uchar) GT_VLOADS(short) GT_VLOADS(ushort) GT_VLOADS(int) GT_VLOADS(uint)
GT_VLOADS(long) GT_VLOADS(ulong) GT_VLOADS(float) GT_VLOADS(double)

#include "convert.cl"

