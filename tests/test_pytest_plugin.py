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
    result = pytester.runpytest("--dev", "MOCKAMD:gfx942", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["gputwin device under test: MOCKAMD:gfx942", "*needs a real GPU*"])


def test_dev_defaults_to_environment_then_mockamd(pytester, monkeypatch):
    monkeypatch.setenv("DEV", "CPU")
    pytester.makepyfile(TEST_FILE.format(expected="CPU"))
    pytester.runpytest().assert_outcomes(passed=1, skipped=1)
    monkeypatch.delenv("DEV")
    pytester.makepyfile(TEST_FILE.format(expected="MOCKAMD"))
    pytester.runpytest().assert_outcomes(passed=1, skipped=1)


def test_bad_dev_stops_the_run(pytester):
    pytester.makepyfile(TEST_FILE.format(expected="x"))
    result = pytester.runpytest("--dev", "NOPE")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*valid spellings*"])
