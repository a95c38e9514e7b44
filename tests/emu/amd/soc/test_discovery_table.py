"""The emulated VBIOS's IP discovery binary, checked field by field against discovery.h's layout with offsets
written out here (not through the parser under test), and the RCC_CONFIG_MEMSIZE register."""
import struct

import pytest

from gputwin.abi.amdgpu import ip_bases
from gputwin.emu.amd.soc.board import build
from gputwin.emu.amd.soc.regfile import RegisterError

GIB = 1 << 30


def table_bytes(function) -> bytes:
    at = function.vram_size - (64 << 10)
    return function.vram[at:at + (10 << 10)].tobytes()


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_binary_header_signature_size_and_checksum(arch):
    blob = table_bytes(build(arch, vram_size=GIB))
    signature, vmaj, _vmin, checksum, size = struct.unpack_from("<IHHHH", blob)
    assert signature == 0x28211407 and vmaj == 1
    assert checksum == sum(blob[10:size]) & 0xFFFF      # byte sum after the checksum field
    ip_off, ip_sum, ip_size, _ = struct.unpack_from("<HHHH", blob, 12)   # table_list[IP_DISCOVERY]
    assert ip_off == 12 + 6 * 8
    assert struct.unpack_from("<I", blob, ip_off)[0] == 0x53445049       # "IPDS"
    assert sum(blob[ip_off:ip_off + ip_size]) & 0xFFFF == ip_sum
    gc_off, gc_sum, gc_size, _ = struct.unpack_from("<HHHH", blob, 12 + 8)
    assert struct.unpack_from("<I", blob, gc_off)[0] == 0x4347           # GC_TABLE_ID
    assert sum(blob[gc_off:gc_off + gc_size]) & 0xFFFF == gc_sum


@pytest.mark.parametrize("arch, gc, mp, hwids", [
    ("gfx1100", (11, 0, 0), (13, 0, 0), {11, 42, 43, 255, 1, 40, 108, 34, 35, 41}),
    ("gfx1201", (12, 0, 1), (14, 0, 3), {11, 42, 43, 255, 1, 40, 108, 34, 35, 41}),
])
def test_ip_entries_carry_hw_ids_versions_and_bases(arch, gc, mp, hwids):
    blob = table_bytes(build(arch, vram_size=GIB))
    ip_off = 60
    num_dies = struct.unpack_from("<H", blob, ip_off + 12)[0]
    die_off = struct.unpack_from("<H", blob, ip_off + 14 + 2)[0]       # die_info[0].die_offset
    assert num_dies == 1
    _die_id, num_ips = struct.unpack_from("<HH", blob, die_off)
    at, seen = die_off + 4, {}
    for _ in range(num_ips):
        hw_id, inst, nbases, major, minor, rev = struct.unpack_from("<HBBBBB", blob, at)
        seen[hw_id] = ((major, minor, rev), struct.unpack_from(f"<{nbases}I", blob, at + 8), inst)
        at += 8 + 4 * nbases
    assert set(seen) == hwids
    assert seen[11][0] == gc and seen[255][0] == mp
    assert seen[11][1] == ip_bases(arch)[("GC", 0)]
    assert seen[108][1][:3] == (0, 0x14, 0xD20)                         # NBIO segments


def test_memsize_register_reports_vram_in_mib_and_is_read_only():
    f = build("gfx1100", vram_size=2 * GIB)
    assert f.regs.read(0xDE3) == 2048
    with pytest.raises(RegisterError, match="read-only RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE"):
        f.regs.write(0xDE3, 1)


def test_vram_size_must_be_whole_mib():
    with pytest.raises(ValueError, match="whole number of MiB"):
        build("gfx1100", vram_size=GIB + 4096)


def test_harvest_table_is_present_signed_and_empty():
    blob = table_bytes(build("gfx1201", vram_size=GIB))
    off, csum, size, _ = struct.unpack_from("<HHHH", blob, 12 + 8 * 2)   # table_list[HARVEST_INFO]
    assert size == 8 + 32 * 4 and sum(blob[off:off + size]) & 0xFFFF == csum
    assert struct.unpack_from("<I", blob, off)[0] == 0x56524148           # "HARV"
    assert blob[off + 8:off + size] == bytes(128)
