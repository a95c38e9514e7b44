"""AMDevice: the public device API for an AMD GPU with no kernel driver, over its PCI BARs (a USB4 enclosure
through the ASM2464 bridge, or any PciDevice).

Where everything lives (the driver owns VRAM and the GPU page tables, drivers/amd/am/gmc.py):
  boot memory      the first 32 MiB of VRAM: PSP buffers, TMR, SMU table (boot.py)
  CPU-visible      the rest of what BAR0 reaches: page tables, both rings and their pointers, the MQD and EOP
                   buffer, the IH ring, the timeline signal and the kernel-argument pool; the CPU reads and
                   writes them through BAR0 (no CPU pointer exists over USB)
  VRAM             user buffers and code, reached only by the copy engine and the shaders
  DMA windows      host memory the GPU reaches upstream (the bridge's SRAM), mapped as SYSTEM pages: the
                   two staging halves of copyin/copyout, which SDMA copies to and from VRAM while the host
                   fills or drains the other half
Completion is polled: the timeline signal through BAR0, and the IH ring for end-of-pipe interrupts, faults
and rejected packets. Faults raise the same errors as on MOCKAMD, from the IH vector and the fault registers,
with the facts of gputwin's fault record where the emulated chip provides it (emu/amd/soc/interrupts.py)."""
from __future__ import annotations

import ctypes
import time

import numpy as np

from gputwin.abi.amdgpu import ih as iv
from gputwin.abi.amdgpu import versions
from gputwin.abi.amdgpu.discovery import DISCOVERY_TMR_OFFSET
from gputwin.abi.kfd_fault_record import AM_MMIO_RECORD_OFFSET as FAULT_RECORD_OFFSET
from gputwin.abi.kfd_fault_record import GPUTWIN_FAULT_MAGIC, GPUTWIN_FAULT_VERSION, gputwin_fault_record
from gputwin.drivers.amd.am import nbio, queues
from gputwin.drivers.amd.am.boot import BAR_VRAM, boot
from gputwin.drivers.amd.am.firmware import FIXTURE_DIR
from gputwin.drivers.amd.am.gmc import VRAM_VA, ExtentAllocator, Gmc
from gputwin.drivers.amd.am.ih import IH_RING_BYTES, IhRing
from gputwin.drivers.amd.hcq_device import AMDHCQDevice
from gputwin.drivers.amd.pm4 import AMDComputeQueue
from gputwin.drivers.amd.sdma import AMDCopyQueue
from gputwin.drivers.hcq import Buffer, SlotRing, TimelineSignal, round_up, watchdog_s
from gputwin.drivers.pci import PciDevice
from gputwin.errors import GpuFault, MemoryFault, OutOfMemory, PacketError

PAGE = 4096
RING_SIZE = 64 << 10
KERNARG_POOL = 1 << 20
EOP_SIZE = 0x1000
MAX_STAGING = 2 << 20
BAR_DOORBELL = 2
_VALID = gputwin_fault_record.valid.offset


def chip_props(gc_info: dict[str, int], arch: str) -> dict[str, int]:
    """Topology-style properties (what the launch and scratch code reads) from discovery's gc_info."""
    arrays = gc_info["gc_num_se"] * gc_info["gc_num_sa_per_se"]
    cus = arrays * (gc_info["gc_num_wgp0_per_sa"] + gc_info["gc_num_wgp1_per_sa"]) * 2   # 2 CUs per WGP
    return {"simd_per_cu": 2, "simd_count": 2 * cus, "array_count": arrays,
            "simd_arrays_per_engine": gc_info["gc_num_sa_per_se"], "max_waves_per_simd": gc_info["gc_max_waves_per_simd"],
            "max_slots_scratch_cu": gc_info["gc_max_scratch_slots_per_cu"], "lds_size_in_kb": gc_info["gc_lds_size"],
            "wave_front_size": gc_info["gc_wave_size"], "num_xcc": 1}


