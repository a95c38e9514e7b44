/* gputwin's transcendental functions, in the subset of C that OpenCL C and HIP's C++ share: opencl.cl
   defines OpenCL's overloads from them, include/hip/hip_runtime.h HIP's sinf, powf, ... (docs/cc.md).

   Everything computes in double. The float functions round a double result once: double's 53 bits leave
   it within about half a float ulp, far under OpenCL's bounds, and double's exponent range keeps x*x,
   y*log(x) and the like from overflowing for any float input. The double computation is itself within
   OpenCL's double bounds (docs/cc.md has the measured errors), so it is the double form too. The building
   blocks:
   - exp/expm1: x = k*ln2 + r, |r| <= ln2/2 (ln2 in two parts, fma), e^r - 1 by its Taylor series to r^13;
   - log/log1p: x = 2^e*m, m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.172, by
     its series to s^25 arranged so that m - 1 enters exactly; log1p near 0 the same with m - 1 = x, else
     log(u) plus the rounding error of u = 1 + x over u;
   - sin/cos/tan: x = (k + f) pi/2 for |x| > pi/4 by Payne-Hanek: the 53-bit significand times the five
     32-bit words of 2/pi that reach the binary point, exactly in 32-bit limbs, give the quadrant and 128
     bits of f, r = f pi/2 as a double-double; sin and cos of r by their Taylor series to r^17 / r^18 plus
     the low part's first-order term;
   - atan: |x| > 1 through pi/2 - atan(1/x), then atan(x) = atan(c) + atan((x - c) / (1 + x c)), c = k/8
     nearest x, atan(c) from a two-part table, the rest (|t| <= 1/16) by its series to t^15; asin, acos and
     atan2 through it;
   - pow/pown/powr/rootn: e^(y log|x|) with log x as a double-double (a log(1 + k/64) table and a short
     atanh series) and y log x kept to twice double's precision into exp;
   - erf: its Taylor series below 0.75, erfc above as e^-x^2 (x^2 split exactly) times erfcx: Taylor
     series around centres 1/4 apart below 3.25, its continued fraction above;
   - lgamma/tgamma: Stirling's series from 10 on (smaller x shifted up, the shift kept as double-doubles),
     lgamma's Taylor series at 2 for x in [0.5, 2.5], the reflection formula through sinpi below 0;
   - fmod/remainder/remquo: exact long division of the integer significands;
   - sinpi/cospi/tanpi: x = k/2 + r exactly, pi r as a double-double into sin/cos's series; asinpi ...
     atan2pi: the radian result times 1/pi in two parts.
   Taylor coefficients are written as 1.0 / n! and folded by the compiler to the nearest double. */
#ifndef GPUTWIN_GTMATH_H
#define GPUTWIN_GTMATH_H

#ifdef __OPENCL_C_VERSION__
#define GT_MATH static inline __attribute__((always_inline))
#define GT_TABLE __constant double
#define GT_TABLE_PTR __constant double *
#else
#define GT_MATH static __device__ inline __attribute__((always_inline))
#define GT_TABLE static __constant__ const double   /* a table of constants, and a pointer into one */
#define GT_TABLE_PTR const double *
#endif

/* at the top of a function whose double-double steps need each product rounded where written: HIP's
   default -ffp-contract=fast-honor-pragmas would fuse a * b into a later statement's + c (OpenCL's default
   fuses only within one expression, which this restores) */
#define GT_SEPARATE_ROUNDING _Pragma("clang fp contract(on)")
#define GT_INF __builtin_inf()
#define GT_NAN __builtin_nan("")
#define GT_ISNAN(x) __builtin_isnan(x)
#define GT_ISINF(x) __builtin_isinf(x)
#define GT_PI 3.141592653589793
#define GT_PIO2_HI 1.5707963267948966           /* pi/2 = HI + LO */
#define GT_PIO2_LO 6.123233995736766e-17
#define GT_LN2_HI 0.6931471805599453             /* ln 2 = HI + LO to about 2^-106 */
#define GT_LN2_LO 2.3190468138462996e-17
#define GT_LN10_HI 2.302585092994046           /* ln 10 = HI + LO */
#define GT_LN10_LO -2.1707562233822494e-16

/* ---- exp, log ---- */
GT_MATH double gt_expm1_taylor(double r) {   /* e^r - 1, |r| <= 0.35 */
  double p = 1.0 / 6227020800.0;
  p = __builtin_fma(p, r, 1.0 / 479001600.0); p = __builtin_fma(p, r, 1.0 / 39916800.0);
  p = __builtin_fma(p, r, 1.0 / 3628800.0); p = __builtin_fma(p, r, 1.0 / 362880.0);
  p = __builtin_fma(p, r, 1.0 / 40320.0); p = __builtin_fma(p, r, 1.0 / 5040.0); p = __builtin_fma(p, r, 1.0 / 720.0);
  p = __builtin_fma(p, r, 1.0 / 120.0); p = __builtin_fma(p, r, 1.0 / 24.0); p = __builtin_fma(p, r, 1.0 / 6.0);
  p = __builtin_fma(p, r, 0.5);
  return __builtin_fma(p * r, r, r);
}
GT_MATH double gt_reduce_ln2(double x, double *k) {
  *k = __builtin_rint(x * (1.0 / GT_LN2_HI));
  return __builtin_fma(-*k, GT_LN2_LO, __builtin_fma(-*k, GT_LN2_HI, x));
}
GT_MATH double gt_exp_hl(double x, double lo) {   /* e^(x + lo), |lo| below an ulp of x */
  if (x != x) return x;
  if (x > 709.8) return GT_INF;
  if (x < -745.2) return 0.0;
  double k, r = gt_reduce_ln2(x, &k) + lo;
  return __builtin_ldexp(1.0 + gt_expm1_taylor(r), (int)k);
}
GT_MATH double gt_exp(double x) { return gt_exp_hl(x, 0.0); }
GT_MATH double gt_exp10(double x) {   /* e^(x ln 10), the product kept to twice double's precision */
  GT_SEPARATE_ROUNDING
  double hi = x * GT_LN10_HI;
  return gt_exp_hl(hi, __builtin_fma(x, GT_LN10_HI, -hi) + x * GT_LN10_LO);
}
GT_MATH double gt_expm1(double x) {
  if (x != x || x == 0.0) return x;
  if (__builtin_fabs(x) < 0.34) return gt_expm1_taylor(x);
  if (x > 709.8) return GT_INF;
  if (x < -40.0) return -1.0;
  double k, p = gt_expm1_taylor(gt_reduce_ln2(x, &k));
  return k > 1000 ? __builtin_ldexp(1.0 + p, (int)k) : __builtin_ldexp(p, (int)k) + (__builtin_ldexp(1.0, (int)k) - 1.0);
}
/* log(1 + f) for 1 + f in [sqrt(1/2), sqrt(2)): with s = f / (2 + f), log(1 + f) = 2 atanh(s)
   = f - s (f - 2 s^2 P(s^2)), P = 1/3 + s^2/5 + ... + s^22/25: f enters exactly, the correction is at most a
   sixth of it, so its rounding errors shrink accordingly */
