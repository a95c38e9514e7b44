"""The constant-bank-0 parameter offset the driver writes and the emulator reads equals what NVIDIA's ptxas
records for the same PTX (EIATTR_PARAM_CBANK in the cubin's .nv.info.<kernel>)."""
import shutil
import struct
import subprocess

import pytest

from gputwin.abi import nv_classes as c

EIATTR_PARAM_CBANK = 0x0A


def _sections(elf: bytes) -> dict[str, bytes]:
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names = secs[shstrndx][4]
    return {elf[names + s[0]:elf.index(b"\0", names + s[0])].decode(): elf[s[4]:s[4] + s[5]] for s in secs}


def _param_cbank(info: bytes) -> tuple[int, int]:
    i = 0
    while i < len(info):                      # entries: format, attribute, u16 value-or-size [, data]
        fmt, attr, val = info[i], info[i + 1], struct.unpack_from("<H", info, i + 2)[0]
        data, i = (info[i + 4:i + 4 + val], i + 4 + val) if fmt == 4 else (b"", i + 4)
        if attr == EIATTR_PARAM_CBANK:
            _, offset, size = struct.unpack("<IHH", data)
            return offset, size
    raise AssertionError("no EIATTR_PARAM_CBANK")


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs NVIDIA's ptxas on PATH")
@pytest.mark.parametrize("arch,compute_class", [("sm_90", c.HOPPER_COMPUTE_A), ("sm_80", c.AMPERE_COMPUTE_A)])
def test_param_offset_matches_ptxas(ptx, tmp_path, arch, compute_class):
    src, cubin = tmp_path / "k.ptx", tmp_path / "k.cubin"
    src.write_text(ptx[arch])
    subprocess.run(["ptxas", f"-arch={arch}", "-o", str(cubin), str(src)], check=True)
    offset, size = _param_cbank(_sections(cubin.read_bytes())[".nv.info.saxpy"])
    assert offset == c.CBANK0_PARAM_OFFSET[compute_class]
    assert size == 8 + 8 + 4 + 4                  # saxpy(float *, const float *, float, unsigned)
