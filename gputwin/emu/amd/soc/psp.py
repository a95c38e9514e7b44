"""The emulated PSP (MP0): the bootloader that loads the secure OS (sOS) from its components, then the sOS's
GPCOM ring on which the driver submits GFX_CMD_RESP commands (psp_v13_0 / psp_v14_0; constants in
gputwin/abi/amdgpu/psp.py).

State machine:
  bootloader  C2PMSG_35 reads READY | status of the last command. A load command takes the component at MC
              address C2PMSG_36 << 20; sOS needs SYS_DRV first. A component whose signed header does not verify
              fails with BL_STATUS_SIGNATURE. After LOAD_SOSDRV the sOS runs and C2PMSG_81 holds its version.
  ring        C2PMSG_64 = ring type << 16 creates the ring at C2PMSG_69/70 (C2PMSG_71 bytes); the response in
              C2PMSG_64 is READY | 16-bit status. Writes of the write pointer C2PMSG_67 run the frames up to it.
  commands    LOAD_TOC (reports the TMR size), SETUP_TMR (after the TOC), LOAD_IP_FW (SMU may come before the
              TMR, everything else after it; MP0 14.x sets its TMR up at boot), AUTOLOAD_RLC (needs RLC, IMU
              and the CP firmware loaded; then RLC_RLCS_BOOTLOAD_STATUS reads BOOTLOAD_COMPLETE). Each
              command's status goes to the response (offset 864), then the fence value to the fence address.
Firmware pieces are verified against their signed-image header (the synthetic stand-in, see
gputwin/abi/amdgpu/firmware.py) and recorded in function.firmware by their GFX_FW_TYPE name."""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field

from gputwin.abi.amdgpu import ip_bases
from gputwin.abi.amdgpu import psp as p
from gputwin.abi.amdgpu import rlc
from gputwin.abi.amdgpu.firmware import SYNTHETIC_HEADER, SYNTHETIC_MAGIC, SYNTHETIC_PSP_TAG
from gputwin.emu.amd.soc.regfile import RegisterError

# Bootloader failure statuses in C2PMSG_35[15:0]. AMD documents none; these are the emulator's (see
# docs/driver-am.md), so the driver only relies on "non-zero means failed".
BL_STATUS_SIGNATURE = 0x1      # the component's signed header does not verify
BL_STATUS_ORDER = 0x2          # a component loaded before what it depends on
BL_STATUS_UNKNOWN = 0x3        # not a bootloader command
BOOTLOADER_COMPONENTS = {
    p.PSP_BL__LOAD_KEY_DATABASE: p.PSP_FW_TYPE_PSP_KDB, p.PSP_BL__LOAD_TOS_SPL_TABLE: p.PSP_FW_TYPE_PSP_SPL,
    p.PSP_BL__LOAD_SYSDRV: p.PSP_FW_TYPE_PSP_SYS_DRV, p.PSP_BL__LOAD_SOCDRV: p.PSP_FW_TYPE_PSP_SOC_DRV,
    p.PSP_BL__LOAD_INTFDRV: p.PSP_FW_TYPE_PSP_INTF_DRV, p.PSP_BL__LOAD_DBGDRV: p.PSP_FW_TYPE_PSP_DBG_DRV,
    p.PSP_BL__LOAD_RASDRV: p.PSP_FW_TYPE_PSP_RAS_DRV, p.PSP_BL__LOAD_SOSDRV: p.PSP_FW_TYPE_PSP_SOS,
}
TMR_SIZE = 8 << 20             # what the emulated TOC asks the driver to reserve
SOS_VERSION_FALLBACK = 0x00300000
# psp_v14_0 parts (MP0 14.0.2/14.0.3) reserve the TMR themselves at boot ("boot-time TMR"): LOAD_TOC still
# reports its size, and LOAD_IP_FW works without SETUP_TMR
BOOT_TIME_TMR = {"gfx1100": False, "gfx1201": True}
AUTOLOAD_NEEDS = {"gfx1100": ("RLC_G", "IMU_I", "IMU_D", "RS64_MEC"),
                  "gfx1201": ("RLC_G", "IMU_I", "IMU_D", "RS64_PFP", "RS64_ME", "RS64_MEC")}


