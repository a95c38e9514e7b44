"""The IP discovery table the emulated VBIOS leaves at the top of VRAM (VRAM size - DISCOVERY_TMR_OFFSET), in
the real binary format (gputwin/abi/amdgpu/discovery.py), with the IP versions of the emulated chip and the
segment bases of ip_bases(arch); and RCC_CONFIG_MEMSIZE, the NBIO register that tells the driver the VRAM
size (hence where the table is) before it knows any IP base."""
from __future__ import annotations

from gputwin.abi.amdgpu import ip_bases
from gputwin.abi.amdgpu import discovery as d

# (major, minor, revision) per IP, as amdgpu's discovery code finds them on Navi 31 and Navi 48
IP_VERSIONS = {
    "gfx1100": {"GC": (11, 0, 0), "SDMA0": (6, 0, 0), "SDMA1": (6, 0, 0), "MP0": (13, 0, 0), "MP1": (13, 0, 0),
                "OSSSYS": (6, 0, 0), "NBIO": (4, 3, 0), "MMHUB": (3, 0, 0), "ATHUB": (3, 0, 0), "HDP": (6, 0, 0)},
    "gfx1201": {"GC": (12, 0, 1), "SDMA0": (7, 0, 1), "SDMA1": (7, 0, 1), "MP0": (14, 0, 3), "MP1": (14, 0, 3),
                "OSSSYS": (7, 0, 0), "NBIO": (6, 3, 1), "MMHUB": (4, 1, 0), "ATHUB": (4, 1, 0), "HDP": (7, 0, 0)},
}
BINARY_VERSION = (1, 0)
IP_DISCOVERY_VERSION = 3   # ip_v3 entries with 32-bit bases (Navi 3x / 4x)


def gc_info(profile) -> dict[str, int]:
    """gc_info_v1_0 values for the chip's shader array (WGPs are pairs of CUs)."""
    se = profile.array_count // profile.simd_arrays_per_engine
    return {"gc_num_se": se, "gc_num_wgp0_per_sa": profile.cu_per_simd_array // 2, "gc_num_wgp1_per_sa": 0,
            "gc_num_rb_per_se": 4, "gc_num_gl2c": 16 if se > 4 else 8, "gc_num_gprs": 1536,
            "gc_num_max_gs_thds": 32, "gc_gs_table_depth": 32, "gc_gsprim_buff_depth": 1792,
            "gc_parameter_cache_depth": 1024, "gc_double_offchip_lds_buffer": 1,
            "gc_wave_size": profile.wave_size, "gc_max_waves_per_simd": profile.max_waves_per_simd,
            "gc_max_scratch_slots_per_cu": profile.max_slots_scratch_cu, "gc_lds_size": profile.lds_size_in_kb,
            "gc_num_sc_per_se": 2, "gc_num_sa_per_se": profile.simd_arrays_per_engine,
            "gc_num_packer_per_sc": 4, "gc_num_gl2a": 4}


def _ip_discovery_table(offset: int, versions: dict[str, tuple[int, int, int]],
                        bases: dict[tuple[str, int], tuple[int, ...]], base_bytes: int = 4) -> bytes:
    """The ip_discovery header and its one die (placed at binary offset `offset`): a v3 table with 32-bit
    bases, or with base_bytes=8 a v4 table whose header flags 64-bit bases."""
    entries = b""
    for (ip, inst), segs in sorted(bases.items()):
        entries += d.IP_ENTRY.pack(d.HW_IDS[ip], inst, len(segs), *versions[ip], 0)
        entries += b"".join(s.to_bytes(base_bytes, "little") for s in segs)
    die = d.DIE_HEADER.pack(0, len(bases)) + entries
    die_info = [0, offset + d.IP_DISCOVERY_HEADER.size] + [0, 0] * 15
    size = d.IP_DISCOVERY_HEADER.size + len(die)
    version, flags = (IP_DISCOVERY_VERSION, 0) if base_bytes == 4 else (4, d.BASE_ADDR_64_BIT)
    return d.IP_DISCOVERY_HEADER.pack(d.DISCOVERY_TABLE_SIGNATURE, version, size, 0, 1, *die_info, flags) + die


