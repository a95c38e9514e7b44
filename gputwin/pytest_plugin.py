"""pytest plugin (entry point `pytest11: gputwin`): pick the device under test.

- `--dev SPEC` (default $DEV, else MOCKAMD) selects the target; a bad spelling stops the run at start.
- `dev_spec` fixture: the selected spec string; `dev` fixture: the device, opened once per worker
  (session scope, so each pytest-xdist worker opens its own).
- `@pytest.mark.hw` tests run only when a real device is selected, else they are skipped saying so.
"""
from __future__ import annotations

import os

import pytest

from gputwin import device as devmod


def pytest_addoption(parser):
    group = parser.getgroup("gputwin")
    group.addoption("--dev", action="store", default=None,
                    help="device under test, e.g. MOCKAMD, MOCKAMD:gfx942, AMD, CPU (default: $DEV, else MOCKAMD)")


def _spec(config) -> str:
    return config.getoption("dev") or os.environ.get("DEV") or devmod.DEFAULT_SPEC


def pytest_configure(config):
    config.addinivalue_line("markers", "hw: needs a real GPU selected with --dev (AMD, NV, USBAMD)")
    try:
        config._gputwin_targets = devmod.parse_spec(_spec(config))
    except ValueError as e:
        raise pytest.UsageError(f"--dev/$DEV: {e}") from None


def pytest_report_header(config):
    return f"gputwin device under test: {_spec(config)}"


def pytest_collection_modifyitems(config, items):
    targets = getattr(config, "_gputwin_targets", [])
    if any(t.real for t in targets):
        return
    skip = pytest.mark.skip(reason=f"needs a real GPU: run with --dev AMD (or NV, USBAMD); selected {_spec(config)}")
    for item in items:
        if "hw" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def dev_spec(pytestconfig) -> str:
    return _spec(pytestconfig)


@pytest.fixture(scope="session")
def dev(dev_spec):
    d = devmod.open_device(dev_spec)
    yield d
    for one in d if isinstance(d, tuple) else (d,):
        close = getattr(one, "close", None)
        if close is not None:
            close()
