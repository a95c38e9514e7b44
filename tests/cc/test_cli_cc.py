"""`gputwin cc` then `gputwin run`, as a user drives them from a shell."""
import pytest

from gputwin.cli import main

STRUCT_HIP = """#include <hip/hip_runtime.h>
struct Affine { float scale; int offset; };
__global__ void apply(float *o, Affine p) { o[threadIdx.x] = threadIdx.x * p.scale + p.offset; }
__global__ void dyn(unsigned *o) {
  extern __shared__ unsigned s[];
  s[threadIdx.x] = threadIdx.x * 3;
  __syncthreads();
  o[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
  printf("t%u sees %u\\n", threadIdx.x, o[threadIdx.x]);
}
"""
LOCAL_CL = """__kernel void lrev(__global int *a, __local int *t) {
  size_t l = get_local_id(0), n = get_local_size(0);
  t[l] = a[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  a[get_global_id(0)] = t[n - 1 - l];
}
"""


@pytest.fixture
def built(toolchain, tmp_path, capsys):
    (tmp_path / "s.hip").write_text(STRUCT_HIP)
    (tmp_path / "l.cl").write_text(LOCAL_CL)
    for src, arch in (("s.hip", "gfx1201"), ("l.cl", "gfx1100")):
        assert main(["cc", str(tmp_path / src), "--arch", arch, "-O2", "-o", str(tmp_path / f"{src}.hsaco")]) == 0
    out = capsys.readouterr().out
    assert "wrote" in out and "gfx1201 code object v5, kernels _Z3dynPj, _Z5applyPf6Affine" in out
    return tmp_path


def test_struct_and_bytes_arguments_and_nameless_buffers(built, capsys):
    code = str(built / "s.hip.hsaco")
    for value in ("struct:float32=0.5,int32=10", "bytes:0000003f0a000000"):
        assert main(["run", "--dev", "MOCKAMD:gfx1201", code, "apply", "--block", "4", "--arg", "buf:float32:4",
                     "--arg", value]) == 0
        assert "arg0 (float32[4]): [10.  10.5 11.  11.5]" in capsys.readouterr().out


def test_argument_errors_name_the_argument_not_a_byte_offset(built, capsys):
    code = str(built / "s.hip.hsaco")
    assert main(["run", "--dev", "MOCKAMD:gfx1201", code, "apply", "--arg", "buf:16", "--arg", "bytes:00"]) == 2
    assert "argument 1 (arg1) wants 8 bytes, got 1" in capsys.readouterr().err
    assert main(["run", "--dev", "MOCKAMD:gfx1201", code, "apply", "--arg", "buf:16",
                 "--arg", "struct:float64=1,float64=2"]) == 2
    assert "packs 16 bytes; the argument has 8" in capsys.readouterr().err


def test_dynamic_lds_and_printf_through_run(built, capsys):
    code = str(built / "s.hip.hsaco")
    assert main(["run", "--dev", "MOCKAMD:gfx1201", code, "dyn", "--block", "3", "--lds", "12",
                 "--arg", "buf:uint32:3"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:4] == ["t0 sees 6", "t1 sees 3", "t2 sees 0", "arg0 (uint32[3]): [6 3 0]"]


def test_local_memory_arguments(built, capsys):
    assert main(["run", str(built / "l.cl.hsaco"), "lrev", "--block", "4", "--arg", "buf:int32=1,2,3,4",
                 "--arg", "local:16"]) == 0
    assert "a (int32[4]): [4 3 2 1]" in capsys.readouterr().out


def test_cc_reports_build_errors(toolchain, tmp_path, capsys):
    (tmp_path / "bad.cl").write_text("__kernel void k(__global float *o) { o[0] = nextafter(o[1], o[2]); }\n")
    assert main(["cc", str(tmp_path / "bad.cl"), "-o", str(tmp_path / "bad.hsaco")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gputwin cc: ") and "`nextafter(float, float)` is defined by ROCm's device libraries" in err
    assert not (tmp_path / "bad.hsaco").exists()