def _gc_info_table(profile) -> bytes:
    values = gc_info(profile)
    size = d.GPU_INFO_HEADER.size + 4 * len(d.GC_INFO_V1_0_FIELDS)
    return d.GPU_INFO_HEADER.pack(d.GC_TABLE_ID, 1, 0, size) + b"".join(
        values[f].to_bytes(4, "little") for f in d.GC_INFO_V1_0_FIELDS)


def _harvest_table(harvested: tuple[tuple[str, int], ...]) -> bytes:
    entries = [d.HARVEST_ENTRY.pack(d.HW_IDS[ip], inst, 0) for ip, inst in harvested]
    entries += [d.HARVEST_ENTRY.pack(0, 0, 0)] * (32 - len(entries))
    return d.HARVEST_INFO_HEADER.pack(d.HARVEST_TABLE_SIGNATURE, 0) + b"".join(entries)


def build_binary(arch: str, profile, *, binary_major: int = BINARY_VERSION[0],
                 harvested: tuple[tuple[str, int], ...] = (), base_bytes: int = 4) -> bytes:
    """The whole binary: header (v1 with table_list[6], or v2 with num_tables), the ip_discovery table,
    gc_info and the harvest table (listing `harvested` instances, which still have their IP entries). The
    emulated board writes the defaults; the other forms exist so the driver's readers of them are tested."""
    list_at = d.BINARY_HEADER.size + (d.BINARY_HEADER_V2.size if binary_major == 2 else 0)
    ip_offset = list_at + d.TOTAL_TABLES * d.TABLE_INFO.size
    ip_blob = _ip_discovery_table(ip_offset, IP_VERSIONS[arch], ip_bases(arch), base_bytes)
    gc_offset = ip_offset + len(ip_blob)
    gc_blob = _gc_info_table(profile)
    harvest_offset = gc_offset + len(gc_blob)
    harvest_blob = _harvest_table(harvested)
    size = harvest_offset + len(harvest_blob)
    tables = [(ip_offset, ip_blob), (gc_offset, gc_blob), (harvest_offset, harvest_blob)]
    table_list = b"".join(d.TABLE_INFO.pack(o, d.checksum(t), len(t), 0) for o, t in tables)
    table_list += d.TABLE_INFO.pack(0, 0, 0, 0) * (d.TOTAL_TABLES - len(tables))
    blob = bytearray(d.BINARY_HEADER.pack(d.BINARY_SIGNATURE, binary_major, 0, 0, size))
    if binary_major == 2:
        blob += d.BINARY_HEADER_V2.pack(d.TOTAL_TABLES, 0)
    blob += table_list + ip_blob + gc_blob + harvest_blob
    d.BINARY_HEADER.pack_into(blob, 0, d.BINARY_SIGNATURE, binary_major, 0, d.checksum(blob[d.CHECKSUM_START:]),
                              size)
    return bytes(blob)


def attach(function) -> bytes:
    """Write the table where the driver looks for it and register RCC_CONFIG_MEMSIZE."""
    if function.vram_size % (1 << 20):
        raise ValueError(f"{function.name}: VRAM size {function.vram_size:#x} is not a whole number of MiB")
    blob = build_binary(function.arch, function.profile)
    assert len(blob) <= d.DISCOVERY_TMR_SIZE, "discovery binary larger than its reserved area"
    at = function.vram_size - d.DISCOVERY_TMR_OFFSET
    function.vram[at:at + len(blob)] = memoryview(blob)
    function.regs.add_read_only(d.RCC_CONFIG_MEMSIZE, "RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE", function.vram_size >> 20)
    return blob
