"""LLVM IR for a region: one function that runs every wave of a group through it, one wave at a time.

    void region(i64 n, i32 *vgprs, i32 *sgprs, i8 *scc, i64 *count, i64 *exit_pc, i64 *lane_ops)

vgprs is the (R, n, L) uint32 buffer of the region's VGPRs (Layout.vgprs order), sgprs the (K, n) rows
of the scalar operand space it touches (Layout.sgprs), scc one byte per wave. count holds each wave's
instruction budget on entry and the instructions it executed on return; exit_pc the byte offset where
it left the region (or stopped at its budget); lane_ops the sum of popcount(EXEC) over its instructions.

Inside, every register is an alloca that LLVM promotes to SSA values: VGPRs as <L x i32> vectors (a
whole wave per operation), EXEC/VCC masks as <L x i1>, scalars as i32. Each instruction is one block:
check the budget, count it and its active lanes, compute, branch to the next instruction's block or to
an exit. Writes follow the numpy tier's WaveGroup rules (VALU results under EXEC; wave32 EXEC_HI reads 0).
"""
from __future__ import annotations

from dataclasses import dataclass

from gputwin.emu.amd import valu
from gputwin.emu.amd.sopp import BRANCHES, branch_target
from gputwin.emu.amd.scalar_ops import const_value
from gputwin.emu.amd.valu.fp import Mode
from gputwin.emu.amd.valu.operands import inline_const

from . import fops, ops

NULL, VCC, EXEC, SCC, EXECZ, VCCZ = 124, 106, 126, 253, 252, 251


@dataclass(frozen=True)
class Layout:
    """Which registers a compiled region moves in and out (rows of the buffers, in order)."""
    sgprs: tuple[int, ...]
    sgprs_written: tuple[int, ...]
    vgprs: tuple[int, ...]
    vgprs_written: tuple[int, ...]
    scc_written: bool


