"""PCI Express facts both sides of the seam use: configuration-space offsets of the type-0 and type-1
headers, TLP fmt/type codes and completion status codes (PCI Local Bus 3.0, PCI-to-PCI Bridge 1.2,
PCIe Base 4.0 sections 2.2 and 7). The emulated functions (gputwin/emu/pcie.py) and the userspace
bring-up (gputwin/drivers/usb/bringup.py) read the same numbers from here."""
from __future__ import annotations

import enum


class Completion(enum.IntEnum):
    """TLP completion status (PCIe Base, Completion Status field)."""
    SC = 0    # successful completion
    UR = 1    # unsupported request
    CRS = 2   # configuration request retry status
    CA = 4    # completer abort


# common header
VENDOR_ID, DEVICE_ID, COMMAND, STATUS, REVISION_ID, CLASS_CODE = 0x00, 0x02, 0x04, 0x06, 0x08, 0x09
HEADER_TYPE, BAR0, CAP_PTR = 0x0E, 0x10, 0x34
COMMAND_IO, COMMAND_MEM, COMMAND_MASTER = 1 << 0, 1 << 1, 1 << 2
# type 0 (endpoint) header
SUBSYSTEM_VENDOR_ID, SUBSYSTEM_ID = 0x2C, 0x2E
BAR_SLOTS = 6
BAR_SPACE_IO, BAR_MEM_TYPE_64, BAR_MEM_PREFETCH = 1 << 0, 0b10 << 1, 1 << 3
# type 1 (bridge) header
PRIMARY_BUS, SECONDARY_BUS, SUBORDINATE_BUS = 0x18, 0x19, 0x1A
MEMORY_BASE, MEMORY_LIMIT = 0x20, 0x22                 # bits 15:4 = address bits 31:20
PREF_MEMORY_BASE, PREF_MEMORY_LIMIT = 0x24, 0x26       # bits 15:4 = address bits 31:20; bits 3:0 = 1: 64-bit
PREF_BASE_UPPER32, PREF_LIMIT_UPPER32 = 0x28, 0x2C
BRIDGE_CONTROL = 0x3E
BRIDGE_CTL_BUS_RESET = 1 << 6
WINDOW_GRANULE = 1 << 20                               # bridge memory windows are 1 MiB granular
# extended capabilities
EXT_CAP_START, EXT_CAP_REBAR = 0x100, 0x15
REBAR_CAP, REBAR_CTRL = 0x04, 0x08                     # first BAR's entry, relative to the capability
REBAR_CTRL_SIZE_SHIFT, REBAR_CTRL_SIZE_MASK = 8, 0x3F << 8

# TLP fmt/type byte (header DW0 bits 31:24)
FMT_HAS_DATA, FMT_4DW = 0x40, 0x20
TLP_MRD32, TLP_MRD64, TLP_MWR32, TLP_MWR64 = 0x00, 0x20, 0x40, 0x60
TLP_CFGRD0, TLP_CFGRD1, TLP_CFGWR0, TLP_CFGWR1 = 0x04, 0x05, 0x44, 0x45


def cfg_address(bus: int, dev: int, fn: int, offset: int) -> int:
    """The address field of a configuration TLP as a bridge's TLP engine takes it (bus/dev/fn/register)."""
    return bus << 24 | dev << 19 | fn << 16 | (offset & 0xFFC)


def ext_cap_id(header: int) -> int:
    return header & 0xFFFF


def ext_cap_next(header: int) -> int:
    return (header >> 20) & 0xFFC
