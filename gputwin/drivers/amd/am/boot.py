"""Booting the GPU with no kernel driver, over its PCI BARs (gputwin/drivers/pci.py PciDevice):

  discovery      VRAM size (RCC_CONFIG_MEMSIZE), the IP discovery table at its top -> IP versions and bases
  mode1 reset    only for a warm chip (sOS alive from an earlier session): SMU debug-mailbox Mode1Reset, then
                 wait for the sOS to be gone
  nbio           doorbell aperture on, HDP flush remapped into the register hole
  psp bootloader sOS components (KDB, SPL, SYS/SOC/INTF/DBG/RAS drivers, SOS) -> sOS running
  psp ring       the KM ring
  psp firmware   LOAD_TOC -> TMR size; LOAD_IP_FW SMU; SETUP_TMR (not on MP0 14.x, whose sOS reserves its TMR
                 at boot); LOAD_IP_FW for SDMA, CP, IMU, RLC
  rlc autoload   AUTOLOAD_RLC: RLC starts the GFX microcode; wait for RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE
  smu            GetSmuVersion, driver table address, EnableAllSmuFeatures
Each step's failure raises BootError naming the step (and the cause from the block). The boot memory (PSP
staging buffer, ring, TMR, SMU table) is carved from the start of VRAM, inside the smallest BAR0, and reported
in AmBoot.reserved for the VRAM allocator to leave alone."""
from __future__ import annotations

import pathlib
from dataclasses import dataclass

from gputwin.abi.amdgpu import mmhub_module, rlc
from gputwin.abi.amdgpu import smu as s
from gputwin.abi.amdgpu.psp import PSP_FW_TYPE_PSP_TOC
from gputwin.drivers.amd.am import nbio
from gputwin.drivers.amd.am.discovery import Discovery, read_discovery
from gputwin.drivers.amd.am.firmware import FIXTURE_DIR, Firmware, load_firmware
from gputwin.drivers.amd.am.mmio import Mmio, wait_until
from gputwin.drivers.amd.am.psp import Psp, PspError
from gputwin.drivers.amd.am.smu import Smu
from gputwin.drivers.amd.am.vram import Vram
from gputwin.drivers.pci import PciDevice

BAR_VRAM, BAR_MMIO = 0, 5
BOOT_MEMORY = 32 << 20
SMU_TABLE_SIZE = 0x4000
BOOT_TIME_TMR = {(14, 0, 2), (14, 0, 3)}   # MP0 versions whose sOS sets up the TMR itself (psp_v14_0)
ARCH_OF_GC = {(11, 0, 0): "gfx1100", (12, 0, 1): "gfx1201"}


class BootError(RuntimeError):
    def __init__(self, step: str, cause: Exception):
        self.step, self.cause = step, cause
        super().__init__(f"AM boot step '{step}' failed: {cause}")


class BootArena:
    """A bump allocator over the boot region of VRAM (offsets)."""

    def __init__(self, start: int, size: int):
        self.start, self.end, self.top = start, start + size, start

    def __call__(self, size: int, align: int) -> int:
        at = -(-self.top // align) * align
        if at + size > self.end:
            raise MemoryError(f"boot memory exhausted: {size:#x} bytes at {at:#x}, region ends at {self.end:#x}")
        self.top = at + size
        return at


@dataclass
class AmBoot:
    arch: str
    mmio: Mmio
    vram: Vram
    discovery: Discovery
    mc_base: int                  # MC address of VRAM offset 0 (FB_LOCATION_BASE)
    firmware: Firmware
    psp: Psp
    smu: Smu
    sos_version: int
    smu_version: int
    reserved: tuple[int, int]     # (VRAM offset, size) that belongs to the boot (PSP buffers, TMR, SMU table)


def boot(pci: PciDevice, *, firmware_dir: pathlib.Path = FIXTURE_DIR, timeout: float = 2.0) -> AmBoot:
    step = "discovery"
    try:
        mmio = Mmio(pci.bar(BAR_MMIO))
        vram = Vram(pci.bar(BAR_VRAM), mmio)
        disc = read_discovery(mmio, vram)
        mmio.bases = disc.bases
        arch = ARCH_OF_GC.get(disc.versions.get("GC"))
        if arch is None:
            raise ValueError(f"GC {disc.versions.get('GC')} is not a chip the AM driver knows "
                             f"({', '.join(ARCH_OF_GC.values())})")
        mc_base = (mmio.read(mmhub_module(disc.versions["MMHUB"]).MMMC_VM_FB_LOCATION_BASE) & 0xFFFFFF) << 24
        step = "firmware files"
        firmware = load_firmware(arch, firmware_dir)
        arena = BootArena(0, BOOT_MEMORY)
        psp, smu = Psp(mmio, vram, mc_base, arena, timeout), Smu(mmio, timeout)
        if psp.sos_alive():
            step = "mode1 reset"
            smu.mode1_reset()
            wait_until(psp.sos_alive, lambda alive: not alive, "sOS to stop after Mode1Reset", timeout)
        step = "nbio"
        nbio.init(mmio)
        step = "psp bootloader"
        sos_version = psp.boot_sos(firmware.sos_components)
        step = "psp ring"
        psp.create_ring()
        step = "psp firmware"
        _load_ip_firmware(psp, firmware, boot_time_tmr=disc.versions["MP0"] in BOOT_TIME_TMR)
        step = "rlc autoload"
        psp.autoload_rlc()
        bootload = rlc.RLC_RLCS_BOOTLOAD_STATUS[disc.versions["GC"][0]]
        wait_until(lambda: mmio.read(bootload), lambda v: v & rlc.BOOTLOAD_COMPLETE, "RLC autoload to complete",
                   timeout)
        step = "smu"
        smu_version = _start_smu(smu, mc_base + arena(SMU_TABLE_SIZE, 0x1000))
    except Exception as e:   # every failure leaves naming its step; the cause stays chained
        raise BootError(step, e) from e
    return AmBoot(arch, mmio, vram, disc, mc_base, firmware, psp, smu, sos_version, smu_version,
                  (arena.start, BOOT_MEMORY))


def _load_ip_firmware(psp: Psp, firmware: Firmware, *, boot_time_tmr: bool) -> None:
    toc = firmware.sos_components.get(PSP_FW_TYPE_PSP_TOC)
    if toc is None:
        raise PspError("the sOS firmware has no TOC component: the TMR size cannot be known")
    tmr_size = psp.load_toc(toc)
    pieces = list(firmware.ip_firmware)
    if pieces and pieces[0][0] == "SMU":   # the SMU firmware goes in before the TMR is set up
        psp.load_ip_fw(*pieces.pop(0))
    if not boot_time_tmr:
        psp.setup_tmr(tmr_size)
    for name, data in pieces:
        psp.load_ip_fw(name, data)


def _start_smu(smu: Smu, table_mc: int) -> int:
    version = smu.send(s.PPSMC_MSG_GetSmuVersion)
    smu.send(s.PPSMC_MSG_SetDriverDramAddrHigh, table_mc >> 32)
    smu.send(s.PPSMC_MSG_SetDriverDramAddrLow, table_mc & 0xFFFFFFFF)
    smu.send(s.PPSMC_MSG_EnableAllSmuFeatures)
    return version
