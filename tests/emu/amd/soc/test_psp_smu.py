"""The emulated PSP and SMU driven by raw register writes (no driver code): the bootloader's order and
signature checks, ring creation, each GFX command's status codes, and the SMU mailbox's results."""
import struct
import zlib

import pytest

from gputwin.abi.amdgpu import ip_bases
from gputwin.abi.amdgpu import psp as p
from gputwin.abi.amdgpu import smu as s
from gputwin.emu.amd.soc.board import build
from gputwin.emu.amd.soc.psp import AUTOLOAD_NEEDS
from gputwin.emu.amd.soc.regfile import RegisterError

GIB, MIB = 1 << 30, 1 << 20
MSG1, RING, CMD, FENCE, TMR = 0, 1 * MIB, 2 * MIB, 2 * MIB + 0x1000, 4 * MIB


def signed(tag: int, payload: bytes = b"x" * 32) -> bytes:
    return struct.pack("<4sIII", b"GTFW", tag, len(payload), zlib.crc32(payload)) + payload


class Chip:
    def __init__(self, arch="gfx1100"):
        self.f = build(arch, vram_size=GIB)
        self.bases, self.psp, self.smu = ip_bases(arch), self.f.blocks["psp"], self.f.blocks["smu"]
        self.fence = 0

    def mc(self, offset):
        return self.f.fb.base + offset

    def lohi(self, offset):
        return self.mc(offset) & 0xFFFFFFFF, self.mc(offset) >> 32

    def wr(self, reg, v):
        self.f.regs.write(reg.address(self.bases), v)

    def rd(self, reg):
        return self.f.regs.read(reg.address(self.bases))

    def put(self, offset, data):
        self.f.vram[offset:offset + len(data)] = memoryview(data)

    def bootloader(self, command, image):
        self.put(MSG1, image)
        self.wr(p.C2PMSG_36, self.mc(MSG1) >> 20)
        self.wr(p.C2PMSG_35, command)
        return self.rd(p.C2PMSG_35)

    def boot_sos(self):
        assert self.bootloader(p.PSP_BL__LOAD_SYSDRV, signed(0x1000 | p.PSP_FW_TYPE_PSP_SYS_DRV)) == p.READY
        assert self.bootloader(p.PSP_BL__LOAD_SOSDRV, signed(0x1000 | p.PSP_FW_TYPE_PSP_SOS,
                                                             (0x123456).to_bytes(4, "little") + b"s" * 28)) == p.READY
        lo, hi = self.lohi(RING)
        self.wr(p.C2PMSG_69, lo)
        self.wr(p.C2PMSG_70, hi)
        self.wr(p.C2PMSG_71, 0x10000)
        self.wr(p.C2PMSG_64, p.PSP_RING_TYPE__KM << 16)
        assert self.rd(p.C2PMSG_64) == p.READY

    def command(self, cmd_id, body=b""):
        buf = bytearray(1024)
        struct.pack_into("<III", buf, 0, 1024, 0, cmd_id)
        buf[28:28 + len(body)] = body
        self.put(CMD, bytes(buf))
        self.fence += 1
        wptr = self.rd(p.C2PMSG_67)
        self.put(RING + 4 * wptr, struct.pack("<IIIIII", *self.lohi(CMD), 1024, *self.lohi(FENCE), self.fence)
                 + bytes(40))
        self.wr(p.C2PMSG_67, wptr + 16)
        assert int.from_bytes(self.f.vram[FENCE:FENCE + 4].tobytes(), "little") == self.fence
        return struct.unpack_from("<IIIII", self.f.vram[CMD + 864:CMD + 884].tobytes())

    def load(self, name, image):
        self.put(MSG1, image)
        body = struct.pack("<IIII", *self.lohi(MSG1), len(image), p.GFX_FW_TYPE[name])
        return self.command(p.GFX_CMD_ID_LOAD_IP_FW, body)[0]

    def toc_and_tmr(self):
        self.put(MSG1, toc := signed(0x1000 | p.PSP_FW_TYPE_PSP_TOC))
        status, *_rest, tmr_size = self.command(p.GFX_CMD_ID_LOAD_TOC, struct.pack("<III", *self.lohi(MSG1), len(toc)))
        assert status == 0 and tmr_size > 0
        return self.command(p.GFX_CMD_ID_SETUP_TMR, struct.pack("<IIIIII", *self.lohi(TMR), tmr_size, 1, TMR, 0))[0]


