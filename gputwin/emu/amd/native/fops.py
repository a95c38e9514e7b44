"""The f32 part of the native set S: each instruction's LLVM IR on raw f32 bits (docs/emulator-jit.md).

A region holding one of these is compiled per MODE (`MODE_BITS` of it): input and output denormal
flushing and the IEEE bit are compile-time choices, and a version runs only for groups in its MODE.
FP_ROUND must be nearest-even (other modes leave these instructions out of S). The numpy tier's table
(valu.OPS) says how each source is fetched (valu._plan: roles, abs/neg, which inputs flush) and whether
a NaN result takes a source's payload (Op.nan); codegen.py applies those rules, the functions here
compute the value. Rules as in valu/fp.py: NaN results are a quieted copy of the first NaN source (else
0x7fc00000); flushing is a compare-and-select on bits, never the host's DAZ/FTZ.

A function gets the builder `b` (b.V / b.F: the <L x i32> / <L x float> type names, b.mode the Mode)
and the sources as <L x i32> bits; it returns bits, or an <L x i1> mask for the compares.
"""
from __future__ import annotations

from gputwin.emu.amd.valu.fp import F32, Mode

SIGN, ABS, INF, QUIET, QNAN = 0x80000000, 0x7FFFFFFF, 0x7F800000, 0x400000, 0x7FC00000
MAN = 0x7FFFFF
# MODE fields a float region is compiled for: f32 FP_ROUND [1:0] (nearest-even only), f32 FP_DENORM [5:4]
# (bit 4 keeps input denormals, bit 5 output ones), IEEE [9] (min/max quiet signalling NaNs)
MODE_BITS = 0x233


def runs_under(raw: int) -> bool:
    """Can a region with float instructions be compiled for MODE `raw`?"""
    return Mode.of(raw).round(F32) == 0


# --- bit tests and the MODE rules -------------------------------------------------------------------
def is_nan(b, x):
    return b.op(f"icmp ugt {b.V} {b.op(f'and {b.V} {x}, {b.splat(ABS)}')}, {b.splat(INF)}")


def _is_snan(b, x):
    quiet_clear = b.op(f"icmp eq {b.V} {b.op(f'and {b.V} {x}, {b.splat(QUIET)}')}, {b.splat(0)}")
    return b.op(f"and {b.M} {is_nan(b, x)}, {quiet_clear}")


def _quiet(b, x):
    return b.op(f"or {b.V} {x}, {b.splat(QUIET)}")


def flush(b, x):
    """Denormals -> zero of the same sign: |x| - 1 < MAN (unsigned) holds exactly for the denormals."""
    mag = b.op(f"and {b.V} {x}, {b.splat(ABS)}")
    den = b.op(f"icmp ult {b.V} {b.op(f'sub {b.V} {mag}, {b.splat(1)}')}, {b.splat(MAN)}")
    return b.op(f"select {b.M} {den}, {b.V} {b.op(f'and {b.V} {x}, {b.splat(SIGN)}')}, {b.V} {x}")


def flush_in(b, x):
    return x if b.mode.keeps_input_denormals(F32) else flush(b, x)


def flush_out(b, x):
    return x if b.mode.keeps_output_denormals(F32) else flush(b, x)


def fix_nan(b, res, srcs):
    """NaN lanes of `res` -> a quieted copy of the first NaN of `srcs`, else the canonical quiet NaN."""
    out = b.splat(QNAN)
    for s in reversed(srcs):
        out = b.op(f"select {b.M} {is_nan(b, s)}, {b.V} {_quiet(b, s)}, {b.V} {out}")
    return b.op(f"select {b.M} {is_nan(b, res)}, {b.V} {out}, {b.V} {res}")


def modifiers(b, x, absv: bool, negv: bool):
    """abs then neg on the sign bit (valu.operands.apply_mods)."""
    if absv:
        x = b.op(f"and {b.V} {x}, {b.splat(ABS)}")
    if negv:
        x = b.op(f"xor {b.V} {x}, {b.splat(SIGN)}")
    return x


# --- arithmetic -----------------------------------------------------------------------------------------
def _f(b, x):
    return b.op(f"bitcast {b.V} {x} to {b.F}")


def _bits(b, x):
    return b.op(f"bitcast {b.F} {x} to {b.V}")


def _binary(instr: str, reverse: bool = False):
    def fn(b, x, y):
        if reverse:
            x, y = y, x
        return _bits(b, b.op(f"{instr} {b.F} {_f(b, x)}, {_f(b, y)}"))
    return fn


