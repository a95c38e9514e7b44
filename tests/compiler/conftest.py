"""Compiler tests compile into a per-session cache directory, never the user's ~/.cache/gputwin."""
import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _compile_cache_dir(tmp_path_factory):
    old = os.environ.get("GPUTWIN_CACHE_DIR")
    os.environ["GPUTWIN_CACHE_DIR"] = str(tmp_path_factory.mktemp("gputwin-cache"))
    yield
    if old is None:
        os.environ.pop("GPUTWIN_CACHE_DIR", None)
    else:
        os.environ["GPUTWIN_CACHE_DIR"] = old


@pytest.fixture(scope="session", autouse=True)
def _device_under_test(pytestconfig, _compile_cache_dir):
    """An explicit `--dev` / $DEV (other than CPU) becomes the device `helpers.run` launches on, so
    `pytest --dev MOCKNV tests/compiler` holds that device to the same numpy references; without one the
    op tests run on the CPU device (test_amdgpu_emu / test_mock_devices cover the emulators by default)."""
    from tests.compiler import helpers
    spec = (pytestconfig.getoption("gputwin_dev") or getattr(pytestconfig.option, "gputwin_dev_alias", None)
            or os.environ.get("DEV"))
    if not spec or spec.upper() == "CPU":
        yield
        return
    from gputwin.device import TargetNotAvailable, open_device
    try:
        dev = open_device(spec)
    except (TargetNotAvailable, ValueError) as e:
        pytest.skip(f"the compiler suite runs on one available device, got {spec}: {e}")
    helpers.DEVICE_UNDER_TEST = dev
    yield
    helpers.DEVICE_UNDER_TEST = None
    dev.close()
