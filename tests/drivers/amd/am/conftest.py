"""An emulated board attached in-process (no USB), with a small VRAM; optionally BAR0 resized to cover it."""
import shutil

import pytest

from gputwin.drivers.amd.am.firmware import FIXTURE_DIR
from gputwin.emu.amd.soc.board import build
from gputwin.mock.pci import DirectPciDevice

GIB = 1 << 30
REBAR_CONTROL = 0x108   # the Resizable BAR capability's first control register (at 0x100 on this function)


def attach(arch="gfx1100", *, vram_size=GIB, large_bar=False):
    f = build(arch, vram_size=vram_size)
    if large_bar:   # select the BAR0 size that shows all of VRAM, before the BARs get addresses
        f.config_write(REBAR_CONTROL, ((vram_size >> 20).bit_length() - 1) << 8)
    return f, DirectPciDevice(f)


@pytest.fixture
def firmware_copy(tmp_path):
    """A writable copy of the fixture firmware directory, to corrupt."""
    for p in FIXTURE_DIR.iterdir():
        shutil.copy(p, tmp_path / p.name)
    return tmp_path
