"""Suite-wide fixtures and markers: a per-test random generator, the `oracle` marker (tests/oracles.py),
and `approx_model` for tests of approximate units against gputwin's model (docs/conformance.md)."""
import os
import zlib

import numpy as np
import pytest

from tests.oracles import require_tools

# the emulator's native tier (gputwin/emu/amd/native): a region that fails to compile is a bug, not a fall-back
os.environ.setdefault("GPUTWIN_JIT", "strict")


def pytest_configure(config):
    config.addinivalue_line("markers", "oracle(*tools): needs these external tools as the reference")
    config.addinivalue_line("markers", "approx_model: an approximate unit (transcendental, float WMMA/MFMA) "
                                       "checked against gputwin's own model of it, not against hardware; "
                                       "`-m 'not approx_model'` leaves only bit-exact claims")


def pytest_runtest_setup(item):
    for mark in item.iter_markers("oracle"):
        require_tools(*mark.args)


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A generator seeded from the test's own id: its inputs do not depend on which tests ran before it
    in the same worker, and a failure reproduces from the test id alone."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
