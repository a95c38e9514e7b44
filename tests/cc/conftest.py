"""Helpers for the `gputwin cc` tests: building needs clang-19, ld.lld-19 and llvm-objcopy-19 (skipped, or
failed under GPUTWIN_REQUIRE_ORACLES=1, when missing); each arch's device is opened once per module."""
import pytest

import gputwin
from tests.oracles import require_tools

TOOLS = ("clang-19", "ld.lld-19", "llvm-objcopy-19")
ARCHS = ("gfx1100", "gfx1201", "gfx942")


@pytest.fixture(scope="module")
def toolchain():
    require_tools(*TOOLS, why="to build kernels")


@pytest.fixture(scope="module")
def devices():
    """arch -> an emulated device of that arch, opened on first use."""
    opened = {}

    def get(arch: str):
        if arch not in opened:
            opened[arch] = gputwin.open_device(f"MOCKAMD:{arch}")
        return opened[arch]
    yield get
    for d in opened.values():
        d.close()
