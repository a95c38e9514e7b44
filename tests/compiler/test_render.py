"""LLVM IR rendering: valid for every target, IEEE only (no fast-math), one body for all targets."""
import re

import llvmlite.binding as llvm
import pytest

from gputwin.compiler import TARGETS, ir, render
from tests.compiler import kernels
from tests.compiler.helpers import elementwise


def all_kernels():
    return [kernels.fused_chain(), kernels.shared_reverse(), kernels.matmul(batched=True),
            elementwise("m", [ir.float32, ir.float32], ir.float32, lambda x, y: ir.pow(x, y) / ir.exp(y))]


TRIPLES = {"gfx": "amdgcn-amd-amdhsa", "sm_": "nvptx64-nvidia-cuda"}


@pytest.mark.parametrize("target", TARGETS)
def test_rendered_ir_parses_verifies_and_defines_each_kernel(target):
    llvm.initialize_all_targets()
    for kern in all_kernels():
        mod = llvm.parse_assembly(render(kern, target))
        mod.verify()
        fn = mod.get_function(kern.name)
        assert not fn.is_declaration
        # GPU kernels take the kernel's parameters; the CPU frame is (argv, fault, gx, gy, gz)
        assert len(list(fn.arguments)) == (5 if target == "cpu" else len(kern.params)), kern.name
        assert mod.triple == TRIPLES.get(target[:3], llvm.get_process_triple())


def test_the_verifier_rejects_a_broken_rendering():
    """The check above can fail: the same IR with its kernel's return dropped is rejected."""
    text = render(kernels.fused_chain(), "gfx1100")
    assert "  ret void\n" in text
    with pytest.raises(RuntimeError, match="LLVM IR parsing error"):
        llvm.parse_assembly(text.replace("  ret void\n", "", 1)).verify()


@pytest.mark.parametrize("target", TARGETS)
def test_no_fast_math_flags_anywhere(target):
    for kern in all_kernels():
        text = render(kern, target)
        assert not re.search(r"\b(fast|nnan|ninf|nsz|arcp|contract|afn|reassoc)\b", text)
        assert '"denormal-fp-math-f32"="ieee,ieee"' in text
        assert "fmuladd" not in text


def test_amdgpu_kernel_takes_sizes_as_explicit_arguments():
    text = render(kernels.row_sum(), "gfx1100")
    assert "define amdgpu_kernel void @row_sum(ptr addrspace(1) %p0, ptr addrspace(1) %p1, i32 %p2, i32 %p3)" in text
    assert "implicitarg" not in text and "dispatch.ptr" not in text
    assert '"amdgpu-flat-work-group-size"="1,32"' in text


def test_nvptx_and_cpu_frames():
    assert "define ptx_kernel void @row_sum(" in render(kernels.row_sum(), "sm_90")
    cpu = render(kernels.row_sum(), "cpu")
    assert "define void @row_sum(ptr %argv, ptr %fault, i32 %gx, i32 %gy, i32 %gz)" in cpu


def test_body_operations_are_the_same_on_every_target():
    """The float ops in the body appear in the same order for all targets (only the frame differs)."""
    def ops(text):
        return re.findall(r"= (fadd|fsub|fmul|fdiv|call float @llvm\.\w+\.f32)", text)
    kern = elementwise("m", [ir.float32] * 2, ir.float32, lambda x, y: ir.sin(x) * ir.log(y) + x / y)
    seqs = {t: ops(render(kern, t)) for t in TARGETS}
    assert len(set(map(tuple, seqs.values()))) == 1 and len(seqs["cpu"]) > 20


def test_unknown_target_lists_the_known_ones():
    with pytest.raises(ValueError, match="gfx1100"):
        render(kernels.row_sum(), "gfx9000")
