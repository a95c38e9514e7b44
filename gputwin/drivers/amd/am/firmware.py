"""The AM driver's firmware: the files of gputwin/abi/amdgpu/firmware.py FILES, read from a firmware directory
(/lib/firmware/amdgpu on a real machine, fixtures/amd/firmware for the emulated GPU), headers validated the way
amdgpu_ucode_validate does (declared sizes against the file), and split into what the PSP loads:
  sos_components  psp_fw_type -> bytes   (bootloader components, and the TOC)
  ip_firmware     [(GFX_FW_TYPE name, bytes)] in load order (SMU first: it must precede SETUP_TMR)
A malformed file raises FirmwareError naming the file and what is wrong."""
from __future__ import annotations

import lzma
import pathlib
from dataclasses import dataclass, field

from gputwin.abi.amdgpu import firmware as fw

SYSTEM_DIR = pathlib.Path("/lib/firmware/amdgpu")
FIXTURE_DIR = pathlib.Path(__file__).resolve().parents[4] / "fixtures" / "amd" / "firmware"


class FirmwareError(RuntimeError):
    pass


@dataclass
class Firmware:
    sos_components: dict[int, bytes] = field(default_factory=dict)
    ip_firmware: list[tuple[str, bytes]] = field(default_factory=list)


@dataclass
class _File:
    name: str
    data: bytes
    version: tuple[int, int]
    header_size: int
    ucode_size: int
    ucode_offset: int

    def kind_header(self, layout) -> tuple:
        if self.header_size < fw.COMMON_HEADER.size + layout.size:
            raise FirmwareError(f"{self.name}: header of {self.header_size} bytes is too short for a "
                                f"v{self.version[0]}.{self.version[1]} header")
        return layout.unpack_from(self.data, fw.COMMON_HEADER.size)

    def piece(self, offset: int, size: int, what: str) -> bytes:
        if size == 0 or offset + size > len(self.data):
            raise FirmwareError(f"{self.name}: {what} at {offset:#x} (+{size:#x}) lies outside the "
                                f"{len(self.data)}-byte file")
        return self.data[offset:offset + size]

    def ucode(self, relative: int = 0, size: int | None = None, what: str = "ucode") -> bytes:
        return self.piece(self.ucode_offset + relative, self.ucode_size if size is None else size, what)


def read_file(directory: pathlib.Path, name: str) -> _File:
    path = directory / name
    if path.exists():
        data = path.read_bytes()
    elif path.with_name(name + ".xz").exists():
        data = lzma.decompress(path.with_name(name + ".xz").read_bytes())
    elif path.with_name(name + ".zst").exists():
        raise FirmwareError(f"{path}.zst: zstd-compressed firmware is not supported; decompress it "
                            f"(zstd -d) next to it")
    else:
        raise FirmwareError(f"{path}: firmware file not found")
    if len(data) < fw.COMMON_HEADER.size:
        raise FirmwareError(f"{name}: {len(data)} bytes, shorter than common_firmware_header")
    size, header_size, vmaj, vmin, _ipmaj, _ipmin, _ver, ucode_size, ucode_offset, _crc = \
        fw.COMMON_HEADER.unpack_from(data)
    if size != len(data):
        raise FirmwareError(f"{name}: header says {size} bytes, the file has {len(data)}")
    if not fw.COMMON_HEADER.size <= header_size <= ucode_offset or ucode_offset + ucode_size > size:
        raise FirmwareError(f"{name}: header ({header_size} bytes) / ucode array ({ucode_offset:#x} + "
                            f"{ucode_size:#x}) do not fit the {size}-byte file")
    return _File(name, data, (vmaj, vmin), header_size, ucode_size, ucode_offset)


def _need_version(f: _File, *allowed: tuple[int, int]) -> None:
    if f.version not in allowed:
        raise FirmwareError(f"{f.name}: header v{f.version[0]}.{f.version[1]} is not one the AM driver reads "
                            f"({', '.join(f'v{a}.{b}' for a, b in allowed)})")


def _sos(f: _File, out: Firmware) -> None:
    _need_version(f, (2, 0), (2, 1))
    layout = fw.PSP_HEADER_V2_0 if f.version == (2, 0) else fw.PSP_HEADER_V2_1
    count = f.kind_header(layout)[0]
    for i in range(count):
        at = fw.COMMON_HEADER.size + layout.size + i * fw.PSP_FW_BIN_DESC.size
        if at + fw.PSP_FW_BIN_DESC.size > f.header_size:
            raise FirmwareError(f"{f.name}: {count} component descriptors overrun the {f.header_size}-byte header")
        fw_type, _version, offset, size = fw.PSP_FW_BIN_DESC.unpack_from(f.data, at)
        out.sos_components[fw_type] = f.ucode(offset, size, f"PSP component {fw_type}")


