/* Conversions with saturation and explicit rounding (OpenCL C 3.0 section 6.4.3.3) and the half-float
   loads and stores (6.15.8), included by opencl.cl. Every result is exact: rounding to a floating-point
   format goes through one integer routine (gt_round_bits) that handles subnormals, overflow and all four
   rounding modes, so int -> float/double, double -> float and float/double -> half agree bit for bit with
   IEEE 754; float -> integer rounds with the exact rint/trunc/ceil/floor, then saturates by comparison. */

#define GT_RTE 0
#define GT_RTZ 1
#define GT_RTP 2
#define GT_RTN 3

/* IEEE binary formats: significand bits (with the implicit one), smallest and largest normal exponents, width */
#define GT_F16 11, -14, 15, 16
#define GT_F32 24, -126, 127, 32
#define GT_F64 53, -1022, 1023, 64

/* The bits of (-1)^neg * sig * 2^e (sig != 0) rounded by `mode` to the format (p, emin, emax, width). The
   significand is normalised to bit 63; the bits below the kept ones decide the rounding. Adding the kept
   significand (implicit bit included) to (E - emin) << (p-1) makes a carry out of the significand step the
   exponent, and a subnormal (E clamped to emin, no implicit bit) come out with exponent field 0. */
static ALWAYS ulong gt_round_bits(bool neg, ulong sig, int e, int mode, int p, int emin, int emax, int width) {
  int lz = __builtin_clzl(sig);
  sig <<= lz;
  int E = e + 63 - lz, shift = 64 - p;
  if (E < emin) { shift += emin - E; E = emin; }
  ulong keep = shift >= 64 ? 0 : sig >> shift;
  ulong rest = shift > 64 ? 1 : shift == 64 ? sig : sig << (64 - shift);   /* 1: only a sticky bit is left */
  const ulong tie = 1UL << 63;
  bool up = mode == GT_RTE ? rest > tie || (rest == tie && (keep & 1))
          : mode == GT_RTP ? !neg && rest != 0 : mode == GT_RTN ? neg && rest != 0 : false;
  ulong bits = ((ulong)(E - emin) << (p - 1)) + keep + up;
  ulong inf = (ulong)(emax - emin + 2) << (p - 1);
  if (bits >= inf)   /* overflow: infinity, or the largest finite number when the mode rounds toward zero */
    bits = mode == GT_RTZ || (mode == GT_RTP && neg) || (mode == GT_RTN && !neg) ? inf - 1 : inf;
  return bits | ((ulong)neg << (width - 1));
}

/* An integer's value in a floating-point format, rounded by `mode` */
static ALWAYS ulong gt_from_unsigned(ulong x, int mode, int p, int emin, int emax, int width) {
  return x == 0 ? 0 : gt_round_bits(false, x, 0, mode, p, emin, emax, width);
}
static ALWAYS ulong gt_from_signed(long x, int mode, int p, int emin, int emax, int width) {
  return x == 0 ? 0 : gt_round_bits(x < 0, x < 0 ? -(ulong)x : (ulong)x, 0, mode, p, emin, emax, width);
}

/* A floating-point value (bits in format sp/semin/swidth) in another format, rounded by `mode`; zeros keep
   their sign, infinities stay infinite, NaNs stay NaN (quiet, with the sign and top payload bits kept) */
static ALWAYS ulong gt_refloat(ulong x, int sp, int semin, int semax, int swidth, int mode, int p, int emin, int emax,
                               int width) {
  bool neg = x >> (swidth - 1);
  ulong frac = x & ((1UL << (sp - 1)) - 1);
  int field = (x >> (sp - 1)) & ((1 << (swidth - sp)) - 1);
  ulong sign = (ulong)neg << (width - 1), inf = (ulong)(emax - emin + 2) << (p - 1);
  if (field == semax - semin + 2)
    return sign | inf | (frac == 0 ? 0 : 1UL << (p - 2) | (sp > p ? frac >> (sp - p) : frac << (p - sp)));
  if (field == 0 && frac == 0) return sign;
  ulong sig = field == 0 ? frac : frac | 1UL << (sp - 1);
  int e = (field == 0 ? semin : field + semin - 1) - (sp - 1);
  return gt_round_bits(neg, sig, e, mode, p, emin, emax, width);
}

static ALWAYS float gt_round_float(float x, int mode) {
  return mode == GT_RTE ? rint(x) : mode == GT_RTZ ? trunc(x) : mode == GT_RTP ? ceil(x) : floor(x);
}
static ALWAYS double gt_round_double(double x, int mode) {
  return mode == GT_RTE ? rint(x) : mode == GT_RTZ ? trunc(x) : mode == GT_RTP ? ceil(x) : floor(x);
}