GT_MATH double gt_log1p_core(double f) {
  double s = f / (2.0 + f), s2 = s * s, p = 1.0 / 25;
  p = __builtin_fma(p, s2, 1.0 / 23); p = __builtin_fma(p, s2, 1.0 / 21); p = __builtin_fma(p, s2, 1.0 / 19);
  p = __builtin_fma(p, s2, 1.0 / 17); p = __builtin_fma(p, s2, 1.0 / 15); p = __builtin_fma(p, s2, 1.0 / 13);
  p = __builtin_fma(p, s2, 1.0 / 11); p = __builtin_fma(p, s2, 1.0 / 9); p = __builtin_fma(p, s2, 1.0 / 7);
  p = __builtin_fma(p, s2, 1.0 / 5); p = __builtin_fma(p, s2, 1.0 / 3);
  return f - s * (f - 2.0 * s2 * p);
}
GT_MATH double gt_log(double x) {
  if (!(x > 0.0) || __builtin_isinf(x)) return x == 0.0 ? -GT_INF : x < 0.0 ? GT_NAN : x;
  double m = __builtin_amdgcn_frexp_mant(x);
  int e = __builtin_amdgcn_frexp_exp(x);
  if (m < 0.7071067811865476) { m *= 2.0; e--; }
  return __builtin_fma((double)e, GT_LN2_HI, gt_log1p_core(m - 1.0) + e * GT_LN2_LO);   /* m - 1 is exact */
}
GT_MATH double gt_log1p(double x) {
  if (!(x > -1.0) || __builtin_isinf(x)) return x == -1.0 ? -GT_INF : x < -1.0 ? GT_NAN : x;
  if (x > -0.2928932188134524 && x < 0.41421356237309503) return gt_log1p_core(x);
  double u = 1.0 + x;      /* log(1 + x) = log(u) + log(1 + c/u), c = x - (u - 1) the rounding error of u */
  return gt_log(u) + (x - (u - 1.0)) / u;
}

/* ---- sin, cos, tan ---- */
GT_MATH double gt_sin_taylor(double r) {   /* |r| <= pi/4 */
  double r2 = r * r, p = -1.0 / 355687428096000.0;
  p = __builtin_fma(p, r2, 1.0 / 1307674368000.0); p = __builtin_fma(p, r2, -1.0 / 6227020800.0);
  p = __builtin_fma(p, r2, 1.0 / 39916800.0); p = __builtin_fma(p, r2, -1.0 / 362880.0);
  p = __builtin_fma(p, r2, 1.0 / 5040.0); p = __builtin_fma(p, r2, -1.0 / 120.0); p = __builtin_fma(p, r2, 1.0 / 6.0);
  return __builtin_fma(-r * r2, p, r);
}
GT_MATH double gt_cos_taylor(double r) {
  double r2 = r * r, p = -1.0 / 6402373705728000.0;
  p = __builtin_fma(p, r2, 1.0 / 20922789888000.0); p = __builtin_fma(p, r2, -1.0 / 87178291200.0);
  p = __builtin_fma(p, r2, 1.0 / 479001600.0); p = __builtin_fma(p, r2, -1.0 / 3628800.0);
  p = __builtin_fma(p, r2, 1.0 / 40320.0); p = __builtin_fma(p, r2, -1.0 / 720.0); p = __builtin_fma(p, r2, 1.0 / 24.0);
  return __builtin_fma(r2 * r2, p, __builtin_fma(r2, -0.5, 1.0));
}
/* 2/pi in 32-bit words: 2/pi = sum gt_two_over_pi_32[j] 2^(-32 (j+1)) (computed from pi by Machin's
   formula); words [j0, j0 + 6] are used, j0 <= 30 for |x| < 2^1024 */
GT_TABLE gt_two_over_pi_32[] = {
  2734261102, 1313084713, 4230436817, 4113882560, 3680671129, 1011060801, 4266746795, 3736847713, 3072618042,
  1112396512, 105459434, 164729372, 4263373596, 2972297022, 3900847605, 784024708, 3919343654, 3026157121,
  965858873, 2203269620, 2625920907, 3187222587, 536385535, 3724908559, 4012839307, 1510632735, 1832287951,
  667617719, 1330003814, 2657085997, 1965537991, 3957715323, 1023883767, 2320667370, 1811636145, 529358088,
  1443049542};
typedef unsigned long gt_u64;
typedef unsigned int gt_u32;
/* bits [pos, pos + 64) of the number in limbs l[2..10] (l[0..1] and l[11..13] are zero padding) */
GT_MATH gt_u64 gt_bits64(const gt_u32 *l, int pos) {
  int at = pos + 64, k = at >> 5, sh = at & 31;
  gt_u64 lo = l[k] | (gt_u64)l[k + 1] << 32, hi = l[k + 2];
  return sh ? lo >> sh | hi << (64 - sh) : lo;
}
/* x = (k + f) pi/2 with k = *q mod 4 and |f| <= 1/2; returns f pi/2 as hi + *lo. x = m 2^e (m < 2^53);
   the product m * 2/pi is formed exactly, in 32-bit limbs, from the seven words that start where m * 2/pi
   stops being a multiple of 4: 194+ bits of fraction, so the neglected tail of 2/pi is under 2^-139, and
   x within 2^-61 of a multiple of pi/2 (the closest a double gets) keeps 70+ bits of f; the bits around
   the binary point are the quadrant and 128 bits of f */