def _fma(b, x, y, z):
    return _bits(b, b.call(b.F, f"llvm.fma.{b.FT}", *[(b.F, _f(b, v)) for v in (x, y, z)]))


def _dx9_zero(b, x, y):
    """The legacy multiply's operands: both +0 where either is +-0 (so 0 * inf and 0 * NaN are +0)."""
    zx = b.op(f"icmp eq {b.V} {b.op(f'and {b.V} {x}, {b.splat(ABS)}')}, {b.splat(0)}")
    zy = b.op(f"icmp eq {b.V} {b.op(f'and {b.V} {y}, {b.splat(ABS)}')}, {b.splat(0)}")
    z = b.op(f"or {b.M} {zx}, {zy}")
    return (b.op(f"select {b.M} {z}, {b.V} {b.splat(0)}, {b.V} {x}"),
            b.op(f"select {b.M} {z}, {b.V} {b.splat(0)}, {b.V} {y}"))


def _lt(b, x, y):
    """x < y on ordered values, -0 below +0 (arith._lt)."""
    fx, fy = _f(b, x), _f(b, y)
    lt = b.op(f"fcmp olt {b.F} {fx}, {fy}")
    eq = b.op(f"fcmp oeq {b.F} {fx}, {fy}")
    signs = b.op(f"and {b.M} {b.op(f'icmp slt {b.V} {x}, {b.splat(0)}')}, "
                 f"{b.op(f'icmp sge {b.V} {y}, {b.splat(0)}')}")
    return b.op(f"or {b.M} {lt}, {b.op(f'and {b.M} {eq}, {signs}')}")


def _minmax(want_max: bool):
    """arith.fmin: a NaN input yields the other operand; IEEE mode returns a quieted signalling NaN input."""
    def fn(b, x, y):
        pick_x = _lt(b, y, x) if want_max else _lt(b, x, y)
        r = b.op(f"select {b.M} {pick_x}, {b.V} {x}, {b.V} {y}")
        r = b.op(f"select {b.M} {is_nan(b, y)}, {b.V} {x}, {b.V} {r}")
        r = b.op(f"select {b.M} {is_nan(b, x)}, {b.V} {y}, {b.V} {r}")
        if b.mode.ieee:
            r = b.op(f"select {b.M} {_is_snan(b, y)}, {b.V} {_quiet(b, y)}, {b.V} {r}")
            r = b.op(f"select {b.M} {_is_snan(b, x)}, {b.V} {_quiet(b, x)}, {b.V} {r}")
        return r
    return fn


def _three(first: bool, second: bool):
    """v_min3 / v_max3 / v_minmax / v_maxmin: (a op1 b) op2 c, True meaning max."""
    return lambda b, x, y, z: _minmax(second)(b, _minmax(first)(b, x, y), z)


def _med3(b, x, y, z):
    """arith._med3: the middle value; with any NaN input, min3."""
    lo, hi = _minmax(False)(b, x, y), _minmax(True)(b, x, y)
    med = _minmax(True)(b, lo, _minmax(False)(b, hi, z))
    nan = b.op(f"or {b.M} {b.op(f'or {b.M} {is_nan(b, x)}, {is_nan(b, y)}')}, {is_nan(b, z)}")
    return b.op(f"select {b.M} {nan}, {b.V} {_minmax(False)(b, lo, z)}, {b.V} {med}")


def _in_double(fn):
    """trans._unit for f32: the value computed in double (IEEE division / sqrt), rounded once to f32."""
    def f(b, x):
        return _bits(b, b.op(f"fptrunc {b.D} {fn(b, b.op(f'fpext {b.F} {_f(b, x)} to {b.D}'))} to {b.F}"))
    return f


def _recip(b, d):
    return b.op(f"fdiv {b.D} {b.splat_f64(1.0)}, {d}")


def _sqrt(b, d):
    return b.call(b.D, f"llvm.sqrt.{b.DT}", (b.D, d))


def _fract(b, x):
    """fspecial._fract: x - floor(x) in double, rounded to f32, never 1.0 (0x3f7fffff instead); inf -> NaN
    (the NaN rule then makes it the canonical one)."""
    d = b.op(f"fpext {b.F} {_f(b, x)} to {b.D}")
    below = b.call(b.D, f"llvm.floor.{b.DT}", (b.D, d))
    r = _bits(b, b.op(f"fptrunc {b.D} {b.op(f'fsub {b.D} {d}, {below}')} to {b.F}"))
    one = b.op(f"icmp eq {b.V} {r}, {b.splat(0x3F800000)}")
    return b.op(f"select {b.M} {one}, {b.V} {b.splat(0x3F7FFFFF)}, {b.V} {r}")


