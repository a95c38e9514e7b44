"""`gputwin run` with a PTX module: one entry through the NV driver on MOCKNV, from the command line."""
from gputwin.cli import main
from tests.drivers.nv.conftest import FIXTURES as FIX

PTX90, PTX80 = str(FIX / "kernels_sm90.ptx"), str(FIX / "kernels_sm80.ptx")


def test_run_ptx_prints_the_buffers_after_the_kernel(capsys, monkeypatch):
    monkeypatch.delenv("DEV", raising=False)      # a .ptx file defaults to MOCKNV
    rc = main(["run", PTX90, "saxpy", "--grid", "1", "--block", "4", "--arg", "buf:float32=1,2,3,4",
               "--arg", "buf:float32=10,20,30,40", "--arg", "0.5", "--arg", "3"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "saxpy_param_0 (float32[4]): [ 6. 12. 18.  4.]" in out     # n = 3: the fourth element is untouched
    assert "saxpy(.u64 saxpy_param_0, .u64 saxpy_param_1, .f32 saxpy_param_2, .u32 saxpy_param_3) ran on NV:0 (sm_90)" in out


def test_run_ptx_on_sm80_types_mixed_parameters(capsys):
    rc = main(["run", "--dev", "MOCKNV:sm_80", PTX80, "mixed", "--arg", "buf:int64:5", "--arg", "-5", "--arg", "300",
               "--arg", "-70000", "--arg", "0x123456789", "--arg", "2.25"])
    out = capsys.readouterr().out
    assert rc == 0, out
    line = next(x for x in out.splitlines() if x.startswith("mixed_param_0 (int64[5]): ["))
    assert line.split("[", 2)[2].rstrip("]").split() == ["-5", "300", "-70000", str(0x123456789), "4"]  # e * 2
    assert "ran on NV:0 (sm_80)" in out


def test_run_ptx_refuses_a_missing_entry_and_an_amd_device(capsys):
    assert main(["run", "--dev", "MOCKNV", PTX90, "nope"]) == 2
    err = capsys.readouterr().err
    assert "no kernel 'nope' in " in err and "saxpy" in err
    assert main(["run", "--dev", "MOCKAMD", PTX90, "saxpy"]) == 2
    assert "is PTX, which AMD:0" in capsys.readouterr().err


def test_run_ptx_reports_argument_errors_with_the_signature(capsys):
    rc = main(["run", "--dev", "MOCKNV", PTX90, "saxpy", "--arg", "buf:16"])
    assert rc == 2 and "saxpy(.u64 saxpy_param_0," in capsys.readouterr().err