GT_MATH double gt_rem_pio2_d(double x, int *q, double *lo) {
  GT_SEPARATE_ROUNDING
  double ax = __builtin_fabs(x);
  int e = __builtin_amdgcn_frexp_exp(ax) - 53;
  gt_u64 m = (gt_u64)__builtin_ldexp(__builtin_amdgcn_frexp_mant(ax), 53);
  int j0 = e >= 2 ? (e - 2) / 32 : 0;
  gt_u32 l[14] = {0}, a[2] = {(gt_u32)m, (gt_u32)(m >> 32)}, w[7];
  for (int i = 0; i < 7; i++) w[i] = (gt_u32)gt_two_over_pi_32[j0 + 6 - i];   /* little-endian */
  gt_u64 carry = 0;
  for (int k = 0; k < 9; k++) {        /* limb k of m * w: the 32-bit halves of the partial products */
    gt_u64 sum = carry;
    for (int i = 0; i < 2; i++) {
      if (k - i >= 0 && k - i < 7) sum += (gt_u32)((gt_u64)a[i] * w[k - i]);
      if (k - i - 1 >= 0 && k - i - 1 < 7) sum += ((gt_u64)a[i] * w[k - i - 1]) >> 32;
    }
    l[k + 2] = (gt_u32)sum;
    carry = sum >> 32;
  }
  int p2 = 32 * (j0 + 7) + 2 - e;      /* the bit of weight 4 */
  int quadrant = (int)(gt_bits64(l, p2 - 2) & 3);
  gt_u64 fhi = gt_bits64(l, p2 - 66), flo = gt_bits64(l, p2 - 130);
  double sign = 1.0;
  if (fhi >> 63) {                     /* f >= 1/2: the next quadrant, f - 1 negated */
    quadrant++;
    fhi = ~fhi + (flo == 0);
    flo = -flo;
    sign = -1.0;
  }
  double fh = (double)fhi;             /* fhi as hi + lo doubles, then scaled by 2^-64 */
  long rem = (long)(fhi - (gt_u64)fh);
  double f_hi = __builtin_ldexp(fh, -64), f_lo = __builtin_ldexp((double)rem, -64) + __builtin_ldexp((double)flo, -128);
  double s = f_hi + f_lo;
  f_lo = f_lo - (s - f_hi);
  f_hi = s;
  double r = f_hi * GT_PIO2_HI;
  double r_lo = __builtin_fma(f_hi, GT_PIO2_HI, -r) + (f_hi * GT_PIO2_LO + f_lo * GT_PIO2_HI);
  s = r + r_lo;
  *lo = (r_lo - (s - r)) * sign;
  if (x < 0) *lo = -*lo;
  *q = x < 0 ? -quadrant & 3 : quadrant & 3;
  return x < 0 ? -s * sign : s * sign;
}
/* sin and cos of q pi/2 + r from those of r */
GT_MATH void gt_by_quadrant(int q, double sr, double cr, double *s, double *c) {
  *s = q == 0 ? sr : q == 1 ? cr : q == 2 ? -sr : -cr;
  *c = q == 0 ? cr : q == 1 ? -sr : q == 2 ? -cr : sr;
}
/* sin and cos of x (finite) in double, and the quadrant-resolved tangent */
GT_MATH void gt_sincos_d(double x, double *s, double *c) {
  int q = 0;
  double lo = 0.0, r = __builtin_fabs(x) <= 0.7853981633974483 ? x : gt_rem_pio2_d(x, &q, &lo);
  gt_by_quadrant(q, gt_sin_taylor(r) + lo * (1.0 - 0.5 * r * r), gt_cos_taylor(r) - lo * r, s, c);
}
GT_MATH double gt_sin(double x) {
  double s, c;
  if (x == 0.0 || GT_ISNAN(x) || GT_ISINF(x)) return GT_ISINF(x) ? GT_NAN : x;
  gt_sincos_d(x, &s, &c);
  return s;
}
GT_MATH double gt_cos(double x) {
  double s, c;
  if (GT_ISNAN(x) || GT_ISINF(x)) return GT_NAN;
  gt_sincos_d(x, &s, &c);
  return c;
}
GT_MATH double gt_tan(double x) {
  int q = 0;
  if (x == 0.0 || GT_ISNAN(x) || GT_ISINF(x)) return GT_ISINF(x) ? GT_NAN : x;
  double lo = 0.0, r = __builtin_fabs(x) <= 0.7853981633974483 ? x : gt_rem_pio2_d(x, &q, &lo);
  double sr = gt_sin_taylor(r) + lo * (1.0 - 0.5 * r * r), cr = gt_cos_taylor(r) - lo * r;
  return q & 1 ? -cr / sr : sr / cr;
}

/* ---- atan family ---- */
/* atan(k/8) = hi + lo for k = 0..8 (the series summed in 60-digit decimals; atan(1) by Machin's formula) */
GT_TABLE gt_atan_hi[] = {0.0, 0.12435499454676144, 0.24497866312686414, 0.35877067027057225, 0.4636476090008061,
                         0.5585993153435624, 0.6435011087932844, 0.7188299996216245, 0.7853981633974483};
GT_TABLE gt_atan_lo[] = {0.0, -3.1253241424539383e-18, 1.0698755618734451e-17, -2.4623815582638635e-17,
                         2.2698777452961687e-17, -5.4556305485916264e-18, 1.5834785051444286e-17,
                         -2.1478388444456983e-17, 3.061616997868383e-17};
GT_MATH double gt_atan(double x) {
  if (x != x) return x;
  double a = __builtin_fabs(x);
  bool flip = a > 1.0;
  if (flip) a = 1.0 / a;
  int k = (int)__builtin_rint(a * 8.0);
  double c = k * 0.125, t = (a - c) / __builtin_fma(a, c, 1.0), t2 = t * t;   /* a - c is exact */
  double q = 1.0 / 15;
  q = __builtin_fma(q, t2, -1.0 / 13); q = __builtin_fma(q, t2, 1.0 / 11); q = __builtin_fma(q, t2, -1.0 / 9);
  q = __builtin_fma(q, t2, 1.0 / 7); q = __builtin_fma(q, t2, -1.0 / 5); q = __builtin_fma(q, t2, 1.0 / 3);
  double r = gt_atan_hi[k] + (gt_atan_lo[k] + __builtin_fma(-t * t2, q, t));
  if (flip) r = (GT_PIO2_HI - r) + GT_PIO2_LO;
  return __builtin_copysign(r, x);
}
/* atan2 of finite or infinite y, x (not NaN), with OpenCL's signed zeros and infinities */
GT_MATH double gt_atan2(double y, double x) {
  bool xneg = __builtin_signbit(x);
  if (y == 0.0) return xneg ? __builtin_copysign(GT_PI, y) : y;
  if (__builtin_isinf(x) && __builtin_isinf(y))
    return __builtin_copysign(xneg ? 3 * GT_PI / 4 : GT_PI / 4, y);
  if (x == 0.0 || __builtin_isinf(y)) return __builtin_copysign(GT_PI / 2, y);
  if (__builtin_isinf(x)) return xneg ? __builtin_copysign(GT_PI, y) : __builtin_copysign(0.0, y);
  double t = gt_atan(__builtin_fabs(y / x));
  return __builtin_copysign(xneg ? GT_PI - t : t, y);
}

/* ---- erf, erfc ---- */
/* erf's series' coefficients (-1)^n / (n! (2n+1)), n = 28 down to 0 */
GT_TABLE gt_erf_taylor[] = {
  5.754191643982172e-32, -1.669761793417372e-30, 4.6784835155184856e-29, -1.2641078988989164e-27,
  3.289260349175752e-26, -8.230149299214221e-25, 1.977064753877905e-23, -4.5518467589282e-22,
  1.0025164934907719e-20, -2.107855191442136e-19, 4.221407288807088e-18, -8.032735012415773e-17,
  1.4483264643598138e-15, -2.466827010264457e-14, 3.9554295164585257e-13, -5.9477940136376354e-12,
  8.35070279514724e-11, -1.0892221037148573e-09, 1.3122532963802806e-08, -1.4503852223150468e-07,
  1.4589169000933706e-06, -1.3227513227513228e-05, 0.00010683760683760684, -0.0007575757575757576,
  0.004629629629629629, -0.023809523809523808, 0.1, -0.3333333333333333, 1.0};
/* erfcx(x) = e^(x^2) erfc(x) on [0.75, 3.25): its Taylor series to h^14 around c = 0.875 + j/4 (|h| <= 1/8),
   one row of 15 coefficients (highest first) per j; the rows from erfcx(c) (erf's series in 90-digit
   decimals) by the recurrence a_(n+1) = (2c a_n + 2 a_(n-1)) / (n+1) of erfcx' = 2x erfcx - 2/sqrt(pi);
   the omitted terms are under 2^-62 of the sum */
