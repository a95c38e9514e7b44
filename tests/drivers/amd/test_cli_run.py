"""`gputwin run`: one kernel of a code object through the AMD driver, from the command line."""
from gputwin.cli import main
from tests.drivers.amd.conftest import FIX

V5 = str(FIX / "kernels_gfx1100_v5.hsaco")


def test_run_prints_the_buffers_after_the_kernel(capsys):
    rc = main(["run", "--dev", "MOCKAMD", V5, "saxpy", "--grid", "1", "--block", "4",
               "--arg", "buf:float32=1,2,3,4", "--arg", "buf:float32=10,20,30,40", "--arg", "0.5", "--arg", "3"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "y (float32[4]): [ 6. 12. 18.  4.]" in out     # n = 3: the fourth element is untouched
    assert "saxpy(float* y, float* x, float a, int n) ran on AMD:0" in out


def test_run_sizes_zeroed_buffers_by_the_pointer_type(capsys):
    rc = main(["run", V5, "hidden", "--grid", "2,3,4", "--block", "5", "--arg", "buf:64", "--show", "13"])
    assert rc == 0
    assert "o (uint32[16]): [2 3 4 5 1 1 0 0 0 3 0 0 0]" in capsys.readouterr().out


def test_run_reports_argument_errors_with_the_signature(capsys):
    rc = main(["run", V5, "saxpy", "--arg", "buf:16"])
    assert rc == 2 and "saxpy(float* y, float* x, float a, int n)" in capsys.readouterr().err


def test_run_reports_a_gpu_fault(capsys):
    rc = main(["run", V5, "fault", "--block", "32", "--arg", "buf:16", "--arg", "0x100000000"])
    assert rc == 1 and "memory fault" in capsys.readouterr().err


def test_run_names_the_kernels_of_the_object_for_a_wrong_name(capsys):
    rc = main(["run", V5, "saxpi"])
    err = capsys.readouterr().err
    assert rc == 2 and "no kernel 'saxpi' in the code object; it has empty, fault" in err and "saxpy" in err


def test_run_reports_an_impossible_allocation(capsys):
    rc = main(["run", V5, "saxpy", "--arg", f"buf:{1 << 50}", "--arg", "buf:16", "--arg", "1", "--arg", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("gputwin run: ") and "allocate" in err and err.count("\n") == 1
