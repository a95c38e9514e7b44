"""Generate the synthetic AMD firmware images the emulated GPU boots with: fixtures/amd/firmware/<name>.bin.

    python tools/make_am_firmware.py [--out fixtures/amd/firmware]

Each file has the real container layout of its kind (amdgpu_ucode.h: common_firmware_header + the per-kind
header: PSP sOS v2.0 with its component descriptors, SMC v2.0, SDMA v2.0 / v3.0, RS64 GFX v2.0, IMU v1.0,
RLC v2.0), so the driver parses them exactly as it parses AMD's files. What the PSP receives, each piece, is a
small payload behind the synthetic signed-image header (gputwin/abi/amdgpu/firmware.py) instead of AMD's
signed code. Deterministic: rerunning writes identical bytes."""
from __future__ import annotations

import argparse
import hashlib
import pathlib
import struct
import sys
import zlib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from gputwin.abi.amdgpu import firmware as fw  # noqa: E402
from gputwin.abi.amdgpu import psp as p  # noqa: E402

SOS_COMPONENTS = (p.PSP_FW_TYPE_PSP_KDB, p.PSP_FW_TYPE_PSP_SPL, p.PSP_FW_TYPE_PSP_SYS_DRV,
                  p.PSP_FW_TYPE_PSP_SOC_DRV, p.PSP_FW_TYPE_PSP_INTF_DRV, p.PSP_FW_TYPE_PSP_DBG_DRV,
                  p.PSP_FW_TYPE_PSP_RAS_DRV, p.PSP_FW_TYPE_PSP_SOS, p.PSP_FW_TYPE_PSP_TOC)
SOS_VERSION = {"gfx1100": 0x00360042, "gfx1201": 0x00400021}


def signed(tag: int, what: str, size: int = 48, prefix: bytes = b"") -> bytes:
    """A piece the PSP accepts: the signed-image header, then a deterministic payload naming what it is."""
    payload = prefix + (hashlib.sha256(what.encode()).digest() * 4)[:size - len(prefix)]
    return fw.SYNTHETIC_HEADER.pack(fw.SYNTHETIC_MAGIC, tag, len(payload), zlib.crc32(payload)) + payload


def container(version: tuple[int, int], kind_header: bytes, ucode: bytes, extra: bytes = b"") -> bytes:
    """common_firmware_header + kind header + ucode array (+ pieces located by absolute offsets)."""
    header_size = fw.COMMON_HEADER.size + len(kind_header)
    size = header_size + len(ucode) + len(extra)
    common = fw.COMMON_HEADER.pack(size, header_size, *version, 0, 0, 1, len(ucode), header_size, zlib.crc32(ucode))
    return common + kind_header + ucode + extra


def sos(arch: str) -> bytes:
    pieces = [signed(fw.SYNTHETIC_PSP_TAG | t, f"{arch} psp component {t}",
                     prefix=SOS_VERSION[arch].to_bytes(4, "little") if t == p.PSP_FW_TYPE_PSP_SOS else b"")
              for t in SOS_COMPONENTS]
    descs, offset = b"", 0
    for t, piece in zip(SOS_COMPONENTS, pieces):
        descs += fw.PSP_FW_BIN_DESC.pack(t, 1, offset, len(piece))
        offset += len(piece)
    return container((2, 0), fw.PSP_HEADER_V2_0.pack(len(pieces)) + descs, b"".join(pieces))


def smu(arch: str) -> bytes:
    return container((2, 0), fw.SMC_HEADER_V2_0.pack(0, 0, 0), signed(p.GFX_FW_TYPE["SMU"], f"{arch} smu"))