def _smu(f: _File, out: Firmware) -> None:
    _need_version(f, (2, 0), (2, 1))
    out.ip_firmware.append(("SMU", f.ucode()))


def _sdma(f: _File, out: Firmware) -> None:
    _need_version(f, (2, 0), (3, 0))
    if f.version == (2, 0):
        _feat, ctx_size, _jo, _js, ctl_offset, ctl_size, _cjo, _cjs = f.kind_header(fw.SDMA_HEADER_V2_0)
        out.ip_firmware.append(("SDMA_UCODE_TH0", f.ucode(0, ctx_size, "SDMA ctx (TH0) ucode")))
        out.ip_firmware.append(("SDMA_UCODE_TH1", f.piece(ctl_offset, ctl_size, "SDMA ctl (TH1) ucode")))
    else:
        _feat, _offset, size = f.kind_header(fw.SDMA_HEADER_V3_0)
        out.ip_firmware.append(("SDMA_UCODE_TH0", f.ucode(0, size, "SDMA ucode")))


def _rs64(engine: str):
    def load(f: _File, out: Firmware) -> None:
        _need_version(f, (2, 0), (2, 1))
        _feat, code_size, _code_offset, data_size, data_offset, _lo, _hi = f.kind_header(fw.GFX_HEADER_V2_0)
        out.ip_firmware.append((f"RS64_{engine}", f.ucode(0, code_size, f"{engine} code")))
        out.ip_firmware.append((f"RS64_{engine}_P0_STACK", f.piece(data_offset, data_size, f"{engine} stack")))
    return load


def _imu(f: _File, out: Firmware) -> None:
    _need_version(f, (1, 0))
    iram_size, _iram_offset, dram_size, _dram_offset = f.kind_header(fw.IMU_HEADER_V1_0)
    out.ip_firmware.append(("IMU_I", f.ucode(0, iram_size, "IMU iram")))
    out.ip_firmware.append(("IMU_D", f.ucode(iram_size, dram_size, "IMU dram")))


def _rlc(f: _File, out: Firmware) -> None:
    """RLC_G from the ucode array; v2.1's save/restore lists, v2.2+'s IRAM/DRAM and v2.3's RLC_P/RLC_V before it
    (the pieces AM loads per minor version, as proven on hardware)."""
    _need_version(f, (2, 0), (2, 1), (2, 2), (2, 3))
    minor = f.version[1]
    f.kind_header(fw.RLC_HEADER_V2_0)

    def extension(at_layout) -> tuple:
        at, layout = at_layout
        if f.header_size < at + layout.size:
            raise FirmwareError(f"{f.name}: header of {f.header_size} bytes is too short for RLC v2.{minor}")
        return layout.unpack_from(f.data, at)
    if minor == 1:
        words = extension(fw.RLC_V2_1)
        for i, name in enumerate(("RLC_RESTORE_LIST_SRM_CNTL", "RLC_RESTORE_LIST_GPM_MEM", "RLC_RESTORE_LIST_SRM_MEM")):
            size, offset = words[1 + 4 * i + 2], words[1 + 4 * i + 3]
            out.ip_firmware.append((name, f.piece(offset, size, name)))
    if minor >= 2:
        iram_size, iram_offset, dram_size, dram_offset = extension(fw.RLC_V2_2)
        out.ip_firmware.append(("RLC_IRAM", f.piece(iram_offset, iram_size, "RLC IRAM")))
        out.ip_firmware.append(("RLC_DRAM_BOOT", f.piece(dram_offset, dram_size, "RLC DRAM")))
    if minor == 3:
        words = extension(fw.RLC_V2_3)
        out.ip_firmware.append(("RLC_P", f.piece(words[3], words[2], "RLC_P")))
        out.ip_firmware.append(("RLC_V", f.piece(words[7], words[6], "RLC_V")))
    out.ip_firmware.append(("RLC_G", f.ucode()))


# in PSP load order: SMU before the TMR, then SDMA, the CP engines, IMU, RLC (autoload starts from RLC)
_LOADERS = (("sos", _sos), ("smu", _smu), ("sdma", _sdma), ("pfp", _rs64("PFP")), ("me", _rs64("ME")),
            ("mec", _rs64("MEC")), ("imu", _imu), ("rlc", _rlc))


def load_firmware(arch: str, directory: pathlib.Path = FIXTURE_DIR) -> Firmware:
    if arch not in fw.FILES:
        raise FirmwareError(f"no AM firmware list for {arch}")
    files, out = fw.FILES[arch], Firmware()
    for kind, loader in _LOADERS:
        if kind in files:
            loader(read_file(pathlib.Path(directory), files[kind]), out)
    return out
