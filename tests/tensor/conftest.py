"""Fixtures for the device-agnostic tensor suite: `tdev` is the DeviceContext of --dev / $DEV."""
import pytest

from gputwin.device import TargetNotAvailable
from gputwin.tensor import get_context


@pytest.fixture(scope="session")
def tdev(dev_spec):
    try:
        return get_context(dev_spec)
    except (TargetNotAvailable, ValueError) as e:  # ValueError: a comma list names several devices
        pytest.skip(f"the tensor suite needs one available device, got {dev_spec}: {e}")