GT_TABLE gt_erfcx_taylor[] = {
  2.5412158137965964e-06, -8.064406706870489e-06, 2.4844866565087853e-05, -7.415790183911005e-05, 0.0002139573634997484, -0.0005950811531773852, 0.001590482826528954, -0.0040695376625110675, 0.009922776760813, -0.022925811484500114, 0.0498284153313766, -0.1009143921262048, 0.1879569237731824, -0.3158338964908418, 0.464311583202669,
  8.259001749102559e-07, -2.74459263101956e-06, 8.868967934268797e-06, -2.7817441027679537e-05, 8.450842876175226e-05, -0.0002480679080092087, 0.0007016185403191211, -0.0019056264439004506, 0.004950303910664491, -0.01223878445314913, 0.028619544241786244, -0.06279394840488235, 0.12788228043906513, -0.2380584881012718, 0.3956980795529959,
  2.818449776355422e-07, -9.803096399829424e-07, 3.320840598425341e-06, -1.0938168482723969e-05, 3.496502525429751e-05, -0.0001082368363796409, 0.00032365077629349377, -0.000932085581111938, 0.00257622077920289, -0.006804603105295757, 0.017084991607390333, -0.0405033712234011, 0.08986211864695719, -0.18431546997466777, 0.3432958898621254,
  1.0072845607001184e-07, -3.6648743035534286e-07, 1.3006412668175152e-06, -4.495710355888191e-06, 1.5109376929223401e-05, -4.9279144467373076e-05, 0.00015562549440559825, -0.000474647578512276, 0.0013938042927048415, -0.003926198500438334, 0.010561485441326816, -0.02697791009325191, 0.06496207478418799, -0.14603023666418335, 0.30226120936348594,
  3.7605908027333326e-08, -1.43034329030162e-07, 5.314307231228871e-07, -1.9261557445514666e-06, 6.800126359771322e-06, -2.3344093519604294e-05, 7.777080714811466e-05, -0.0002508686842409343, 0.0007814620115442105, -0.0023432816664886646, 0.006738039159298878, -0.01849202758990706, 0.04814863004967349, -0.11801672272799837, 0.2694299851646704,
  1.463082586572972e-08, -5.813394733274317e-08, 2.2595041914218728e-07, -8.580152983399786e-07, 3.1789850238255784e-06, -1.1474427316499236e-05, 4.027808316668877e-05, -0.0001372258496534602, 0.000452717263180358, -0.0014423146580453713, 0.004423070437887488, -0.013004811325624342, 0.0364813649427267, -0.09703011749173075, 0.24267036461265454,
  5.918119753562605e-09, -2.4547149810123304e-08, 9.972631907398108e-08, -3.964064815665066e-07, 1.5398233081643395e-06, -5.837316005506092e-06, 2.156274205389867e-05, -7.747943440278675e-05, 0.0002702646249222132, -0.00091305650460001, 0.0029793030731916632, -0.009358486060330226, 0.028185010539667613, -0.08097712912220592, 0.22050569220490668,
  2.483374151265069e-09, -1.0744331500506645e-08, 4.558748924768542e-08, -1.8950531402846743e-07, 7.709763848108395e-07, -3.0660922372850243e-06, 1.1903374046927386e-05, -4.5043771940967e-05, 0.00016585339753274792, -0.0005930183703168478, 0.002054233414679969, -0.006874908639327039, 0.022155102007593415, -0.06846950572892327, 0.201887554546017,
  1.0787834972498277e-09, -4.864549770694644e-09, 2.1537065071495898e-08, -9.353863559006589e-08, 3.981459677504148e-07, -1.659132153027805e-06, 6.760734778707013e-06, -2.6903207177407787e-05, 0.00010438965974987544, -0.00039428149690181913, 0.0014467282828423563, -0.005145047555426322, 0.01768546828753539, -0.05856329265980373, 0.1860549346844711,
  4.841716599398727e-10, -2.2736364915628365e-09, 1.0494315655712973e-08, -4.7573373619261475e-08, 2.1163268649446996e-07, -9.230057002011567e-07, 3.9425562456009645e-06, -1.647401391840822e-05, 6.725151847742954e-05, -0.0002678200439563961, 0.0010386921927960265, -0.003915463212378573, 0.014313206924275092, -0.05060196645692752, 0.1724443521021736};
GT_MATH double gt_horner(double t, GT_TABLE_PTR c, int n) {
  double p = c[0];
  for (int i = 1; i < n; i++) p = __builtin_fma(p, t, c[i]);
  return p;
}
#define GT_RSQRT_PI 0.5641895835477563        /* 1/sqrt(pi) */
/* erfc(x) for x >= 0.75: erfcx(x) e^(-x^2), x^2 split exactly into hi + lo so that the exponent carries no
   rounding error; erfcx from the table below 3.25, above by the continued fraction
   sqrt(pi) erfcx(x) = 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))) to 40 terms (to 2^-60 from 3.25 on), evaluated
   backwards; the power of 2 of e^(-x^2) applied last, so a subnormal result is rounded once */
GT_MATH double gt_erfc_pos(double x) {
  if (x >= 28.0) return 0.0;                    /* erfc(27.3) is under half the smallest subnormal */
  double f;
  if (x < 3.25) {
    int j = (int)((x - 0.75) * 4.0);
    f = gt_horner(x - (0.875 + 0.25 * j), gt_erfcx_taylor + 15 * j, 15);   /* x - c is exact */
  } else {
    double t = x;
    for (int k = 40; k > 0; k--) t = x + (0.5 * k) / t;
    f = GT_RSQRT_PI / t;
  }
  double s = x * x, s_lo = __builtin_fma(x, x, -s), k, r = gt_reduce_ln2(-s, &k) - s_lo;
  return __builtin_ldexp(__builtin_fma(f, gt_expm1_taylor(r), f), (int)k);
}
/* erf(x) = 2/sqrt(pi) x sum (-1)^n x^2n / (n! (2n+1)): below 0.75 the terms shrink fast enough that the
   alternating sum loses under a bit; above, 1 - erfc */
GT_MATH double gt_erf_small(double x) { return 1.1283791670955126 * x * gt_horner(x * x, gt_erf_taylor, 29); }
GT_MATH double gt_erf(double x) {
  if (x != x) return x;
  double a = __builtin_fabs(x);
  return __builtin_copysign(a < 0.75 ? gt_erf_small(a) : 1.0 - gt_erfc_pos(a), x);
}
GT_MATH double gt_erfc(double x) {
  if (x != x) return x;
  if (__builtin_fabs(x) < 0.75) return 1.0 - gt_erf_small(x);
  return x > 0 ? gt_erfc_pos(x) : 2.0 - gt_erfc_pos(-x);
}

/* ---- the float functions: special values first (OpenCL C 3.0 section 7.5.1 and C99 Annex F), then the
   double computation rounded once ---- */
/* the float form of a double function: its result rounded once */
#define GT_FLOAT_OF(name) GT_MATH float gt_##name##f(float x) { return (float)gt_##name(x); }
GT_FLOAT_OF(sin) GT_FLOAT_OF(cos) GT_FLOAT_OF(tan)
/* functions whose double computation is accurate enough to be the double form too (docs/cc.md lists
   the measured errors); the float form rounds it once */