class _Builder:
    def __init__(self, wave64: bool, mode: int | None):
        self.wave64 = wave64
        self.mode = None if mode is None else Mode.of(mode)     # the MODE float instructions compile for
        self.L = 64 if wave64 else 32
        self.V, self.W, self.M = f"<{self.L} x i32>", f"<{self.L} x i64>", f"<{self.L} x i1>"
        self.F, self.D = f"<{self.L} x float>", f"<{self.L} x double>"
        self.VT, self.FT, self.DT = f"v{self.L}i32", f"v{self.L}f32", f"v{self.L}f64"   # intrinsic suffixes
        self.lines: list[str] = []
        self.decls: set[str] = set()
        self.pending: list | None = None       # VOPD: VGPR writes held until both halves have read
        self.n = 0
        self.s_read: set[int] = {EXEC, EXEC + 1}
        self.s_written: set[int] = set()
        self.v_read: set[int] = set()
        self.v_written: set[int] = set()
        self.scc_written = False

    # --- plumbing ---
    def op(self, text: str) -> str:
        self.n += 1
        self.lines.append(f"  %t{self.n} = {text}")
        return f"%t{self.n}"

    def emit(self, text: str) -> None:
        self.lines.append(text)

    def call(self, ret: str, fn: str, *args: tuple[str, str]) -> str:
        """Call intrinsic `fn` on (type, value) arguments (declared once in the module)."""
        self.decls.add(f"declare {ret} @{fn}({', '.join(t for t, _ in args)})")
        return self.op(f"call {ret} @{fn}({', '.join(f'{t} {v}' for t, v in args)})")

    def splat(self, c: int, bits: int = 32) -> str:
        c &= (1 << bits) - 1
        return "<" + ", ".join([f"i{bits} {c}"] * self.L) + ">"

    def splat_f64(self, x: float) -> str:
        return "<" + ", ".join([f"double {x!r}"] * self.L) + ">"

    def vsplat(self, x: str, bits: int = 32) -> str:
        one = self.op(f"insertelement <1 x i{bits}> poison, i{bits} {x}, i64 0")
        return self.op(f"shufflevector <1 x i{bits}> {one}, <1 x i{bits}> poison, <{self.L} x i32> zeroinitializer")

    # --- scalar state ---
    def sget(self, i: int) -> str:
        if i == NULL:
            return "0"
        self.s_read.add(i)
        return self.op(f"load i32, ptr %s{i}")

    def sset(self, i: int, x: str) -> None:
        if i == NULL:
            return
        self.s_written.add(i)
        self.s_read.add(i)
        self.emit(f"  store i32 {x}, ptr %s{i}")
        if not self.wave64 and i in (EXEC, EXEC + 1):      # wave32: EXEC_HI stays 0 (WaveGroup.set_sgpr)
            self.s_written.add(EXEC + 1)
            self.emit(f"  store i32 0, ptr %s{EXEC + 1}")

    def sget64(self, i: int) -> str:
        if i == NULL:
            return "0"
        lo, hi = self.op(f"zext i32 {self.sget(i)} to i64"), self.op(f"zext i32 {self.sget(i + 1)} to i64")
        return self.op(f"or i64 {lo}, {self.op(f'shl i64 {hi}, 32')}")

    def sset64(self, i: int, x: str) -> None:
        self.sset(i + 1 if i != NULL else NULL, self.op(f"trunc i64 {self.op(f'lshr i64 {x}, 32')} to i32"))
        self.sset(i, self.op(f"trunc i64 {x} to i32"))

    def scc(self) -> str:
        return self.op("load i1, ptr %scc")

    def set_scc(self, c: str) -> None:
        self.scc_written = True
        self.emit(f"  store i1 {c}, ptr %scc")

    def mask_word(self, i: int) -> str:
        """The lane-mask bits in SGPR i (a pair in wave64) as an iL integer."""
        return self.sget64(i) if self.wave64 else self.sget(i)

    def mask(self, i: int) -> str:
        if i == NULL:
            return "zeroinitializer"
        return self.op(f"bitcast i{self.L} {self.mask_word(i)} to {self.M}")

    def set_mask(self, i: int, m: str) -> None:
        bits = self.op(f"bitcast {self.M} {m} to i{self.L}")
        if self.wave64:
            self.sset64(i, bits)
        else:
            self.sset(i, bits)

    # --- vector state ---
    def vget(self, r: int) -> str:
        self.v_read.add(r)
        return self.op(f"load {self.V}, ptr %v{r}")

    def vset(self, r: int, x: str) -> None:
        """Write lanes where EXEC is set."""
        if self.pending is not None:
            self.pending.append((r, x))
            return
        new = self.op(f"select {self.M} {self.mask(EXEC)}, {self.V} {x}, {self.V} {self.vget(r)}")
        self.v_written.add(r)
        self.emit(f"  store {self.V} {new}, ptr %v{r}")


# --- operands ---------------------------------------------------------------------------------------------

def _special(b: _Builder, i: int) -> str:
    if i == SCC:
        return b.op(f"zext i1 {b.scc()} to i32")
    if i in (EXECZ, VCCZ):
        z = b.op(f"icmp eq i{b.L} {b.mask_word(EXEC if i == EXECZ else VCC)}, 0")
        return b.op(f"zext i1 {z} to i32")
    raise AssertionError(f"special operand {i} outside the native set")


def ssrc(b: _Builder, op, wide: bool, signed: bool = False) -> str:
    """A scalar source as an i32 (i64 when wide), as scalar_ops.reader32 / reader64 read it."""
    if op.kind == "sgpr":
        return b.sget64(op.index) if wide else b.sget(op.index)
    if op.kind == "special":
        v = _special(b, op.index)
        return b.op(f"zext i32 {v} to i64") if wide else v
    if op.kind == "imm":
        return str(op.value & ((1 << (64 if wide else 32)) - 1))
    return str(const_value(op, wide, signed))


