import pathlib

import pytest

TEST_FILE = """
import pytest

def test_spec(dev_spec):
    assert dev_spec == "{expected}"

@pytest.mark.hw
def test_needs_hardware():
    pass
"""


def test_dev_option_reaches_the_fixture(pytester):
    pytester.makepyfile(TEST_FILE.format(expected="MOCKAMD:gfx942"))
    result = pytester.runpytest_subprocess("--dev", "MOCKAMD:gfx942", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["gputwin device under test: MOCKAMD:gfx942", "*needs a real GPU*"])


def test_dev_defaults_to_environment_then_mockamd(pytester, monkeypatch):
    monkeypatch.setenv("DEV", "CPU")
    pytester.makepyfile(TEST_FILE.format(expected="CPU"))
    pytester.runpytest_subprocess().assert_outcomes(passed=1, skipped=1)
    monkeypatch.delenv("DEV")
    pytester.makepyfile(TEST_FILE.format(expected="MOCKAMD"))
    pytester.runpytest_subprocess().assert_outcomes(passed=1, skipped=1)


def test_bad_dev_stops_the_run(pytester):
    pytester.makepyfile(TEST_FILE.format(expected="x"))
    result = pytester.runpytest_subprocess("--dev", "NOPE")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*valid spellings*"])


def test_only_an_explicit_hw_marker_skips(pytester):
    """Names never count: a `hw` package, a test_hw_* module, a TestHw class and a parameter id `hw` are
    other projects' ordinary tests (pytest's keywords include all of these names)."""
    pytester.makepyfile(**{"peer_tests/__init__.py": "", "peer_tests/hw/__init__.py": "",
                           "peer_tests/hw/test_x.py": "def test_x():\n    assert 1 + 1 == 2\n",
                           "peer_tests/test_hw_module.py": "def test_m():\n    assert 2 * 2 == 4\n",
                           "peer_tests/test_classes.py": "class TestHw:\n    def test_c(self):\n        assert True\n",
                           "peer_tests/test_params.py": ("import pytest\n\n@pytest.mark.parametrize('x', [1], ids=['hw'])\n"
                                                    "def test_p(x):\n    assert x == 1\n"),
                           "peer_tests/test_marked.py": "import pytest\n\n@pytest.mark.hw\ndef test_h():\n    pass\n"})
    result = pytester.runpytest_subprocess("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED*test_marked.py*needs a real GPU: run with --gputwin-dev AMD*"])
    assert "test_x" not in "".join(line for line in result.outlines if "SKIPPED" in line)


@pytest.mark.parametrize("register", ['parser.addoption("--dev", action="store_true")',
                                      'parser.getgroup("mine").addoption("--dev", dest="dev", action="store_true")'],
                         ids=["plain", "own-group-and-dest"])
def test_a_project_with_its_own_dev_option_starts(pytester, register):
    pytester.makeconftest(f"def pytest_addoption(parser):\n    {register}\n")
    pytester.makepyfile("def test_mine(request, dev_spec):\n"
                        "    assert request.config.getoption('dev') is True\n"
                        "    assert dev_spec == 'CPU'\n")
    result = pytester.runpytest_subprocess("--dev", "--gputwin-dev", "CPU")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("fixture", ["dev_spec", "each_dev"])
def test_a_bad_dev_environment_variable_fails_only_gputwin_fixtures(pytester, monkeypatch, fixture):
    """$DEV may belong to another tool: it stops nothing but the tests that ask gputwin for a device."""
    monkeypatch.setenv("DEV", "not-a-gpu")
    pytester.makepyfile(f"def test_plain():\n    pass\n\ndef test_gputwin({fixture}):\n    pass\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*$DEV='not-a-gpu' is not a gputwin device*valid spellings*"])


LOSE_DEVICE = """
import numpy as np
import pytest

import gputwin
from gputwin.drivers.hcq import DeviceLost

BLOB = open({blob!r}, "rb").read()


def test_a_fault_loses_the_device(dev):
    buf = dev.alloc(4096)
    dev.load(BLOB, "fault")(buf, 1 << 36, grid=1, block=32)
    with pytest.raises(gputwin.GpuFault, match="fault"):
        dev.synchronize()
    with pytest.raises(DeviceLost, match="earlier error"):
        dev.alloc(16)


def test_the_next_test_gets_a_working_device(dev):
    buf = dev.alloc(64)
    dev.copyin(buf, np.arange(16, dtype=np.uint32))
    out = np.zeros(16, np.uint32)
    dev.copyout(out, buf)
    dev.synchronize()
    assert out.tolist() == list(range(16))
"""


