"""The instructions the native tier runs (the set S of docs/emulator-jit.md) and their LLVM IR.

Each table maps a gfx11 mnemonic to a function of LLVM IR operand values returning IR values; codegen.py
reads the operands, calls it, and writes the results. Semantics follow the numpy tier exactly (salu.py,
valu/intops.py, valu/cmp.py); tests/emu/amd/test_native.py runs both tiers on the same code and
compares every register.

A `b` argument is the IR builder of codegen.py: b.op(text) emits `%t = text` and returns `%t`.
"""
from __future__ import annotations

# --- SALU ---------------------------------------------------------------------------------------------

def _nz(b, d, t="i32"):
    return b.op(f"icmp ne {t} {d}, 0")


def _sadd_ovf(b, a, c, d):
    """Signed overflow of d = a + c: the operands agree in sign and the result does not."""
    t = b.op(f"xor i32 {a}, {c}")
    u = b.op(f"xor i32 {t}, -1")
    v = b.op(f"xor i32 {a}, {d}")
    return b.op(f"icmp slt i32 {b.op(f'and i32 {u}, {v}')}, 0")


def _s_add_i32(b, x, y, scc):
    d = b.op(f"add i32 {x}, {y}")
    return d, _sadd_ovf(b, x, y, d)


def _s_sub_i32(b, x, y, scc):
    d = b.op(f"sub i32 {x}, {y}")
    t = b.op(f"xor i32 {x}, {y}")
    v = b.op(f"xor i32 {x}, {d}")
    return d, b.op(f"icmp slt i32 {b.op(f'and i32 {t}, {v}')}, 0")


def _s_addc(b, x, y, scc):
    w = b.op(f"add i64 {b.op(f'zext i32 {x} to i64')}, {b.op(f'zext i32 {y} to i64')}")
    w = b.op(f"add i64 {w}, {b.op(f'zext i1 {scc} to i64')}")
    return b.op(f"trunc i64 {w} to i32"), b.op(f"icmp ugt i64 {w}, 4294967295")


def _s_subb(b, x, y, scc):
    c = b.op(f"zext i1 {scc} to i32")
    d = b.op(f"sub i32 {b.op(f'sub i32 {x}, {y}')}, {c}")
    w = b.op(f"add i64 {b.op(f'zext i32 {y} to i64')}, {b.op(f'zext i1 {scc} to i64')}")
    return d, b.op(f"icmp ugt i64 {w}, {b.op(f'zext i32 {x} to i64')}")


def _minmax(pred):
    def f(b, x, y, scc):
        c = b.op(f"icmp {pred} i32 {x}, {y}")
        return b.op(f"select i1 {c}, i32 {x}, i32 {y}"), c
    return f


def _shift32(kind):
    def f(b, x, y, scc):
        d = b.op(f"{kind} i32 {x}, {b.op(f'and i32 {y}, 31')}")
        return d, _nz(b, d)
    return f


def _lshl_add(k):
    def f(b, x, y, scc):
        wx = b.op(f"zext i32 {x} to i64")
        w = b.op(f"add i64 {b.op(f'shl i64 {wx}, {k}')}, {b.op(f'zext i32 {y} to i64')}")
        return b.op(f"trunc i64 {w} to i32"), b.op(f"icmp ugt i64 {w}, 4294967295")
    return f


def _shift64(b, kind, x, y):
    n = b.op(f"zext i32 {b.op(f'and i32 {y}, 63')} to i64")
    d = b.op(f"{kind} i64 {x}, {n}")
    return d, _nz(b, d, "i64")


