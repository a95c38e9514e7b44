"""The USB layer on a real enclosure: `pytest --gputwin-dev USBAMD tests/drivers/usb/test_hw.py` with an
ASM2464 (custom firmware) holding an AMD card. Brings up PCIe only; nothing here boots the GPU, so only
what a cold GPU answers is checked (configuration space, BAR sizes, the bridge SRAM)."""
import numpy as np
import pytest

from gputwin.abi import pcie as regs
from gputwin.drivers.usb import open_usb_pci

pytestmark = pytest.mark.hw
NAVI_DEVICE_IDS = {0x744C, 0x7480, 0x7550}      # Navi 31, Navi 32, Navi 48 (the archs gputwin emulates)


@pytest.fixture
def bridge(dev_spec):
    if not dev_spec.startswith("USBAMD"):
        pytest.skip(f"needs --gputwin-dev USBAMD (a real ASM2464 enclosure), not {dev_spec}")
    dev = open_usb_pci()                        # real libusb
    yield dev
    dev.close()


def test_bring_up_reaches_an_amd_gpu_behind_the_switch(bridge):
    h = bridge.hierarchy
    assert h.vendor_id == 0x1002 and h.device_id in NAVI_DEVICE_IDS and h.endpoint_bus >= 2
    assert bridge.config_read(regs.COMMAND, 2) & (regs.COMMAND_MEM | regs.COMMAND_MASTER) == 6
    assert bridge.assignments[0].size >= 256 << 20 and bridge.assignments[5].size == 1 << 20


def test_sram_window_round_trip(bridge, rng):
    sram = bridge.dma_windows()[0]
    data = rng.integers(0, 256, 64 << 10, np.uint8).tobytes()
    sram.write(0, data)
    assert sram.read(0, len(data)) == data
