"""Bad input never crashes the parsers: a mutated discovery binary (with its checksum kept right, so the parser
meets the garbage) or firmware header either parses or raises the module's own error, never IndexError,
struct.error or a hang."""
import shutil

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gputwin.abi.amdgpu import discovery as d
from gputwin.drivers.amd.am.discovery import DiscoveryError, read_discovery
from gputwin.drivers.amd.am.firmware import FIXTURE_DIR, FirmwareError, load_firmware
from gputwin.emu.amd.soc.discovery import build_binary
from gputwin.emu.amd.gpu import PROFILES

VRAM = 1 << 30
BLOB = build_binary("gfx1100", PROFILES["gfx1100"])
AT = VRAM - d.DISCOVERY_TMR_OFFSET


class TableOnly:
    """Stands in for Mmio and Vram: the memory size register and the discovery area, nothing else."""

    def __init__(self, blob: bytes):
        self.blob = blob + bytes(d.DISCOVERY_TMR_SIZE - len(blob))

    def read_dword(self, dword):
        assert dword == d.RCC_CONFIG_MEMSIZE
        return VRAM >> 20

    def read(self, offset, size):
        assert AT <= offset and offset + size <= AT + len(self.blob)
        return self.blob[offset - AT:offset - AT + size]


mutations = st.lists(st.tuples(st.integers(d.CHECKSUM_START + 2, len(BLOB) - 1), st.integers(0, 255)),
                     min_size=1, max_size=8)


@settings(max_examples=120, deadline=None)
@given(mutations, st.booleans())
def test_mutated_discovery_binary_parses_or_raises_discovery_error(changes, fix_checksums):
    blob = bytearray(BLOB)
    for at, value in changes:
        blob[at] = value
    if fix_checksums:   # make every checksum agree, so the parser meets the mutated structure itself
        for table in (d.IP_DISCOVERY, d.GC):
            entry = d.BINARY_HEADER.size + table * d.TABLE_INFO.size
            offset, _sum, size, _pad = d.TABLE_INFO.unpack_from(blob, entry)
            d.TABLE_INFO.pack_into(blob, entry, offset, d.checksum(blob[offset:offset + size]), size, _pad)
        size = int.from_bytes(blob[10:12], "little")
        blob[8:10] = d.checksum(blob[d.CHECKSUM_START:size]).to_bytes(2, "little")
    table = TableOnly(bytes(blob))
    try:
        read_discovery(table, table)
    except DiscoveryError:
        pass


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["gc_12_0_1_mec.bin", "psp_14_0_3_sos.bin", "sdma_7_0_1.bin", "gc_12_0_1_imu.bin",
                        "smu_14_0_3.bin"]),
       st.lists(st.tuples(st.integers(0, 95), st.integers(0, 255)), min_size=1, max_size=6))
def test_mutated_firmware_header_loads_or_raises_firmware_error(tmp_path, name, changes):
    shutil.copytree(FIXTURE_DIR, tmp_path / "fw", dirs_exist_ok=True)
    path = tmp_path / "fw" / name
    data = bytearray(path.read_bytes())
    for at, value in changes:
        if at < len(data):
            data[at] = value
    path.write_bytes(bytes(data))
    try:
        load_firmware("gfx1201", tmp_path / "fw")
    except FirmwareError:
        pass
