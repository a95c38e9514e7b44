"""gputwin: a GPU driver stack verified bit-exact on emulated hardware."""
from gputwin.errors import (DeviceLost, GpuFault, GpuHang, IllegalInstruction, KernelNotFound, MemoryFault,
                            OutOfMemory, PacketError, SanitizerError)

__version__ = "0.1.0"
__all__ = ["open_device", "DeviceLost", "GpuFault", "GpuHang", "IllegalInstruction", "KernelNotFound",
           "MemoryFault", "OutOfMemory", "PacketError", "SanitizerError", "__version__"]


def open_device(spec: str | None = None):
    """Open the device(s) named by `spec` or $DEV (default MOCKAMD); see gputwin.device."""
    from gputwin.device import open_device as _open
    return _open(spec)
