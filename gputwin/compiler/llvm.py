"""llvmlite back ends: LLVM IR text -> optimised module -> relocatable object / PTX text.

One target machine per target name, made once. Optimisation is LLVM's O2 pipeline; no fast-math
flags exist in the IR we render, so it cannot reassociate or contract floating-point math (the
target machines keep the default FP-op-fusion, which fuses only explicit llvm.fmuladd, never used).
"""
from __future__ import annotations

import functools
import threading

import llvmlite.binding as llvm

from gputwin.compiler.render import Target, target

_LOCK = threading.Lock()     # llvmlite's objects and its global context are not safe to share across threads:
                             # every parse / optimise / JIT load in the process takes this one lock


@functools.cache
def _init() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@functools.cache
def host_cpu() -> tuple[str, str]:
    """Host CPU name and features: part of the CPU target's cache key (objects use its instructions)."""
    _init()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


@functools.cache
def target_machine(name: str) -> llvm.TargetMachine:
    """The shared machine for compiling (never hand it to a JIT: the engine takes ownership)."""
    return new_target_machine(name)


def new_target_machine(name: str) -> llvm.TargetMachine:
    _init()
    t: Target = target(name)
    tgt = llvm.Target.from_triple(t.triple)
    if t.kind == "cpu":
        cpu, feats = host_cpu()
        return tgt.create_target_machine(cpu=cpu, features=feats, opt=2, reloc="pic", codemodel="jitdefault")
    if t.kind == "nvptx":
        return tgt.create_target_machine(cpu=t.name, features="+ptx80", opt=2)
    # fake16: 16-bit values in whole VGPRs (no .h halves), the form LLVM 19 emitted for gfx11/12; the
    # emulators model that subset. gfx942 has no true16 at all.
    feats = "" if t.name == "gfx942" else "-real-true16"
    return tgt.create_target_machine(cpu=t.name, features=feats, opt=2, reloc="pic")


def optimize(ir_text: str, name: str) -> llvm.ModuleRef:
    tm = target_machine(name)
    mod = llvm.parse_assembly(ir_text)
    mod.triple = target(name).triple
    mod.data_layout = str(tm.target_data)
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=2)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    mod.verify()
    return mod


def emit_object(ir_text: str, name: str) -> bytes:
    """A relocatable ELF object (AMDGPU or host)."""
    with _LOCK:
        return target_machine(name).emit_object(optimize(ir_text, name))


def load_object(obj: bytes, symbol: str):
    """Load a host object with MCJIT: (its engine, which must outlive every call into it, and the address
    of `symbol`). ValueError when the object has no such symbol (a call to address 0 would crash)."""
    with _LOCK:
        tm = new_target_machine("cpu")     # the engine owns (and frees) its machine
        mod = llvm.parse_assembly("")
        mod.triple = llvm.get_process_triple()
        engine = llvm.create_mcjit_compiler(mod, tm)
        engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        addr = engine.get_function_address(symbol)
    if not addr:
        raise ValueError(f"object has no function {symbol!r}")
    return engine, addr


def emit_assembly(ir_text: str, name: str) -> str:
    """Target assembly text: PTX for nvptx targets (and readable ISA for the others)."""
    with _LOCK:
        return target_machine(name).emit_assembly(optimize(ir_text, name))