def vsrc(b: _Builder, op, typ: str = "u32") -> str:
    """A VALU source as <L x i32> (<L x i64> for a 64-bit typ), as valu.operands.read reads it."""
    wide = typ.endswith("64")
    if op.kind == "vgpr":
        if not wide:
            return b.vget(op.index)
        lo, hi = b.op(f"zext {b.V} {b.vget(op.index)} to {b.W}"), b.op(f"zext {b.V} {b.vget(op.index + 1)} to {b.W}")
        return b.op(f"or {b.W} {lo}, {b.op(f'shl {b.W} {hi}, {b.splat(32, 64)}')}")
    if op.kind in ("sgpr", "special"):
        return b.vsplat(ssrc(b, op, wide), 64 if wide else 32)
    if op.kind == "const":
        return b.splat(inline_const(op.index, typ), 64 if wide else 32)
    lit = op.value & 0xFFFFFFFF                      # literal
    if wide and typ == "i64" and lit >> 31:
        lit |= 0xFFFFFFFF << 32
    return b.splat(lit, 64 if wide else 32)


def vmask_src(b: _Builder, inst, role: str) -> str:
    """A lane-mask source (carry-in, v_cndmask select), as valu.operands.read_mask reads it."""
    op = inst.operands.get(role)
    if op is None or inst.encoding in ("VOP2", "VOPC"):
        return b.mask(VCC)
    if op.kind == "sgpr":
        return b.mask(op.index)
    v = inline_const(op.index, "u64")
    return "<" + ", ".join(f"i1 {(v >> k) & 1}" for k in range(b.L)) + ">"


def mask_dst(inst) -> int:
    op = inst.operands.get("sdst")
    return VCC if op is None else op.index


def _vset64(b: _Builder, r: int, w: str) -> None:
    b.vset(r, b.op(f"trunc {b.W} {w} to {b.V}"))
    b.vset(r + 1, b.op(f"trunc {b.W} {b.op(f'lshr {b.W} {w}, {b.splat(32, 64)}')} to {b.V}"))


def _set_lane_result(b: _Builder, i: int, m: str) -> None:
    """A lane-mask result: inactive lanes read 0."""
    b.set_mask(i, b.op(f"and {b.M} {m}, {b.mask(EXEC)}"))


# --- one instruction ----------------------------------------------------------------------------------------

def _salu(b: _Builder, inst) -> None:
    o, name = inst.operands, inst.op
    if name in ops.SOP2:
        wa, wb, wd, fn = ops.SOP2[name]
        x, y = ssrc(b, o["src0"], wa, signed="_i64" in name), ssrc(b, o["src1"], wb)
        d, c = fn(b, x, y, b.scc() if name in ("s_addc_u32", "s_subb_u32", "s_cselect_b32", "s_cselect_b64")
                  else None)
        (b.sset64 if wd else b.sset)(o["sdst"].index, d)
        if c is not None:
            b.set_scc(c)
    elif name in ops.SOPC:
        w, pred = ops.SOPC[name]
        b.set_scc(b.op(f"icmp {pred} i{64 if w else 32} {ssrc(b, o['src0'], w)}, {ssrc(b, o['src1'], w)}"))
    elif name in ops.SOP1:
        ws, wd, fn = ops.SOP1[name]
        d, c = fn(b, ssrc(b, o["src0"], ws), None)
        (b.sset64 if wd else b.sset)(o["sdst"].index, d)
        if c is not None:
            b.set_scc(c)
    elif name in ops.SOPK:
        imm = (inst.simm16 or 0) & 0xFFFF
        k = imm if name.endswith("_u32") else ((imm ^ 0x8000) - 0x8000) & 0xFFFFFFFF
        dst = o["sdst"].index
        d, c = ops.SOPK[name](b, b.sget(dst), str(k), b.scc() if name == "s_cmovk_i32" else None)
        if d is not None:
            b.sset(dst, d)
        if c is not None:
            b.set_scc(c)
    elif name in ops.CMOV:
        w = ops.CMOV[name]
        t = "i64" if w else "i32"
        d = b.op(f"select i1 {b.scc()}, {t} {ssrc(b, o['src0'], w)}, {t} {ssrc(b, o['sdst'], w)}")
        (b.sset64 if w else b.sset)(o["sdst"].index, d)
    else:
        w, wrexec, pat = ops.SAVEEXEC[name]
        t = "i64" if w else "i32"
        s = ssrc(b, o["src0"], w)
        old = b.sget64(EXEC) if w else b.sget(EXEC)
        new = ops.saveexec_value(b, pat, t, s, old)
        (b.sset64 if w else b.sset)(EXEC, new)
        (b.sset64 if w else b.sset)(o["sdst"].index, new if wrexec else old)
        b.set_scc(b.op(f"icmp ne {t} {new}, 0"))


