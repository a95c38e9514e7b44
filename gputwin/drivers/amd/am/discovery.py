"""IP discovery (amdgpu_discovery.c): find the chip's IP blocks, versions and register bases in the table the
VBIOS left at VRAM size - 64 KiB. The VRAM size comes from RCC_CONFIG_MEMSIZE, a fixed NBIO register.
Every checksum is checked; a table that fails one raises DiscoveryError naming the table."""
from __future__ import annotations

from dataclasses import dataclass

from gputwin.abi.amdgpu import discovery as d
from gputwin.drivers.amd.am.mmio import Mmio
from gputwin.drivers.amd.am.vram import Vram


class DiscoveryError(RuntimeError):
    pass


@dataclass
class Discovery:
    vram_size: int
    versions: dict[str, tuple[int, int, int]]           # IP name -> (major, minor, revision)
    bases: dict[tuple[str, int], tuple[int, ...]]       # (IP name, instance) -> segment bases (dwords)
    gc_info: dict[str, int]
    harvested: set[tuple[str, int]]                     # instances the harvest table disables (not in bases)


def read_discovery(mmio: Mmio, vram: Vram) -> Discovery:
    vram_size = mmio.read_dword(d.RCC_CONFIG_MEMSIZE) << 20
    if vram_size <= d.DISCOVERY_TMR_OFFSET:
        raise DiscoveryError(f"RCC_CONFIG_MEMSIZE reports {vram_size >> 20} MiB of VRAM: no room for a discovery table")
    at = vram_size - d.DISCOVERY_TMR_OFFSET
    header = vram.read(at, d.BINARY_HEADER_SIZE)   # read the header first: the binary is far smaller than 10 KiB
    signature, major, _minor, bin_checksum, bin_size = d.BINARY_HEADER.unpack_from(header)
    if signature != d.BINARY_SIGNATURE:
        raise DiscoveryError(f"no IP discovery binary at VRAM {at:#x}: signature {signature:#x}, "
                             f"expected {d.BINARY_SIGNATURE:#x}")
    if not d.BINARY_HEADER_SIZE <= bin_size <= d.DISCOVERY_TMR_SIZE:
        raise DiscoveryError(f"IP discovery binary size {bin_size} is outside [{d.BINARY_HEADER_SIZE}, "
                             f"{d.DISCOVERY_TMR_SIZE}]")
    blob = vram.read(at, -(-bin_size // 4) * 4)[:bin_size]
    _check("IP discovery binary", blob[d.CHECKSUM_START:], bin_checksum)
    tables = _table_list(blob, major)
    versions, bases = _parse_ips(blob, *tables[d.IP_DISCOVERY][:2])
    gc_info = _parse_gc_info(blob, *tables[d.GC][:2]) if tables[d.GC][0] else {}
    harvested = _parse_harvest(blob, *tables[d.HARVEST_INFO][:2]) if tables[d.HARVEST_INFO][0] else set()
    bases = {key: segs for key, segs in bases.items() if key not in harvested}
    return Discovery(vram_size, versions, bases, gc_info, harvested)


def _table_list(blob: bytes, major: int) -> list[tuple[int, int, int, int]]:
    """table_list as (offset, checksum, size, padding) per table id; absent tables read as offset 0."""
    if major == 1:
        at, count = d.BINARY_HEADER.size, d.TOTAL_TABLES
    elif major == 2:
        count = d.BINARY_HEADER_V2.unpack_from(blob, d.BINARY_HEADER.size)[0]
        at = d.BINARY_HEADER.size + d.BINARY_HEADER_V2.size
    else:
        raise DiscoveryError(f"IP discovery binary header v{major} is not one the AM driver reads (v1, v2)")
    _table(blob, at, count * d.TABLE_INFO.size or 1, "table list")
    tables = [d.TABLE_INFO.unpack_from(blob, at + i * d.TABLE_INFO.size) for i in range(count)]
    return (tables + [(0, 0, 0, 0)] * d.TOTAL_TABLES)[:max(count, d.TOTAL_TABLES)]


def _check(what: str, data: bytes, expected: int) -> None:
    if d.checksum(data) != expected:
        raise DiscoveryError(f"{what} checksum mismatch: byte sum {d.checksum(data):#06x}, "
                             f"table says {expected:#06x}")


def _table(blob: bytes, offset: int, size: int, what: str) -> bytes:
    if offset + size > len(blob) or size == 0:
        raise DiscoveryError(f"{what} at {offset:#x} (+{size:#x}) lies outside the {len(blob)}-byte binary")
    return blob[offset:offset + size]


def _parse_ips(blob: bytes, offset: int, checksum: int):
    if offset + d.IP_DISCOVERY_HEADER.size > len(blob):
        raise DiscoveryError(f"IP discovery table at {offset:#x} lies outside the {len(blob)}-byte binary")
    fields = d.IP_DISCOVERY_HEADER.unpack_from(blob, offset)
    signature, version, size, _id, num_dies = fields[:5]
    base_size = 8 if version >= 4 and fields[-1] & d.BASE_ADDR_64_BIT else 4
    if signature != d.DISCOVERY_TABLE_SIGNATURE:
        raise DiscoveryError(f"IP discovery table signature {signature:#x}, expected {d.DISCOVERY_TABLE_SIGNATURE:#x}")
    _check("IP discovery table", _table(blob, offset, size, "IP discovery table"), checksum)
    if not 1 <= num_dies <= 16:
        raise DiscoveryError(f"IP discovery table lists {num_dies} dies")
    versions, bases = {}, {}
    for die in range(num_dies):
        at = fields[5 + 2 * die + 1]
        _die_id, num_ips = d.DIE_HEADER.unpack_from(_table(blob, at, d.DIE_HEADER.size, f"die {die} header"))
        at += d.DIE_HEADER.size
        for _ in range(num_ips):
            hw_id, inst, nbases, major, minor, rev, _sub = d.IP_ENTRY.unpack_from(
                _table(blob, at, d.IP_ENTRY.size, "IP entry"))
            raw = _table(blob, at + d.IP_ENTRY.size, base_size * nbases, f"bases of IP hw_id {hw_id}") \
                if nbases else b""
            at += d.IP_ENTRY.size + base_size * nbases
            name = d.IP_NAMES.get(hw_id)
            if name is None:
                continue   # an IP the AM driver does not drive (display, video, ...)
            versions[name] = (major, minor, rev)
            bases[(name, inst)] = tuple(int.from_bytes(raw[i:i + base_size], "little")
                                        for i in range(0, len(raw), base_size))
    return versions, bases


def _parse_harvest(blob: bytes, offset: int, checksum: int) -> set[tuple[str, int]]:
    """The harvest table (a fixed-size harvest_table): IP instances fused off on this part."""
    data = _table(blob, offset, d.HARVEST_TABLE_SIZE, "harvest table")
    signature, _version = d.HARVEST_INFO_HEADER.unpack_from(data)
    if signature != d.HARVEST_TABLE_SIGNATURE:
        raise DiscoveryError(f"harvest table signature {signature:#x}, expected {d.HARVEST_TABLE_SIGNATURE:#x}")
    _check("harvest table", data, checksum)
    entries = (d.HARVEST_ENTRY.unpack_from(data, d.HARVEST_INFO_HEADER.size + i * d.HARVEST_ENTRY.size)
               for i in range(32))
    return {(d.IP_NAMES.get(hw_id, f"hw_id {hw_id}"), inst) for hw_id, inst, _ in entries if hw_id}


def _parse_gc_info(blob: bytes, offset: int, checksum: int) -> dict[str, int]:
    table_id, major, minor, size = d.GPU_INFO_HEADER.unpack_from(_table(blob, offset, d.GPU_INFO_HEADER.size,
                                                                        "gc_info header"))
    if table_id != d.GC_TABLE_ID:
        raise DiscoveryError(f"gc_info table id {table_id:#x}, expected {d.GC_TABLE_ID:#x}")
    data = _table(blob, offset, size, "gc_info table")
    _check("gc_info table", data, checksum)
    fields = d.GC_INFO_V1_0_FIELDS if major == 1 else ()
    body = data[d.GPU_INFO_HEADER.size:]
    return {f: int.from_bytes(body[4 * i:4 * i + 4], "little") for i, f in enumerate(fields) if 4 * i + 4 <= len(body)}
