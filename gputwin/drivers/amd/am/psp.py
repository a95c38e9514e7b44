"""The PSP as the AM driver drives it (psp_v13_0 / psp_v14_0 boot, amdgpu_psp.c ring commands):
  boot_sos     the bootloader loads each sOS component from a 1 MiB-aligned buffer (C2PMSG_36/35), then sOS
  create_ring  the KM (GPCOM) ring at C2PMSG_69/70/71, created through C2PMSG_64
  load_toc / setup_tmr / load_ip_fw / autoload_rlc   GFX_CMD_RESP commands on the ring, fenced
Every failure raises PspError naming the step, the command and the status the PSP returned."""
from __future__ import annotations

from typing import Callable

from gputwin.abi.amdgpu import psp as p
from gputwin.drivers.amd.am import nbio
from gputwin.drivers.amd.am.mmio import Mmio, PollTimeout, wait_until
from gputwin.drivers.amd.am.vram import Vram

# the sOS components in the order psp_v13_0/psp_v14_0 hw_start loads them (KDB, SPL, SYS, SOC, INTF, DBG, RAS, SOS)
BOOT_ORDER = ((p.PSP_FW_TYPE_PSP_KDB, p.PSP_BL__LOAD_KEY_DATABASE),
              (p.PSP_FW_TYPE_PSP_SPL, p.PSP_BL__LOAD_TOS_SPL_TABLE),
              (p.PSP_FW_TYPE_PSP_SYS_DRV, p.PSP_BL__LOAD_SYSDRV), (p.PSP_FW_TYPE_PSP_SOC_DRV, p.PSP_BL__LOAD_SOCDRV),
              (p.PSP_FW_TYPE_PSP_INTF_DRV, p.PSP_BL__LOAD_INTFDRV), (p.PSP_FW_TYPE_PSP_DBG_DRV, p.PSP_BL__LOAD_DBGDRV),
              (p.PSP_FW_TYPE_PSP_RAS_DRV, p.PSP_BL__LOAD_RASDRV), (p.PSP_FW_TYPE_PSP_SOS, p.PSP_BL__LOAD_SOSDRV))
COMPONENT_NAMES = {p.PSP_FW_TYPE_PSP_KDB: "KDB", p.PSP_FW_TYPE_PSP_SPL: "SPL", p.PSP_FW_TYPE_PSP_SYS_DRV: "SYS_DRV",
                   p.PSP_FW_TYPE_PSP_SOC_DRV: "SOC_DRV", p.PSP_FW_TYPE_PSP_INTF_DRV: "INTF_DRV",
                   p.PSP_FW_TYPE_PSP_DBG_DRV: "DBG_DRV", p.PSP_FW_TYPE_PSP_RAS_DRV: "RAS_DRV",
                   p.PSP_FW_TYPE_PSP_SOS: "SOS"}
RING_SIZE = 0x10000
FENCE_SIZE = CMD_SIZE = 0x1000
PSP_STATUS_NAMES = {getattr(p, n): n for n in ("PSP_ERR_UNKNOWN_COMMAND", "TEE_ERROR_NOT_SUPPORTED",
                                                "TEE_ERROR_BAD_PARAMETERS", "TEE_ERROR_SECURITY",
                                                "TEE_ERROR_BAD_STATE")}


class PspError(RuntimeError):
    def __init__(self, message: str, status: int | None = None):
        self.status = status
        super().__init__(message)


def status_name(status: int) -> str:
    return f"{status:#x} ({PSP_STATUS_NAMES.get(status, 'unknown status')})"


