"""`python -m gputwin.drivers.usb.probe`: bring up the first ASM2464 enclosure and print
what it found, one fact per line: the link state, each bus's device 0 (ids, header type), the BARs
and the bridge windows. On real hardware this confirms the facts docs/usb.md lists as unconfirmed (the
ASMedia ports' ids, the card switch's ids, the Resizable BAR sizes). `main(backend=...)` runs it over another
pyusb backend, e.g. gputwin.mock.usb's emulated enclosure (the driver itself never imports the mock)."""
from __future__ import annotations

import argparse
import sys

from gputwin.abi import pcie as regs
from gputwin.drivers.usb import BridgeNotFound, UsbBridgeError, open_usb_pci


def report(dev, out=None) -> None:
    out = out or sys.stdout
    proto, h = dev.proto, dev.hierarchy
    print(f"usb {proto.usb.where} product={proto.usb.product!r} ltssm={proto.link_state():#04x}", file=out)
    for bus in (*h.bridge_buses, h.endpoint_bus):
        ids = proto.config_read(bus, 0, 0, regs.VENDOR_ID)
        header = proto.config_read(bus, 0, 0, regs.HEADER_TYPE, 1)
        klass = proto.config_read(bus, 0, 0, regs.REVISION_ID) >> 8
        line = f"bus {bus:02x}:00.0 {ids & 0xFFFF:04x}:{ids >> 16:04x} class={klass:06x} header={header:#04x}"
        if header & 0x7F == 1:
            buses = proto.config_read(bus, 0, 0, regs.PRIMARY_BUS)
            line += (f" buses={buses & 0xFF}/{buses >> 8 & 0xFF}/{buses >> 16 & 0xFF}"
                     f" mem={proto.config_read(bus, 0, 0, regs.MEMORY_BASE):#010x}"
                     f" pref={proto.config_read(bus, 0, 0, regs.PREF_MEMORY_BASE):#010x}"
                     f" pref_upper={proto.config_read(bus, 0, 0, regs.PREF_BASE_UPPER32):#x}"
                     f"..{proto.config_read(bus, 0, 0, regs.PREF_LIMIT_UPPER32):#x}")
        print(line, file=out)
    for i, a in sorted(dev.assignments.items()):
        kind = ("64-bit" if a.is64 else "32-bit") + (" prefetchable" if a.prefetchable else "")
        print(f"bar {i} address={a.address:#x} size={a.size:#x} {kind}", file=out)


def main(argv=None, backend=None) -> int:
    argparse.ArgumentParser(prog="python -m gputwin.drivers.usb.probe", description=__doc__).parse_args(argv)
    try:
        dev = open_usb_pci(backend)
    except (BridgeNotFound, UsbBridgeError) as e:
        print(f"probe: {e}", file=sys.stderr)
        return 1
    report(dev)
    dev.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
