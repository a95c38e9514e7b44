"""The bring-up probe (python -m gputwin.drivers.usb.probe) on an emulated enclosure."""
from gputwin.drivers.usb import probe
from gputwin.emu.amd.soc.function import AmdGpuFunction
from gputwin.mock.usb import usb_gpu


def test_probe_prints_the_chain_the_bars_and_the_windows(capsys):
    backend, _ = usb_gpu(AmdGpuFunction("gfx1201"))
    assert probe.main([], backend=backend) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("product='custom v0.1' ltssm=0x78")
    assert [line.split()[2] for line in lines[1:6]] == ["1b21:2461", "1b21:2461", "1002:1478", "1002:1479",
                                                       "1002:7550"]
    assert "buses=2/3/4" in lines[3] and "class=030000 header=0x00" in lines[5]
    assert lines[6:] == ["bar 0 address=0x800000000 size=0x400000000 64-bit prefetchable",   # 16 GiB VRAM
                         "bar 2 address=0xc00000000 size=0x200000 64-bit prefetchable",
                         "bar 5 address=0x10000000 size=0x100000 32-bit"]
