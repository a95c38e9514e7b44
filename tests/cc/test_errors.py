"""What a user sees when a build or a load cannot work: which library defines a missing symbol, how to
unpack an offload bundle, which kernels an ambiguous C++ name means, a missing compiler."""
import shutil
import subprocess

import pytest

from gputwin import cc
from gputwin.abi.code_object import CodeObject, CodeObjectError, mangled_parameter_types, source_name
from gputwin.abi.device_libs import provider
from gputwin.cc import build
from gputwin.errors import KernelNotFound


def test_a_missing_math_function_names_its_library(toolchain):
    src = "__kernel void k(__global double *o) { o[0] = nextafter(o[1], o[2]); }"
    with pytest.raises(cc.BuildError) as e:
        cc.compile_source(src, "opencl", filename="wave.cl")
    msg = str(e.value)
    assert "undefined hidden symbol: nextafter(double, double)" in msg and "wave.o" in msg
    assert "`nextafter(double, double)` is defined by ROCm's device libraries" in msg and "ocml" in msg


def test_compile_errors_name_the_file_and_line(toolchain):
    with pytest.raises(cc.BuildError, match=r"oops\.cl:2:\d+: error: use of undeclared identifier 'nope'"):
        cc.compile_source("__kernel void k(__global int *o) {\n  o[0] = nope;\n}\n", "opencl", filename="oops.cl")


def test_loading_a_code_object_with_an_undefined_symbol_says_who_defines_it(toolchain, devices, tmp_path):
    """Built by hand with default visibility, ld.lld leaves `helper` and `_Z3cosf` undefined in the image."""
    src = tmp_path / "ext.cl"
    src.write_text("float helper(float);\n__kernel void k(__global float *o) { o[0] = helper(o[1]) + cos(o[2]); }\n")
    subprocess.run(["clang-19", "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx1100",
                    "-nogpulib", "-O2", "-fvisibility=default", "-c", str(src), "-o", str(tmp_path / "ext.o")],
                   check=True)
    subprocess.run(["ld.lld-19", "-shared", str(tmp_path / "ext.o"), "-o", str(tmp_path / "ext.hsaco")], check=True)
    image = (tmp_path / "ext.hsaco").read_bytes()
    assert CodeObject.parse(image).undefined_symbols() == ["_Z3cosf", "helper"]
    with pytest.raises(CodeObjectError) as e:
        devices("gfx1100").load(image, "k")
    assert "_Z3cosf, defined by gputwin's device library (gputwin cc links it)" in str(e.value)
    assert "helper, defined by no device library gputwin knows of" in str(e.value)


def test_an_offload_bundle_says_how_to_unbundle(toolchain, tmp_path):
    src = tmp_path / "b.hip"
    src.write_text('extern "C" __attribute__((global)) void k(int *o) { o[0] = 1; }\n')
    out = tmp_path / "b.hipfb"
    subprocess.run(["clang-19", "-x", "hip", "--cuda-device-only", "-nogpuinc", "-nogpulib", "--offload-arch=gfx1100",
                    "--offload-arch=gfx942", "-O2", "-c", str(src), "-o", str(out)], check=True)
    with pytest.raises(CodeObjectError) as e:
        CodeObject.parse(out.read_bytes())
    msg = str(e.value)
    assert "is a clang offload bundle (it holds hipv4-amdgcn-amd-amdhsa--gfx" in msg
    assert "amdhsa--gfx942" in msg and "amdhsa--gfx1100" in msg
    assert "clang-offload-bundler-19 --unbundle --type=o --targets=hipv4-amdgcn-amd-amdhsa--gfx" in msg
    command = ["clang-offload-bundler-19", "--unbundle", "--type=o", "--targets=hipv4-amdgcn-amd-amdhsa--gfx1100",
               f"--input={out}", f"--output={tmp_path / 'b.hsaco'}"]
    if shutil.which(command[0]) and subprocess.run(command).returncode == 0:   # the advice works as printed
        assert list(CodeObject.parse((tmp_path / "b.hsaco").read_bytes()).kernels) == ["k"]