class Psp:
    def __init__(self, mmio: Mmio, vram: Vram, mc_base: int, alloc: Callable[[int, int], int], timeout: float = 2.0):
        self.mmio, self.vram, self.mc_base, self.timeout = mmio, vram, mc_base, timeout
        self.msg1 = alloc(p.PSP_1_MEG, p.PSP_1_MEG)    # staging buffer the PSP reads images from
        self.ring = alloc(RING_SIZE, 0x1000)
        self.cmd = alloc(CMD_SIZE, 0x1000)
        self.fence = alloc(FENCE_SIZE, 0x1000)
        self.alloc = alloc
        self.fence_value = 0

    def mc(self, vram_offset: int) -> tuple[int, int]:
        """The MC address of a VRAM offset, as the (lo, hi) dword pair the PSP's registers and commands take."""
        address = self.mc_base + vram_offset
        return address & 0xFFFFFFFF, address >> 32

    def _stage(self, data: bytes) -> None:
        if len(data) > p.PSP_1_MEG:
            raise PspError(f"firmware image of {len(data)} bytes exceeds the 1 MiB PSP staging buffer")
        self.vram.write(self.msg1, bytes(data) + b"\0" * (-len(data) % 4))
        nbio.flush_hdp(self.mmio)

    def _wait(self, reg, mask: int, value: int, what: str) -> int:
        try:
            return wait_until(lambda: self.mmio.read(reg), lambda v: v & mask == value, what, self.timeout)
        except PollTimeout as e:
            raise PspError(f"PSP timed out: {e}") from None

    # --- bootloader -------------------------------------------------------------------------------
    def sos_alive(self) -> bool:
        return self.mmio.read(p.C2PMSG_81) != 0

    def boot_sos(self, components: dict[int, bytes]) -> int:
        """Load the sOS through the bootloader; returns the sOS version (C2PMSG_81)."""
        for fw_type, command in BOOT_ORDER:
            if fw_type not in components:
                continue
            name = COMPONENT_NAMES[fw_type]
            self._wait(p.C2PMSG_35, p.READY, p.READY, f"bootloader ready before {name}")
            self._stage(components[fw_type])
            lo, hi = self.mc(self.msg1)
            self.mmio.write(p.C2PMSG_36, (hi << 32 | lo) >> 20)
            self.mmio.write(p.C2PMSG_35, command)
            if command != p.PSP_BL__LOAD_SOSDRV:
                status = self._wait(p.C2PMSG_35, p.READY, p.READY, f"bootloader to load {name}") & p.STATUS_MASK
                if status:
                    raise PspError(f"PSP bootloader failed to load {name}: status {status:#x}", status)
        try:
            return wait_until(lambda: self.mmio.read(p.C2PMSG_81), bool, "sOS to start", self.timeout)
        except PollTimeout as e:
            status = self.mmio.read(p.C2PMSG_35) & p.STATUS_MASK
            raise PspError(f"sOS did not start (bootloader status {status:#x}): {e}", status) from None

    # --- ring ---------------------------------------------------------------------------------------
    def create_ring(self) -> None:
        self._wait(p.C2PMSG_64, p.READY, p.READY, "sOS ready for the ring")
        lo, hi = self.mc(self.ring)
        self.mmio.write(p.C2PMSG_69, lo)
        self.mmio.write(p.C2PMSG_70, hi)
        self.mmio.write(p.C2PMSG_71, RING_SIZE)
        self.mmio.write(p.C2PMSG_64, p.PSP_RING_TYPE__KM << 16)
        status = self._wait(p.C2PMSG_64, p.READY, p.READY, "ring creation") & p.STATUS_MASK
        if status:
            raise PspError(f"PSP ring creation failed: status {status:#x}", status)

    def submit(self, cmd_id: int, body: bytes, what: str) -> tuple:
        """Run one GFX command; the response (status, session_id, fw_addr_lo, fw_addr_hi, tmr_size)."""
        cmd = bytearray(p.CMD_RESP_SIZE)
        p.CMD_HEADER.pack_into(cmd, 0, p.CMD_RESP_SIZE, 0, cmd_id, 0, 0, 0, 0)
        cmd[p.CMD_OFFSET:p.CMD_OFFSET + len(body)] = body
        self.vram.write(self.cmd, bytes(cmd))
        self.fence_value += 1
        wptr = self.mmio.read(p.C2PMSG_67)
        frame = p.RB_FRAME.pack(*self.mc(self.cmd), p.CMD_RESP_SIZE, *self.mc(self.fence), self.fence_value,
                                0, 0, 0, 0)
        self.vram.write(self.ring + 4 * (wptr % (RING_SIZE // 4)), frame)
        nbio.flush_hdp(self.mmio)
        self.mmio.write(p.C2PMSG_67, (wptr + p.RB_FRAME_DWORDS) % (RING_SIZE // 4))
        try:
            wait_until(lambda: int.from_bytes(self.vram.read(self.fence, 4), "little"),
                       lambda v: v == self.fence_value, f"fence of {what}", self.timeout)
        except PollTimeout as e:
            raise PspError(f"PSP did not complete {what}: {e}") from None
        resp = p.RESP.unpack(self.vram.read(self.cmd + p.RESP_OFFSET, p.RESP.size))
        if resp[0]:
            raise PspError(f"PSP command {what} failed: status {status_name(resp[0])}", resp[0])
        return resp

    def load_toc(self, toc: bytes) -> int:
        """LOAD_TOC; the TMR size the PSP asks for."""
        self._stage(toc)
        return self.submit(p.GFX_CMD_ID_LOAD_TOC, p.CMD_LOAD_TOC.pack(*self.mc(self.msg1), len(toc)), "LOAD_TOC")[4]

    def setup_tmr(self, size: int) -> int:
        tmr = self.alloc(size, p.PSP_TMR_ALIGNMENT)
        # virt_phy_addr = 1: the system (physical) address is given too, as the VRAM offset
        self.submit(p.GFX_CMD_ID_SETUP_TMR, p.CMD_SETUP_TMR.pack(*self.mc(tmr), size, 1, tmr & 0xFFFFFFFF, tmr >> 32),
                    "SETUP_TMR")
        return tmr

    def load_ip_fw(self, name: str, data: bytes) -> None:
        self._stage(data)
        self.submit(p.GFX_CMD_ID_LOAD_IP_FW, p.CMD_LOAD_IP_FW.pack(*self.mc(self.msg1), len(data), p.GFX_FW_TYPE[name]),
                    f"LOAD_IP_FW {name}")

    def autoload_rlc(self) -> None:
        self.submit(p.GFX_CMD_ID_AUTOLOAD_RLC, b"", "AUTOLOAD_RLC")
