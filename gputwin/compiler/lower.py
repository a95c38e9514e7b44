"""Lowering of pure IR values (ALU ops, casts, constants) to LLVM IR instructions.

`Lowerer.emit(value)` returns the LLVM operand of a value, emitting the instructions it needs into the
current basic block. Every op is spelled out without fast-math flags; integer ops that are undefined in
LLVM (division by zero, INT_MIN / -1, oversized shifts) are guarded so they give numpy's answer instead
of a trap on the CPU or poison on a GPU.
"""
from __future__ import annotations

import struct

from gputwin.compiler import ir

REG = {"float32": "float", "float16": "i16", "bfloat16": "i16", "int32": "i32", "int64": "i64",
       "uint8": "i8", "uint32": "i32", "int16": "i16", "bool": "i1"}
MEM = dict(REG, bool="i8")
HALF_EXT = {"float16": "@gt_h2f", "bfloat16": "@gt_b2f"}
HALF_RND = {"float16": "@gt_f2h", "bfloat16": "@gt_f2b"}
FLOAT_BIN = {"add": "fadd", "sub": "fsub", "mul": "fmul", "div": "fdiv"}
INT_BIN = {"add": "add", "sub": "sub", "mul": "mul", "and": "and", "or": "or", "xor": "xor"}
FCMP = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
ICMP_S = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
ICMP_U = {"lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge", "eq": "eq", "ne": "ne"}
QNAN = {"float32": 0x7FC00000, "float16": 0x7E00, "bfloat16": 0x7FC0}


def float_literal(bits32: int) -> str:
    """LLVM spells float constants as the hex of the equal double."""
    f = struct.unpack("<f", struct.pack("<I", bits32))[0]
    if f != f:  # NaN: widen the payload by hand, struct would canonicalise it
        sign, mant = bits32 >> 31, bits32 & 0x7FFFFF
        return f"0x{(sign << 63) | (0x7FF << 52) | (mant << 29):016X}"
    return f"0x{struct.unpack('<Q', struct.pack('<d', f))[0]:016X}"


