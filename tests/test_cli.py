import json
import subprocess
import sys

import gputwin
from gputwin.cli import main


def test_info_lists_mock_targets(capsys, monkeypatch):
    monkeypatch.delenv("DEV", raising=False)
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "selected: MOCKAMD" in out and "MOCKAMD:gfx1100" in out and "CPU" in out
    assert "MOCKNV:sm_90" in out and "MOCKNV:sm_80" in out
    assert out.splitlines()[-1] == "opened AMD:0 (gfx1100)"


def test_info_says_why_the_selected_target_cannot_be_opened(capsys, monkeypatch):
    monkeypatch.setattr("gputwin.drivers.kernel.HostKernel.exists", lambda self, path: False)
    assert main(["info", "--dev", "AMD"]) == 1
    out, err = capsys.readouterr()
    assert "selected: AMD" in out and "opened" not in out
    assert err.strip() == ("gputwin: the selected target AMD cannot be opened: AMD: no real AMD GPU here "
                           "(looked for /dev/kfd); use MOCKAMD for the emulated one")


def test_info_rejects_a_bad_dev_listing_valid_spellings(capsys, monkeypatch):
    monkeypatch.setenv("DEV", "NOPE")
    assert main(["info"]) != 0
    assert "valid spellings" in capsys.readouterr().err


def test_version_and_help_from_the_console_script():
    out = subprocess.run([sys.executable, "-m", "gputwin.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and gputwin.__version__ in out.stdout
    for cmd in (["--help"], ["info", "--help"]):
        res = subprocess.run([sys.executable, "-m", "gputwin.cli", *cmd], capture_output=True, text=True)
        assert res.returncode == 0 and "usage: gputwin" in res.stdout


def test_conformance_all_covers_the_amd_and_nv_arches(capsys):
    assert main(["conformance", "--arch", "all", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert {"gfx1100", "gfx1201", "gfx942", "sm_80", "sm_90"} <= set(rep)