def sdma(arch: str) -> bytes:
    th0 = signed(p.GFX_FW_TYPE["SDMA_UCODE_TH0"], f"{arch} sdma th0")
    if arch == "gfx1201":   # SDMA 7: header v3.0, one image
        return container((3, 0), fw.SDMA_HEADER_V3_0.pack(1, 0, len(th0)), th0)
    th1 = signed(p.GFX_FW_TYPE["SDMA_UCODE_TH1"], f"{arch} sdma th1")
    header_size = fw.COMMON_HEADER.size + fw.SDMA_HEADER_V2_0.size
    kind = fw.SDMA_HEADER_V2_0.pack(1, len(th0), 0, 0, header_size + len(th0), len(th1), 0, 0)
    return container((2, 0), kind, th0 + th1)


def rs64(arch: str, engine: str) -> bytes:
    code = signed(p.GFX_FW_TYPE[f"RS64_{engine}"], f"{arch} {engine} code")
    stack = signed(p.GFX_FW_TYPE[f"RS64_{engine}_P0_STACK"], f"{arch} {engine} stack")
    header_size = fw.COMMON_HEADER.size + fw.GFX_HEADER_V2_0.size
    kind = fw.GFX_HEADER_V2_0.pack(1, len(code), 0, len(stack), header_size + len(code), 0x0, 0x0)
    return container((2, 0), kind, code + stack)


def imu(arch: str) -> bytes:
    iram = signed(p.GFX_FW_TYPE["IMU_I"], f"{arch} imu iram")
    dram = signed(p.GFX_FW_TYPE["IMU_D"], f"{arch} imu dram")
    return container((1, 0), fw.IMU_HEADER_V1_0.pack(len(iram), 0, len(dram), len(iram)), iram + dram)


def rlc(arch: str, minor: int = 3) -> bytes:
    """RLC v2.<minor>: RLC_G in the ucode array; v2.1 save/restore lists, v2.2+ IRAM/DRAM, v2.3 RLC_P/RLC_V
    after it, located by absolute offsets in the extended header."""
    g = signed(p.GFX_FW_TYPE["RLC_G"], f"{arch} rlc g")
    names = {1: ["RLC_RESTORE_LIST_SRM_CNTL", "RLC_RESTORE_LIST_GPM_MEM", "RLC_RESTORE_LIST_SRM_MEM"],
             2: ["RLC_IRAM", "RLC_DRAM_BOOT"], 3: ["RLC_IRAM", "RLC_DRAM_BOOT", "RLC_P", "RLC_V"]}.get(minor, [])
    header_end = {0: 104, 1: 156, 2: 172, 3: 204}[minor]
    pieces = {n: signed(p.GFX_FW_TYPE[n], f"{arch} {n.lower()}") for n in names}
    where, at = {}, header_end + len(g)
    for n, piece in pieces.items():
        where[n] = (len(piece), at)
        at += len(piece)
    words = [0] * ((header_end - 32) // 4)

    def put(file_offset: int, *values: int) -> None:
        words[(file_offset - 32) // 4:(file_offset - 32) // 4 + len(values)] = values
    for i, n in enumerate(names if minor == 1 else []):
        put(fw.RLC_V2_1[0] + 4 * (1 + 4 * i) + 8, *where[n])
    if minor >= 2:
        put(fw.RLC_V2_2[0], *where["RLC_IRAM"], *where["RLC_DRAM_BOOT"])
    if minor == 3:
        put(fw.RLC_V2_3[0] + 8, *where["RLC_P"])
        put(fw.RLC_V2_3[0] + 24, *where["RLC_V"])
    return container((2, minor), struct.pack(f"<{len(words)}I", *words), g, b"".join(pieces.values()))


def images(arch: str) -> dict[str, bytes]:
    files = fw.FILES[arch]
    out = {files["sos"]: sos(arch), files["smu"]: smu(arch), files["sdma"]: sdma(arch),
           files["imu"]: imu(arch), files["rlc"]: rlc(arch)}
    for engine in ("pfp", "me", "mec"):
        if engine in files:
            out[files[engine]] = rs64(arch, engine.upper())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent.parent / "fixtures/amd/firmware"))
    out = pathlib.Path(ap.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    for arch in fw.FILES:
        for name, data in images(arch).items():
            (out / name).write_bytes(data)
            print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