def _valu(b: _Builder, inst) -> None:
    o, name = inst.operands, inst.op
    if name in ops.VALU32:
        k, fn = ops.VALU32[name]
        srcs = [vsrc(b, o[r]) for r in ("src0", "src1", "src2")[:k]]
        b.vset(o["vdst"].index, fn(b, *srcs))
    elif name in ops.VALU64_SHIFT:
        count = b.op(f"and {b.V} {vsrc(b, o['src0'])}, {b.splat(63)}")
        n = b.op(f"zext {b.V} {count} to {b.W}")
        _vset64(b, o["vdst"].index, b.op(f"{ops.VALU64_SHIFT[name]} {b.W} {vsrc(b, o['src1'], 'u64')}, {n}"))
    elif name in ops.CARRY:
        sub, rev, has_cin = ops.CARRY[name]
        x, y = vsrc(b, o["src0"]), vsrc(b, o["src1"])
        if rev:
            x, y = y, x
        cin = vmask_src(b, inst, "src2") if has_cin else None
        r, carry = ops.carry_op(b, sub, x, y, cin)
        b.vset(o["vdst"].index, r)
        _set_lane_result(b, mask_dst(inst), carry)
    elif name == "v_cndmask_b32":
        x, y = table_sources(b, inst)
        b.vset(o["vdst"].index, b.op(f"select {b.M} {vmask_src(b, inst, 'src2')}, {b.V} {y}, {b.V} {x}"))
    elif name in fops.OPS:
        _float(b, inst)
    elif name == "v_mad_u64_u32":
        x, y, z = vsrc(b, o["src0"]), vsrc(b, o["src1"]), vsrc(b, o["src2"], "u64")
        p = b.op(f"mul {b.W} {b.op(f'zext {b.V} {x} to {b.W}')}, {b.op(f'zext {b.V} {y} to {b.W}')}")
        r = b.op(f"add {b.W} {p}, {z}")
        _vset64(b, o["vdst"].index, r)
        _set_lane_result(b, mask_dst(inst), b.op(f"icmp ult {b.W} {r}, {p}"))
    else:
        w, pred, to_exec = ops.VCMP[name]
        typ = name.rsplit("_", 1)[1]
        x, y = vsrc(b, o["src0"], typ), vsrc(b, o["src1"], typ)
        if pred in ("f", "t"):
            res = "<" + ", ".join([f"i1 {int(pred == 't')}"] * b.L) + ">"
        else:
            res = b.op(f"icmp {pred} {b.W if w else b.V} {x}, {y}")
        _set_lane_result(b, EXEC if to_exec else mask_dst(inst), res)


def table_sources(b: _Builder, inst) -> list[str]:
    """The sources of a VALU instruction as the numpy tier fetches them (valu._plan): roles (v_fmac's
    addend is its destination, v_fmaak/v_fmamk's K), abs then neg on float sources, input flush."""
    srcs = []
    for role, typ, _hi, f, absv, negv in valu._plan(inst, valu.OPS[inst.op]):
        x = fops.modifiers(b, vsrc(b, inst.operands[role], typ), absv, negv)
        srcs.append(x if f is None else fops.flush_in(b, x))
    return srcs