GT_MATH double gt_atan2_d(double y, double x) {
  return GT_ISNAN(x) || GT_ISNAN(y) ? GT_NAN : gt_atan2(y, x);
}
GT_MATH double gt_asin(double x) {
  return !(__builtin_fabs(x) <= 1.0) ? GT_NAN : gt_atan2(x, __builtin_sqrt((1.0 - x) * (1.0 + x)));
}
GT_MATH double gt_acos(double x) {
  return !(__builtin_fabs(x) <= 1.0) ? GT_NAN : gt_atan2(__builtin_sqrt((1.0 - x) * (1.0 + x)), x);
}
GT_MATH double gt_sinh(double x) {
  double a = __builtin_fabs(x), r;
  if (a > 709.0) { double e = gt_exp(0.5 * a); r = 0.5 * e * e; }   /* e^a / 2 without overflowing first */
  else { double e = gt_expm1(a); r = 0.5 * (e + e / (e + 1.0)); }
  return __builtin_copysign(r, x);
}
GT_MATH double gt_cosh(double x) {
  double a = __builtin_fabs(x), e = gt_exp(a > 709.0 ? 0.5 * a : a);
  return a > 709.0 ? 0.5 * e * e : 0.5 * (e + 1.0 / e);
}
GT_MATH double gt_tanh(double x) {
  double a = __builtin_fabs(x), e = gt_expm1(2.0 * a);
  return __builtin_copysign(a > 20.0 ? 1.0 : e / (e + 2.0), x);   /* 1 - tanh(20) < 2^-56 */
}
GT_MATH double gt_asinh(double x) {
  double a = __builtin_fabs(x);
  if (GT_ISINF(x) || GT_ISNAN(x)) return x;
  double r = a > 0x1p28 ? gt_log(a) + GT_LN2_HI : gt_log1p(a + a * a / (1.0 + __builtin_sqrt(1.0 + a * a)));
  return __builtin_copysign(r, x);
}
GT_MATH double gt_acosh(double x) {
  double t = x - 1.0;
  if (x < 1.0) return GT_NAN;
  return x > 0x1p28 ? gt_log(x) + GT_LN2_HI : gt_log1p(t + __builtin_sqrt(__builtin_fma(t, t, 2.0 * t)));
}
GT_MATH double gt_atanh(double x) {
  double a = __builtin_fabs(x);
  return a > 1.0 ? GT_NAN : __builtin_copysign(0.5 * gt_log1p(2.0 * a / (1.0 - a)), x);
}
GT_MATH double gt_hypot(double x, double y) {
  if (GT_ISINF(x) || GT_ISINF(y)) return GT_INF;
  double a = __builtin_fabs(x), b = __builtin_fabs(y);
  int e = __builtin_amdgcn_frexp_exp(a > b ? a : b);      /* scaled to [0.5, 1): no overflow or underflow */
  a = __builtin_ldexp(a, -e); b = __builtin_ldexp(b, -e);
  return __builtin_ldexp(__builtin_sqrt(__builtin_fma(a, a, b * b)), e);
}
GT_FLOAT_OF(atan)
GT_MATH float gt_atan2f(float y, float x) { return (float)gt_atan2_d(y, x); }
GT_FLOAT_OF(asin) GT_FLOAT_OF(acos) GT_FLOAT_OF(sinh) GT_FLOAT_OF(cosh) GT_FLOAT_OF(tanh) GT_FLOAT_OF(asinh) GT_FLOAT_OF(acosh) GT_FLOAT_OF(atanh)
GT_MATH float gt_hypotf(float x, float y) { return (float)gt_hypot(x, y); }
GT_FLOAT_OF(expm1) GT_FLOAT_OF(log1p)
GT_MATH double gt_cbrt(double x) {
  if (x == 0.0 || GT_ISINF(x) || GT_ISNAN(x)) return x;
  int k = __builtin_amdgcn_frexp_exp(x) / 3;                /* |x| = 2^3k a, a in [1/8, 8): no under/overflow */
  double a = __builtin_ldexp(__builtin_fabs(x), -3 * k), y = gt_exp(gt_log(a) / 3.0);
  y -= (y * y * y - a) / (3.0 * y * y);                     /* one Newton step to the last bit */
  return __builtin_copysign(__builtin_ldexp(y, k), x);
}
GT_FLOAT_OF(exp10) GT_FLOAT_OF(cbrt) GT_FLOAT_OF(erf) GT_FLOAT_OF(erfc)

/* log x for pow, as hi + *lo to about 2^-100 relative: x = 2^e m, m in [1, 2), c = 1 + k/64 nearest m,
   log m = log c + 2 atanh(s), s = (m - c) / (m + c) (|s| <= 1/256) as a double-double, log c from a
   two-part table (60-digit decimals); the series' tail 2 s^3 (1/3 + ... + s^8/11) is under 2^-17 of it */
GT_TABLE gt_log_c_hi[] = {
  0.0, 0.015504186535965254, 0.030771658666753687, 0.0458095360312942, 0.06062462181643484,
  0.07522342123758753, 0.08961215868968714, 0.10379679368164356, 0.11778303565638346, 0.13157635778871926,
  0.1451820098444979, 0.15860503017663857, 0.17185025692665923, 0.184922338494012, 0.19782574332991987,
  0.21056476910734964, 0.22314355131420976, 0.2355660713127669, 0.24783616390458127, 0.25995752443692605,
  0.27193371548364176, 0.2837681731306446, 0.2954642128938359, 0.3070250352949119, 0.3184537311185346,
  0.329753286372468, 0.3409265869705932, 0.3519764231571782, 0.3629054936893685, 0.37371640979358406,
  0.38441169891033206, 0.394993808240869, 0.4054651081081644, 0.415827895143711, 0.4260843953109001,
  0.43623676677491807, 0.44628710262841953, 0.4562374334815876, 0.46608972992459924, 0.4758459048699639,
  0.4855078157817008, 0.4950772667978515, 0.5045560107523953, 0.5139457511022343, 0.5232481437645479,
  0.5324647988694718, 0.5415972824327444, 0.5506471179526623, 0.5596157879354227, 0.5685047353526688,
  0.5773153650348236, 0.5860490450035782, 0.5947071077466928, 0.6032908514380843, 0.6118015411059929,
  0.6202404097518576, 0.6286086594223741, 0.6369074622370692, 0.6451379613735847, 0.6533012720127457,
  0.661398482245365, 0.6694306539426292, 0.6773988235918061, 0.6853040030989194, 0.6931471805599453};
GT_TABLE gt_log_c_lo[] = {
  0.0, -3.278321022892429e-19, 1.0431732029005968e-18, 1.902959866474257e-18, 2.6424025938726934e-18,
  -5.930604196293241e-18, -5.4268129336647135e-18, 5.47772415726659e-18, -1.1971685747593677e-18,
  1.1123000879729588e-17, 8.242418783022475e-18, 1.1257003872182592e-17, -6.0224538210113705e-18,
  3.0236614153574064e-18, 1.2821194372980142e-17, -4.249405314729895e-18, -9.091270597324799e-18,
  -2.3943371495187355e-18, -1.2432209578702523e-17, 2.069806938978935e-17, 7.83319637697442e-19,
  -2.032665581126656e-17, -2.16461086040599e-17, -1.2319916200101964e-17, 2.7114779367326236e-17,
  2.122020616196946e-18, 1.7467136443544747e-17, -1.2953893030191963e-17, -2.1492361455310972e-17,
  2.1836211281198184e-17, -1.612149700764673e-17, -1.5113724418336168e-17, -2.8811380259626426e-18,
  -2.48753990369597e-17, -2.499176776547466e-17, -1.8379648230620457e-18, -1.8182541194649598e-17,
  2.122222784062318e-17, -1.4116523239904406e-17, -6.181952722542219e-18, -1.6618350693852048e-17,
  -8.307950959627356e-18, -2.4888518873597905e-17, 3.397548559332142e-17, -3.1833882216350925e-17,
  -9.149239241180804e-19, -3.748764246125639e-17, -2.239429485856908e-17, 2.685492580212308e-17,
  -5.4267346029482773e-17, -8.903591846974013e-18, -3.058363205263577e-17, 1.3751689964323675e-17,
  9.9400563470175e-18, -3.7397759448726e-17, -3.989161064307651e-17, 4.3538742607970387e-17,
  5.422955873465247e-17, 9.346960920120906e-19, -4.306892322029408e-17, -7.603333785634003e-18,
  2.823733943928343e-17, -2.0978183882652005e-18, 4.893484946270261e-17, 2.3190468138462996e-17};
