import re
import sys

import pytest

from gputwin import device as devmod
from gputwin.device import Target, TargetNotAvailable, parse_spec, parse_target


@pytest.mark.parametrize("text,expected", [
    ("MOCKAMD", Target("AMD", True)),
    ("mockamd:gfx942", Target("AMD", True, arch="gfx942")),
    ("MOCKAMD:gfx1201", Target("AMD", True, arch="gfx1201")),
    ("MOCKAMD:1", Target("AMD", True, index=1)),
    ("AMD", Target("AMD")),
    ("AMD:0", Target("AMD", index=0)),
    ("NV:sm_90", Target("NV", arch="sm_90")),
    ("MOCKNV", Target("NV", True)),
    ("USBAMD", Target("USBAMD")),
    ("MOCKUSBAMD:gfx1100", Target("USBAMD", True, arch="gfx1100")),
    ("CPU", Target("CPU")),
])
def test_valid_targets_parse(text, expected):
    assert parse_target(text) == expected


@pytest.mark.parametrize("text", ["NOPE", "MOCKCPU", "AMD:gfx9999", "NV:gfx1100", "AMD:sm_90", "CPU:0",
                                  "MOCK", "AMD:", "MOCKMOCKAMD"])
def test_invalid_targets_list_the_valid_spellings(text):
    with pytest.raises(ValueError, match=re.escape(repr(text.strip()))) as e:
        parse_target(text)
    assert "valid spellings" in str(e.value) and "MOCKAMD" in str(e.value) and "gfx942" in str(e.value)


def test_spec_round_trips_through_its_spelling():
    for text in ["MOCKAMD", "MOCKAMD:gfx942", "AMD:1", "NV:sm_80", "CPU"]:
        assert parse_target(text).spec == text


def test_lists_are_comma_separated():
    assert parse_spec("MOCKAMD:gfx1100, CPU") == [Target("AMD", True, arch="gfx1100"), Target("CPU")]


@pytest.mark.parametrize("spec", ["", "MOCKAMD,", ",CPU", " , "])
def test_empty_entries_are_errors(spec):
    with pytest.raises(ValueError, match="^empty device in " + re.escape(repr(spec))):
        parse_spec(spec)


def test_default_is_mockamd(monkeypatch):
    monkeypatch.delenv("DEV", raising=False)
    assert parse_spec() == [Target("AMD", True)]


def test_dev_environment_is_read(monkeypatch):
    monkeypatch.setenv("DEV", "CPU")
    assert parse_spec() == [Target("CPU")]
    assert parse_spec("MOCKAMD") == [Target("AMD", True)]  # an explicit spec beats $DEV


def test_mock_layout_builds_one_machine():
    t = parse_spec("MOCKAMD:gfx1100,MOCKAMD:gfx942")
    assert devmod._mock_layout(t) == (["gfx1100", "gfx942"], [0, 1])
    assert devmod._mock_layout(parse_spec("MOCKAMD:1")) == (["gfx1100", "gfx1100"], [1])
    assert devmod._mock_layout(parse_spec("MOCKAMD,MOCKAMD")) == (["gfx1100", "gfx1100"], [0, 1])


def test_missing_usb_enclosure_says_what_was_looked_for_and_never_falls_back():
    with pytest.raises(TargetNotAvailable, match="ASM2464.*use MOCKUSBAMD"):
        devmod.open_device("USBAMD")


@pytest.mark.parametrize("spec,arch", [("MOCKUSBAMD", "gfx1100"), ("MOCKUSBAMD:gfx1201", "gfx1201")])
def test_mock_usbamd_boots_the_emulated_board_behind_the_bridge(spec, arch):
    from gputwin.drivers.usb import UsbPciDevice
    dev = devmod.open_device(spec)
    assert dev.arch == arch and dev.name == f"MOCKUSBAMD ({arch})" and isinstance(dev.pci, UsbPciDevice)
    assert devmod.emulated_gpu(dev).arch == arch
    dev.close()
    with pytest.raises(TargetNotAvailable, match="pick its arch"):
        devmod.open_device("MOCKUSBAMD:1")
    with pytest.raises(TargetNotAvailable, match="models gfx1100, gfx1201"):
        devmod.open_device("MOCKUSBAMD:gfx942")


def test_missing_real_nvidia_gpu_says_what_was_looked_for(monkeypatch):
    monkeypatch.setattr("gputwin.drivers.kernel.HostKernel.exists", lambda self, path: False)
    with pytest.raises(TargetNotAvailable, match="/dev/nvidiactl, /dev/nvidia-uvm"):
        devmod.open_device("NV")


def test_mock_nv_models_sm90_and_sm80_only():
    with pytest.raises(TargetNotAvailable, match="models sm_90, sm_80, not sm_75"):
        devmod.open_device("MOCKNV:sm_75")
    a, b = devmod.open_device("MOCKNV:1,MOCKNV:sm_80")
    assert (a.arch, b.arch, a.index, b.index) == ("sm_90", "sm_80", 1, 2)
    a.close()
    b.close()


def test_missing_real_amd_gpu_says_what_was_looked_for(monkeypatch):
    monkeypatch.setattr("gputwin.drivers.kernel.HostKernel.exists", lambda self, path: False)
    with pytest.raises(TargetNotAvailable, match="/dev/kfd"):
        devmod.open_device("AMD")


@pytest.mark.parametrize("spec, module", [("MOCKAMD", "gputwin.mock.kfd"), ("MOCKNV", "gputwin.mock.nvidia"),
                                          ("CPU", "gputwin.drivers.cpu")])
def test_a_broken_import_of_gputwins_own_target_is_an_error_not_unavailable(monkeypatch, spec, module):
    """A mock target (and the CPU) are part of gputwin: a module that fails to import is a bug to report,
    never TargetNotAvailable, which the device-agnostic suites would turn into skips."""
    monkeypatch.setitem(sys.modules, module, None)      # `import` of it now raises ImportError
    with pytest.raises(ImportError, match=module.replace(".", r"\.")) as e:
        devmod.open_device(spec)
    assert not isinstance(e.value, TargetNotAvailable)