def _s_bfe(b, x, y, signed):
    """salu._bfe for 32 bits: offset y[4:0], width y[22:16] (at most 64), sign-extended from the width."""
    off = b.op(f"zext i32 {b.op(f'and i32 {y}, 31')} to i64")
    width = b.op(f"and i32 {b.op(f'lshr i32 {y}, 16')}, 127")
    w = b.op(f"zext i32 {b.op(f'call i32 @llvm.umin.i32(i32 {width}, i32 64)')} to i64")
    full = b.op(f"icmp uge i64 {w}, 64")
    one = b.op(f"shl i64 1, {b.op(f'and i64 {w}, 63')}")
    mask = b.op(f"select i1 {full}, i64 -1, i64 {b.op(f'sub i64 {one}, 1')}")
    wide = b.op(f"zext i32 {x} to i64")
    t = b.op(f"and i64 {b.op(f'lshr i64 {wide}, {off}')}, {mask}")
    if signed:
        top = b.op(f"sub i64 {b.op(f'call i64 @llvm.umax.i64(i64 {w}, i64 1)')}, 1")
        sign = b.op(f"trunc i64 {b.op(f'lshr i64 {t}, {top}')} to i1")
        sign = b.op(f"and i1 {sign}, {b.op(f'icmp ne i64 {w}, 0')}")
        ext = b.op(f"or i64 {t}, {b.op(f'xor i64 {mask}, -1')}")
        t = b.op(f"select i1 {sign}, i64 {ext}, i64 {t}")
    d = b.op(f"trunc i64 {t} to i32")
    return d, _nz(b, d)


def _mul_hi_u32(b, x, y, scc=None):
    w = b.op(f"mul i64 {b.op(f'zext i32 {x} to i64')}, {b.op(f'zext i32 {y} to i64')}")
    return b.op(f"trunc i64 {b.op(f'lshr i64 {w}, 32')} to i32"), None


_LOGIC = {"and": "and {t} {x}, {y}", "or": "or {t} {x}, {y}", "xor": "xor {t} {x}, {y}",
          "and_not1": "and {t} {x}, {ny}", "or_not1": "or {t} {x}, {ny}",
          "nand": "~and {t} {x}, {y}", "nor": "~or {t} {x}, {y}", "xnor": "~xor {t} {x}, {y}"}


def _logic(stem, t):
    pat = _LOGIC[stem]

    def f(b, x, y, scc):
        ny = b.op(f"xor {t} {y}, -1") if "{ny}" in pat else None
        d = b.op(pat.lstrip("~").format(t=t, x=x, y=y, ny=ny))
        if pat.startswith("~"):
            d = b.op(f"xor {t} {d}, -1")
        return d, _nz(b, d, t)
    return f


# SOP2: name -> (src0 64-bit, src1 64-bit, dst 64-bit, fn(b, x, y, scc) -> (d, scc or None))
SOP2 = {
    "s_add_u32": (0, 0, 0, lambda b, x, y, s: (b.op(f"add i32 {x}, {y}"),
                                              b.op(f"icmp ult i32 {b.op(f'add i32 {x}, {y}')}, {x}"))),
    "s_sub_u32": (0, 0, 0, lambda b, x, y, s: (b.op(f"sub i32 {x}, {y}"), b.op(f"icmp ugt i32 {y}, {x}"))),
    "s_add_i32": (0, 0, 0, _s_add_i32),
    "s_sub_i32": (0, 0, 0, _s_sub_i32),
    "s_addc_u32": (0, 0, 0, _s_addc),
    "s_subb_u32": (0, 0, 0, _s_subb),
    "s_min_i32": (0, 0, 0, _minmax("slt")), "s_min_u32": (0, 0, 0, _minmax("ult")),
    "s_max_i32": (0, 0, 0, _minmax("sgt")), "s_max_u32": (0, 0, 0, _minmax("ugt")),
    "s_cselect_b32": (0, 0, 0, lambda b, x, y, s: (b.op(f"select i1 {s}, i32 {x}, i32 {y}"), None)),
    "s_cselect_b64": (1, 1, 1, lambda b, x, y, s: (b.op(f"select i1 {s}, i64 {x}, i64 {y}"), None)),
    "s_lshl_b32": (0, 0, 0, _shift32("shl")),
    "s_lshr_b32": (0, 0, 0, _shift32("lshr")),
    "s_ashr_i32": (0, 0, 0, _shift32("ashr")),
    "s_mul_i32": (0, 0, 0, lambda b, x, y, s: (b.op(f"mul i32 {x}, {y}"), None)),
    "s_mul_hi_u32": (0, 0, 0, _mul_hi_u32),
    **{f"s_lshl{k}_add_u32": (0, 0, 0, _lshl_add(k)) for k in (1, 2, 3, 4)},
    "s_lshl_b64": (1, 0, 1, lambda b, x, y, s: _shift64(b, "shl", x, y)),
    "s_lshr_b64": (1, 0, 1, lambda b, x, y, s: _shift64(b, "lshr", x, y)),
    "s_ashr_i64": (1, 0, 1, lambda b, x, y, s: _shift64(b, "ashr", x, y)),
    "s_bfe_u32": (0, 0, 0, lambda b, x, y, s: _s_bfe(b, x, y, False)),
    "s_bfe_i32": (0, 0, 0, lambda b, x, y, s: _s_bfe(b, x, y, True)),
}
for _stem in ("and", "or", "xor", "and_not1", "or_not1", "nand", "nor", "xnor"):
    SOP2[f"s_{_stem}_b32"] = (0, 0, 0, _logic(_stem, "i32"))
    SOP2[f"s_{_stem}_b64"] = (1, 1, 1, _logic(_stem, "i64"))