class Lowerer:
    def __init__(self, out: list[str], leaf):
        self.out, self.leaf = out, leaf   # leaf(value) -> operand for param / ids / loads / var reads
        self.n = 0
        self.scopes: list[dict] = [{}]

    def tmp(self) -> str:
        self.n += 1
        return f"%t{self.n}"

    def ins(self, text: str) -> str:
        name = self.tmp()
        self.out.append(f"  {name} = {text}")
        return name

    # scopes: a value lowered inside an if/loop body is forgotten when the body ends
    def push(self):
        self.scopes.append({})

    def pop(self):
        self.scopes.pop()

    def bind(self, v: ir.Value, operand: str):
        self.scopes[-1][id(v)] = (v, operand)

    def lookup(self, v: ir.Value):
        for s in reversed(self.scopes):
            hit = s.get(id(v))
            if hit is not None:
                return hit[1]
        return None

    def emit(self, root: ir.Value) -> str:
        """Lower `root` and its not-yet-lowered operands, iteratively (deep math DAGs)."""
        got = self.lookup(root)
        if got is not None:
            return got
        stack = [(root, False)]
        while stack:
            v, ready = stack.pop()
            if self.lookup(v) is not None:
                continue
            if v.op == "const":
                self.bind(v, self.const(v))
                continue
            if v.op in ir.LEAVES or not v.srcs:
                self.bind(v, self.leaf(v))
                continue
            if not ready:
                stack.append((v, True))
                stack.extend((s, False) for s in v.srcs if self.lookup(s) is None)
                continue
            self.bind(v, self.lower(v, [self.lookup(s) for s in v.srcs]))
        return self.lookup(root)

    @staticmethod
    def const(v: ir.Value) -> str:
        if v.dtype == ir.float32:
            return float_literal(v.arg)
        if v.dtype == ir.bool_:
            return "true" if v.arg else "false"
        bits = v.dtype.bits
        return str(v.arg - (1 << bits) if v.arg >= 1 << (bits - 1) else v.arg)   # LLVM ints are signed

    # --- one op ----------------------------------------------------------------------------------
    def lower(self, v: ir.Value, xs: list[str]) -> str:
        op, dt = v.op, v.dtype
        src = v.srcs[0].dtype
        if op == "cast":
            return self.cast(xs[0], src, dt)
        if op == "bitcast":
            return self.bitcast(xs[0], src, dt)
        if op == "where":
            return self.ins(f"select i1 {xs[0]}, {REG[dt.name]} {xs[1]}, {REG[dt.name]} {xs[2]}")
        if src.is_float:
            return self.float_op(op, src, xs)
        return self.int_op(op, src, xs)

    def widen(self, x: str, dt: ir.DType) -> str:
        return x if dt == ir.float32 else self.ins(f"call float {HALF_EXT[dt.name]}(i16 {x})")

    def narrow(self, x: str, dt: ir.DType) -> str:
        return x if dt == ir.float32 else self.ins(f"call i16 {HALF_RND[dt.name]}(float {x})")

    def float_op(self, op: str, dt: ir.DType, xs: list[str]) -> str:
        if op in ("neg", "abs") and dt != ir.float32:   # sign-bit ops act on the storage bits
            return self.ins(f"xor i16 {xs[0]}, -32768" if op == "neg" else f"and i16 {xs[0]}, 32767")
        if op in ("max", "min"):
            # numpy: a if (a > b or a is NaN) else b  (min: a < b)
            a, b = (self.widen(x, dt) for x in xs)
            cmp = self.ins(f"fcmp {'ogt' if op == 'max' else 'olt'} float {a}, {b}")
            nan = self.ins(f"fcmp uno float {a}, {a}")
            pick = self.ins(f"or i1 {cmp}, {nan}")
            return self.ins(f"select i1 {pick}, {REG[dt.name]} {xs[0]}, {REG[dt.name]} {xs[1]}")
        ws = [self.widen(x, dt) for x in xs]
        if op in FCMP:
            return self.ins(f"fcmp {FCMP[op]} float {ws[0]}, {ws[1]}")
        if op in FLOAT_BIN:
            r = self.ins(f"{FLOAT_BIN[op]} float {ws[0]}, {ws[1]}")
        elif op == "neg":
            r = self.ins(f"fneg float {ws[0]}")
        elif op == "abs":
            r = self.ins(f"call float @llvm.fabs.f32(float {ws[0]})")
        elif op == "sqrt":
            r = self.ins(f"call float @llvm.sqrt.f32(float {ws[0]})")
        elif op == "fma":
            r = self.ins(f"call float @llvm.fma.f32(float {ws[0]}, float {ws[1]}, float {ws[2]})")
        else:
            raise ir.IRError(f"no float lowering for {op}")
        return self.narrow(r, dt)

    def int_op(self, op: str, dt: ir.DType, xs: list[str]) -> str:
        t = REG[dt.name]
        signed = dt.kind == "i"
        if op in INT_BIN:
            return self.ins(f"{INT_BIN[op]} {t} {xs[0]}, {xs[1]}")
        if op in ICMP_S:
            return self.ins(f"icmp {(ICMP_S if signed else ICMP_U)[op]} {t} {xs[0]}, {xs[1]}")
        if op == "not":
            return self.ins(f"xor {t} {xs[0]}, {'true' if t == 'i1' else -1}")
        if op == "neg":
            return self.ins(f"sub {t} 0, {xs[0]}")
        if op == "abs":
            if not signed:
                return xs[0]
            neg = self.ins(f"sub {t} 0, {xs[0]}")
            lt = self.ins(f"icmp slt {t} {xs[0]}, 0")
            return self.ins(f"select i1 {lt}, {t} {neg}, {t} {xs[0]}")
        if op in ("max", "min"):
            pred = ("s" if signed else "u") + ("gt" if op == "max" else "lt")
            c = self.ins(f"icmp {pred} {t} {xs[0]}, {xs[1]}")
            return self.ins(f"select i1 {c}, {t} {xs[0]}, {t} {xs[1]}")
        if op in ("shl", "shr"):
            amt = self.ins(f"and {t} {xs[1]}, {dt.bits - 1}")
            kind = "shl" if op == "shl" else ("ashr" if signed else "lshr")
            return self.ins(f"{kind} {t} {xs[0]}, {amt}")
        if op in ("floordiv", "mod"):
            return self.divmod(op, t, signed, xs[0], xs[1])
        raise ir.IRError(f"no integer lowering for {op} on {dt}")

    def divmod(self, op: str, t: str, signed: bool, a: str, b: str) -> str:
        """numpy floor_divide / remainder: x//0 == x%0 == 0, INT_MIN//-1 == INT_MIN, no traps."""
        zero = self.ins(f"icmp eq {t} {b}, 0")
        if not signed:
            safe = self.ins(f"select i1 {zero}, {t} 1, {t} {b}")
            r = self.ins(f"{'udiv' if op == 'floordiv' else 'urem'} {t} {a}, {safe}")
            return self.ins(f"select i1 {zero}, {t} 0, {t} {r}")
        m1 = self.ins(f"icmp eq {t} {b}, -1")
        bad = self.ins(f"or i1 {zero}, {m1}")
        safe = self.ins(f"select i1 {bad}, {t} 1, {t} {b}")
        q = self.ins(f"sdiv {t} {a}, {safe}")
        r = self.ins(f"srem {t} {a}, {safe}")
        # floor: when the remainder is nonzero and its sign differs from the divisor's
        rnz = self.ins(f"icmp ne {t} {r}, 0")
        sx = self.ins(f"xor {t} {r}, {b}")
        sneg = self.ins(f"icmp slt {t} {sx}, 0")
        fix = self.ins(f"and i1 {rnz}, {sneg}")
        if op == "mod":
            rb = self.ins(f"add {t} {r}, {b}")
            res = self.ins(f"select i1 {fix}, {t} {rb}, {t} {r}")
            return self.ins(f"select i1 {bad}, {t} 0, {t} {res}")
        q1 = self.ins(f"sub {t} {q}, 1")
        res = self.ins(f"select i1 {fix}, {t} {q1}, {t} {q}")
        nega = self.ins(f"sub {t} 0, {a}")
        res = self.ins(f"select i1 {m1}, {t} {nega}, {t} {res}")
        return self.ins(f"select i1 {zero}, {t} 0, {t} {res}")

    # --- conversions -----------------------------------------------------------------------------
    def cast(self, x: str, src: ir.DType, dst: ir.DType) -> str:
        if src.is_float:
            f = self.widen(x, src)
            if dst.is_float:
                return self.narrow(f, dst)
            if dst == ir.bool_:
                return self.ins(f"fcmp une float {f}, 0.0")
            # numpy on x86: out of range and NaN give INT_MIN of the 32/64-bit convert; narrower
            # integer types convert through int64 (int32 for int16) and wrap
            wide = 32 if (dst.bits == 32 and dst.kind == "i") or dst.bits == 16 else 64
            lim = float_literal(0x4F000000 if wide == 32 else 0x5F000000)   # 2^31 / 2^63
            ok1 = self.ins(f"fcmp oge float {f}, {float_literal(0xCF000000 if wide == 32 else 0xDF000000)}")
            ok2 = self.ins(f"fcmp olt float {f}, {lim}")
            ok = self.ins(f"and i1 {ok1}, {ok2}")
            safe = self.ins(f"select i1 {ok}, float {f}, float 0.0")
            i = self.ins(f"fptosi float {safe} to i{wide}")
            i = self.ins(f"select i1 {ok}, i{wide} {i}, i{wide} {-(1 << (wide - 1))}")
            return i if dst.bits == wide else self.ins(f"trunc i{wide} {i} to {REG[dst.name]}")
        t = REG[src.name]
        if dst.is_float:
            f = self.ins(f"{'sitofp' if src.kind == 'i' else 'uitofp'} {t} {x} to float")
            return self.narrow(f, dst)
        if dst == ir.bool_:
            return self.ins(f"icmp ne {t} {x}, 0")
        if dst.bits == src.bits and src != ir.bool_:
            return x
        if dst.bits < src.bits:
            return self.ins(f"trunc {t} {x} to {REG[dst.name]}")
        return self.ins(f"{'sext' if src.kind == 'i' else 'zext'} {t} {x} to {REG[dst.name]}")

    def bitcast(self, x: str, src: ir.DType, dst: ir.DType) -> str:
        a, b = REG[src.name], REG[dst.name]
        return x if a == b else self.ins(f"bitcast {a} {x} to {b}")

    def canonical_nan(self, x: str, dt: ir.DType) -> str:
        """Every NaN a kernel stores to memory is the positive quiet NaN, on every target. Done on the
        integer bits, and float32 is returned as i32 for an integer store: LLVM may fold a float select
        between two NaNs away (it treats NaN bits as unspecified)."""
        if dt == ir.float32:
            b = self.ins(f"bitcast float {x} to i32")
            mag = self.ins(f"and i32 {b}, 2147483647")
            nan = self.ins(f"icmp ugt i32 {mag}, 2139095040")
            return self.ins(f"select i1 {nan}, i32 {QNAN['float32']}, i32 {b}")   # stored as i32
        mag = self.ins(f"and i16 {x}, 32767")
        nan = self.ins(f"icmp ugt i16 {mag}, {0x7C00 if dt == ir.float16 else 0x7F80}")
        return self.ins(f"select i1 {nan}, i16 {QNAN[dt.name]}, i16 {x}")