def test_cpp_names_find_hip_kernels_unless_ambiguous(toolchain):
    src = """#include <hip/hip_runtime.h>
    __global__ void fill(int *o) { o[threadIdx.x] = 1; }
    __global__ void fill(float *o) { o[threadIdx.x] = 1.0f; }
    namespace ns { __global__ void scale(float *o) { o[0] *= 2; } }
    """
    co = CodeObject.parse(cc.compile_source(src, "hip"))
    assert co.find_kernel("scale").name == co.find_kernel("ns::scale").name == "_ZN2ns5scaleEPf"
    assert co.find_kernel("_Z4fillPi").name == "_Z4fillPi"
    with pytest.raises(KernelNotFound, match="'fill' is ambiguous: it names _Z4fillPf, _Z4fillPi"):
        co.find_kernel("fill")
    with pytest.raises(KernelNotFound, match="no kernel 'nope'"):
        co.find_kernel("nope")


@pytest.mark.parametrize("symbol, name", [("_Z5saxpyPfS_fi", "saxpy"), ("_ZN2ns4scanEPi", "ns::scan"),
                                          ("_ZNK1a1bEv", "a::b"), ("_Z3addIfEvPT_", "add"), ("vadd", None)])
def test_source_names_of_mangled_symbols(symbol, name):
    assert source_name(symbol) == name


@pytest.mark.parametrize("symbol, types", [
    ("_Z5scalePffi", ["float*", "float", "int"]), ("_Z5saxpyPfS_fi", ["float*", "float*", "float", "int"]),
    ("_Z1kPKfS0_", ["const float*", "const float*"]), ("_Z5applyPf6Affine", ["float*", "Affine"]),
    ("_Z1kDv4_fS_", ["float4", "float4"]), ("_Z1kv", []), ("_ZN2ns1kEv", None), ("_Z3addIfEvPT_", None),
    ("_Z1kS3_", None), ("_Z1kDvx", None), ("_Z1k" + "P" * 100000 + "f", None), ("_Z99k", None)])
def test_parameter_types_of_mangled_names(symbol, types):
    """HIP metadata has no type names: they come from the mangled name, so a float parameter takes 10 as 10.0."""
    assert mangled_parameter_types(symbol) == types


def test_hip_kernels_get_their_parameter_types(toolchain):
    src = "#include <hip/hip_runtime.h>\n__global__ void scale(float *v, float s, int n) { v[n] *= s; }\n"
    assert CodeObject.parse(cc.compile_source(src, "hip")).find_kernel("scale").signature() == \
        "_Z5scalePffi(float* arg0, float arg1, int arg2)"


@pytest.mark.parametrize("symbol, says", [("__ocml_sin_f32", "ocml.bc"), ("__ockl_printf_begin", "-mprintf-kind=buffered"),
                                          ("_Z17convert_int4_satDv4_f", "gputwin's device library"),
                                          ("_Z10vload_halfmPKDh", "gputwin's device library"),
                                          ("_Z12convert_halff", "gputwin's device library"),
                                          ("_Z13convert_floatDh", "gputwin's device library"),
                                          ("_Z5vload2mPKDh", "gputwin's device library"),
                                          ("get_local_id(unsigned int)", "build with `gputwin cc`"),
                                          ("_Z4powrff", "gputwin's device library"), ("_Z3erfd", "gputwin's device library"),
                                          ("_Z3sinDv4_f", "gputwin's device library"), ("erfc(double)", "gputwin's device library"), ("pow(double, double)", "gputwin's device library"),
                                          ("_Z5atan2dd", "gputwin's device library"), ("sinh", "gputwin's device library"),
                                          ("_Z9nextafterff", "ocml"), ("_Z6tgammaf", "gputwin's device library"),
                                          ("_Z4fmoddd", "gputwin's device library"), ("remquof", "gputwin's device library"),
                                          ("lgamma(double)", "gputwin's device library"), ("erfcf", "gputwin's device library"),
                                          ("erfc", "gputwin's device library"), ("_Z4logbd", "ocml"), ("_Z5sinpid", "gputwin's device library"), ("mine", "define it in the kernel's source")])
def test_providers(symbol, says):
    assert says in provider(symbol)


def test_a_missing_compiler_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    build._tool.cache_clear()
    try:
        with pytest.raises(cc.BuildError, match=r"needs clang-19 on PATH \(apt install clang-19"):
            cc.compile_source("__kernel void k() {}", "opencl")
    finally:
        build._tool.cache_clear()


def test_bad_requests_are_refused_before_clang_runs(tmp_path):
    with pytest.raises(cc.BuildError, match="cannot tell the language"):
        cc.compile_file(tmp_path / "k.c")
    with pytest.raises(cc.BuildError, match="not an AMDGPU processor"):
        cc.compile_source("", "opencl", "sm_90")
    with pytest.raises(cc.BuildError, match="v4 or v5"):
        cc.compile_source("", "opencl", cov=6)