_PRED = {"eq": "eq", "lg": "ne", "gt": "{s}gt", "ge": "{s}ge", "lt": "{s}lt", "le": "{s}le"}
# SOPC: name -> (64-bit, icmp predicate)
SOPC = {"s_cmp_eq_u64": (1, "eq"), "s_cmp_lg_u64": (1, "ne")}
for _c, _p in _PRED.items():
    SOPC[f"s_cmp_{_c}_u32"] = (0, _p.format(s="u"))
    SOPC[f"s_cmp_{_c}_i32"] = (0, _p.format(s="s"))


def _not(t):
    def f(b, x, scc):
        d = b.op(f"xor {t} {x}, -1")
        return d, _nz(b, d, t)
    return f


def _bcnt1(t):
    def f(b, x, scc):
        c = b.op(f"call {t} @llvm.ctpop.{t}({t} {x})")
        d = b.op(f"trunc i64 {c} to i32") if t == "i64" else c
        return d, _nz(b, d)
    return f


# SOP1: name -> (src 64-bit, dst 64-bit, fn(b, x, scc) -> (d, scc or None))
SOP1 = {
    "s_mov_b32": (0, 0, lambda b, x, s: (x, None)),
    "s_mov_b64": (1, 1, lambda b, x, s: (x, None)),
    "s_not_b32": (0, 0, _not("i32")), "s_not_b64": (1, 1, _not("i64")),
    "s_bcnt1_i32_b32": (0, 0, _bcnt1("i32")), "s_bcnt1_i32_b64": (1, 0, _bcnt1("i64")),
}
CMOV = {"s_cmov_b32": 0, "s_cmov_b64": 1}
# SOPK (16-bit immediate K, sign-extended unless the compare is unsigned): name -> fn(b, sdst value, K, scc)
# returning (new sdst or None, scc or None)
SOPK = {
    "s_movk_i32": lambda b, d, k, s: (k, None),
    "s_cmovk_i32": lambda b, d, k, s: (b.op(f"select i1 {s}, i32 {k}, i32 {d}"), None),
    "s_addk_i32": lambda b, d, k, s: _s_add_i32(b, d, k, s),
    "s_mulk_i32": lambda b, d, k, s: (b.op(f"mul i32 {d}, {k}"), None),
}
for _c, _p in _PRED.items():
    SOPK[f"s_cmpk_{_c}_u32"] = lambda b, d, k, s, p=_p.format(s="u"): (None, b.op(f"icmp {p} i32 {d}, {k}"))
    SOPK[f"s_cmpk_{_c}_i32"] = lambda b, d, k, s, p=_p.format(s="s"): (None, b.op(f"icmp {p} i32 {d}, {k}"))

# saveexec family: stem -> new EXEC from (src s, old exec e) as IR
_SAVE = {
    "and": "and {t} {s}, {e}", "or": "or {t} {s}, {e}", "xor": "xor {t} {s}, {e}",
    "nand": "~and {t} {s}, {e}", "nor": "~or {t} {s}, {e}", "xnor": "~xor {t} {s}, {e}",
    "and_not0": "and {t} {ns}, {e}", "and_not1": "and {t} {s}, {ne}",
    "or_not0": "or {t} {ns}, {e}", "or_not1": "or {t} {s}, {ne}",
}
SAVEEXEC = {}   # name -> (64-bit, writes the new EXEC (wrexec) rather than the old, IR pattern)
for _stem, _pat in _SAVE.items():
    for _w, _sfx in ((0, "b32"), (1, "b64")):
        SAVEEXEC[f"s_{_stem}_saveexec_{_sfx}"] = (_w, False, _pat)
        if _stem in ("and_not0", "and_not1"):
            SAVEEXEC[f"s_{_stem}_wrexec_{_sfx}"] = (_w, True, _pat)