def _float(b: _Builder, inst) -> None:
    """An f32 instruction (fops.py), finished as valu.table.finish_float does: NaN results take the first
    NaN f32 source's payload (Op.nan), then the output denormal flush."""
    op, name = valu.OPS[inst.op], inst.op
    srcs = table_sources(b, inst)
    if name in fops.CMP:
        _set_lane_result(b, EXEC if op.out == "exec" else mask_dst(inst), fops.compare(b, fops.CMP[name], *srcs))
        return
    res = fops.ARITH[name](b, *srcs)
    if op.dst == "f32":
        if op.nan:
            res = fops.fix_nan(b, res, [x for x, t in zip(srcs, op.srcs) if t == "f32"])
        res = fops.flush_out(b, res)
    b.vset(inst.operands["vdst"].index, res)


def _vopd(b: _Builder, inst) -> None:
    """Both halves read their sources before either writes (valu/vopd.py)."""
    b.pending = []
    for half in inst.vopd:
        _valu(b, half)
    writes, b.pending = b.pending, None
    for r, x in writes:
        b.vset(r, x)


def _branch_cond(b: _Builder, kind: str) -> str:
    if kind in ("scc0", "scc1"):
        c = b.scc()
        return c if kind == "scc1" else b.op(f"xor i1 {c}, true")
    word = b.mask_word(VCC if kind.startswith("vcc") else EXEC)
    return b.op(f"icmp {'ne' if kind.endswith('nz') else 'eq'} i{b.L} {word}, 0")


def render(insts: dict, header: int, wave64: bool, name: str, mode: int | None = None) -> tuple[str, Layout]:
    """IR text of the region {pc: gfx11 Inst} entered at `header`, and its register layout; `mode` is the
    MODE its float instructions run under (None: it has none)."""
    b = _Builder(wave64, mode)
    exits: set[int] = set()

    def goto(pc: int) -> str:
        if pc not in insts:
            exits.add(pc)
            return f"%x{pc}"
        return f"%i{pc}"

    for pc in sorted(insts):
        inst = insts[pc]
        nxt = pc + inst.size
        b.emit(f"i{pc}:")
        c = b.op("load i64, ptr %cnt")
        b.emit(f"  br i1 {b.op(f'icmp uge i64 {c}, %budget')}, label %x{pc}, label %r{pc}")
        exits.add(pc)
        b.emit(f"r{pc}:")
        b.emit(f"  store i64 {b.op(f'add i64 {c}, 1')}, ptr %cnt")
        live = b.op(f"call i{b.L} @llvm.ctpop.i{b.L}(i{b.L} {b.mask_word(EXEC)})")
        live = b.op(f"zext i{b.L} {live} to i64") if b.L == 32 else live
        total = b.op("load i64, ptr %lanes")
        b.emit(f"  store i64 {b.op(f'add i64 {total}, {live}')}, ptr %lanes")
        if inst.op in BRANCHES:
            kind, target = BRANCHES[inst.op], branch_target(pc, inst)
            if kind is None:
                b.emit(f"  br label {goto(target)}")
            else:
                b.emit(f"  br i1 {_branch_cond(b, kind)}, label {goto(target)}, label {goto(nxt)}")
            continue
        if inst.op in ops.SALU_OPS:
            _salu(b, inst)
        elif inst.encoding == "VOPD":
            _vopd(b, inst)
        elif inst.op in ops.VALU_OPS or inst.op in fops.OPS:
            _valu(b, inst)
        b.emit(f"  br label {goto(nxt)}")
    for pc in sorted(exits):
        b.emit(f"x{pc}:")
        b.emit(f"  store i64 {pc}, ptr %xpc")
        b.emit("  br label %wave_end")

    sg = tuple(sorted(b.s_read | b.s_written))
    vg = tuple(sorted(b.v_read | b.v_written))
    lay = Layout(sg, tuple(sorted(b.s_written)), vg, tuple(sorted(b.v_written)), b.scc_written)
    return _function(b, lay, header, name), lay


