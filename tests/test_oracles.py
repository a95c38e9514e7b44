"""tests/oracles.py: a missing LLVM 19 tool skips (saying what to install) on a user's machine and fails
under GPUTWIN_REQUIRE_ORACLES=1, as .ci/run sets it; a tool CI does not install always skips."""
import pytest

from tests import oracles

MODULE = """
import pytest
from tests import oracles

@pytest.fixture(autouse=True)
def _no_tools(monkeypatch):
    monkeypatch.setattr(oracles.shutil, "which", lambda name: None)

def test_call():
    oracles.require_tools("llvm-mc-19", "ld.lld-19")

def test_ptxas():
    oracles.require_tools("ptxas")
"""


@pytest.mark.parametrize("required", ["", "1"], ids=["user", "ci"])
def test_missing_oracles_skip_for_users_and_fail_in_ci(pytester, monkeypatch, required):
    monkeypatch.setenv(oracles.REQUIRE_ENV, required)
    pytester.makepyfile(MODULE)
    result = pytester.runpytest("-rsf")
    if required:
        result.assert_outcomes(failed=1, skipped=1)
        result.stdout.fnmatch_lines(["GPUTWIN_REQUIRE_ORACLES=1: needs llvm-mc-19, ld.lld-19 "
                                     "as the reference (apt install lld-19 llvm-19)*"])
    else:
        result.assert_outcomes(skipped=2)
        result.stdout.fnmatch_lines(["SKIPPED*needs llvm-mc-19, ld.lld-19 as the reference (apt install lld-19 llvm-19)*"])
    result.stdout.fnmatch_lines(["SKIPPED*needs ptxas as the reference"])


def test_the_oracle_marker_is_checked_at_setup(pytester, monkeypatch):
    monkeypatch.setenv(oracles.REQUIRE_ENV, "1")
    monkeypatch.setattr(oracles.shutil, "which", lambda name: None)
    pytester.makepyfile("from tests.oracles import oracle\n\n@oracle('clang-19')\ndef test_m():\n    pass\n")
    result = pytester.runpytest("-rf", "-p", "tests.conftest")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*needs clang-19 as the reference (apt install clang-19)*"])
