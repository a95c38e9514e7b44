"""PTX for sm_80 / sm_90: emitted by llvmlite's NVPTX back end, IEEE division and sqrt, and ptxas
(when installed) assembles it."""
import shutil
import subprocess

import pytest

from gputwin.compiler import compile_kernel, ir
from tests.compiler import kernels
from tests.compiler.helpers import elementwise


@pytest.mark.parametrize("sm", ["sm_80", "sm_90"])
def test_ptx_is_emitted_with_ieee_ops(sm):
    kern = elementwise("dv", [ir.float32] * 2, ir.float32, lambda x, y: ir.sqrt(x) / y)
    ptx = compile_kernel(kern, sm).decode()
    assert f".target {sm}" in ptx and ".visible .entry dv(" in ptx
    assert "div.rn.f32" in ptx and "sqrt.rn.f32" in ptx
    assert ".ftz" not in ptx and "div.approx" not in ptx and "div.full" not in ptx


@pytest.mark.parametrize("sm", ["sm_80", "sm_90"])
def test_ptxas_assembles_every_test_kernel(sm, tmp_path):
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("needs ptxas (CUDA toolkit) on PATH")
    for kern in (kernels.fused_chain(), kernels.shared_reverse(), kernels.matmul(batched=True)):
        path = tmp_path / f"{kern.name}.ptx"
        path.write_bytes(compile_kernel(kern, sm))
        res = subprocess.run([ptxas, f"-arch={sm}", str(path), "-o", str(tmp_path / "out.cubin")],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("sm", ["sm_80", "sm_90"])
def test_transcendentals_use_no_approximate_ptx_instructions(sm):
    # mathlib's one implementation (exactly rounded PTX ops only) is what makes MOCKNV equal CPU bit for bit
    kern = elementwise("tr", [ir.float32] * 2, ir.float32,
                       lambda x, y: ir.exp(x) + ir.log(y) * ir.sin(x) - ir.cos(y) / ir.tanh(x) + ir.pow(y, x))
    ptx = compile_kernel(kern, sm).decode()
    assert "fma.rn.f32" in ptx and "div.rn.f32" in ptx
    assert ".approx" not in ptx and ".ftz" not in ptx and "ex2" not in ptx and "lg2" not in ptx
