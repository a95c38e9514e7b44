"""The external tools the differential tests compare with, and what a test does when one is missing.

On a user's machine a missing tool skips the test, saying what to install. Under
GPUTWIN_REQUIRE_ORACLES=1 (set by .ci/run) a missing LLVM 19 tool fails the test instead, so CI never
loses its references quietly. Tools CI does not install (CUDA's ptxas) always skip.
"""
from __future__ import annotations

import os
import shutil

import pytest

REQUIRE_ENV = "GPUTWIN_REQUIRE_ORACLES"
# tool -> the package that provides it (Debian/Ubuntu, apt.llvm.org); .ci/run installs all of these
CI_ORACLES = {"llvm-mc-19": "llvm-19", "llvm-objcopy-19": "llvm-19", "llvm-objdump-19": "llvm-19",
              "llvm-readelf-19": "llvm-19", "libLLVM-19": "llvm-19", "clang-19": "clang-19",
              "ld.lld-19": "lld-19"}


def required() -> bool:
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def missing(names, why: str = "as the reference") -> None:
    """Skip (or, for CI's oracles under GPUTWIN_REQUIRE_ORACLES=1, fail) naming the tools and packages."""
    names = list(names)
    pkgs = sorted({CI_ORACLES[n] for n in names if n in CI_ORACLES})
    msg = f"needs {', '.join(names)} {why}" + (f" (apt install {' '.join(pkgs)})" if pkgs else "")
    if required() and pkgs:
        pytest.fail(f"{REQUIRE_ENV}=1: {msg}", pytrace=False)
    pytest.skip(msg)


def require_tools(*names: str, why: str = "as the reference") -> list[str]:
    """Paths of the tools on PATH; a missing one skips or fails the test (see `missing`)."""
    paths = [shutil.which(n) for n in names]
    absent = [n for n, p in zip(names, paths) if p is None]
    if absent:
        missing(absent, why)
    return paths


def oracle(*names: str):
    """Marker form of `require_tools`, checked when the test is set up (tests/conftest.py)."""
    return pytest.mark.oracle(*names)
