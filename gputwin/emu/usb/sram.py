"""The ASM2464's internal SRAM as the GPU and the USB host reach it, and the DMA engine the custom
firmware's 0xF2 request arms (tinygrad support/usb.py scsi_write/scsi_read_arm, asm2464pd-firmware
app/README.md "GPU-Accessible PCIe Regions"):

  512 KiB copy buffer at bus address 0x200000; XDATA 0xF000..0xFFFF shows its first 4 KiB
  4 KiB page at bus address 0x820000 (the NVMe submission-queue page); XDATA 0xA000..0xAFFF shows it

0xF2 moves whole 512-byte sectors between a bulk endpoint and the copy buffer, starting at a 16 KiB slot
(wIndex low byte) and bounded by the slots it is given (wIndex high byte, 0 meaning 1). wValue bits 14:0
count sectors, bit 15 picks the direction (set: SRAM to the host on bulk IN 0x81; clear: bulk OUT 0x02
into SRAM). Other queue pages of the real chip (0x800000, 0x808000, 0x828000) are not modelled: a GPU
access there reaches no memory (UR)."""
from __future__ import annotations

import numpy as np

from gputwin.abi.asm2464 import (QUEUE_PAGE_BUS_ADDRESS, QUEUE_PAGE_SIZE, SECTOR, SRAM_BUS_ADDRESS,
                                 SRAM_DMA_TO_HOST, SRAM_SIZE)
from gputwin.abi.asm2464 import SRAM_SLOT as SLOT
from gputwin.emu.pcie import HostMemory, NotModelled

XDATA_WINDOW = 0x1000     # how much of a buffer XDATA shows


class Sram:
    def __init__(self):
        self.copy_buffer = np.zeros(SRAM_SIZE, np.uint8)
        self.queue_page = np.zeros(QUEUE_PAGE_SIZE, np.uint8)

    def host_memory(self, path_enabled=None) -> HostMemory:
        """The bus ranges a GPU behind the bridge reaches (its function's `upstream`)."""
        mem = HostMemory("ASM2464 SRAM", path_enabled)
        mem.add(SRAM_BUS_ADDRESS, self.copy_buffer)
        mem.add(QUEUE_PAGE_BUS_ADDRESS, self.queue_page)
        return mem


class SramDma:
    """One armed 0xF2 transfer at a time; arming again replaces it (as the firmware reprograms the engine)."""

    def __init__(self, sram: Sram):
        self.sram = sram
        self.armed: tuple[bool, int, int] | None = None   # (to_host, next byte offset, bytes left)

    def arm(self, w_value: int, w_index: int) -> None:
        to_host, sectors = bool(w_value & SRAM_DMA_TO_HOST), w_value & 0x7FFF
        slot, slots = w_index & 0xFF, (w_index >> 8) or 1
        start, nbytes = slot * SLOT, sectors * SECTOR
        if nbytes > slots * SLOT or start + nbytes > SRAM_SIZE:
            raise NotModelled(f"ASM2464 0xF2 DMA of {sectors} sectors from slot {slot} over {slots} slots "
                              f"runs past its slots or the {SRAM_SIZE // 1024} KiB SRAM")
        self.armed = (to_host, start, nbytes) if nbytes else None

    def disarm(self) -> None:
        self.armed = None

    def expects(self, to_host: bool) -> bool:
        return self.armed is not None and self.armed[0] == to_host

    def write(self, data) -> int:
        """Take bulk OUT bytes into SRAM; returns how many were taken (at most what is armed)."""
        _, start, left = self.armed
        n = min(len(data), left)
        self.sram.copy_buffer[start:start + n] = np.frombuffer(data, np.uint8, n)
        self._advance(start + n, left - n, False)
        return n

    def read(self, length: int) -> bytes:
        _, start, left = self.armed
        n = min(length, left)
        self._advance(start + n, left - n, True)
        return self.sram.copy_buffer[start:start + n].tobytes()

    def _advance(self, start: int, left: int, to_host: bool) -> None:
        self.armed = (to_host, start, left) if left else None