def _function(b: _Builder, lay: Layout, header: int, name: str) -> str:
    V, L = b.V, b.L
    head = [f"define void @{name}(i64 %n, ptr noalias %vbuf, ptr noalias %sbuf, ptr noalias %sccbuf, "
            f"ptr noalias %cntbuf, ptr noalias %xpcbuf, ptr noalias %lanebuf) {{",
            "entry:", "  %cnt = alloca i64", "  %lanes = alloca i64", "  %xpc = alloca i64", "  %scc = alloca i1"]
    head += [f"  %s{i} = alloca i32" for i in lay.sgprs]
    head += [f"  %v{r} = alloca {V}, align 4" for r in lay.vgprs]
    head += ["  br label %wloop", "wloop:", "  %w = phi i64 [0, %entry], [%w1, %wave_end]",
             "  %more = icmp ult i64 %w, %n", "  br i1 %more, label %wstart, label %done", "wstart:"]
    # SGPR row k of wave w is element k*n + w of sbuf; VGPR k of wave w starts at element (k*n + w)*L of vbuf
    for k, i in enumerate(lay.sgprs):
        head += [f"  %wn{k}.0 = mul i64 %n, {k}", f"  %wn{k} = add i64 %wn{k}.0, %w",
                 f"  %spw{i} = getelementptr i32, ptr %sbuf, i64 %wn{k}",
                 f"  %sl{i} = load i32, ptr %spw{i}", f"  store i32 %sl{i}, ptr %s{i}"]
    for k, r in enumerate(lay.vgprs):
        head += [f"  %vo{r}.0 = mul i64 %n, {k}", f"  %vo{r}.1 = add i64 %vo{r}.0, %w",
                 f"  %vo{r} = mul i64 %vo{r}.1, {L}", f"  %vpw{r} = getelementptr i32, ptr %vbuf, i64 %vo{r}",
                 f"  %vl{r} = load {V}, ptr %vpw{r}, align 4", f"  store {V} %vl{r}, ptr %v{r}"]
    head += ["  %sccp = getelementptr i8, ptr %sccbuf, i64 %w", "  %scc8 = load i8, ptr %sccp",
             "  %scc1 = icmp ne i8 %scc8, 0", "  store i1 %scc1, ptr %scc",
             "  %cntp = getelementptr i64, ptr %cntbuf, i64 %w", "  %budget = load i64, ptr %cntp",
             "  store i64 0, ptr %cnt", "  store i64 0, ptr %lanes", f"  br label %i{header}"]
    tail = ["wave_end:"]
    for i in lay.sgprs_written:
        tail += [f"  %so{i} = load i32, ptr %s{i}", f"  store i32 %so{i}, ptr %spw{i}"]
    for r in lay.vgprs_written:
        tail += [f"  %vs{r} = load {V}, ptr %v{r}", f"  store {V} %vs{r}, ptr %vpw{r}, align 4"]
    if lay.scc_written:
        tail += ["  %scco = load i1, ptr %scc", "  %scco8 = zext i1 %scco to i8", "  store i8 %scco8, ptr %sccp"]
    tail += ["  %cnto = load i64, ptr %cnt", "  store i64 %cnto, ptr %cntp",
             "  %xo = load i64, ptr %xpc", "  %xpcp = getelementptr i64, ptr %xpcbuf, i64 %w", "  store i64 %xo, ptr %xpcp",
             "  %lo = load i64, ptr %lanes", "  %lp = getelementptr i64, ptr %lanebuf, i64 %w", "  store i64 %lo, ptr %lp",
             "  %w1 = add i64 %w, 1", "  br label %wloop", "done:", "  ret void", "}",
             "declare i32 @llvm.ctpop.i32(i32)", "declare i64 @llvm.ctpop.i64(i64)",
             "declare i32 @llvm.umin.i32(i32, i32)", "declare i64 @llvm.umax.i64(i64, i64)", *sorted(b.decls)]
    return "\n".join(head + b.lines + tail) + "\n"
