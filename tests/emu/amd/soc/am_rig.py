"""A booted emulated board for the memory and queue block tests: the board attached in-process, the AM
driver's boot run over it (so the PSP really loaded the microcode the queues need)."""
from gputwin.drivers.amd.am.boot import boot
from gputwin.emu.amd.soc import board
from gputwin.mock.pci import DirectPciDevice


def booted(arch: str = "gfx1100"):
    """(function, pci, chip): the emulated function, its PciDevice, and the driver's AmBoot."""
    function = board.build(arch)
    pci = DirectPciDevice(function)
    return function, pci, boot(pci)