def _ubyte(k: int):
    """v_cvt_f32_ubyte<k>: byte k as a float."""
    def f(b, x):
        byte = b.op(f"and {b.V} {b.op(f'lshr {b.V} {x}, {b.splat(8 * k)}')}, {b.splat(0xFF)}")
        return _from_int("uitofp")(b, byte)
    return f


def cmp_class(b, x, m):
    """cmp._class: bit class(x) of m; classes 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0,
    7 +denormal, 8 +normal, 9 +inf (the first that holds)."""
    mag = b.op(f"and {b.V} {x}, {b.splat(ABS)}")
    neg = b.op(f"icmp slt {b.V} {x}, {b.splat(0)}")
    nan, inf = is_nan(b, x), b.op(f"icmp eq {b.V} {mag}, {b.splat(INF)}")
    zero = b.op(f"icmp eq {b.V} {mag}, {b.splat(0)}")
    den = b.op(f"icmp ult {b.V} {b.op(f'sub {b.V} {mag}, {b.splat(1)}')}, {b.splat(MAN)}")
    normal = b.op(f"icmp ult {b.V} {b.op(f'sub {b.V} {mag}, {b.splat(MAN + 1)}')}, {b.splat(INF - MAN - 1)}")
    cases = [(_is_snan(b, x), 0), (nan, 1), (b.op(f"and {b.M} {inf}, {neg}"), 2),
             (b.op(f"and {b.M} {normal}, {neg}"), 3), (b.op(f"and {b.M} {den}, {neg}"), 4),
             (b.op(f"and {b.M} {zero}, {neg}"), 5), (zero, 6), (den, 7), (normal, 8)]
    cls = b.splat(9)
    for cond, k in reversed(cases):
        cls = b.op(f"select {b.M} {cond}, {b.V} {b.splat(k)}, {b.V} {cls}")
    bit = b.op(f"and {b.V} {b.op(f'lshr {b.V} {m}, {cls}')}, {b.splat(1)}")
    return b.op(f"icmp ne {b.V} {bit}, {b.splat(0)}")


def _frexp(b, x):
    """(mantissa bits, exponent) of np.frexp on f32 bits: x = m * 2^e with |m| in [0.5, 1); a denormal is
    normalised by its leading zeros; zero, inf and NaN give exponent 0 (their mantissa is x itself)."""
    mag = b.op(f"and {b.V} {x}, {b.splat(ABS)}")
    field = b.op(f"lshr {b.V} {mag}, {b.splat(23)}")
    man = b.op(f"and {b.V} {x}, {b.splat(MAN)}")
    lz = b.call(b.V, f"llvm.ctlz.{b.VT}", (b.V, man), ("i1", "false"))
    up = b.op(f"shl {b.V} {man}, {b.op(f'sub {b.V} {lz}, {b.splat(8)}')}")
    den_man = b.op(f"and {b.V} {up}, {b.splat(MAN)}")
    den = b.op(f"icmp eq {b.V} {field}, {b.splat(0)}")
    frac = b.op(f"select {b.M} {den}, {b.V} {den_man}, {b.V} {man}")
    half = b.op(f"or {b.V} {frac}, {b.splat(0x3F000000)}")                  # exponent field 126: [0.5, 1)
    m = b.op(f"or {b.V} {b.op(f'and {b.V} {x}, {b.splat(SIGN)}')}, {half}")
    e = b.op(f"select {b.M} {den}, {b.V} {b.op(f'sub {b.V} {b.splat(-117)}, {lz}')}, "
             f"{b.V} {b.op(f'sub {b.V} {field}, {b.splat(126)}')}")
    plain = b.op(f"or {b.M} {b.op(f'icmp eq {b.V} {mag}, {b.splat(0)}')}, "
                 f"{b.op(f'icmp uge {b.V} {mag}, {b.splat(INF)}')}")          # zero, inf, NaN
    return (b.op(f"select {b.M} {plain}, {b.V} {x}, {b.V} {m}"),
            b.op(f"select {b.M} {plain}, {b.V} {b.splat(0)}, {b.V} {e}"))