GT_MATH double gt_two_sum(double a, double b, double *err) {
  GT_SEPARATE_ROUNDING
  double s = a + b, bb = s - a;
  *err = (a - (s - bb)) + (b - bb);
  return s;
}
GT_MATH double gt_log_dd(double x, double *lo) {   /* x > 0, finite */
  GT_SEPARATE_ROUNDING
  double m = 2.0 * __builtin_amdgcn_frexp_mant(x);
  int e = __builtin_amdgcn_frexp_exp(x) - 1, k = (int)__builtin_rint((m - 1.0) * 64.0);
  double c = 1.0 + k * 0.015625, u = m - c, d_lo, d = gt_two_sum(m, c, &d_lo);   /* m - c is exact */
  double s = u / d, s_lo = (__builtin_fma(-s, d, u) - s * d_lo) / d, s2 = s * s;
  double p = 1.0 / 11;
  p = __builtin_fma(p, s2, 1.0 / 9); p = __builtin_fma(p, s2, 1.0 / 7); p = __builtin_fma(p, s2, 1.0 / 5);
  p = __builtin_fma(p, s2, 1.0 / 3);
  double a = e * GT_LN2_HI, a_lo = __builtin_fma((double)e, GT_LN2_HI, -a) + e * GT_LN2_LO;
  double e1, e2, h = gt_two_sum(a, gt_log_c_hi[k], &e1);
  h = gt_two_sum(h, 2.0 * s, &e2);
  double l = e1 + e2 + a_lo + gt_log_c_lo[k] + 2.0 * s_lo + 2.0 * s * s2 * p;
  double r = h + l;
  *lo = l - (r - h);
  return r;
}
/* x^y = e^(y log x) for x > 0 finite, y finite: the product kept to twice double's precision */
GT_MATH double gt_exp_ylogx(double x, double y) {
  GT_SEPARATE_ROUNDING
  double l_lo, l = gt_log_dd(x, &l_lo), z = y * l;
  return gt_exp_hl(z, __builtin_fma(y, l, -z) + y * l_lo);
}

/* pow's magnitude |x|^y and sign, for y an integer (yint), an odd one (yodd) or neither; x, y not NaN,
   y not zero, x not 1 (those are answered before) */
GT_MATH double gt_pow(double x, double y, bool yint, bool yodd) {
  double ax = __builtin_fabs(x), r;
  if (GT_ISINF(y)) return ax == 1.0 ? 1.0 : (ax < 1.0) == (y < 0) ? GT_INF : 0.0;
  if (x < 0 && !yint) return GT_NAN;
  if (ax == 0.0) r = y < 0 ? GT_INF : 0.0;
  else if (GT_ISINF(ax)) r = y < 0 ? 0.0 : GT_INF;
  else r = gt_exp_ylogx(ax, y);
  return __builtin_signbit(x) && yodd ? -r : r;
}
GT_MATH double gt_pow_d(double x, double y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (GT_ISNAN(x) || GT_ISNAN(y)) return GT_NAN;
  bool yint = __builtin_rint(y) == y;
  return gt_pow(x, y, yint, yint && __builtin_fabs(y) < 0x1p53 && ((long)y & 1));
}
GT_MATH double gt_pown_d(double x, int n) {
  if (n == 0 || x == 1.0) return 1.0;
  return GT_ISNAN(x) ? x : gt_pow(x, n, true, n & 1);
}
GT_MATH double gt_powr_d(double x, double y) {
  if (GT_ISNAN(x) || GT_ISNAN(y) || x < 0.0) return GT_NAN;
  if (x == 0.0 || GT_ISINF(x)) return y == 0.0 ? GT_NAN : (y < 0.0) == (x == 0.0) ? GT_INF : 0.0;
  if (x == 1.0) return GT_ISINF(y) ? GT_NAN : 1.0;
  return y == 0.0 ? 1.0 : GT_ISINF(y) ? ((x < 1.0) == (y < 0.0) ? GT_INF : 0.0) : gt_exp_ylogx(x, y);
}
GT_MATH double gt_rootn_d(double x, int n) {
  double ax = __builtin_fabs(x), r;
  if (n == 0 || GT_ISNAN(x) || (x < 0.0 && !(n & 1))) return GT_NAN;
  if (ax == 0.0 || GT_ISINF(ax)) r = (n < 0) == (ax == 0.0) ? GT_INF : 0.0;
  else {
    double l_lo, l = gt_log_dd(ax, &l_lo), z = l / n;
    r = gt_exp_hl(z, (__builtin_fma(-z, (double)n, l) + l_lo) / n);
  }
  return n & 1 ? __builtin_copysign(r, x) : r;
}
GT_MATH float gt_powf(float x, float y) { return (float)gt_pow_d(x, y); }
GT_MATH float gt_pownf(float x, int n) { return (float)gt_pown_d(x, n); }
GT_MATH float gt_powrf(float x, float y) { return (float)gt_powr_d(x, y); }
GT_MATH float gt_rootnf(float x, int n) { return (float)gt_rootn_d(x, n); }
/* ---- fmod, remainder, remquo: exact, by long division of the integer significands ----
   |x| = mx 2^ex, |y| = my 2^ey with mx, my integers of `bits` bits (24 for float arguments, 53 for double):
   mx 2^(ex - ey) mod my is found `64 - bits` bits of the exponent difference at a time in 64-bit integers
   (r < my, so r shifted that far still fits), the quotient's low 32 bits kept for remquo. The remainder
   r 2^ey is exact: x and y are multiples of the format's smallest subnormal, so x mod y is too. */
