"""What can go wrong between the host and a GPU behind an ASM2464 bridge, as the driver reports it."""
from __future__ import annotations

from gputwin.abi.pcie import Completion
from gputwin.device import TargetNotAvailable


class UsbBridgeError(RuntimeError):
    """The bridge or the PCIe link behind it did not do what was asked; the message says what and why."""


class BridgeNotFound(TargetNotAvailable, UsbBridgeError):
    """No ASM2464 with the custom firmware is reachable (or libusb is not available)."""


class UsbTransferError(UsbBridgeError):
    """USB transfers failed (stall, timeout, I/O error) more often than the driver retries."""


class UsbTimeout(UsbTransferError):
    pass


class UsbStall(UsbTransferError):
    pass


class UsbDisconnected(UsbTransferError):
    """The enclosure is gone (unplugged, powered off): nothing is retried."""


class LinkDown(UsbBridgeError):
    """The PCIe link behind the bridge did not come up (or went down)."""


class TlpError(UsbBridgeError):
    """A PCIe request completed with a status other than successful (UR, CA, CRS) or not at all."""

    def __init__(self, message: str, status: Completion | None):
        self.status = None if status is None else Completion(status)
        super().__init__(message if status is None else f"{message}: completion {self.status.name}")
