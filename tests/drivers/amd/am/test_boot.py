"""The AM boot end to end on the emulated board (both chips), and each step's failure: the error names the step,
and carries the status the emulated hardware returned."""
import struct

import pytest

from gputwin.abi.amdgpu import psp as p
from gputwin.abi.amdgpu import smu as s
from gputwin.drivers.amd.am import boot as boot_module
from gputwin.drivers.amd.am.boot import BootError, boot
from gputwin.drivers.amd.am.firmware import load_firmware
from gputwin.drivers.amd.am.psp import PspError
from gputwin.drivers.amd.am.smu import SmuError
from tests.drivers.amd.am.conftest import attach


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_boot_loads_the_firmware_and_starts_the_smu(arch):
    f, pci = attach(arch)
    b = boot(pci)
    assert b.arch == arch and b.mc_base == f.fb.base
    assert set(f.firmware) == {name for name, _ in load_firmware(arch).ip_firmware}
    assert f.blocks["psp"].autoloaded and f.doorbells.enabled
    assert b.sos_version == f.blocks["psp"].sos_version != 0
    assert b.smu_version == b.smu.send(s.PPSMC_MSG_GetSmuVersion) != 0
    assert f.blocks["smu"].enabled_features != 0
    assert f.blocks["nbio"].hdp_flushes >= len(f.firmware)      # one per staged image at least
    commands = [name for name, status in f.blocks["psp"].log if not name.startswith(("BL", "CTRL"))]
    tmr = ["SETUP_TMR"] if arch == "gfx1100" else []   # MP0 14.x reserves its TMR at boot
    assert commands[:2 + len(tmr)] == ["LOAD_TOC", "LOAD_IP_FW"] + tmr and commands[-1] == "AUTOLOAD_RLC"
    assert commands.count("SETUP_TMR") == len(tmr)
    assert b.reserved == (0, 32 << 20)


def test_after_boot_an_unknown_psp_command_and_smu_message_get_their_real_codes():
    _f, pci = attach()
    b = boot(pci)
    with pytest.raises(PspError, match=r"bogus failed: status 0x100 \(PSP_ERR_UNKNOWN_COMMAND\)") as e:
        b.psp.submit(0x7F, b"", "bogus")
    assert e.value.status == p.PSP_ERR_UNKNOWN_COMMAND
    with pytest.raises(SmuError, match=r"message 0x99\(0x0\): result 0xfe \(UnknownCmd\)") as e:
        b.smu.send(0x99)
    assert e.value.result == s.PPSMC_Result_UnknownCmd


def flip_last_byte(path):
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))


def test_tampered_ucode_is_refused_by_the_psp_at_load_ip_fw(firmware_copy):
    flip_last_byte(firmware_copy / "gc_11_0_0_rlc.bin")   # RLC_V, the last piece; the header still validates
    _f, pci = attach()
    with pytest.raises(BootError, match=r"step 'psp firmware'.*LOAD_IP_FW RLC_V failed: status 0xffff000f "
                                        r"\(TEE_ERROR_SECURITY\)") as e:
        boot(pci, firmware_dir=firmware_copy)
    assert e.value.step == "psp firmware" and e.value.cause.status == p.TEE_ERROR_SECURITY


def test_tampered_sos_component_stops_the_bootloader(firmware_copy):
    path = firmware_copy / "psp_14_0_3_sos.bin"
    data = bytearray(path.read_bytes())
    header_size = struct.unpack_from("<I", data, 4)[0]
    data[header_size + 16] ^= 1                            # first payload byte of the first component (KDB)
    path.write_bytes(bytes(data))
    _f, pci = attach("gfx1201")
    with pytest.raises(BootError, match=r"step 'psp bootloader'.*failed to load KDB: status 0x1"):
        boot(pci, firmware_dir=firmware_copy)


def without(arch, *, component=None, piece=None):
    fw = load_firmware(arch)
    fw.sos_components.pop(component, None)
    fw.ip_firmware = [(n, d) for n, d in fw.ip_firmware if n != piece]
    return lambda *_args: fw


