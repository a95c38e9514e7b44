"""A kernel's plan: its code and the code of every function it calls, laid out as one instruction list.

Built once per kernel (the module caches it). Labels become instruction indices (PCs), each function's
registers get their own slots (functions are not re-entrant: the call graph must be acyclic, which is
checked here), `.shared` variables get CTA-relative offsets and `.local` ones thread-relative offsets,
and each instruction is checked against the semantic tables so an unmodelled opcode fails at load time
with its PTX line, not halfway through a launch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from gputwin.emu.nv.ptx.errors import PtxError
from gputwin.emu.nv.ptx.types import TYPES
from gputwin.emu.nv.ptx.module import align_up, decl_align, decl_size
from gputwin.emu.nv.ptx.parser import Instr, Label, Vec, Sym, VarDecl

MAX_REG_RANGE = 1 << 16    # a gputwin limit (nvcc writes hundreds); each register is an array per thread

DYNAMIC_SHARED_ALIGN = 16


@dataclass
class Plan:
    kernel: str
    code: list[Instr] = field(default_factory=list)       # PC -> instruction (with .fn, .target set)
    func_base: dict[str, int] = field(default_factory=dict)
    regs: dict[tuple[str, str], int] = field(default_factory=dict)   # (function, name) -> slot
    reg_types: list[str] = field(default_factory=list)
    shared: dict[str, int] = field(default_factory=dict)  # shared symbol -> CTA offset
    shared_static: int = 0
    dynamic_shared_offset: int = 0
    local: dict[tuple[str, str], int] = field(default_factory=dict)   # (function, symbol) -> thread offset
    local_size: int = 0
    pslots: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # (fn, name)->(slot, size)
    pslot_sizes: list[int] = field(default_factory=list)
    kernel_params: dict[str, int] = field(default_factory=dict)     # name -> byte offset
    max_depth: int = 1


def _reachable(mod, root: str) -> list[str]:
    order, state = [], {}

    def visit(name, line):
        fn = mod.functions.get(name)
        if fn is None or fn.declared_only:
            raise PtxError(f"call to {name}, which this module does not define", line=line, token=name)
        if state.get(name) == 1:
            raise PtxError(f"recursive call to {name}: recursion is not modelled", line=line, token=name)
        if state.get(name) == 2:
            return
        state[name] = 1
        order.append(name)
        for it in fn.body:
            if isinstance(it, Instr) and it.op == "call":
                visit(_call_target(it).name, it.line)
        state[name] = 2

    visit(root, mod.functions[root].line)
    return order


def _call_target(ins: Instr) -> Sym:
    for a in ins.args:
        if isinstance(a, Sym):
            return a
        if not isinstance(a, Vec) and hasattr(a, "name"):
            return Sym(a.name)
    raise PtxError("call without a target", line=ins.line, token=ins.text)


def _depth(mod, name, memo) -> int:
    if name not in memo:
        fn = mod.functions[name]
        memo[name] = 1 + max([_depth(mod, _call_target(i).name, memo) for i in fn.body
                              if isinstance(i, Instr) and i.op == "call"] or [0])
    return memo[name]


def build_plan(mod, k, check: bool = True) -> Plan:
    from gputwin.emu.nv.ptx.ops import OPS
    plan = Plan(k.name)
    names = _reachable(mod, k.name)
    plan.max_depth = _depth(mod, k.name, {})
    off = 0
    for p in k.fn.params:
        off = align_up(off, decl_align(p))
        plan.kernel_params[p.name] = off
        off += decl_size(p)
    local_off = 0
    shared_off, dyn = 0, []

    def place_shared(d) -> None:
        """Static .shared declarations get the next aligned offset; extern / unsized ones are dynamic."""
        nonlocal shared_off
        if d.extern or d.count == 0:
            dyn.append(d.name)
        else:
            shared_off = align_up(shared_off, decl_align(d))
            plan.shared[d.name] = shared_off
            shared_off += decl_size(d)

    for d in mod.parsed.globals:
        if d.space == "shared":
            place_shared(d)
    for fname in names:
        fn = mod.functions[fname]
        plan.func_base[fname] = len(plan.code)
        if fname != k.name:
            for d in list(fn.params) + list(fn.rets):
                _pslot(plan, fname, d)
        labels = {}
        for it in fn.body:
            if isinstance(it, Label):
                labels[it.name] = len(plan.code)
            elif isinstance(it, VarDecl):
                if it.space == "reg":
                    if it.type not in TYPES or TYPES[it.type][0] > 8:
                        raise PtxError(f"registers of type .{it.type} are not modelled", line=it.line,
                                       token=it.name)
                    if it.range_count is not None and it.range_count > MAX_REG_RANGE:
                        raise PtxError(f"{it.name}<{it.range_count}> declares more than the {MAX_REG_RANGE} registers "
                                       "one declaration may have here", line=it.line, token=it.name)
                    names_ = ([f"{it.name}{i}" for i in range(it.range_count)] if it.range_count is not None
                              else [it.name])
                    for rn in names_:
                        plan.regs[(fname, rn)] = len(plan.reg_types)
                        plan.reg_types.append(it.type)
                elif it.space == "shared":
                    place_shared(it)
                elif it.space == "local":
                    local_off = align_up(local_off, decl_align(it))
                    plan.local[(fname, it.name)] = local_off
                    local_off += decl_size(it)
                elif it.space == "param":
                    _pslot(plan, fname, it)
                else:
                    raise PtxError(f".{it.space} declaration inside a function is not modelled", line=it.line,
                                   token=it.name)
            else:
                it.fn = fname
                plan.code.append(it)
                if it.op == "call":
                    # a call returns to a copy-back step that moves the callee's return params
                    it.target = _call_target(it)
                    cb = Instr("callret", (), it.args, it.line, text="(call return)")
                    cb.fn = fname
                    plan.code.append(cb)
        for it in plan.code[plan.func_base[fname]:]:
            if it.op == "bra" or (it.op == "brx"):
                lab = it.args[-1]
                name = getattr(lab, "name", None)
                if name not in labels:
                    raise PtxError("branch to an unknown label", line=it.line, token=str(name))
                it.target = labels[name]
        plan.code.append(Instr("ret", (), [], fn.line, text="(end of function)"))
        plan.code[-1].fn = fname
    plan.shared_static = shared_off
    plan.dynamic_shared_offset = align_up(shared_off, DYNAMIC_SHARED_ALIGN)
    for n in dyn:
        plan.shared[n] = plan.dynamic_shared_offset
    plan.local_size = align_up(local_off, 16)
    for it in plan.code if check else ():
        if it.op not in OPS:
            raise PtxError(f"instruction {it.text} is not modelled", line=it.line, token=it.text)
        OPS[it.op].check(it)
    return plan


def _pslot(plan, fname, d):
    plan.pslots[(fname, d.name)] = (len(plan.pslot_sizes), decl_size(d))
    plan.pslot_sizes.append(align_up(decl_size(d), 8))