def test_a_test_that_loses_the_device_does_not_poison_the_next(pytester):
    blob = str(pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "drivers" / "kernels_gfx1100_v5.hsaco")
    pytester.makepyfile(LOSE_DEVICE.format(blob=blob))
    result = pytester.runpytest_subprocess("--gputwin-dev", "MOCKAMD", "-p", "no:randomly")
    result.assert_outcomes(passed=2)


EACH_DEV = """
import pytest

def test_each(each_dev, dev):
    assert isinstance(dev, tuple) and len(dev) == 2          # `dev` keeps the tuple of all devices
    assert each_dev.arch in ("gfx1100", "gfx942")
    buf = each_dev.alloc(16)
    each_dev.free(buf)

def test_plain(dev):
    assert [d.arch for d in dev] == ["gfx1100", "gfx942"]
"""


def test_each_dev_runs_a_test_once_per_selected_device(pytester):
    pytester.makepyfile(EACH_DEV)
    result = pytester.runpytest_subprocess("--gputwin-dev", "MOCKAMD:gfx1100,MOCKAMD:gfx942", "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*test_each?MOCKAMD:gfx1100? PASSED*", "*test_each?MOCKAMD:gfx942? PASSED*"])


def test_each_dev_with_one_device_is_the_dev_device(pytester):
    pytester.makepyfile("def test_same(each_dev, dev):\n    assert each_dev is dev\n")
    result = pytester.runpytest_subprocess("--gputwin-dev", "MOCKAMD", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_same?MOCKAMD? PASSED*"])


def test_a_projects_own_each_dev_fixture_is_left_alone(pytester):
    """Another project's fixture named each_dev: not parametrised, its tests run as they would without us."""
    pytester.makeconftest("import pytest\n\n@pytest.fixture\ndef each_dev():\n    return 'theirs'\n")
    pytester.makepyfile("def test_theirs(each_dev):\n    assert each_dev == 'theirs'\n")
    result = pytester.runpytest_subprocess("--gputwin-dev", "MOCKAMD:gfx1100,MOCKAMD:gfx942", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_theirs PASSED*"])


SANITIZE_TEST = """
import os

def test_sees_the_checkers():
    assert os.environ.get("GPUTWIN_SANITIZE") == {expected!r}
"""


def test_sanitize_option_sets_the_checkers_for_the_run(pytester, monkeypatch):
    monkeypatch.delenv("GPUTWIN_SANITIZE", raising=False)
    pytester.makepyfile(SANITIZE_TEST.format(expected="memcheck,synccheck"))
    result = pytester.runpytest_subprocess("--gputwin-sanitize", "memcheck,synccheck")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["gputwin sanitizer: 0 dispatches checked, 0 findings"])
    pytester.makepyfile(SANITIZE_TEST.format(expected=None))     # not given: nothing set, nothing printed
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
    assert "gputwin sanitizer" not in result.stdout.str()


def test_bad_sanitize_option_stops_the_run(pytester):
    pytester.makepyfile(SANITIZE_TEST.format(expected=None))
    result = pytester.runpytest_subprocess("--gputwin-sanitize", "leakcheck")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--gputwin-sanitize*unknown checker*leakcheck*"])



def test_sanitize_tally_goes_from_xdist_workers_to_the_controller(monkeypatch):
    from types import SimpleNamespace

    from gputwin import pytest_plugin
    from gputwin.emu.sanitizer.report import Tally
    worker, controller = Tally(), Tally()
    worker.dispatches, worker.failed, worker.by_checker["memcheck"] = 5, 1, 2
    config = SimpleNamespace(_gputwin_sanitize_saved=(None,), workeroutput={})
    monkeypatch.setattr("gputwin.emu.sanitizer.report.TALLY", worker)
    pytest_plugin.pytest_sessionfinish(SimpleNamespace(config=config))
    monkeypatch.setattr("gputwin.emu.sanitizer.report.TALLY", controller)
    pytest_plugin.pytest_testnodedown(SimpleNamespace(workeroutput=config.workeroutput), None)
    pytest_plugin.pytest_testnodedown(SimpleNamespace(workeroutput={}), None)     # a worker that sent none
    assert controller.summary() == "gputwin sanitizer: 5 dispatches checked, 2 findings (2 memcheck) in 1 dispatches"
