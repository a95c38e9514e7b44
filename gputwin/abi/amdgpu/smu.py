"""The SMU (MP1) message mailbox of smu_v13_0_0 / smu_v14_0_2 (Linux smu_v13_0_0_ppsmc.h, smu_v14_0_2_ppsmc.h,
smu_cmn.c): the driver clears the response register C2PMSG_90, writes the argument to C2PMSG_82 and the message
id to C2PMSG_66; the firmware answers with a PPSMC_Result in C2PMSG_90 and may return a value in C2PMSG_82."""
from __future__ import annotations

from gputwin.abi.amdgpu import Reg

C2PMSG_66 = Reg("MP1_SMN_C2PMSG_66", "MP1", 0, 0x282)   # message
C2PMSG_82 = Reg("MP1_SMN_C2PMSG_82", "MP1", 0, 0x292)   # argument / returned value
C2PMSG_90 = Reg("MP1_SMN_C2PMSG_90", "MP1", 0, 0x29A)   # response
# the debug mailbox (smu->debug_{param,msg,resp}_reg of smu_v13_0_0 / smu_v14_0_2), for Mode1Reset
DEBUG_PARAM = Reg("MP1_SMN_C2PMSG_53", "MP1", 0, 0x275)
DEBUG_RESP = Reg("MP1_SMN_C2PMSG_54", "MP1", 0, 0x276)
DEBUG_MSG = Reg("MP1_SMN_C2PMSG_75", "MP1", 0, 0x28B)
DEBUGSMC_MSG_Mode1Reset = 2

PPSMC_Result_OK = 0x1
PPSMC_Result_Failed = 0xFF
PPSMC_Result_UnknownCmd = 0xFE
PPSMC_Result_CmdRejectedPrereq = 0xFD
PPSMC_Result_CmdRejectedBusy = 0xFC
RESULT_NAMES = {PPSMC_Result_OK: "OK", PPSMC_Result_Failed: "Failed", PPSMC_Result_UnknownCmd: "UnknownCmd",
                PPSMC_Result_CmdRejectedPrereq: "CmdRejectedPrereq", PPSMC_Result_CmdRejectedBusy: "CmdRejectedBusy"}

# message ids common to smu_v13_0_0 and smu_v14_0_2
PPSMC_MSG_TestMessage = 0x1
PPSMC_MSG_GetSmuVersion = 0x2
PPSMC_MSG_GetDriverIfVersion = 0x3
PPSMC_MSG_SetAllowedFeaturesMaskLow = 0x4
PPSMC_MSG_SetAllowedFeaturesMaskHigh = 0x5
PPSMC_MSG_EnableAllSmuFeatures = 0x6
PPSMC_MSG_DisableAllSmuFeatures = 0x7
PPSMC_MSG_GetRunningSmuFeaturesLow = 0xC
PPSMC_MSG_GetRunningSmuFeaturesHigh = 0xD
PPSMC_MSG_SetDriverDramAddrHigh = 0xE
PPSMC_MSG_SetDriverDramAddrLow = 0xF
PPSMC_MSG_SetToolsDramAddrHigh = 0x10
PPSMC_MSG_SetToolsDramAddrLow = 0x11
MSG_NAMES = {v: k.removeprefix("PPSMC_MSG_") for k, v in dict(globals()).items() if k.startswith("PPSMC_MSG_")}

