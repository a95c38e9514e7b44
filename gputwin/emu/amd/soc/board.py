"""The emulated AMD board: the PCIe function with every IP block attached, in the order the blocks depend on
each other (NBIO's windows first; discovery writes its table into VRAM; the GMC before the IH that writes
through the FB aperture; the interrupt routing last, over the blocks it reports for). Each block module's
`attach(function)` registers its registers on function.regs and returns the block; the board keeps them by
name in `function.blocks`. Also set here: `function.fb` (the frame buffer's MC window, mc.py) and
`function.firmware` (what the PSP loaded, psp.py). docs/driver-am.md describes the blocks."""
from __future__ import annotations

from gputwin.emu.amd.soc import discovery, gfx, gmc, ih, interrupts, mc, nbio, psp, sdma, smu
from gputwin.emu.amd.soc.function import AmdGpuFunction


def build(arch: str = "gfx1100", *, vram_size: int | None = None, name: str | None = None) -> AmdGpuFunction:
    function = AmdGpuFunction(arch, vram_size=vram_size, name=name)
    function.blocks = {}
    function.blocks["nbio"] = nbio.attach(function)
    function.blocks["discovery"] = discovery.attach(function)
    function.fb = function.blocks["fb"] = mc.attach(function, discovery.IP_VERSIONS[arch]["MMHUB"])
    function.blocks["psp"] = psp.attach(function)
    function.blocks["smu"] = smu.attach(function)
    function.blocks["gmc"] = gmc.attach(function)
    function.blocks["ih"] = ih.attach(function)
    function.blocks["gfx"] = gfx.attach(function)
    function.blocks["sdma"] = sdma.attach(function)
    function.blocks["interrupts"] = interrupts.attach(function)
    return function
