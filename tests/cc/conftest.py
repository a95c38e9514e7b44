"""Helpers for the `gputwin cc` tests: building needs clang-19, ld.lld-19 and llvm-objcopy-19 (skipped, or
failed under GPUTWIN_REQUIRE_ORACLES=1, when missing); each arch's device is opened once per module."""
import numpy as np
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


def float_ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance of float32 results from float64 references in float32 units in the last place, measured at
    the correctly rounded result; equal values (infinities included) are 0, and a NaN where the reference
    is NaN is 0 while any other mismatch of NaN-ness is infinitely far."""
    with np.errstate(invalid="ignore", over="ignore"):
        w32 = want.astype(np.float32)               # beyond float's range: infinity is the rounded result
        spacing = np.spacing(np.minimum(np.abs(w32), np.finfo(np.float32).max)).astype(np.float64)
        g = got.astype(np.float64)
        d = np.where((g == want) | (np.isinf(w32) & (g == w32)), 0.0, np.abs(g - want) / spacing)
    return np.where(np.isnan(g) | np.isnan(want), np.where(np.isnan(g) & np.isnan(want), 0.0, np.inf), d)