class SignatureError(ValueError):
    """A firmware piece whose signed header does not verify."""


@dataclass
class FirmwareImage:
    """One piece of microcode the PSP accepted: its GFX_FW_TYPE name and id, and the payload bytes."""
    name: str
    fw_type: int
    payload: bytes


def verify(image: bytes, tag: int, what: str) -> bytes:
    """The payload of a signed piece, after checking magic, the type it was built for, size and crc32."""
    if len(image) < SYNTHETIC_HEADER.size:
        raise SignatureError(f"{what}: {len(image)} bytes, shorter than a signed header")
    magic, built_for, size, crc = SYNTHETIC_HEADER.unpack_from(image)
    payload = image[SYNTHETIC_HEADER.size:SYNTHETIC_HEADER.size + size]
    if magic != SYNTHETIC_MAGIC:
        raise SignatureError(f"{what}: no signed header (magic {magic!r})")
    if built_for != tag:
        raise SignatureError(f"{what}: image was built for type {built_for:#x}, loaded as {tag:#x}")
    if len(payload) != size or zlib.crc32(payload) != crc:
        raise SignatureError(f"{what}: payload does not match its signature (size {len(payload)} of {size}, "
                             f"crc32 {zlib.crc32(payload):#010x} vs {crc:#010x})")
    return payload