class AMDevice(AMDHCQDevice):
    kernarg_pool_size = KERNARG_POOL
    ring_size = RING_SIZE

    def __init__(self, pci: PciDevice, name: str = "USBAMD", firmware_dir=FIXTURE_DIR):
        """firmware_dir: where the boot reads the PSP's load list (the synthetic fixtures an emulated board
        accepts; /lib/firmware/amdgpu for a real one)."""
        self.pci = pci
        chip = self.chip = boot(pci, firmware_dir=firmware_dir)
        self.arch, self.name = chip.arch, f"{name} ({chip.arch})"
        self.props = chip_props(chip.discovery.gc_info, chip.arch)
        self.mmio, self.vram = chip.mmio, chip.vram
        self.gc = versions.gc(self.arch)
        vram_size = chip.discovery.vram_size
        visible = min(pci.bar(BAR_VRAM).size, vram_size - DISCOVERY_TMR_OFFSET)
        self.gmc = Gmc(self.mmio, self.vram, self.arch, chip.reserved[0] + chip.reserved[1], visible,
                       vram_size - DISCOVERY_TMR_OFFSET, self.gc, versions.mmhub(self.arch))
        self.doorbells = queues.DoorbellBar(pci.bar(BAR_DOORBELL))
        self._windows = [(w, self.gmc.map_system(w.bus_address, w.size), ExtentAllocator(0, w.size))
                         for w in pci.dma_windows()]
        if not self._windows:
            raise OutOfMemory(f"{pci.name} offers no DMA window for copies", size=0, heap="system")
        self.staging_size = min(MAX_STAGING, max(w.size for w, _, _ in self._windows) // 2 // PAGE * PAGE)
        ih_at = self.gmc.alloc_visible(IH_RING_BYTES + PAGE)
        self.ih = IhRing(self.mmio, self.vram, versions.osssys(self.arch), ih_at, ih_at + IH_RING_BYTES,
                         chip.mc_base)
        self._compute_mapped = self._sdma_mapped = False
        try:
            super().__init__()
            self.compute_ring = self._create_compute_ring()
            self.copy_ring = self._create_sdma_ring()
            self._kernargs = self._alloc_visible_buffer(self.kernarg_pool_size)
            self._kernarg_ring = SlotRing(self._kernargs, self.synchronize)
        except BaseException:
            self._release()
            raise

    # --- queues ------------------------------------------------------------------------------------
    def _ring_memory(self) -> tuple[int, int]:
        ring = self.gmc.alloc_visible(self.ring_size)
        ptrs = self.gmc.alloc_visible(PAGE)
        self.vram.write(ptrs, bytes(16))
        return ring, ptrs

    def _create_compute_ring(self) -> queues.BarRing:
        ring, ptrs = self._ring_memory()
        eop, mqd_at = self.gmc.alloc(EOP_SIZE), self.gmc.alloc_visible(queues.MQD_BYTES)
        m = queues.compute_mqd(VRAM_VA + ring, self.ring_size, VRAM_VA + ptrs, VRAM_VA + ptrs + 8, VRAM_VA + eop,
                               EOP_SIZE, VRAM_VA + mqd_at, queues.COMPUTE_DOORBELL)
        self.vram.write(mqd_at, bytes(m))
        queues.init_vmid0_apertures(self.mmio, self.gc)
        queues.map_compute_queue(self.mmio, self.gc, m, queues.COMPUTE_DOORBELL)
        self._compute_mapped = True
        self._queue_names[queues.COMPUTE_DOORBELL] = "compute queue 0"
        return queues.BarRing(f"{self.name} compute queue", self.vram, ring, self.ring_size, ptrs, self.doorbells,
                              queues.COMPUTE_DOORBELL, 4, False, self._sleep, watchdog_s, self._flush_hdp)

    def _create_sdma_ring(self) -> queues.BarRing:
        ring, ptrs = self._ring_memory()
        queues.map_sdma_queue(self.mmio, self.gc, VRAM_VA + ring, self.ring_size, VRAM_VA + ptrs,
                              queues.SDMA_DOORBELL)
        self._sdma_mapped = True
        self._queue_names[queues.SDMA_DOORBELL] = "sdma queue 1"
        return queues.BarRing(f"{self.name} sdma queue", self.vram, ring, self.ring_size, ptrs, self.doorbells,
                              queues.SDMA_DOORBELL, 1, True, self._sleep, watchdog_s, self._flush_hdp)

    def _flush_hdp(self) -> None:
        nbio.flush_hdp(self.mmio)

    def _apertures(self) -> tuple[int, int]:
        return queues.PRIVATE_APERTURE, queues.SHARED_APERTURE

    # --- memory ------------------------------------------------------------------------------------
    def _alloc_visible_buffer(self, size: int) -> Buffer:
        at = self.gmc.alloc_visible(size)
        self.vram.write(at, bytes(round_up(size, 4)))
        return Buffer(self, VRAM_VA + at, size, None, ("vram", at))

    def _alloc(self, size: int, host: bool = False) -> Buffer:
        if not host:
            at = self.gmc.alloc(size)
            return Buffer(self, VRAM_VA + at, size, None, ("vram", at))
        for window, va, extents in self._windows:
            at = extents.alloc(size)
            if at is not None:
                return Buffer(self, va + at, size, None, ("window", window, at, extents))
        raise OutOfMemory(f"{self.name}: no {size:#x} bytes left in the DMA windows", size=size, heap="system")

    def _free(self, buf: Buffer) -> None:
        if buf.meta[0] == "vram":
            self.gmc.free(buf.meta[1], buf.size)
        else:
            buf.meta[3].free(buf.meta[2], buf.size)

    def _host_read(self, buf: Buffer, offset: int, size: int) -> np.ndarray:
        if buf.meta[0] == "vram":
            data = self.vram.read(buf.meta[1] + offset, size)
        else:
            data = buf.meta[1].read(buf.meta[2] + offset, size)
        return np.frombuffer(data, np.uint8)

    def _host_write(self, buf: Buffer, offset: int, data) -> None:
        data = data.tobytes() if isinstance(data, np.ndarray) else bytes(data)
        if buf.meta[0] == "vram":
            self.vram.write(buf.meta[1] + offset, data)
        else:
            buf.meta[1].write(buf.meta[2] + offset, data)

    def _new_signal(self) -> TimelineSignal:
        return TimelineSignal(self._alloc_visible_buffer(PAGE))

    def _compute_queue(self) -> AMDComputeQueue:
        return AMDComputeQueue()

    def _copy_queue(self) -> AMDCopyQueue:
        return AMDCopyQueue()

    # --- completion and faults ----------------------------------------------------------------------
    def _sleep(self, timeout_s: float) -> None:
        """Poll: the IH ring for faults and rejected packets, gputwin's record for a hang. The emulated chip
        runs synchronously, so what will not change now does not change by waiting: sleep a little only."""
        for vector in self.ih.poll():
            error = self._vector_error(vector)
            if error is not None:
                raise error
        record = self._fault_record()
        if record is not None:
            raise self._record_error(record)
        time.sleep(min(timeout_s, 0.001))

    def _fault_record(self) -> gputwin_fault_record | None:
        """gputwin's fault record if the chip has one (an emulated chip after a fault), else None."""
        head = self.mmio.bar.read(FAULT_RECORD_OFFSET, 16)
        magic, _size, version, valid = np.frombuffer(head, "<u4").tolist()
        if magic != GPUTWIN_FAULT_MAGIC or version < GPUTWIN_FAULT_VERSION or not valid:
            return None
        raw = self.mmio.bar.read(FAULT_RECORD_OFFSET, ctypes.sizeof(gputwin_fault_record))
        self.mmio.bar.write(FAULT_RECORD_OFFSET + _VALID, bytes(4))   # consumed
        return gputwin_fault_record.from_buffer_copy(raw)

    def _vector_error(self, v: iv.InterruptVector) -> BaseException | None:
        """The error an interrupt vector reports (None for end-of-pipe and SDMA traps)."""
        fault = (v.client_id, v.src_id) == (iv.SOC21_IH_CLIENTID_GFX, iv.UTCL2_1_0__SRCID__FAULT)
        bad_packet = (v.client_id, v.src_id) == (iv.SOC21_IH_CLIENTID_GRBM_CP, iv.GFX_11_0_0__SRCID__CP_BAD_OPCODE_ERROR)
        sq = (v.client_id, v.src_id) == (iv.SOC21_IH_CLIENTID_GRBM_CP, iv.GFX_11_0_0__SRCID__SQ_INTERRUPT_ID)
        if not (fault or bad_packet or sq):
            return None
        record = self._fault_record()
        if record is not None:
            return self._record_error(record)
        if fault:
            latched = self.gmc.hubs[0].fault()
            address, write = latched if latched else (iv.fault_address(v.src_data), None)
            self.gmc.flush(clear_fault=True)
            return MemoryFault(f"{self.name}: GPU memory fault", address=address, write=write, arch=self.arch)
        if bad_packet:
            return PacketError(f"{self.name}: the CP rejected a packet", arch=self.arch)
        return GpuFault(f"{self.name}: shader interrupt (SQ)", arch=self.arch)

    def _release(self) -> None:
        if getattr(self, "_compute_mapped", False):
            queues.unmap_compute_queue(self.mmio, self.gc)
            self._compute_mapped = False
        if getattr(self, "_sdma_mapped", False):
            queues.unmap_sdma_queue(self.mmio, self.gc)
            self._sdma_mapped = False
        close = getattr(self.pci, "close", None)   # the USB transport lets the interface go
        if close is not None:
            close()

    def __repr__(self) -> str:
        return f"AMDevice({self.name})"