/* Range of each integer type: lowest value; highest as a long (ulong's clipped to LONG_MAX, enough to clamp a
   signed source) and as a ulong (to clamp an unsigned source); 2^bits of the highest + 1, exact in float */
#define GT_LO_char CHAR_MIN
#define GT_LO_uchar 0
#define GT_LO_short SHRT_MIN
#define GT_LO_ushort 0
#define GT_LO_int INT_MIN
#define GT_LO_uint 0
#define GT_LO_long LONG_MIN
#define GT_LO_ulong 0
#define GT_HIS_char CHAR_MAX
#define GT_HIS_uchar UCHAR_MAX
#define GT_HIS_short SHRT_MAX
#define GT_HIS_ushort USHRT_MAX
#define GT_HIS_int INT_MAX
#define GT_HIS_uint 4294967295L
#define GT_HIS_long LONG_MAX
#define GT_HIS_ulong LONG_MAX
#define GT_HIU_char CHAR_MAX
#define GT_HIU_uchar UCHAR_MAX
#define GT_HIU_short SHRT_MAX
#define GT_HIU_ushort USHRT_MAX
#define GT_HIU_int INT_MAX
#define GT_HIU_uint UINT_MAX
#define GT_HIU_long LONG_MAX
#define GT_HIU_ulong ULONG_MAX
#define GT_TOP_char 0x1p7
#define GT_TOP_uchar 0x1p8
#define GT_TOP_short 0x1p15
#define GT_TOP_ushort 0x1p16
#define GT_TOP_int 0x1p31
#define GT_TOP_uint 0x1p32
#define GT_TOP_long 0x1p63
#define GT_TOP_ulong 0x1p64

/* One conversion, scalar and vectors (vectors convert element by element: the hardware is scalar per lane) */
#define GT_CVT_VEC(D, S, SUF, N) \
  D##N OVL convert_##D##N##SUF(S##N x) { D##N r; for (int k = 0; k < N; k++) r[k] = convert_##D##SUF(x[k]); return r; }
#define GT_CVT(D, S, SUF, EXPR) \
  D OVL convert_##D##SUF(S x) { return EXPR; } \
  GT_CVT_VEC(D, S, SUF, 2) GT_CVT_VEC(D, S, SUF, 3) GT_CVT_VEC(D, S, SUF, 4) GT_CVT_VEC(D, S, SUF, 8) \
  GT_CVT_VEC(D, S, SUF, 16)