def _ldexp(b, x, e):
    """x * 2^e exact in double, then one nearest-even rounding to f32 (fspecial._ldexp). e is clamped to
    +-400: f32 magnitudes (2^-149 .. 2^128) times 2^+-400 stay normal doubles, and beyond that every f32
    result has already overflowed to inf or rounded to zero, whatever clamp the numpy tier uses."""
    e = b.call(b.V, f"llvm.smax.{b.VT}", (b.V, e), (b.V, b.splat(-400)))
    e = b.call(b.V, f"llvm.smin.{b.VT}", (b.V, e), (b.V, b.splat(400)))
    biased = b.op(f"add {b.W} {b.op(f'sext {b.V} {e} to {b.W}')}, {b.splat(1023, 64)}")
    scale = b.op(f"bitcast {b.W} {b.op(f'shl {b.W} {biased}, {b.splat(52, 64)}')} to {b.D}")
    wide = b.op(f"fpext {b.F} {_f(b, x)} to {b.D}")
    return _bits(b, b.op(f"fptrunc {b.D} {b.op(f'fmul {b.D} {wide}, {scale}')} to {b.F}"))


def _unary_intrinsic(name: str):
    return lambda b, x: _bits(b, b.call(b.F, f"llvm.{name}.{b.FT}", (b.F, _f(b, x))))


def _from_int(instr: str):
    return lambda b, x: _bits(b, b.op(f"{instr} {b.V} {x} to {b.F}"))


def _to_int(sat: str):
    """Truncate toward zero, saturate, NaN -> 0 (cvt.f_to_int): LLVM's fpto[su]i.sat."""
    return lambda b, x: b.call(b.V, f"llvm.{sat}.{b.VT}.{b.FT}", (b.F, _f(b, x)))


# name -> fn(b, *sources in valu._plan order) -> result bits
ARITH = {
    "v_add_f32": _binary("fadd"), "v_sub_f32": _binary("fsub"), "v_subrev_f32": _binary("fsub", True),
    "v_mul_f32": _binary("fmul"),
    "v_fma_f32": _fma, "v_fmac_f32": _fma, "v_fmaak_f32": _fma,
    "v_fmamk_f32": lambda b, x, y, k: _fma(b, x, k, y),                 # D = S0 * K + S1
    "v_mul_dx9_zero_f32": lambda b, x, y: _binary("fmul")(b, *_dx9_zero(b, x, y)),
    "v_fma_dx9_zero_f32": lambda b, x, y, z: _fma(b, *_dx9_zero(b, x, y), z),
    "v_fmac_dx9_zero_f32": lambda b, x, y, z: _fma(b, *_dx9_zero(b, x, y), z),
    "v_min_f32": _minmax(False), "v_max_f32": _minmax(True),
    "v_ldexp_f32": _ldexp,
    "v_floor_f32": _unary_intrinsic("floor"), "v_ceil_f32": _unary_intrinsic("ceil"),
    "v_trunc_f32": _unary_intrinsic("trunc"), "v_rndne_f32": _unary_intrinsic("roundeven"),
    "v_cvt_f32_u32": _from_int("uitofp"), "v_cvt_f32_i32": _from_int("sitofp"),
    "v_cvt_u32_f32": _to_int("fptoui.sat"), "v_cvt_i32_f32": _to_int("fptosi.sat"),
    **{f"v_cvt_f32_ubyte{k}": _ubyte(k) for k in range(4)},
    "v_min3_f32": _three(False, False), "v_max3_f32": _three(True, True),
    "v_minmax_f32": _three(False, True), "v_maxmin_f32": _three(True, False), "v_med3_f32": _med3,
    "v_fract_f32": _fract,
    "v_frexp_mant_f32": lambda b, x: _frexp(b, x)[0], "v_frexp_exp_i32_f32": lambda b, x: _frexp(b, x)[1],
    "v_rcp_f32": _in_double(_recip), "v_rcp_iflag_f32": _in_double(_recip), "v_sqrt_f32": _in_double(_sqrt),
    "v_rsq_f32": _in_double(lambda b, d: _recip(b, _sqrt(b, d))),
}

# v_cmp(x)_<p>_f32 -> fcmp predicate (cmp._FLOAT: the n-forms and u are true on unordered inputs)
_FCMP = {"f": "false", "lt": "olt", "eq": "oeq", "le": "ole", "gt": "ogt", "lg": "one", "ge": "oge", "o": "ord",
         "u": "uno", "nge": "ult", "nlg": "ueq", "ngt": "ule", "nle": "ugt", "neq": "une", "nlt": "uge",
         "t": "true"}
CMP = {f"v_{x}_{p}_f32": pred for p, pred in _FCMP.items() for x in ("cmp", "cmpx")}
CMP.update({"v_cmp_class_f32": "class", "v_cmpx_class_f32": "class"})


def compare(b, pred: str, x, y):
    if pred == "class":
        return cmp_class(b, x, y)
    return b.op(f"fcmp {pred} {b.F} {_f(b, x)}, {_f(b, y)}")


OPS = frozenset(ARITH) | frozenset(CMP)
