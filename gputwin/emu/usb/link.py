"""PCIe power and link state of the ASM2464's downstream port, as the custom firmware's 0xF3 request
drives it (handmade/src/main.c pcie_power_on/off): power on = rails up, PERST# released, link training
until the LTSSM register (XDATA 0xB450) reads 0x78 (L0 on the ADD1:0001 firmware); power off = PERST#
asserted and the rails removed. The firmware boots with PCIe off, so a driver powers it on first.

Power-on asserts PERST# before releasing it, which resets the GPU: the model supports one power-on per
enclosure (a second one, or one after a power-off, raises NotModelled rather than pretending the GPU
kept its state). `train_polls` makes the LTSSM read "polling" that many times before L0, so a driver's
link-up wait is exercised."""
from __future__ import annotations

from gputwin.abi.asm2464 import LTSSM_L0
from gputwin.emu.pcie import NotModelled

LTSSM_DETECT_QUIET, LTSSM_POLLING = 0x00, 0x10


class Link:
    def __init__(self, *, powered: bool = False, train_polls: int = 0):
        self.powered, self._train_left, self._powered_once = powered, 0, powered
        self.train_polls = train_polls

    @property
    def up(self) -> bool:
        return self.powered and self._train_left == 0

    def power(self, on: bool) -> None:
        if not on:
            self.powered = False
            return
        if self._powered_once:
            raise NotModelled("ASM2464 PCIe power-on after the GPU was powered once: PERST# would reset the "
                              "GPU, which is not modelled")
        self.powered = self._powered_once = True
        self._train_left = self.train_polls

    def ltssm(self) -> int:
        if not self.powered:
            return LTSSM_DETECT_QUIET
        if self._train_left:
            self._train_left -= 1
            return LTSSM_POLLING
        return LTSSM_L0