def test_sos_without_its_system_driver_never_starts(monkeypatch):
    monkeypatch.setattr(boot_module, "load_firmware", without("gfx1100", component=p.PSP_FW_TYPE_PSP_SYS_DRV))
    _f, pci = attach()
    with pytest.raises(BootError, match=r"step 'psp bootloader'.*sOS did not start \(bootloader status 0x2\)"):
        boot(pci, timeout=0.02)


def test_sos_firmware_without_a_toc_is_named(monkeypatch):
    monkeypatch.setattr(boot_module, "load_firmware", without("gfx1100", component=p.PSP_FW_TYPE_PSP_TOC))
    _f, pci = attach()
    with pytest.raises(BootError, match=r"step 'psp firmware'.*no TOC component"):
        boot(pci)


def test_autoload_without_the_imu_is_refused(monkeypatch):
    monkeypatch.setattr(boot_module, "load_firmware", without("gfx1100", piece="IMU_I"))
    _f, pci = attach()
    with pytest.raises(BootError, match=r"step 'rlc autoload'.*AUTOLOAD_RLC failed: status 0xffff0007 "
                                        r"\(TEE_ERROR_BAD_STATE\)"):
        boot(pci)


def test_smu_without_its_firmware_never_answers(monkeypatch):
    monkeypatch.setattr(boot_module, "load_firmware", without("gfx1201", piece="SMU"))
    _f, pci = attach("gfx1201")
    with pytest.raises(BootError, match=r"step 'smu'.*SMU did not answer GetSmuVersion"):
        boot(pci, timeout=0.02)


def test_bad_firmware_header_stops_before_touching_the_psp(firmware_copy):
    (firmware_copy / "sdma_6_0_0.bin").write_bytes(b"\0" * 16)
    f, pci = attach()
    with pytest.raises(BootError, match=r"step 'firmware files'.*sdma_6_0_0.bin: 16 bytes, shorter than"):
        boot(pci, firmware_dir=firmware_copy)
    assert f.blocks["psp"].log == []


def test_corrupt_discovery_table_fails_the_discovery_step():
    f, pci = attach()
    f.vram[f.vram_size - (64 << 10) + 100] ^= 0xFF
    with pytest.raises(BootError, match=r"step 'discovery'.*checksum mismatch"):
        boot(pci)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_a_warm_chip_is_mode1_reset_and_boots_again(arch):
    f, pci = attach(arch)
    boot(pci)
    first = dict(f.firmware)
    b = boot(pci)   # a second session on the same, still running chip
    assert ("Mode1Reset", s.PPSMC_Result_OK) in f.blocks["smu"].log
    assert set(f.firmware) == set(first) and f.blocks["psp"].autoloaded and f.doorbells.enabled
    assert f.blocks["smu"].enabled_features != 0 and b.sos_version != 0


def test_mode1_reset_forgets_every_firmware_and_closes_the_doorbells():
    f, pci = attach()
    b = boot(pci)
    b.smu.mode1_reset()
    assert f.firmware == {} and not f.blocks["psp"].sos_version and not f.doorbells.enabled
    assert not b.psp.sos_alive()
    with pytest.raises(SmuError, match="SMU did not answer GetSmuVersion"):
        b.smu.timeout = 0.01
        b.smu.send(s.PPSMC_MSG_GetSmuVersion)


def test_psp_ring_wraps_around_after_a_ring_full_of_commands():
    f, pci = attach()
    b = boot(pci)
    toc = b.firmware.sos_components[p.PSP_FW_TYPE_PSP_TOC]
    frames = 0x10000 // 64
    for _ in range(frames + 5):   # past the end of the 64 KiB ring: the write pointer goes back to 0
        assert b.psp.load_toc(toc) > 0
    ring_commands = [c for c, _ in f.blocks["psp"].log if not c.startswith(("BL", "CTRL"))]
    assert len(ring_commands) > frames
    assert f.blocks["psp"].ring_rptr == b.mmio.read(p.C2PMSG_67) == (16 * len(ring_commands)) % (16 * frames)
