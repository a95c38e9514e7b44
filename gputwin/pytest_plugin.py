"""pytest plugin (entry point `pytest11: gputwin`): pick the device under test.

It is loaded into every pytest run in an environment where gputwin is installed, so it must not change
the outcome of a test that is not gputwin's:
- `--gputwin-dev SPEC` (default $DEV, else MOCKAMD) selects the target; `--dev` is an alias for it only
  when the project's own initial conftests did not register a `--dev` (checked after they load). A bad
  spelling given on the command line stops the run at start; a bad $DEV (which may belong to another
  tool) only fails the tests that ask for gputwin's fixtures.
- `dev_spec` fixture: the selected spec string. `dev` fixture: the device (a tuple of devices when the
  spec names several), opened once per worker and handed to each test; a test that leaves it lost
  (DeviceLost after a fault or hang) gets it closed and reopened for the next test.
- `each_dev` fixture: one device; a test that asks for it runs once per selected device (parametrised,
  ids are the specs: `test_x[MOCKAMD:gfx1100]`, `test_x[MOCKAMD:gfx942]`). Only gputwin's own `each_dev`
  is parametrised: a project defining a fixture of that name keeps it as it is.
- `--gputwin-sanitize LIST` sets GPUTWIN_SANITIZE (memcheck, initcheck, racecheck, synccheck or all) for
  the run, so gputwin's emulated GPUs check every dispatch (docs/sanitizers.md); nothing else reads it.
  Given, it prints the sanitizers' tally at the end of the run (xdist workers' tallies summed).
- Tests carrying an explicit `@pytest.mark.hw` marker run only when a real device is selected, else they
  are skipped saying so. Package, module, class and parameter names never count.
"""
from __future__ import annotations

import argparse
import os

import pytest

from gputwin import device as devmod

_HELP = "device under test, e.g. MOCKAMD, MOCKAMD:gfx942, AMD, CPU (default: $DEV, else MOCKAMD)"


