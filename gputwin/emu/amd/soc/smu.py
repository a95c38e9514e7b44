"""The emulated SMU (MP1) mailbox of smu_v13_0_0 / smu_v14_0_2 (constants in gputwin/abi/amdgpu/smu.py).

The SMU runs once the PSP has loaded its firmware (LOAD_IP_FW SMU); before that a message gets no response
(C2PMSG_90 stays 0, the driver times out), as on hardware. A message is taken when C2PMSG_66 is written: the
answer (a PPSMC_Result) goes to C2PMSG_90 and a returned value to C2PMSG_82. Unknown ids answer UnknownCmd;
EnableAllSmuFeatures before the driver table address is set answers CmdRejectedPrereq; a driver-table address
outside the frame buffer answers Failed. The debug mailbox (C2PMSG_75/53/54) takes Mode1Reset: it answers OK,
then every block of the board with a reset() goes back to its power-on state (the sOS and all firmware gone)."""
from __future__ import annotations

from dataclasses import dataclass, field

from gputwin.abi.amdgpu import ip_bases
from gputwin.abi.amdgpu import smu as s
from gputwin.emu.amd.soc.regfile import RegisterError

SMU_VERSION = {"gfx1100": 0x004E4B00, "gfx1201": 0x00683200}   # what GetSmuVersion reports (major.minor.patch)
DRIVER_IF_VERSION = {"gfx1100": 0x3D, "gfx1201": 0x2E}
ALL_FEATURES = (1 << 64) - 1


@dataclass
class Smu:
    function: object
    allowed_features: int = 0
    enabled_features: int = 0
    driver_table: list = field(default_factory=lambda: [None, None])   # [high, low]
    tools_table: list = field(default_factory=lambda: [None, None])
    log: list = field(default_factory=list)

    @property
    def running(self) -> bool:
        return "SMU" in self.function.firmware

    def message(self, msg: int) -> None:
        regs = self.function.regs
        arg_dword, resp_dword = (r.address(ip_bases(self.function.arch)) for r in (s.C2PMSG_82, s.C2PMSG_90))
        if not self.running:
            return   # no firmware runs the mailbox: the response stays as the driver left it
        result, value = self._run(msg, regs.value(arg_dword))
        self.log.append((s.MSG_NAMES.get(msg, f"{msg:#x}"), result))
        if value is not None:
            regs.get(arg_dword).value = value & 0xFFFFFFFF
        regs.get(resp_dword).value = result

    def debug_message(self, msg: int) -> None:
        if not self.running:
            return
        resp = self.function.regs.get(s.DEBUG_RESP.address(ip_bases(self.function.arch)))
        if msg != s.DEBUGSMC_MSG_Mode1Reset:
            resp.value = s.PPSMC_Result_UnknownCmd
            return
        resp.value = s.PPSMC_Result_OK
        self.log.append(("Mode1Reset", s.PPSMC_Result_OK))
        for block in self.function.blocks.values():
            if hasattr(block, "reset"):
                block.reset()

    def reset(self) -> None:
        """Power-on state (keeps the log)."""
        self.__dict__.update({k: v for k, v in Smu(self.function).__dict__.items() if k != "log"})

    def _run(self, msg: int, arg: int) -> tuple[int, int | None]:
        arch = self.function.arch
        if msg == s.PPSMC_MSG_TestMessage:
            return s.PPSMC_Result_OK, arg + 1
        if msg == s.PPSMC_MSG_GetSmuVersion:
            return s.PPSMC_Result_OK, SMU_VERSION[arch]
        if msg == s.PPSMC_MSG_GetDriverIfVersion:
            return s.PPSMC_Result_OK, DRIVER_IF_VERSION[arch]
        if msg in (s.PPSMC_MSG_SetAllowedFeaturesMaskLow, s.PPSMC_MSG_SetAllowedFeaturesMaskHigh):
            shift = 0 if msg == s.PPSMC_MSG_SetAllowedFeaturesMaskLow else 32
            self.allowed_features = self.allowed_features & ~(0xFFFFFFFF << shift) | arg << shift
            return s.PPSMC_Result_OK, None
        if msg in (s.PPSMC_MSG_SetDriverDramAddrHigh, s.PPSMC_MSG_SetDriverDramAddrLow,
                   s.PPSMC_MSG_SetToolsDramAddrHigh, s.PPSMC_MSG_SetToolsDramAddrLow):
            return self._set_table_address(msg, arg), None
        if msg == s.PPSMC_MSG_EnableAllSmuFeatures:
            if None in self.driver_table:
                return s.PPSMC_Result_CmdRejectedPrereq, None
            self.enabled_features = self.allowed_features or ALL_FEATURES
            return s.PPSMC_Result_OK, None
        if msg == s.PPSMC_MSG_DisableAllSmuFeatures:
            self.enabled_features = 0
            return s.PPSMC_Result_OK, None
        if msg in (s.PPSMC_MSG_GetRunningSmuFeaturesLow, s.PPSMC_MSG_GetRunningSmuFeaturesHigh):
            shift = 0 if msg == s.PPSMC_MSG_GetRunningSmuFeaturesLow else 32
            return s.PPSMC_Result_OK, self.enabled_features >> shift
        return s.PPSMC_Result_UnknownCmd, None

    def _set_table_address(self, msg: int, arg: int) -> int:
        table = self.driver_table if msg in (s.PPSMC_MSG_SetDriverDramAddrHigh,
                                             s.PPSMC_MSG_SetDriverDramAddrLow) else self.tools_table
        table[0 if msg in (s.PPSMC_MSG_SetDriverDramAddrHigh, s.PPSMC_MSG_SetToolsDramAddrHigh) else 1] = arg
        if None not in table:
            try:
                self.function.fb.vram_offset(table[0] << 32 | table[1], 4, "SMU table")
            except RegisterError:
                table[:] = [None, None]
                return s.PPSMC_Result_Failed
        return s.PPSMC_Result_OK


def attach(function) -> Smu:
    smu = Smu(function)
    regs, bases = function.regs, ip_bases(function.arch)
    regs.add(s.C2PMSG_66.address(bases), s.C2PMSG_66.name, write=smu.message)
    regs.add(s.C2PMSG_82.address(bases), s.C2PMSG_82.name)
    regs.add(s.C2PMSG_90.address(bases), s.C2PMSG_90.name)
    regs.add(s.DEBUG_MSG.address(bases), s.DEBUG_MSG.name, write=smu.debug_message)
    regs.add(s.DEBUG_PARAM.address(bases), s.DEBUG_PARAM.name)
    regs.add(s.DEBUG_RESP.address(bases), s.DEBUG_RESP.name)
    return smu