/* the four rounding-mode suffixes of one conversion; E(D, S, mode) is the expression of x */
#define GT_MODES(D, S, SUF, E) \
  GT_CVT(D, S, SUF##_rte, E(D, S, GT_RTE)) GT_CVT(D, S, SUF##_rtz, E(D, S, GT_RTZ)) \
  GT_CVT(D, S, SUF##_rtp, E(D, S, GT_RTP)) GT_CVT(D, S, SUF##_rtn, E(D, S, GT_RTN))
/* ... and the same with and without _sat, _sat alone rounding as the default (toward zero to integers) */
#define GT_SAT_MODES(D, S, E, E_SAT) \
  GT_MODES(D, S, , E) GT_CVT(D, S, _sat, E_SAT(D, S, GT_RTZ)) GT_MODES(D, S, _sat, E_SAT)

/* integer -> integer: rounding modes change nothing; saturation clamps in the 64-bit type of the source's
   signedness */
#define GT_E_CAST(D, S, m) (D)x
#define GT_E_SAT_SIGNED(D, S, m) (D)clamp((long)x, (long)GT_LO_##D, (long)GT_HIS_##D)
#define GT_E_SAT_UNSIGNED(D, S, m) (D)min((ulong)x, (ulong)GT_HIU_##D)
/* float/double -> integer: round to an integral value, then convert (out of range without _sat: what the
   hardware's conversion gives, as for C's cast); _sat: NaN -> 0, clamped to the type's range */
#define GT_E_FP_INT(D, S, m) (D)gt_round_##S(x, m)
#define GT_E_FP_INT_SAT(D, S, m) gt_sat_##D##_##S(gt_round_##S(x, m))
#define GT_SAT_FP(D, S) \
  static ALWAYS D gt_sat_##D##_##S(S r) { \
    return r != r ? 0 : r < (S)GT_LO_##D ? (D)GT_LO_##D : r >= (S)GT_TOP_##D ? (D)GT_HIU_##D : (D)r; }
/* integer -> float/double: round-to-nearest is the hardware's conversion, the directed modes go through
   gt_round_bits */
#define GT_FMT_float GT_F32
#define GT_FMT_double GT_F64
#define GT_AS_float(b) as_float((uint)(b))
#define GT_AS_double(b) as_double(b)
#define GT_E_SIGNED_FP(D, S, m) m == GT_RTE ? (D)x : GT_AS_##D(gt_from_signed(x, m, GT_FMT_##D))
#define GT_E_UNSIGNED_FP(D, S, m) m == GT_RTE ? (D)x : GT_AS_##D(gt_from_unsigned(x, m, GT_FMT_##D))
/* float <-> double: widening is exact; narrowing rounds the bits */
#define GT_E_WIDEN(D, S, m) (D)x
#define GT_E_NARROW(D, S, m) as_float((uint)gt_refloat(as_ulong(x), GT_F64, m, GT_F32))

#define GT_FROM_SIGNED(M, D) M(D, char) M(D, short) M(D, int) M(D, long)
#define GT_FROM_UNSIGNED(M, D) M(D, uchar) M(D, ushort) M(D, uint) M(D, ulong)

/* the conversions to integer type D from every source type */
#define GT_TO_INT_FROM_SIGNED(D, S) GT_SAT_MODES(D, S, GT_E_CAST, GT_E_SAT_SIGNED)
#define GT_TO_INT_FROM_UNSIGNED(D, S) GT_SAT_MODES(D, S, GT_E_CAST, GT_E_SAT_UNSIGNED)
#define GT_TO_INT_FROM_FP(D, S) GT_SAT_FP(D, S) GT_SAT_MODES(D, S, GT_E_FP_INT, GT_E_FP_INT_SAT)
#define GT_TO_INT(D) GT_FROM_SIGNED(GT_TO_INT_FROM_SIGNED, D) GT_FROM_UNSIGNED(GT_TO_INT_FROM_UNSIGNED, D) \
  GT_TO_INT_FROM_FP(D, float) GT_TO_INT_FROM_FP(D, double)
GT_TO_INT(char) GT_TO_INT(uchar) GT_TO_INT(short) GT_TO_INT(ushort) GT_TO_INT(int) GT_TO_INT(uint)
GT_TO_INT(long) GT_TO_INT(ulong)
/* ... and to float and double (no _sat: OpenCL defines it for integer destinations only) */
#define GT_TO_FP_FROM_SIGNED(D, S) GT_MODES(D, S, , GT_E_SIGNED_FP)
#define GT_TO_FP_FROM_UNSIGNED(D, S) GT_MODES(D, S, , GT_E_UNSIGNED_FP)
#define GT_TO_FP(D) GT_FROM_SIGNED(GT_TO_FP_FROM_SIGNED, D) GT_FROM_UNSIGNED(GT_TO_FP_FROM_UNSIGNED, D)
GT_TO_FP(float) GT_TO_FP(double)
GT_MODES(float, float, , GT_E_WIDEN) GT_MODES(double, float, , GT_E_WIDEN) GT_MODES(double, double, , GT_E_WIDEN)
GT_MODES(float, double, , GT_E_NARROW)

/* ---- vload_half / vstore_half (6.15.8): half-floats in memory, floats and doubles in registers; stores round
   by the suffix (round to nearest even without one). vloada/vstorea take aligned vectors, so a 3-vector
   occupies 4 halfs. ---- */
#define GT_H2F(h) as_float((uint)gt_refloat((h), GT_F16, GT_RTE, GT_F32))
#define GT_VLOAD_HALF_AS(AS) \
  float OVL vload_half(size_t i, const AS half *p) { return GT_H2F(((const AS ushort *)p)[i]); } \
  GT_VLOAD_HALF_N(AS, 2, 2) GT_VLOAD_HALF_N(AS, 3, 4) GT_VLOAD_HALF_N(AS, 4, 4) GT_VLOAD_HALF_N(AS, 8, 8) \
  GT_VLOAD_HALF_N(AS, 16, 16)
#define GT_VLOAD_HALF_N(AS, N, STRIDE) \
  float##N OVL vload_half##N(size_t i, const AS half *p) { \
    float##N r; for (int k = 0; k < N; k++) r[k] = GT_H2F(((const AS ushort *)p)[i * N + k]); return r; } \
  float##N OVL vloada_half##N(size_t i, const AS half *p) { \
    float##N r; for (int k = 0; k < N; k++) r[k] = GT_H2F(((const AS ushort *)p)[i * STRIDE + k]); return r; }
GT_VLOAD_HALF_AS() GT_VLOAD_HALF_AS(__constant)

#define GT_TO_HALF(T, v, m) (ushort)gt_refloat((ulong)GT_BITS_##T(v), GT_FMT_##T, m, GT_F16)
#define GT_BITS_float(v) as_uint(v)
#define GT_BITS_double(v) as_ulong(v)
#define GT_VSTORE_HALF(T, SUF, m) \
  void OVL vstore_half##SUF(T v, size_t i, half *p) { ((ushort *)p)[i] = GT_TO_HALF(T, v, m); } \
  GT_VSTORE_HALF_N(T, SUF, m, 2, 2) GT_VSTORE_HALF_N(T, SUF, m, 3, 4) GT_VSTORE_HALF_N(T, SUF, m, 4, 4) \
  GT_VSTORE_HALF_N(T, SUF, m, 8, 8) GT_VSTORE_HALF_N(T, SUF, m, 16, 16)
#define GT_VSTORE_HALF_N(T, SUF, m, N, STRIDE) \
  void OVL vstore_half##N##SUF(T##N v, size_t i, half *p) { \
    for (int k = 0; k < N; k++) ((ushort *)p)[i * N + k] = GT_TO_HALF(T, v[k], m); } \
  void OVL vstorea_half##N##SUF(T##N v, size_t i, half *p) { \
    for (int k = 0; k < N; k++) ((ushort *)p)[i * STRIDE + k] = GT_TO_HALF(T, v[k], m); }
