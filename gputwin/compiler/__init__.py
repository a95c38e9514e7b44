"""gputwin.compiler: kernel IR -> LLVM IR -> llvmlite -> AMDGPU code objects, PTX, host code.

    from gputwin.compiler import ir, compile_kernel, load_kernel
See docs/compiler.md ("How to write a kernel").
"""
from __future__ import annotations

from gputwin.compiler import ir
from gputwin.compiler.render import AMD_ARCHS, NV_ARCHS, render

TARGETS = AMD_ARCHS + NV_ARCHS + ("cpu",)


def _build(kern: ir.Kernel, text: str, target: str) -> bytes:
    from gputwin.compiler import llvm
    if target in AMD_ARCHS:
        from gputwin.compiler.elf import link
        return link(llvm.emit_object(text, target))
    if target in NV_ARCHS:
        return llvm.emit_assembly(text, target).encode()
    from gputwin.compiler.cpuimage import CPUImage, pack
    cpu, feats = llvm.host_cpu()
    params = [(p.name, p.dtype.name, p.kind) for p in kern.params]
    return pack(CPUImage(kern.name, params, kern.local_size, cpu, feats, llvm.emit_object(text, target)))


def compile_kernel(kern: ir.Kernel, target: str) -> bytes:
    """The image `dev.load` takes for `target` (gfx1100/gfx1201/gfx942: a linked .hsaco; sm_80/sm_90:
    PTX text; cpu: a CPU image). Cached by LLVM IR text + target, in memory and on disk."""
    from gputwin.compiler import cache
    if target not in TARGETS:
        raise ValueError(f"unknown compile target {target!r}; known: {', '.join(TARGETS)}")
    hit = kern.images.get(target)
    if hit is not None:          # the same Kernel object again: skip even rendering
        cache.stats["memory_hits"] += 1
        return hit
    text = render(kern, target)
    key_text = text
    if target == "cpu":   # host objects use the host's instructions: the CPU model is part of the key
        from gputwin.compiler.llvm import host_cpu
        key_text += "\n; host " + " ".join(host_cpu())
    image = cache.get_or_build(key_text, target, lambda: _build(kern, text, target))
    kern.images[target] = image
    return image


def target_of(dev) -> str:
    """The compile target for an open device (its `.arch`)."""
    arch = getattr(dev, "arch", None)
    if arch not in TARGETS:
        raise ValueError(f"no compile target for device arch {arch!r}; known: {', '.join(TARGETS)}")
    return arch


def load_kernel(dev, kern: ir.Kernel):
    """Compile `kern` for `dev` (cached) and load it: returns the device's Program."""
    return dev.load(compile_kernel(kern, target_of(dev)), kern.name)


__all__ = ["ir", "compile_kernel", "load_kernel", "render", "target_of", "TARGETS"]