def saveexec_value(b, pat, t, s, e):
    ns = b.op(f"xor {t} {s}, -1") if "{ns}" in pat else None
    ne = b.op(f"xor {t} {e}, -1") if "{ne}" in pat else None
    text = pat.lstrip("~").format(t=t, s=s, e=e, ns=ns, ne=ne)
    d = b.op(text)
    return b.op(f"xor {t} {d}, -1") if pat.startswith("~") else d


NOPS = {"s_nop", "s_delay_alu", "s_clause", "s_set_inst_prefetch_distance", "s_waitcnt", "s_waitcnt_depctr"}

# --- VALU (vector values: V is the <L x i32> type name, W the <L x i64> one) ---------------------------


def _vbin(pat):
    return lambda b, x, y: b.op(pat.format(V=b.V, x=x, y=y))


def _vshift(kind, bits):
    def f(b, x, y):                               # shift S1 by the low bits of S0
        t = b.V if bits == 32 else b.W
        n = b.op(f"and {b.V} {x}, {b.splat(bits - 1)}")
        if bits == 64:
            n = b.op(f"zext {b.V} {n} to {b.W}")
        return b.op(f"{kind} {t} {y}, {n}")
    return f


def _vminmax(pred):
    def f(b, x, y):
        c = b.op(f"icmp {pred} {b.V} {x}, {y}")
        return b.op(f"select {b.M} {c}, {b.V} {x}, {b.V} {y}")
    return f


def _wide(b, x):
    return b.op(f"zext {b.V} {x} to {b.W}")


def _lo(b, w):
    return b.op(f"trunc {b.W} {w} to {b.V}")


def _v_mul_hi_u32(b, x, y):
    return _lo(b, b.op(f"lshr {b.W} {b.op(f'mul {b.W} {_wide(b, x)}, {_wide(b, y)}')}, {b.splat(32, 64)}"))


def _v_bfe_u32(b, x, y, z):
    off = _wide(b, b.op(f"and {b.V} {y}, {b.splat(31)}"))
    width = _wide(b, b.op(f"and {b.V} {z}, {b.splat(31)}"))
    mask = b.op(f"sub {b.W} {b.op(f'shl {b.W} {b.splat(1, 64)}, {width}')}, {b.splat(1, 64)}")
    return _lo(b, b.op(f"and {b.W} {b.op(f'lshr {b.W} {_wide(b, x)}, {off}')}, {mask}"))


def _v_bfi_b32(b, x, y, z):
    """Bits of y where x is set, of z elsewhere (LLVM's copysign shape)."""
    keep = b.op(f"and {b.V} {x}, {y}")
    other = b.op(f"and {b.V} {b.op(f'xor {b.V} {x}, {b.splat(0xFFFFFFFF)}')}, {z}")
    return b.op(f"or {b.V} {keep}, {other}")


def _chain(first, second):
    """Three-source ops as two IR steps: first(x, y) then second(that, z)."""
    def f(b, x, y, z):
        t = b.op(first.format(V=b.V, x=x, y=y))
        return b.op(second.format(V=b.V, t=t, z=z))
    return f