def test_bootloader_is_ready_then_runs_sos_and_reports_its_version():
    c = Chip()
    assert c.rd(p.C2PMSG_35) == p.READY and c.rd(p.C2PMSG_81) == 0 and c.rd(p.C2PMSG_64) == 0
    c.boot_sos()
    assert c.rd(p.C2PMSG_81) == 0x123456


def test_sos_before_sys_drv_is_refused_and_sos_does_not_start():
    c = Chip()
    status = c.bootloader(p.PSP_BL__LOAD_SOSDRV, signed(0x1000 | p.PSP_FW_TYPE_PSP_SOS))
    assert status & p.READY and status & 0xFFFF != 0 and c.rd(p.C2PMSG_81) == 0


@pytest.mark.parametrize("image", [
    signed(0x1000 | p.PSP_FW_TYPE_PSP_SOS),                    # built for another component
    signed(0x1000 | p.PSP_FW_TYPE_PSP_SYS_DRV)[:-1] + b"!",   # payload altered: crc mismatch
    b"ELF!" + bytes(60),                                      # not a signed image at all
])
def test_bootloader_rejects_a_component_that_does_not_verify(image):
    c = Chip()
    assert c.bootloader(p.PSP_BL__LOAD_SYSDRV, image) & 0xFFFF != 0
    assert p.PSP_FW_TYPE_PSP_SYS_DRV not in c.psp.components


def test_ring_creation_refuses_a_ring_outside_the_frame_buffer_and_unknown_controls():
    c = Chip()
    c.boot_sos()
    c.wr(p.C2PMSG_69, 0)
    c.wr(p.C2PMSG_70, 0)
    c.wr(p.C2PMSG_64, p.PSP_RING_TYPE__KM << 16)
    assert c.rd(p.C2PMSG_64) == p.READY | (p.TEE_ERROR_BAD_PARAMETERS & 0xFFFF)
    c.wr(p.C2PMSG_64, 0x70000 + 0x10000)
    assert c.rd(p.C2PMSG_64) == p.READY | p.PSP_ERR_UNKNOWN_COMMAND


def test_ring_commands_return_their_real_status_codes():
    c = Chip()
    c.boot_sos()
    assert c.command(0x7F)[0] == p.PSP_ERR_UNKNOWN_COMMAND
    assert c.command(p.GFX_CMD_ID_SETUP_TMR, struct.pack("<IIIIII", *c.lohi(TMR), 8 * MIB, 1, 0, 0))[0] == \
        p.TEE_ERROR_BAD_STATE                                   # before LOAD_TOC
    assert c.load("RLC_G", signed(8)) == p.TEE_ERROR_BAD_STATE   # before SETUP_TMR
    assert c.load("SMU", signed(18)) == 0                       # SMU may precede the TMR
    assert c.toc_and_tmr() == 0
    assert c.load("RLC_G", signed(9)) == p.TEE_ERROR_SECURITY   # built for SDMA0, loaded as RLC_G
    image = signed(8)
    assert c.load("RLC_G", image[:-1] + bytes([image[-1] ^ 1])) == p.TEE_ERROR_SECURITY
    assert c.command(p.GFX_CMD_ID_LOAD_IP_FW, struct.pack("<IIII", *c.lohi(MSG1), 16, 0x3FF))[0] == \
        p.TEE_ERROR_NOT_SUPPORTED                               # no such ucode type
    assert c.command(p.GFX_CMD_ID_AUTOLOAD_RLC)[0] == p.TEE_ERROR_BAD_STATE   # RLC/IMU/MEC missing
    for name in ("RLC_G", "IMU_I", "IMU_D", "RS64_MEC"):
        assert c.load(name, signed(p.GFX_FW_TYPE[name])) == 0
    assert c.command(p.GFX_CMD_ID_AUTOLOAD_RLC)[0] == 0 and c.psp.autoloaded
    assert set(c.f.firmware) == {"SMU", "RLC_G", "IMU_I", "IMU_D", "RS64_MEC"}
    assert c.f.firmware["RLC_G"].payload == b"x" * 32 and c.f.firmware["RLC_G"].fw_type == 8


