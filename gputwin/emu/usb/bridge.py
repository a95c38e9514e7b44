"""An ASM2464 USB-to-PCIe enclosure with a GPU card in it: the bridge chip (XDATA, SRAM, PCIe request
engine, SRAM DMA engine, link power), the PCIe hierarchy behind it (the chip's two ports, the card's
switch, the GPU function) and the custom firmware that answers the USB host. The mock libusb backend
(gputwin/mock/usb.py) presents `firmware` to pyusb.

The GPU function's `upstream` becomes the bridge SRAM: its bus-master reads and writes (SDMA, shaders)
reach the 512 KiB copy buffer at 0x200000 and the page at 0x820000, nothing else, and only while bus
mastering is enabled on the GPU and every bridge above it (checked when a view is taken)."""
from __future__ import annotations

from gputwin.abi.asm2464 import XDATA_LTSSM, XDATA_QUEUE_PAGE, XDATA_SRAM
from gputwin.emu.pcie import NotModelled, PcieBridge, PcieFunction
from gputwin.emu.usb.firmware import CustomFirmware
from gputwin.emu.usb.link import Link
from gputwin.emu.usb.sram import XDATA_WINDOW, Sram, SramDma
from gputwin.emu.usb.tlp import REGS_END, REGS_START, TlpEngine
from gputwin.emu.usb.topology import Topology
from gputwin.emu.usb.xdata import XData

ASMEDIA_VENDOR_ID, ASMEDIA_PORT_ID = 0x1B21, 0x2461
AMD_VENDOR_ID, AMD_SWITCH_UPSTREAM_ID, AMD_SWITCH_DOWNSTREAM_ID = 0x1002, 0x1478, 0x1479


class Asm2464Enclosure:
    def __init__(self, endpoint: PcieFunction, *, powered: bool = False, train_polls: int = 0,
                 serial: str = "ffffffff", gpu_switch: bool = True, usb2: bool = False):
        self.endpoint = endpoint
        self.root = PcieBridge("ASM2464 port", ASMEDIA_VENDOR_ID, ASMEDIA_PORT_ID)
        port = self.root.attach(PcieBridge("ASM2464 downstream port", ASMEDIA_VENDOR_ID, ASMEDIA_PORT_ID))
        if gpu_switch:
            upstream = port.attach(PcieBridge("GPU switch upstream port", AMD_VENDOR_ID, AMD_SWITCH_UPSTREAM_ID))
            port = upstream.attach(PcieBridge("GPU switch downstream port", AMD_VENDOR_ID, AMD_SWITCH_DOWNSTREAM_ID))
        port.attach(endpoint)
        self.topology = Topology(self.root)
        self.sram = Sram()
        endpoint.upstream = self.sram.host_memory(
            lambda: all(f.bus_master() for f in self.topology.functions()))
        self.link = Link(powered=powered, train_polls=train_polls)
        self.tlp = TlpEngine(self.topology, self.link)
        self.dma = SramDma(self.sram)
        self.xdata = XData()
        self.xdata.map(REGS_START, REGS_END - REGS_START, self.tlp.read, self.tlp.write)
        self.xdata.map(XDATA_LTSSM, 1, lambda addr, n: bytes([self.link.ltssm()]), self._read_only)
        self.xdata.map_memory(XDATA_SRAM, self.sram.copy_buffer[:XDATA_WINDOW])
        self.xdata.map_memory(XDATA_QUEUE_PAGE, self.sram.queue_page)
        self.firmware = CustomFirmware(self.xdata, self.tlp, self.dma, self.link, serial, usb2)

    @staticmethod
    def _read_only(addr: int, data: bytes) -> None:
        raise NotModelled(f"ASM2464 XDATA register {addr:#06x} is read-only in the model")
