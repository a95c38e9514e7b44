"""The driver's firmware loader: headers validated against the file, the PSP load list per chip, errors that
name the file and what is wrong."""
import importlib.util
import lzma
import pathlib
import struct

import pytest

from gputwin.drivers.amd.am.firmware import FirmwareError, load_firmware

RLC_V2_3 = ["RLC_IRAM", "RLC_DRAM_BOOT", "RLC_P", "RLC_V", "RLC_G"]
GFX1100_ORDER = ["SMU", "SDMA_UCODE_TH0", "SDMA_UCODE_TH1", "RS64_MEC", "RS64_MEC_P0_STACK", "IMU_I", "IMU_D",
                 *RLC_V2_3]
GFX1201_ORDER = ["SMU", "SDMA_UCODE_TH0", "RS64_PFP", "RS64_PFP_P0_STACK", "RS64_ME", "RS64_ME_P0_STACK",
                 "RS64_MEC", "RS64_MEC_P0_STACK", "IMU_I", "IMU_D", *RLC_V2_3]


@pytest.mark.parametrize("arch, order", [("gfx1100", GFX1100_ORDER), ("gfx1201", GFX1201_ORDER)])
def test_load_list_per_chip_and_pieces_are_the_signed_images(arch, order):
    fw = load_firmware(arch)
    assert [name for name, _ in fw.ip_firmware] == order
    assert sorted(fw.sos_components) == [1, 2, 3, 4, 5, 7, 8, 9, 10]   # SOS, SYS, KDB, TOC, SPL, SOC, INTF, DBG, RAS
    for _name, data in fw.ip_firmware + [(None, d) for d in fw.sos_components.values()]:
        assert data[:4] == b"GTFW" and len(data) == 16 + struct.unpack_from("<I", data, 8)[0]


def make_tool():
    path = pathlib.Path(__file__).resolve().parents[4] / "tools" / "make_am_firmware.py"
    spec = importlib.util.spec_from_file_location("make_am_firmware", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("minor, pieces", [
    (0, ["RLC_G"]),
    (1, ["RLC_RESTORE_LIST_SRM_CNTL", "RLC_RESTORE_LIST_GPM_MEM", "RLC_RESTORE_LIST_SRM_MEM", "RLC_G"]),
    (2, ["RLC_IRAM", "RLC_DRAM_BOOT", "RLC_G"]),
    (3, RLC_V2_3),
])
def test_every_rlc_header_minor_yields_its_pieces(firmware_copy, minor, pieces):
    (firmware_copy / "gc_11_0_0_rlc.bin").write_bytes(make_tool().rlc("gfx1100", minor))
    loaded = load_firmware("gfx1100", firmware_copy).ip_firmware
    rlc = [(n, d) for n, d in loaded if n.startswith("RLC")]
    assert [n for n, _ in rlc] == pieces
    for name, data in rlc:   # each piece is the signed image built for exactly that ucode type
        assert struct.unpack_from("<4sI", data) == (b"GTFW", make_tool().p.GFX_FW_TYPE[name])


def test_rlc_piece_outside_the_file(firmware_copy):
    patch(firmware_copy / "gc_11_0_0_rlc.bin", 184, "<I", 0xFFFF0)     # rlcp_ucode_offset_bytes
    with pytest.raises(FirmwareError, match="gc_11_0_0_rlc.bin: RLC_P at 0xffff0"):
        load_firmware("gfx1100", firmware_copy)


def patch(path, offset, fmt, value):
    data = bytearray(path.read_bytes())
    struct.pack_into(fmt, data, offset, value)
    path.write_bytes(bytes(data))


def test_declared_size_must_match_the_file(firmware_copy):
    path = firmware_copy / "smu_13_0_0.bin"
    path.write_bytes(path.read_bytes() + b"\0")
    with pytest.raises(FirmwareError, match="smu_13_0_0.bin: header says 108 bytes, the file has 109"):
        load_firmware("gfx1100", firmware_copy)


def test_ucode_array_outside_the_file(firmware_copy):
    patch(firmware_copy / "gc_11_0_0_mec.bin", 20, "<I", 0x10000)   # ucode_size_bytes
    with pytest.raises(FirmwareError, match="gc_11_0_0_mec.bin: .* do not fit"):
        load_firmware("gfx1100", firmware_copy)


def test_piece_outside_the_file(firmware_copy):
    patch(firmware_copy / "gc_11_0_0_mec.bin", 32 + 16, "<I", 0x1000)   # data_offset_bytes (the stack)
    with pytest.raises(FirmwareError, match="gc_11_0_0_mec.bin: MEC stack at 0x1000"):
        load_firmware("gfx1100", firmware_copy)


def test_header_version_the_driver_does_not_read(firmware_copy):
    patch(firmware_copy / "gc_11_0_0_rlc.bin", 10, "<H", 4)          # header_version_minor: RLC v2.4
    with pytest.raises(FirmwareError, match="gc_11_0_0_rlc.bin: header v2.4 is not one the AM driver reads"):
        load_firmware("gfx1100", firmware_copy)


def test_missing_file_names_the_path(firmware_copy):
    (firmware_copy / "sdma_7_0_1.bin").unlink()
    with pytest.raises(FirmwareError, match="sdma_7_0_1.bin: firmware file not found"):
        load_firmware("gfx1201", firmware_copy)


def test_xz_compressed_files_as_distributions_ship_them(firmware_copy):
    path = firmware_copy / "gc_11_0_0_imu.bin"
    path.with_name(path.name + ".xz").write_bytes(lzma.compress(path.read_bytes()))
    original = load_firmware("gfx1100", firmware_copy).ip_firmware
    path.unlink()
    assert load_firmware("gfx1100", firmware_copy).ip_firmware == original
