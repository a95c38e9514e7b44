"""The SMU mailbox (smu_cmn.c's protocol): clear the response, write the argument, write the message id, poll
the response. Anything but PPSMC_Result_OK raises SmuError naming the message and the result."""
from __future__ import annotations

from gputwin.abi.amdgpu import smu as s
from gputwin.drivers.amd.am.mmio import Mmio, PollTimeout, wait_until


class SmuError(RuntimeError):
    def __init__(self, message: str, result: int | None):
        self.result = result
        super().__init__(message)


class Smu:
    def __init__(self, mmio: Mmio, timeout: float = 2.0):
        self.mmio, self.timeout = mmio, timeout

    def send(self, msg: int, arg: int = 0) -> int:
        """Send one message; the value the SMU returns in the argument register."""
        name = s.MSG_NAMES.get(msg, f"message {msg:#x}")
        self.mmio.write(s.C2PMSG_90, 0)
        self.mmio.write(s.C2PMSG_82, arg)
        self.mmio.write(s.C2PMSG_66, msg)
        try:
            result = wait_until(lambda: self.mmio.read(s.C2PMSG_90), bool, f"SMU response to {name}", self.timeout)
        except PollTimeout as e:
            raise SmuError(f"SMU did not answer {name} (is its firmware running?): {e}", None) from None
        if result != s.PPSMC_Result_OK:
            raise SmuError(f"SMU rejected {name}({arg:#x}): result {result:#x} "
                           f"({s.RESULT_NAMES.get(result, 'unknown result')})", result)
        return self.mmio.read(s.C2PMSG_82)

    def mode1_reset(self) -> None:
        """Reset the whole chip through the debug mailbox (what AM does to a chip a previous session left
        running): clear the response, write the parameter and the message, wait for OK."""
        self.mmio.write(s.DEBUG_RESP, 0)
        self.mmio.write(s.DEBUG_PARAM, 0)
        self.mmio.write(s.DEBUG_MSG, s.DEBUGSMC_MSG_Mode1Reset)
        try:
            result = wait_until(lambda: self.mmio.read(s.DEBUG_RESP), bool, "SMU response to Mode1Reset",
                                self.timeout)
        except PollTimeout as e:
            raise SmuError(f"SMU did not answer Mode1Reset: {e}", None) from None
        if result != s.PPSMC_Result_OK:
            raise SmuError(f"SMU rejected Mode1Reset: result {result:#x}", result)