def pytest_addoption(parser):
    group = parser.getgroup("gputwin")
    group.addoption("--gputwin-dev", dest="gputwin_dev", default=None, help=_HELP)
    group.addoption("--gputwin-sanitize", dest="gputwin_sanitize", default=None, metavar="LIST",
                    help="check emulated GPU work: memcheck,initcheck,racecheck,synccheck or all "
                         "(sets GPUTWIN_SANITIZE for the run)")


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Add the short `--dev` alias once the project's initial conftests have registered their options,
    and only if none of them took `--dev` (or the `dev` destination) for itself."""
    result = yield
    taken = _registered(parser)
    if taken is not None and "--dev" not in taken and "dev" not in taken:
        try:
            parser.getgroup("gputwin").addoption("--dev", dest="gputwin_dev_alias", default=None,
                                                 help=f"alias of --gputwin-dev: {_HELP}")
        except (ValueError, argparse.ArgumentError):   # registered some other way: leave it to its owner
            pass
    return result


def _registered(parser) -> set[str] | None:
    """Option strings and destinations registered so far; None where this pytest's parser does not
    expose them (then no alias is added: never risk another project's option)."""
    try:
        return {name for group in (*parser._groups, parser._anonymous) for opt in group.options
                for name in (*opt.names(), opt.dest)}
    except (AttributeError, TypeError):
        return None


def _explicit(config) -> str | None:
    return config.getoption("gputwin_dev") or getattr(config.option, "gputwin_dev_alias", None)


def _spec(config) -> str:
    return _explicit(config) or os.environ.get("DEV") or devmod.DEFAULT_SPEC


def pytest_configure(config):
    config.addinivalue_line("markers", "hw: needs a real GPU selected with --gputwin-dev (AMD, NV, USBAMD)")
    _sanitize(config)
    config._gputwin_targets, config._gputwin_error = None, None
    try:
        config._gputwin_targets = devmod.parse_spec(_spec(config))
    except ValueError as e:
        if _explicit(config):
            raise pytest.UsageError(f"--gputwin-dev (--dev): {e}") from None
        config._gputwin_error = f"$DEV={os.environ.get('DEV')!r} is not a gputwin device: {e}"


def _sanitize(config) -> None:
    """Set GPUTWIN_SANITIZE from --gputwin-sanitize for this run (restored at unconfigure)."""
    wanted = config.getoption("gputwin_sanitize")
    config._gputwin_sanitize_saved = None
    if wanted is None:
        return
    from gputwin import sanitizer_config
    try:
        sanitizer_config.checkers({"GPUTWIN_SANITIZE": wanted})
    except ValueError as e:
        raise pytest.UsageError(f"--gputwin-sanitize: {e}") from None
    config._gputwin_sanitize_saved = (os.environ.get("GPUTWIN_SANITIZE"),)
    os.environ["GPUTWIN_SANITIZE"] = wanted


def pytest_unconfigure(config):
    saved = getattr(config, "_gputwin_sanitize_saved", None)
    if saved is None:
        return
    if saved[0] is None:
        os.environ.pop("GPUTWIN_SANITIZE", None)
    else:
        os.environ["GPUTWIN_SANITIZE"] = saved[0]


def _sanitizing(config) -> bool:
    return getattr(config, "_gputwin_sanitize_saved", None) is not None


def pytest_sessionfinish(session):
    """An xdist worker hands its sanitizer tally to the controller (which prints the sum)."""
    config = session.config
    if _sanitizing(config) and hasattr(config, "workeroutput"):
        from gputwin.emu.sanitizer.report import TALLY
        config.workeroutput["gputwin_sanitizer"] = TALLY.counts()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    counts = getattr(node, "workeroutput", {}).get("gputwin_sanitizer")
    if counts is not None:
        from gputwin.emu.sanitizer.report import TALLY
        TALLY.add(counts)


def pytest_terminal_summary(terminalreporter, config):
    if _sanitizing(config):
        from gputwin.emu.sanitizer.report import TALLY
        terminalreporter.write_line(TALLY.summary())


def pytest_report_header(config):
    if config._gputwin_error:
        return f"gputwin device under test: none ({config._gputwin_error})"
    return f"gputwin device under test: {_spec(config)}"


def pytest_collection_modifyitems(config, items):
    targets = config._gputwin_targets or []
    if any(t.real for t in targets):
        return
    skip = pytest.mark.skip(reason="needs a real GPU: run with --gputwin-dev AMD (or NV, USBAMD); "
                                   f"selected {_spec(config)}")
    for item in items:
        if item.get_closest_marker("hw") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def dev_spec(pytestconfig) -> str:
    if pytestconfig._gputwin_error:
        pytest.fail(pytestconfig._gputwin_error, pytrace=False)
    return _spec(pytestconfig)


def _devices(d) -> tuple:
    return d if isinstance(d, tuple) else (d,)


def _close(d) -> None:
    for one in _devices(d):
        close = getattr(one, "close", None)
        if close is not None:
            close()


def _usable(d) -> bool:
    """Whether every device still takes work: synchronize raises DeviceLost (or the error that lost it)."""
    try:
        for one in _devices(d):
            one.synchronize()
    except Exception:   # noqa: BLE001 - any failure here means the next test must not get this device
        return False
    return True


class _DeviceHolder:
    """The worker's open device, reopened when a test left it lost."""

    def __init__(self, spec: str):
        self.spec, self.device = spec, None

    def get(self):
        if self.device is None:
            self.device = devmod.open_device(self.spec)
        return self.device

    def check(self) -> None:
        if self.device is not None and not _usable(self.device):
            self.close()

    def close(self) -> None:
        d, self.device = self.device, None
        if d is not None:
            _close(d)


@pytest.fixture(scope="session")
def _gputwin_device_holder(dev_spec):
    holder = _DeviceHolder(dev_spec)
    yield holder
    holder.close()


@pytest.fixture
def dev(_gputwin_device_holder):
    yield _gputwin_device_holder.get()
    _gputwin_device_holder.check()


def pytest_generate_tests(metafunc):
    """One case per selected device for tests that ask for gputwin's `each_dev` (and only those)."""
    if "each_dev" not in metafunc.fixturenames or not _ours(metafunc, "each_dev"):
        return
    targets = metafunc.config._gputwin_targets or []
    ids = [t.spec for t in targets] or ["no-device"]   # a bad $DEV: one case, which fails saying why
    try:
        metafunc.parametrize("each_dev", list(range(len(ids))), indirect=True, ids=ids)
    except ValueError:   # the test parametrises each_dev itself: leave it so
        pass


def _ours(metafunc, name: str) -> bool:
    """Whether the fixture `name` a test would get is this plugin's (not a project's of the same name)."""
    defs = getattr(metafunc, "_arg2fixturedefs", {}).get(name)
    return bool(defs) and getattr(defs[-1].func, "__module__", None) == __name__


@pytest.fixture(scope="session")
def _gputwin_each_holders(pytestconfig, dev_spec, _gputwin_device_holder):
    """A holder per selected device; with a single device it is the one `dev` uses."""
    targets = pytestconfig._gputwin_targets
    holders = [_gputwin_device_holder] if len(targets) == 1 else [_DeviceHolder(t.spec) for t in targets]
    yield holders
    for h in holders[1:] if len(targets) == 1 else holders:
        h.close()


@pytest.fixture
def each_dev(request, _gputwin_each_holders):
    index = getattr(request, "param", None)
    if index is None:
        pytest.fail("each_dev is parametrised by gputwin's plugin (pytest_generate_tests); it cannot be requested "
                    "dynamically", pytrace=False)
    holder = _gputwin_each_holders[index]
    yield holder.get()
    holder.check()