GT_MATH double gt_fmod_core(double ax, double ay, int bits, gt_u32 *quo) {   /* ax, ay > 0 finite */
  if (ax < ay) { *quo = 0; return ax; }
  int ex = __builtin_amdgcn_frexp_exp(ax) - bits, ey = __builtin_amdgcn_frexp_exp(ay) - bits;
  gt_u64 mx = (gt_u64)__builtin_ldexp(__builtin_amdgcn_frexp_mant(ax), bits);
  gt_u64 my = (gt_u64)__builtin_ldexp(__builtin_amdgcn_frexp_mant(ay), bits);
  gt_u64 r = mx % my;
  gt_u64 q = mx / my;
  for (int d = ex - ey; d > 0;) {       /* ax >= ay, both normalised to `bits` bits: ex >= ey */
    int s = d < 64 - bits ? d : 64 - bits;
    gt_u64 t = r << s;
    q = q << s | t / my;
    r = t % my;
    d -= s;
  }
  *quo = (gt_u32)q;
  return __builtin_ldexp((double)r, ey);
}
/* fmod (nearest false) or remainder (nearest true) of double x, y; *quo: the quotient's sign and low 7 bits */
GT_MATH double gt_remquo_bits(double x, double y, int bits, bool nearest, int *quo) {
  *quo = 0;
  if (GT_ISNAN(x) || GT_ISNAN(y) || GT_ISINF(x) || y == 0.0) return GT_NAN;
  if (GT_ISINF(y) || x == 0.0) return x;
  double ay = __builtin_fabs(y);
  gt_u32 q;
  double r = gt_fmod_core(__builtin_fabs(x), ay, bits, &q);
  if (nearest && (r > ay - r || (r == ay - r && (q & 1)))) {   /* ay - r is exact (Sterbenz) when it matters */
    r -= ay;
    q++;
  }
  int qs = (int)(q & 127);
  *quo = __builtin_signbit(x) != __builtin_signbit(y) ? -qs : qs;
  return __builtin_copysign(1.0, x) * r;   /* a zero remainder takes x's sign */
}
GT_MATH double gt_fmod(double x, double y) { int q; return gt_remquo_bits(x, y, 53, false, &q); }
GT_MATH double gt_remainder(double x, double y) { int q; return gt_remquo_bits(x, y, 53, true, &q); }
GT_MATH double gt_remquo(double x, double y, int *quo) { return gt_remquo_bits(x, y, 53, true, quo); }
GT_MATH float gt_fmodf(float x, float y) { int q; return (float)gt_remquo_bits(x, y, 24, false, &q); }
GT_MATH float gt_remainderf(float x, float y) { int q; return (float)gt_remquo_bits(x, y, 24, true, &q); }
GT_MATH float gt_remquof(float x, float y, int *quo) { return (float)gt_remquo_bits(x, y, 24, true, quo); }
/* ---- sinpi; lgamma, tgamma ---- */
#define GT_PI_LO 1.2246467991473532e-16            /* pi = GT_PI + GT_PI_LO */
/* sin(pi a) and cos(pi a) for finite a >= 0: a = k/2 + r (k = rint(2a), |r| <= 1/4, exact), pi r as a
   double-double, the quadrant k mod 4; zeros come out +0. From 2^53 on a is an even integer. */
GT_MATH void gt_sincospi_pos(double a, double *s, double *c) {
  GT_SEPARATE_ROUNDING
  if (a >= 0x1p53) { *s = 0.0; *c = 1.0; return; }
  double k = __builtin_rint(2.0 * a), r = a - 0.5 * k;
  double pr = GT_PI * r, lo = __builtin_fma(GT_PI, r, -pr) + GT_PI_LO * r;
  gt_by_quadrant((int)((long)k & 3), gt_sin_taylor(pr) + lo, gt_cos_taylor(pr) - lo * pr, s, c);
  *s += 0.0;
  *c += 0.0;
}
GT_MATH double gt_sinpi(double x) {   /* integers give 0 with x's sign */
  double s, c;
  if (GT_ISNAN(x) || GT_ISINF(x)) return GT_NAN;
  gt_sincospi_pos(__builtin_fabs(x), &s, &c);
  return __builtin_copysign(1.0, x) * s;
}
#define GT_HALF_LOG_2PI_HI 0.9189385332046728      /* log(2 pi) / 2 = HI + LO */
#define GT_HALF_LOG_2PI_LO -3.8782941580672414e-17
#define GT_LOG_PI 1.1447298858494002
/* log Gamma(x) for x >= 10 as hi + *lo by Stirling's series: (x - 1/2) log x - x + log(2 pi)/2
   + sum B_2k / (2k (2k-1) x^(2k-1)), k <= 10 (the omitted terms are under 2^-60 of the result); log x as a
   double-double (gt_log_dd) so that e^(hi + lo) (tgamma) keeps double's precision */
GT_MATH double gt_lgamma_stirling(double x, double *lo) {
  GT_SEPARATE_ROUNDING
  double t = 1.0 / x, t2 = t * t, p = -174611.0 / 125400.0;
  p = __builtin_fma(p, t2, 43867.0 / 244188.0); p = __builtin_fma(p, t2, -3617.0 / 122400.0);
  p = __builtin_fma(p, t2, 1.0 / 156.0); p = __builtin_fma(p, t2, -691.0 / 360360.0);
  p = __builtin_fma(p, t2, 1.0 / 1188.0); p = __builtin_fma(p, t2, -1.0 / 1680.0);
  p = __builtin_fma(p, t2, 1.0 / 1260.0); p = __builtin_fma(p, t2, -1.0 / 360.0);
  p = __builtin_fma(p, t2, 1.0 / 12.0);
  double l_lo, l = gt_log_dd(x, &l_lo), h = x - 0.5;     /* x - 1/2 exact for x < 2^52; beyond, lo's scale */
  double m = h * l, m_lo = __builtin_fma(h, l, -m) + h * l_lo;
  double e1, e2, s = gt_two_sum(m, -x, &e1);
  s = gt_two_sum(s, GT_HALF_LOG_2PI_HI, &e2);
  double l2 = e1 + e2 + m_lo + GT_HALF_LOG_2PI_LO + p * t, r = s + l2;
  *lo = l2 - (r - s);
  return r;
}
/* log Gamma(x) for x > 0 finite as hi + *lo, and the divisor Gamma(x) = e^(hi + lo) / (*d + *d_lo): below
   10, x is shifted up to y = x + k >= 10 and *d = x (x+1) ... (x+k-1). y and the factors are kept exactly
   as double-doubles (their rounding errors would cost ~10 ulp: d lgamma / dy = psi(y) ~ log y); the low
   part of y enters through psi(y) ~ log y - 1/(2y) */
GT_MATH double gt_lgamma_pos(double x, double *lo, double *d, double *d_lo) {
  GT_SEPARATE_ROUNDING
  double y = x, y_lo = 0.0, p = 1.0, p_lo = 0.0;
  for (double k = 0.0; y < 10.0; k += 1.0) {
    double np = p * y;
    p_lo = __builtin_fma(p, y, -np) + (p_lo * y + p * y_lo);
    p = np;
    y = gt_two_sum(x, k + 1.0, &y_lo);
  }
  *d = p;
  *d_lo = p_lo;
  double l = gt_lgamma_stirling(y, lo);
  *lo += y_lo * (gt_log(y) - 0.5 / y);
  return l;
}
/* lgamma(2 + e) = (1 - Euler's gamma) e + sum_k>=2 (-1)^k (zeta(k) - 1) / k e^k, k <= 30: |e| <= 1/2 to
   2^-60 (zeta(k) - 1 ~ 2^-k; zeta by Euler-Maclaurin in 50-digit decimals); lgamma's zeros at 1 and 2 keep
   full relative precision, where e^(lgamma) shifted would lose it all */
