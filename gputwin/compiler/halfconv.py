"""float16 / bfloat16 <-> float32 conversions written as integer LLVM IR, the same on every target.

Registers hold half floats as their i16 storage bits; arithmetic widens to float32, computes, and rounds
back with these functions (round to nearest even, numpy's / ml_dtypes' NaN rules). Writing them as
integer code instead of `fpext half` / `fptrunc` keeps the bits independent of each backend's own
legalisation (x86 without F16C calls compiler-rt, gfx942 has no bf16 convert instruction).
"""

HALF_HELPERS = r"""
define internal float @gt_h2f(i16 %h) alwaysinline {
  %w = zext i16 %h to i32
  %sign = and i32 %w, 32768
  %s32 = shl i32 %sign, 16
  %e = lshr i32 %w, 10
  %ex = and i32 %e, 31
  %m = and i32 %w, 1023
  %isspecial = icmp eq i32 %ex, 31
  %iszero = icmp eq i32 %ex, 0
  %m13 = shl i32 %m, 13
  %eb = add i32 %ex, 112
  %ebs = shl i32 %eb, 23
  %norm0 = or i32 %ebs, %m13
  %spec = or i32 %m13, 2139095040
  %bits0 = select i1 %isspecial, i32 %spec, i32 %norm0
  %bits1 = or i32 %bits0, %s32
  %nf = bitcast i32 %bits1 to float
  ; subnormal or zero: m * 2^-24 is exact in float32
  %mf = uitofp i32 %m to float
  %sub = fmul float %mf, 0x3E70000000000000
  %subb = bitcast float %sub to i32
  %subs = or i32 %subb, %s32
  %subf = bitcast i32 %subs to float
  %r = select i1 %iszero, float %subf, float %nf
  ret float %r
}

define internal i16 @gt_f2h(float %f) alwaysinline {
  %u = bitcast float %f to i32
  %hs = lshr i32 %u, 16
  %sign = and i32 %hs, 32768
  %a = and i32 %u, 2147483647
  ; NaN: keep the top payload bits, never turn into infinity (numpy's rule)
  %pm = lshr i32 %a, 13
  %pm10 = and i32 %pm, 1023
  %nanh0 = or i32 %pm10, 31744
  %nanisinf = icmp eq i32 %nanh0, 31744
  %nanh = select i1 %nanisinf, i32 31745, i32 %nanh0
  ; normal range: rebias and round to nearest even on bit 13
  %lsb = and i32 %pm, 1
  %rnd = add i32 %a, 4095
  %rnd2 = add i32 %rnd, %lsb
  %rb = sub i32 %rnd2, 939524096
  %normh = lshr i32 %rb, 13
  ; subnormal range: shift the full significand right by 126 - e and round to nearest even
  %e = lshr i32 %a, 23
  %mant = and i32 %a, 8388607
  %sig = or i32 %mant, 8388608
  %sh0 = sub i32 126, %e
  %shc = icmp ugt i32 %sh0, 31
  %sh = select i1 %shc, i32 31, i32 %sh0
  %q = lshr i32 %sig, %sh
  %one = shl i32 1, %sh
  %mask = sub i32 %one, 1
  %rem = and i32 %sig, %mask
  %half = lshr i32 %one, 1
  %qodd = and i32 %q, 1
  %gt = icmp ugt i32 %rem, %half
  %eqh = icmp eq i32 %rem, %half
  %odd = icmp ne i32 %qodd, 0
  %tie = and i1 %eqh, %odd
  %up = or i1 %gt, %tie
  %upi = zext i1 %up to i32
  %subh = add i32 %q, %upi
  %isnan = icmp ugt i32 %a, 2139095040
  %isinf = icmp uge i32 %a, 1199566848
  %isnorm = icmp uge i32 %a, 947912704
  %iszero = icmp ule i32 %a, 855638016
  %r0 = select i1 %iszero, i32 0, i32 %subh
  %r1 = select i1 %isnorm, i32 %normh, i32 %r0
  %r2 = select i1 %isinf, i32 31744, i32 %r1
  %r3 = select i1 %isnan, i32 %nanh, i32 %r2
  %r4 = or i32 %r3, %sign
  %r = trunc i32 %r4 to i16
  ret i16 %r
}

define internal float @gt_b2f(i16 %h) alwaysinline {
  %w = zext i16 %h to i32
  %s = shl i32 %w, 16
  %f = bitcast i32 %s to float
  ret float %f
}

define internal i16 @gt_f2b(float %f) alwaysinline {
  %u = bitcast float %f to i32
  %a = and i32 %u, 2147483647
  %isnan = icmp ugt i32 %a, 2139095040
  %hi = lshr i32 %u, 16
  %lsb = and i32 %hi, 1
  %r0 = add i32 %u, 32767
  %r1 = add i32 %r0, %lsb
  %rh = lshr i32 %r1, 16
  %sgn = and i32 %hi, 32768
  %qnan = or i32 %sgn, 32704
  %r2 = select i1 %isnan, i32 %qnan, i32 %rh
  %r = trunc i32 %r2 to i16
  ret i16 %r
}
"""