def test_smu_is_silent_until_its_firmware_is_loaded_then_answers_with_ppsmc_results():
    c = Chip("gfx1201")
    c.wr(s.C2PMSG_90, 0)
    c.wr(s.C2PMSG_66, s.PPSMC_MSG_GetSmuVersion)
    assert c.rd(s.C2PMSG_90) == 0                             # nobody home
    c.boot_sos()
    assert c.load("SMU", signed(18)) == 0

    def send(msg, arg=0):
        c.wr(s.C2PMSG_90, 0)
        c.wr(s.C2PMSG_82, arg)
        c.wr(s.C2PMSG_66, msg)
        return c.rd(s.C2PMSG_90), c.rd(s.C2PMSG_82)
    assert send(s.PPSMC_MSG_TestMessage, 41) == (s.PPSMC_Result_OK, 42)
    assert send(0x99)[0] == s.PPSMC_Result_UnknownCmd
    assert send(s.PPSMC_MSG_EnableAllSmuFeatures)[0] == s.PPSMC_Result_CmdRejectedPrereq
    assert send(s.PPSMC_MSG_SetDriverDramAddrHigh, 0)[0] == s.PPSMC_Result_OK
    assert send(s.PPSMC_MSG_SetDriverDramAddrLow, 0x1000)[0] == s.PPSMC_Result_Failed   # not in the FB
    send(s.PPSMC_MSG_SetDriverDramAddrHigh, c.mc(8 * MIB) >> 32)
    send(s.PPSMC_MSG_SetDriverDramAddrLow, c.mc(8 * MIB) & 0xFFFFFFFF)
    send(s.PPSMC_MSG_SetAllowedFeaturesMaskLow, 0xF0)
    assert send(s.PPSMC_MSG_EnableAllSmuFeatures)[0] == s.PPSMC_Result_OK
    assert send(s.PPSMC_MSG_GetRunningSmuFeaturesLow) == (s.PPSMC_Result_OK, 0xF0)


@pytest.mark.parametrize("wptr", [5, 0x10000 // 4, 0xFFFFFFFF])
def test_a_write_pointer_off_the_frame_grid_is_refused_not_spun_on(wptr):
    c = Chip()
    c.boot_sos()
    with pytest.raises(RegisterError, match="PSP ring write pointer .* not a frame boundary"):
        c.wr(p.C2PMSG_67, wptr)


def test_a_frame_pointing_outside_the_frame_buffer_is_named():
    c = Chip()
    c.boot_sos()
    c.put(RING, struct.pack("<IIIIII", 0x1000, 0, 1024, *c.lohi(FENCE), 1) + bytes(40))
    with pytest.raises(RegisterError, match="PSP command buffer at MC address 0x1000"):
        c.wr(p.C2PMSG_67, 16)


@pytest.mark.parametrize("arch, dword", [("gfx1100", 0xA000 + 0x4E82), ("gfx1201", 0xA000 + 0x4E7C)])
def test_rlc_bootload_status_completes_with_the_autoload(arch, dword):
    c = Chip(arch)
    assert c.f.regs.read(dword) == 0
    c.boot_sos()
    if arch == "gfx1100":   # gfx1201's sOS has had its TMR since boot
        assert c.toc_and_tmr() == 0
    for name in AUTOLOAD_NEEDS[arch]:
        assert c.load(name, signed(p.GFX_FW_TYPE[name])) == 0
    assert c.command(p.GFX_CMD_ID_AUTOLOAD_RLC)[0] == 0
    assert c.f.regs.read(dword) == 1 << 31
    with pytest.raises(RegisterError, match="RLC_RLCS_BOOTLOAD_STATUS, which the PSP owns"):
        c.f.regs.write(dword, 0)