#define GT_VSTORE_HALFS(T) \
  GT_VSTORE_HALF(T, , GT_RTE) GT_VSTORE_HALF(T, _rte, GT_RTE) GT_VSTORE_HALF(T, _rtz, GT_RTZ) \
  GT_VSTORE_HALF(T, _rtp, GT_RTP) GT_VSTORE_HALF(T, _rtn, GT_RTN)
GT_VSTORE_HALFS(float) GT_VSTORE_HALFS(double)

/* ---- the half type (cl_khr_fp16): to half through gt_round_bits in every mode (LLVM would convert a long
   through float, rounding twice); from half by widening to float, which is exact ---- */
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define GT_E_HALF_FROM_SIGNED(D, S, m) as_half((ushort)gt_from_signed(x, m, GT_F16))
#define GT_E_HALF_FROM_UNSIGNED(D, S, m) as_half((ushort)gt_from_unsigned(x, m, GT_F16))
#define GT_E_HALF_FROM_FP(D, S, m) as_half(GT_TO_HALF(S, x, m))
#define GT_E_HALF_AS_IS(D, S, m) x
#define GT_TO_HALF_FROM(S, E) GT_CVT(half, S, , E(half, S, GT_RTE)) GT_MODES(half, S, , E)
#define GT_TO_HALF_FROM_SIGNED(D, S) GT_TO_HALF_FROM(S, GT_E_HALF_FROM_SIGNED)
#define GT_TO_HALF_FROM_UNSIGNED(D, S) GT_TO_HALF_FROM(S, GT_E_HALF_FROM_UNSIGNED)
GT_FROM_SIGNED(GT_TO_HALF_FROM_SIGNED, half) GT_FROM_UNSIGNED(GT_TO_HALF_FROM_UNSIGNED, half)
GT_TO_HALF_FROM(float, GT_E_HALF_FROM_FP) GT_TO_HALF_FROM(double, GT_E_HALF_FROM_FP)
GT_TO_HALF_FROM(half, GT_E_HALF_AS_IS)
/* from half: every conversion of the float with the same value */
#define GT_FROM_HALF_SUF(D, SUF) GT_CVT(D, half, SUF, convert_##D##SUF((float)x))
#define GT_FROM_HALF_MODES(D, SAT) GT_FROM_HALF_SUF(D, SAT##_rte) GT_FROM_HALF_SUF(D, SAT##_rtz) \
  GT_FROM_HALF_SUF(D, SAT##_rtp) GT_FROM_HALF_SUF(D, SAT##_rtn)
#define GT_INT_FROM_HALF(D) GT_FROM_HALF_SUF(D, ) GT_FROM_HALF_MODES(D, ) GT_FROM_HALF_SUF(D, _sat) \
  GT_FROM_HALF_MODES(D, _sat)
GT_INT_FROM_HALF(char) GT_INT_FROM_HALF(uchar) GT_INT_FROM_HALF(short) GT_INT_FROM_HALF(ushort) GT_INT_FROM_HALF(int)
GT_INT_FROM_HALF(uint) GT_INT_FROM_HALF(long) GT_INT_FROM_HALF(ulong)
GT_FROM_HALF_SUF(float, ) GT_FROM_HALF_MODES(float, ) GT_FROM_HALF_SUF(double, ) GT_FROM_HALF_MODES(double, )
GT_VLOADS(half)
