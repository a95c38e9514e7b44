"""The ASM2464 custom-firmware protocol (tinygrad's "handmade" firmware, asm2464pd-firmware
handmade/src/main.c; host side tinygrad runtime/support/usb.py): numbers both the bridge model
(gputwin/emu/usb/) and the driver (gputwin/drivers/usb/) speak. docs/usb.md describes the protocol."""
from __future__ import annotations

# vendor control requests (bmRequestType 0x40 OUT / 0xC0 IN)
REQ_XDATA_READ, REQ_XDATA_WRITE, REQ_TLP, REQ_SRAM_DMA, REQ_PCIE_POWER = 0xE4, 0xE5, 0xF0, 0xF2, 0xF3
XDATA_READ_MAX, XDATA_READ_MAX_USB2 = 512, 64   # bytes one 0xE4 data stage carries (SuperSpeed, USB 2)
# 0xF0 wIndex bits 1:0
MODE_SINGLE, MODE_STREAM_WRITE, MODE_STREAM_READ = 0, 1, 2
# 0xF0 IN reply byte 7
RET_DONE, RET_ERROR, RET_TIMEOUT = 0, 1, 0xFF
TLP_REPLY_SIZE = 8
# 0xF2 wValue bit 15: SRAM to host
SRAM_DMA_TO_HOST = 0x8000
EP_BULK_OUT, EP_BULK_IN = 0x02, 0x81

# XDATA
XDATA_LTSSM = 0xB450
LTSSM_L0 = 0x78                      # link trained, on the ADD1:0001 firmware
XDATA_SRAM, XDATA_QUEUE_PAGE = 0xF000, 0xA000

# bridge memory as the GPU reaches it (bus addresses)
SRAM_BUS_ADDRESS, SRAM_SIZE = 0x200000, 0x80000
QUEUE_PAGE_BUS_ADDRESS, QUEUE_PAGE_SIZE = 0x820000, 0x1000
SRAM_SLOT, SECTOR = 0x4000, 512