GT_TABLE gt_lgamma2_taylor[] = {
  3.1044247747322276e-11, -6.4229645638381e-11, 1.330476437424449e-10, -2.7595228851242334e-10,
  5.731367241678862e-10, -1.1921401405860912e-09, 2.4836745438024785e-09, -5.183475041970047e-09,
  1.0838659214896955e-08, -2.2711094608943164e-08, 4.7698101693639804e-08, -1.0043224823968099e-07,
  2.1207184805554665e-07, -4.492469198764566e-07, 9.55141213040742e-07, -2.039215753801366e-06,
  4.374866789907488e-06, -9.439488275268397e-06, 2.050721277567069e-05, -4.492623673813314e-05,
  9.945751278180853e-05, -0.00022315475845357939, 0.0005096695247430425, -0.001192753911703261,
  0.0028905103307415234, -0.007385551028673986, 0.020580808427784546, -0.0673523010531981, 0.3224670334241132};
GT_MATH double gt_lgamma_near12(double x) {   /* 0.5 <= x <= 2.5: lgamma(x) = lgamma(x + 1) - log x below 1.5 */
  double e = x < 1.5 ? x - 1.0 : x - 2.0;     /* exact */
  double p = e * __builtin_fma(e, gt_horner(e, gt_lgamma2_taylor, 29), 0.42278433509846713);
  return x < 1.5 ? p - gt_log1p(e) : p;
}
/* lgamma and its sign (OpenCL's lgamma_r); for x < 0, Gamma(x) Gamma(-x) = -pi / (x sin(pi x)) */
GT_MATH double gt_lgamma_r(double x, int *sign) {
  *sign = 1;
  if (GT_ISNAN(x)) { *sign = 0; return x; }
  if (GT_ISINF(x)) { *sign = x > 0 ? 1 : 0; return GT_INF; }
  if (x == 0.0) { *sign = __builtin_signbit(x) ? -1 : 1; return GT_INF; }
  if (x == 1.0 || x == 2.0) return 0.0;
  double lo, d, d_lo, a = __builtin_fabs(x), r;
  if (a < 1e-300) r = -gt_log(a);                  /* Gamma(x) = 1/x - Euler's gamma + O(x) */
  else if (a > 1e300) r = a * (gt_log(a) - 1.0);    /* Stirling's leading terms; Stirling's sum would overflow */
  else if (a >= 0.5 && a <= 2.5) r = gt_lgamma_near12(a);
  else {
    double l = gt_lgamma_pos(a, &lo, &d, &d_lo);   /* below 10: the log of Gamma (cancels less) */
    r = d == 1.0 ? l + lo : gt_log(gt_exp_hl(l, lo) / d * (1.0 - d_lo / d));
  }
  if (x > 0.0) return r;
  double sp = gt_sinpi(x);
  if (sp == 0.0) { *sign = 0; return GT_INF; }          /* a non-positive integer: a pole */
  *sign = sp < 0.0 ? -1 : 1;                            /* the sign of -1 / (x sin(pi x)) with x < 0 */
  return a < 1e-300 ? r : GT_LOG_PI - gt_log(a) - gt_log(__builtin_fabs(sp)) - r;
}
GT_MATH double gt_lgamma(double x) { int s; return gt_lgamma_r(x, &s); }
GT_MATH double gt_tgamma(double x) {
  if (GT_ISNAN(x) || x == GT_INF) return x;
  if (x == 0.0) return __builtin_copysign(GT_INF, x);
  if (x == -GT_INF || (x < 0.0 && __builtin_rint(x) == x)) return GT_NAN;
  if (x > 172.0) return GT_INF;
  double lo, d, d_lo, a = __builtin_fabs(x);
  if (a < 1e-300) return 1.0 / x;
  if (x > 0.0 || a < 171.6) {
    double l = gt_lgamma_pos(a, &lo, &d, &d_lo), e = gt_exp_hl(l, lo);
    if (x > 0.0) return e / d * (1.0 - d_lo / d);
    /* Gamma(x) = pi (d/a) / (sin(pi x) e): d's first factor is a; ordered so that nothing underflows early */
    double sp = gt_sinpi(x);
    return d == 1.0 ? GT_PI / (sp * e) / a : GT_PI * (d / a) * (1.0 + d_lo / d) / (sp * e);
  }
  int s;                                                 /* |Gamma(x)| subnormal: from lgamma */
  double l = gt_lgamma_r(x, &s);
  return s * gt_exp(l);
}
/* ---- the *pi functions: sinpi, cospi, tanpi through the exact reduction above; asinpi ... atan2pi divide
   by pi (1/pi in two parts), special values as OpenCL C 3.0 section 7.5.1 lists them ---- */
#define GT_INV_PI_HI 0.3183098861837907            /* 1/pi = HI + LO */
#define GT_INV_PI_LO -1.9678676675182486e-17
GT_MATH double gt_div_pi(double r) {   /* r/pi, -0 kept */
  return __builtin_copysign(__builtin_fma(r, GT_INV_PI_HI, r * GT_INV_PI_LO), r);
}
GT_MATH double gt_cospi(double x) {
  double s, c;
  if (GT_ISNAN(x) || GT_ISINF(x)) return GT_NAN;
  gt_sincospi_pos(__builtin_fabs(x), &s, &c);
  return c;
}
GT_MATH double gt_tanpi(double x) {   /* tanpi(n) = copysign(0, n) (n even) or copysign(0, -n); n + 1/2: +inf (n even), -inf */
  double s, c;
  if (GT_ISNAN(x) || GT_ISINF(x)) return GT_NAN;
  gt_sincospi_pos(__builtin_fabs(x), &s, &c);
  return __builtin_copysign(1.0, x) * (s / c);
}
GT_MATH double gt_asinpi(double x) { return gt_div_pi(gt_asin(x)); }
GT_MATH double gt_acospi(double x) { return gt_div_pi(gt_acos(x)); }
GT_MATH double gt_atanpi(double x) {
  return GT_ISINF(x) ? __builtin_copysign(0.5, x) : gt_div_pi(gt_atan(x));
}
GT_MATH double gt_atan2pi(double y, double x) {   /* gt_atan2's table in half-turns */
  if (GT_ISNAN(x) || GT_ISNAN(y)) return GT_NAN;
  bool xneg = __builtin_signbit(x);
  if (y == 0.0) return xneg ? __builtin_copysign(1.0, y) : y;
  if (GT_ISINF(x) && GT_ISINF(y)) return __builtin_copysign(xneg ? 0.75 : 0.25, y);
  if (x == 0.0 || GT_ISINF(y)) return __builtin_copysign(0.5, y);
  if (GT_ISINF(x)) return xneg ? __builtin_copysign(1.0, y) : __builtin_copysign(0.0, y);
  return gt_div_pi(gt_atan2(y, x));
}
GT_FLOAT_OF(sinpi) GT_FLOAT_OF(cospi) GT_FLOAT_OF(tanpi) GT_FLOAT_OF(asinpi) GT_FLOAT_OF(acospi) GT_FLOAT_OF(atanpi)
GT_MATH float gt_atan2pif(float y, float x) { return (float)gt_atan2pi(y, x); }
GT_FLOAT_OF(lgamma)
GT_MATH float gt_lgamma_rf(float x, int *sign) { return (float)gt_lgamma_r(x, sign); }
GT_FLOAT_OF(tgamma)
#endif
