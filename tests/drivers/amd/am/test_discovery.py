"""The driver's IP discovery against the emulated table: both ways of reaching VRAM, and every checksum."""
import struct

import pytest

from gputwin.abi.amdgpu import ip_bases
from gputwin.abi.amdgpu import nbio as n
from gputwin.drivers.amd.am.discovery import DiscoveryError, read_discovery
from gputwin.drivers.amd.am.mmio import Mmio
from gputwin.drivers.amd.am.vram import Vram
from gputwin.emu.amd.soc.discovery import build_binary
from tests.drivers.amd.am.conftest import GIB, attach


def discover(pci):
    mmio = Mmio(pci.bar(5))
    return read_discovery(mmio, Vram(pci.bar(0), mmio))


@pytest.mark.parametrize("arch, versions", [
    ("gfx1100", {"GC": (11, 0, 0), "SDMA0": (6, 0, 0), "MP0": (13, 0, 0), "MP1": (13, 0, 0), "OSSSYS": (6, 0, 0),
                 "NBIO": (4, 3, 0), "MMHUB": (3, 0, 0), "HDP": (6, 0, 0)}),
    ("gfx1201", {"GC": (12, 0, 1), "SDMA0": (7, 0, 1), "MP0": (14, 0, 3), "MP1": (14, 0, 3), "OSSSYS": (7, 0, 0),
                 "NBIO": (6, 3, 1), "MMHUB": (4, 1, 0), "HDP": (7, 0, 0)}),
])
def test_round_trip_through_the_mm_index_window(arch, versions):
    f, pci = attach(arch, vram_size=2 * GIB)   # BAR0 stays 256 MiB: the table is out of its reach
    d = discover(pci)
    assert d.vram_size == 2 * GIB
    assert {k: d.versions[k] for k in versions} == versions
    assert d.bases == ip_bases(arch)
    assert d.gc_info["gc_wave_size"] == 32 and d.gc_info["gc_num_se"] == f.profile.array_count // 2
    assert f.regs.value(n.MM_INDEX) & 1 << 31   # the window was used


def test_round_trip_through_a_resized_bar0_skips_the_window():
    f, pci = attach(vram_size=GIB, large_bar=True)
    assert pci.bar(0).size == GIB
    assert discover(pci).versions["GC"] == (11, 0, 0)
    assert f.regs.value(n.MM_INDEX) == 0


def corrupt(f, offset, xor=0x01):
    at = f.vram_size - (64 << 10) + offset
    f.vram[at] ^= xor


def test_corrupt_binary_checksum_is_an_error_naming_it():
    f, pci = attach()
    corrupt(f, 200)   # a byte inside the ip table; the binary sum changes too
    with pytest.raises(DiscoveryError, match="IP discovery binary checksum mismatch"):
        discover(pci)


@pytest.mark.parametrize("table, index", [("IP discovery table", 0), ("gc_info table", 1)])
def test_corrupt_table_checksum_is_an_error_naming_the_table(table, index):
    f, pci = attach()
    at = f.vram_size - (64 << 10)
    entry = 12 + 8 * index + 2   # table_list[index].checksum
    old = struct.unpack_from("<H", f.vram, at + entry)[0]
    struct.pack_into("<H", f.vram, at + entry, (old + 1) & 0xFFFF)
    # keep the binary checksum right, so only the table's own check can catch it
    bin_sum = struct.unpack_from("<H", f.vram, at + 8)[0]
    struct.pack_into("<H", f.vram, at + 8, (bin_sum + 1) & 0xFFFF)
    with pytest.raises(DiscoveryError, match=f"{table} checksum mismatch"):
        discover(pci)


def test_missing_table_is_an_error_naming_the_signature():
    f, pci = attach()
    corrupt(f, 0, 0xFF)
    with pytest.raises(DiscoveryError, match="no IP discovery binary .* signature"):
        discover(pci)


def install(f, blob):
    at = f.vram_size - (64 << 10)
    f.vram[at:at + len(blob)] = memoryview(blob)


def test_binary_header_v2_with_its_table_count_reads_the_same():
    f, pci = attach("gfx1201")
    before = discover(pci)
    install(f, build_binary("gfx1201", f.profile, binary_major=2))
    after = discover(pci)
    assert struct.unpack_from("<H", f.vram, f.vram_size - (64 << 10) + 4)[0] == 2
    assert (after.versions, after.bases, after.gc_info) == (before.versions, before.bases, before.gc_info)


def test_v4_table_with_64_bit_bases_reads_the_same():
    f, pci = attach()
    before = discover(pci)
    install(f, build_binary("gfx1100", f.profile, base_bytes=8))
    at = f.vram_size - (64 << 10) + 60
    assert struct.unpack_from("<H", f.vram, at + 4)[0] == 4 and f.vram[at + 78] & 1   # version, 64-bit flag
    assert discover(pci).bases == before.bases


def test_harvested_instances_are_left_out_of_the_bases():
    f, pci = attach()
    install(f, build_binary("gfx1100", f.profile, harvested=(("SDMA1", 0),)))
    disc = discover(pci)
    assert disc.harvested == {("SDMA1", 0)}
    assert ("SDMA1", 0) not in disc.bases and ("SDMA0", 0) in disc.bases


def test_corrupt_harvest_table_and_unknown_header_version_are_named():
    f, pci = attach()
    blob = bytearray(build_binary("gfx1100", f.profile, harvested=(("SDMA1", 0),)))
    harvest_offset, harvest_sum = struct.unpack_from("<HH", blob, 12 + 8 * 2)
    blob[harvest_offset + 8] ^= 0x40                               # the entry's hw_id
    blob[8:10] = (sum(blob[10:]) & 0xFFFF).to_bytes(2, "little")   # the binary still sums right
    install(f, bytes(blob))
    with pytest.raises(DiscoveryError, match="harvest table checksum mismatch"):
        discover(pci)
    blob[4:6] = (3).to_bytes(2, "little")
    blob[8:10] = (sum(blob[10:]) & 0xFFFF).to_bytes(2, "little")
    install(f, bytes(blob))
    with pytest.raises(DiscoveryError, match="binary header v3 is not one the AM driver reads"):
        discover(pci)
