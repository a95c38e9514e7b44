"""gputwin's sanitizer report on an NVIDIA channel: what the emulated GPU's checkers (GPUTWIN_SANITIZE,
docs/sanitizers.md) found, fetched by the driver after the channel's robust-channel error.

NOT an NVIDIA structure. RM reports a graphics exception to the user only as a robust-channel code in the
channel's error notifier (ROBUST_CHANNEL_GR_EXCEPTION); the findings do not fit there. gputwin's mock RM
answers one extra NV_ESC_RM_CONTROL command on a channel, in a class-906F category RM does not use
(0xF0): on a real RM it fails with NV_ERR_NOT_SUPPORTED and the driver reports the bare RC code."""
from __future__ import annotations

import ctypes

from gputwin.abi import nv_methods as m
from gputwin.abi.amd_pm4 import GPUTWIN_NOP_HOST_OBSERVED
from gputwin.abi.nv_rm import NvU32, NvU64, _S

NV906F_CTRL_CMD_GPUTWIN_GET_SANITIZER_REPORT = 0x906FF001
MESSAGE_BYTES = 2048


class GPUTWIN_SANITIZER_REPORT_PARAMS(_S):
    _fields_ = [("valid", NvU32),            # 1: the channel's error was a sanitizer finding
                ("write", NvU32),            # the first finding's access was a write
                ("address", NvU64),          # its address (0 when it has none)
                ("line", NvU32),             # its PTX line (0 when unknown)
                ("pad", NvU32),
                ("kernel", ctypes.c_char * 128),
                ("instruction", ctypes.c_char * 96),   # its PTX statement
                ("message", ctypes.c_char * MESSAGE_BYTES)]   # the findings, one per line


# gputwin's host-observed marker on a channel (NOT an NVIDIA method): the data of a non-incrementing NOP
# (NVC56F_NOP ignores its data), [HOST_OBSERVED, address lo, address hi, value lo, value hi]: the host saw the
# 64-bit semaphore at `address` at `value` or more before it pushed what follows. The NV driver puts it first
# in a submission under racecheck; the emulated host class hands it to racecheck across channels, which
# orders the channel after the release that reached the value (docs/sanitizers.md). The magic is the one
# the AMD queues' NOP marker carries.
HOST_OBSERVED = GPUTWIN_NOP_HOST_OBSERVED
HOST_OBSERVED_DWORDS = 5


def host_observed_marker(address: int, value: int) -> list[int]:
    """The marker's pushbuffer dwords: the NOP method header, then its five data dwords."""
    return [m.method_header(m.SEC_OP_NON_INC_METHOD, 0, m.NVC56F_NOP, HOST_OBSERVED_DWORDS), HOST_OBSERVED,
            address & 0xFFFFFFFF, address >> 32, value & 0xFFFFFFFF, value >> 32]