# VOP1/VOP2/VOP3 with one 32-bit result: name -> (source count, fn(b, *srcs))
VALU32 = {
    "v_mov_b32": (1, lambda b, x: x),
    "v_not_b32": (1, lambda b, x: b.op(f"xor {b.V} {x}, {b.splat(0xFFFFFFFF)}")),
    "v_add_nc_u32": (2, _vbin("add {V} {x}, {y}")),
    "v_sub_nc_u32": (2, _vbin("sub {V} {x}, {y}")),
    "v_subrev_nc_u32": (2, _vbin("sub {V} {y}, {x}")),
    "v_and_b32": (2, _vbin("and {V} {x}, {y}")),
    "v_or_b32": (2, _vbin("or {V} {x}, {y}")),
    "v_xor_b32": (2, _vbin("xor {V} {x}, {y}")),
    "v_mul_lo_u32": (2, _vbin("mul {V} {x}, {y}")),
    "v_mul_hi_u32": (2, _v_mul_hi_u32),
    "v_lshlrev_b32": (2, _vshift("shl", 32)),
    "v_lshrrev_b32": (2, _vshift("lshr", 32)),
    "v_ashrrev_i32": (2, _vshift("ashr", 32)),
    "v_min_u32": (2, _vminmax("ult")), "v_max_u32": (2, _vminmax("ugt")),
    "v_min_i32": (2, _vminmax("slt")), "v_max_i32": (2, _vminmax("sgt")),
    "v_add3_u32": (3, _chain("add {V} {x}, {y}", "add {V} {t}, {z}")),
    "v_xad_u32": (3, _chain("xor {V} {x}, {y}", "add {V} {t}, {z}")),
    "v_and_or_b32": (3, _chain("and {V} {x}, {y}", "or {V} {t}, {z}")),
    "v_or3_b32": (3, _chain("or {V} {x}, {y}", "or {V} {t}, {z}")),
    "v_lshl_add_u32": (3, lambda b, x, y, z: b.op(f"add {b.V} {_vshift('shl', 32)(b, y, x)}, {z}")),
    "v_lshl_or_b32": (3, lambda b, x, y, z: b.op(f"or {b.V} {_vshift('shl', 32)(b, y, x)}, {z}")),
    "v_bfe_u32": (3, _v_bfe_u32),
    "v_bfi_b32": (3, _v_bfi_b32),
}
# 64-bit shifts: S0 a 32-bit count, S1 and the result 64-bit
VALU64_SHIFT = {"v_lshlrev_b64": "shl", "v_lshrrev_b64": "lshr", "v_ashrrev_i64": "ashr"}
# carry ops: name -> (subtract, reversed, carry in)
CARRY = {
    "v_add_co_u32": (False, False, False), "v_sub_co_u32": (True, False, False),
    "v_subrev_co_u32": (True, True, False), "v_add_co_ci_u32": (False, False, True),
    "v_sub_co_ci_u32": (True, False, True), "v_subrev_co_ci_u32": (True, True, True),
}
_VPRED = {"lt": "{s}lt", "eq": "eq", "le": "{s}le", "gt": "{s}gt", "ne": "ne", "ge": "{s}ge"}
# v_cmp / v_cmpx: name -> (64-bit operands, icmp predicate or "f" / "t", writes EXEC)
VCMP = {}
for _t, _s, _w in (("u32", "u", 0), ("i32", "s", 0), ("u64", "u", 1), ("i64", "s", 1)):
    for _c, _p in list(_VPRED.items()) + [("f", "f"), ("t", "t")]:
        for _x in ("cmp", "cmpx"):
            VCMP[f"v_{_x}_{_c}_{_t}"] = (_w, _p.format(s=_s), _x == "cmpx")


def carry_op(b, sub, x, y, cin):
    """(result, carry-or-borrow mask) of x + y (+ cin) or x - y (- cin), as the numpy tier computes them:
    the carry-in wraps a second time only where the first step left all ones (add) or 0 (sub)."""
    ar = "sub" if sub else "add"
    r = b.op(f"{ar} {b.V} {x}, {y}")
    out = b.op(f"icmp ult {b.V} {x}, {y}") if sub else b.op(f"icmp ult {b.V} {r}, {x}")
    if cin is not None:
        edge = b.op(f"icmp eq {b.V} {r}, {b.splat(0 if sub else 0xFFFFFFFF)}")
        out = b.op(f"or {b.M} {out}, {b.op(f'and {b.M} {cin}, {edge}')}")
        r = b.op(f"{ar} {b.V} {r}, {b.op(f'zext {b.M} {cin} to {b.V}')}")
    return r, out


VALU_OPS = set(VALU32) | set(VALU64_SHIFT) | set(CARRY) | set(VCMP) | {"v_cndmask_b32", "v_mad_u64_u32"}
SALU_OPS = set(SOP2) | set(SOPC) | set(SOP1) | set(CMOV) | set(SAVEEXEC) | set(SOPK)


def scalar_widths(name: str) -> tuple[int, int, int]:
    """(src0, src1, sdst) 64-bit flags of a SALU instruction in SALU_OPS."""
    if name in SOP2:
        return SOP2[name][:3]
    if name in SOPC:
        return (SOPC[name][0],) * 2 + (0,)
    if name in SOP1:
        return SOP1[name][0], 0, SOP1[name][1]
    if name in SOPK:
        return 0, 0, 0
    w = CMOV[name] if name in CMOV else SAVEEXEC[name][0]
    return w, 0, w