@dataclass
class Psp:
    function: object
    bl_status: int = 0
    components: set = field(default_factory=set)
    sos_version: int = 0
    ring_base: int = 0
    ring_size: int = 0
    ring_rptr: int = 0           # dwords
    ring_wptr: int = 0           # dwords, as C2PMSG_67 reads back
    ring_response: int = 0       # C2PMSG_64 as it reads
    toc_loaded: bool = False
    tmr: tuple[int, int] | None = None
    autoloaded: bool = False
    log: list = field(default_factory=list)   # (command name, status) in order, for tests and debugging

    def reset(self) -> None:
        """Mode-1 reset: power-on state; the sOS and every loaded firmware are gone (keeps the log)."""
        self.__dict__.update({k: v for k, v in Psp(self.function).__dict__.items() if k != "log"})
        self.function.firmware.clear()

    def refuse(self, reg, value: int) -> None:
        raise RegisterError(f"{self.function.name}: write of {value:#x} to {reg.name}, which the PSP owns")

    def _value(self, reg) -> int:
        return self.function.regs.value(reg.address(ip_bases(self.function.arch)))

    # --- bootloader -------------------------------------------------------------------------------
    def bootloader_status(self) -> int:
        return (p.READY | self.bl_status) if not self.sos_version else p.READY

    def bootloader_command(self, cmd: int) -> None:
        self.bl_status = self._bootloader_run(cmd)
        self.log.append((f"BL {cmd:#x}", self.bl_status))

    def _bootloader_run(self, cmd: int) -> int:
        fw_type = BOOTLOADER_COMPONENTS.get(cmd)
        if fw_type is None or self.sos_version:
            return BL_STATUS_UNKNOWN
        if cmd == p.PSP_BL__LOAD_SOSDRV and p.PSP_FW_TYPE_PSP_SYS_DRV not in self.components:
            return BL_STATUS_ORDER
        address = self._value(p.C2PMSG_36) << 20
        try:
            payload = self._read_signed(address, SYNTHETIC_PSP_TAG | fw_type, f"PSP component {fw_type}")
        except (SignatureError, RegisterError):   # bad image, or one not (wholly) in the frame buffer
            return BL_STATUS_SIGNATURE
        self.components.add(fw_type)
        if cmd == p.PSP_BL__LOAD_SOSDRV:
            self.sos_version = int.from_bytes(payload[:4], "little") or SOS_VERSION_FALLBACK
            self.ring_response = p.READY   # the sOS is ready for a ring command
            if BOOT_TIME_TMR[self.function.arch]:
                self.tmr = (0, TMR_SIZE)   # inside the sOS's own reservation, not driver memory
        return 0

    def _read_signed(self, mc_address: int, tag: int, what: str) -> bytes:
        fb = self.function.fb
        head = fb.vram_view(mc_address, SYNTHETIC_HEADER.size, what).tobytes()
        size = SYNTHETIC_HEADER.unpack(head)[2] if head[:4] == SYNTHETIC_MAGIC else 0
        return verify(fb.vram_view(mc_address, SYNTHETIC_HEADER.size + size, what).tobytes(), tag, what)

    # --- ring ---------------------------------------------------------------------------------------
    def ring_control(self, value: int) -> None:
        if not self.sos_version:
            return   # nothing runs the ring before the sOS: the response never comes
        status = 0
        if value == p.PSP_RING_TYPE__KM << 16:
            base = self._value(p.C2PMSG_69) | self._value(p.C2PMSG_70) << 32
            size = self._value(p.C2PMSG_71)
            try:
                self.function.fb.vram_offset(base, size, "PSP ring")
                ok = size >= p.RB_FRAME.size and size % p.RB_FRAME.size == 0
            except RegisterError:
                ok = False
            if ok:
                self.ring_base, self.ring_size, self.ring_rptr, self.ring_wptr = base, size, 0, 0
            status = 0 if ok else p.TEE_ERROR_BAD_PARAMETERS & p.STATUS_MASK
        elif value == p.GFX_CTRL_CMD_ID_DESTROY_RINGS:
            self.ring_base = self.ring_size = self.ring_rptr = self.ring_wptr = 0
        else:
            status = p.PSP_ERR_UNKNOWN_COMMAND
        self.ring_response = p.READY | status
        self.log.append((f"CTRL {value:#x}", status))

    def ring_write_pointer(self, wptr: int) -> None:
        if not self.ring_size:
            return   # no ring: the write lands nowhere, no fence ever comes
        ring_dwords = self.ring_size // 4
        if wptr % p.RB_FRAME_DWORDS or wptr >= ring_dwords:
            raise RegisterError(f"{self.function.name}: PSP ring write pointer {wptr:#x} is not a frame boundary "
                                f"inside the {ring_dwords}-dword ring")
        self.ring_wptr = wptr
        while self.ring_rptr != wptr:
            frame = self.function.fb.vram_view(self.ring_base + 4 * self.ring_rptr, p.RB_FRAME.size, "PSP rb frame")
            self._run_frame(p.RB_FRAME.unpack(frame.tobytes()))
            self.ring_rptr = (self.ring_rptr + p.RB_FRAME_DWORDS) % ring_dwords

    def _run_frame(self, frame) -> None:
        cmd_lo, cmd_hi, _size, fence_lo, fence_hi, fence_value = frame[:6]
        buf = self.function.fb.vram_view(cmd_lo | cmd_hi << 32, p.CMD_RESP_SIZE, "PSP command buffer")
        cmd_id = p.CMD_HEADER.unpack_from(buf.tobytes())[2]
        status, tmr_size = self._run_command(cmd_id, buf[p.CMD_OFFSET:p.RESP_OFFSET].tobytes())
        buf[p.RESP_OFFSET:p.RESP_OFFSET + p.RESP.size] = memoryview(p.RESP.pack(status, 0, 0, 0, tmr_size))
        self.log.append((p.GFX_CMD_NAMES.get(cmd_id, f"{cmd_id:#x}"), status))
        fence = self.function.fb.vram_view(fence_lo | fence_hi << 32, 4, "PSP fence")
        fence[:] = memoryview(fence_value.to_bytes(4, "little"))

    def _run_command(self, cmd_id: int, cmd: bytes) -> tuple[int, int]:
        if cmd_id == p.GFX_CMD_ID_LOAD_TOC:
            lo, hi, size = p.CMD_LOAD_TOC.unpack_from(cmd)
            status, _ = self._load_signed(lo | hi << 32, SYNTHETIC_PSP_TAG | p.PSP_FW_TYPE_PSP_TOC, size, "TOC")
            self.toc_loaded = status == 0
            return status, TMR_SIZE if status == 0 else 0
        if cmd_id == p.GFX_CMD_ID_SETUP_TMR:
            return self._setup_tmr(*p.CMD_SETUP_TMR.unpack_from(cmd)), 0
        if cmd_id == p.GFX_CMD_ID_LOAD_IP_FW:
            return self._load_ip_fw(*p.CMD_LOAD_IP_FW.unpack_from(cmd)), 0
        if cmd_id == p.GFX_CMD_ID_AUTOLOAD_RLC:
            missing = [n for n in AUTOLOAD_NEEDS[self.function.arch] if n not in self.function.firmware]
            if missing or self.tmr is None:
                return p.TEE_ERROR_BAD_STATE, 0
            self.autoloaded = True
            return 0, 0
        return p.PSP_ERR_UNKNOWN_COMMAND, 0

    def _setup_tmr(self, lo: int, hi: int, size: int, _flags: int, _sys_lo: int, _sys_hi: int) -> int:
        if not self.toc_loaded:
            return p.TEE_ERROR_BAD_STATE
        base = lo | hi << 32
        if base % p.PSP_TMR_ALIGNMENT or size < TMR_SIZE:
            return p.TEE_ERROR_BAD_PARAMETERS
        try:
            self.function.fb.vram_offset(base, size, "TMR")
        except RegisterError:
            return p.TEE_ERROR_BAD_PARAMETERS
        self.tmr = (base, size)
        return 0

    def _load_ip_fw(self, lo: int, hi: int, size: int, fw_type: int) -> int:
        name = p.GFX_FW_NAME.get(fw_type)
        if name is None:
            return p.TEE_ERROR_NOT_SUPPORTED
        if self.tmr is None and name != "SMU":
            return p.TEE_ERROR_BAD_STATE
        status, payload = self._load_signed(lo | hi << 32, fw_type, size, name)
        if status == 0:
            self.function.firmware[name] = FirmwareImage(name, fw_type, payload)
        return status

    def _load_signed(self, mc_address: int, tag: int, size: int, what: str) -> tuple[int, bytes]:
        try:
            return 0, verify(self.function.fb.vram_view(mc_address, size, what).tobytes(), tag, what)
        except SignatureError:
            return p.TEE_ERROR_SECURITY, b""
        except RegisterError:   # the buffer lies outside the frame buffer
            return p.TEE_ERROR_BAD_PARAMETERS, b""


def attach(function) -> Psp:
    psp = Psp(function)
    function.firmware = {}
    regs, bases = function.regs, ip_bases(function.arch)

    def add(reg, **hooks):
        regs.add(reg.address(bases), reg.name, **hooks)
    add(p.C2PMSG_35, read=psp.bootloader_status, write=psp.bootloader_command)
    add(p.C2PMSG_36)
    add(p.C2PMSG_81, read=lambda: psp.sos_version, write=lambda v: psp.refuse(p.C2PMSG_81, v))
    add(p.C2PMSG_64, read=lambda: psp.ring_response, write=psp.ring_control)
    add(p.C2PMSG_67, read=lambda: psp.ring_wptr, write=psp.ring_write_pointer)
    add(p.C2PMSG_69)
    add(p.C2PMSG_70)
    add(p.C2PMSG_71)
    bootload = rlc.RLC_RLCS_BOOTLOAD_STATUS[function.profile.gfx_target_version // 10000]
    add(bootload, read=lambda: rlc.BOOTLOAD_COMPLETE if psp.autoloaded else 0,
        write=lambda v: psp.refuse(bootload, v))
    return psp
