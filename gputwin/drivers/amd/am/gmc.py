"""The AM driver's memory: a VRAM allocator, the GPU page tables it builds in VRAM, and the VM context 0 of
both hubs with the TLB-invalidate handshake (gmc_v11_0.c / gmc_v12_0.c, gfxhub_v3_0.c, mmhub_v3_0.c).

Address layout (all of it is the driver's choice):
  VRAM       physical offset p is mapped at VRAM_VA + p, so a 2 MiB- or 1 GiB-aligned allocation maps with
             2 MiB / 1 GiB leaves (PDE-as-PTE), the rest with 4 KiB pages;
  system     a DMA window at bus address b is mapped at SYSTEM_VA + b (SYSTEM | SNOOPED pages).
The low VRAM that BAR0 reaches holds what the CPU touches (page tables, rings, signals, kernel arguments, the
IH ring); user buffers come from the rest first. The page tables keep a host copy of every table, so an
update writes only the entries that changed. After every change the HDP is flushed and both hubs' TLBs are
invalidated (engine 17: take the semaphore, REQ for VMID 0, wait for ACK, release)."""
from __future__ import annotations

import numpy as np

from gputwin.abi.amdgpu import versions, vm
from gputwin.drivers.amd.am import nbio
from gputwin.drivers.amd.am.mmio import wait_until
from gputwin.drivers.hcq import round_up
from gputwin.errors import OutOfMemory

VRAM_VA = 0x1000_0000_0000       # 16 TiB
SYSTEM_VA = 0x0800_0000_0000     # 8 TiB
VA_END = 1 << vm.VA_BITS
TLB_TIMEOUT_S = 1.0
HUGE = (vm.AMDGPU_VM_PDB1, vm.AMDGPU_VM_PDB0)   # leaf levels above the PTB: 1 GiB, 2 MiB


class ExtentAllocator:
    """First fit over the free extents of [start, end) (VRAM, or a DMA window); sizes and alignment in bytes
    (4 KiB multiples)."""

    def __init__(self, start: int, end: int):
        self.free_list = [(start, end)]   # sorted, disjoint, coalesced

    def alloc(self, size: int, align: int = vm.PAGE) -> int | None:
        size = round_up(size, vm.PAGE)
        for i, (lo, hi) in enumerate(self.free_list):
            at = round_up(lo, align)
            if at + size <= hi:
                pieces = [(lo, at)] * (at > lo) + [(at + size, hi)] * (at + size < hi)
                self.free_list[i:i + 1] = pieces
                return at
        return None

    def free(self, at: int, size: int) -> None:
        size = round_up(size, vm.PAGE)
        self.free_list.append((at, at + size))
        self.free_list.sort()
        merged: list[tuple[int, int]] = []
        for lo, hi in self.free_list:
            if merged and merged[-1][1] == lo:
                merged[-1] = (merged[-1][0], hi)
            else:
                merged.append((lo, hi))
        self.free_list = merged


class PageTables:
    """Four-level tables in VRAM; `write(offset, bytes)` reaches VRAM, `alloc_table()` gives a zeroed page."""

    def __init__(self, arch: str, write, alloc_table):
        self.fmt, self.write, self.alloc_table = vm.pte_format(arch), write, alloc_table
        self.tables: dict[int, np.ndarray] = {}   # VRAM address -> host copy of its 512 entries
        self.root = self._new_table()

    def _new_table(self) -> int:
        at = self.alloc_table()
        self.tables[at] = np.zeros(vm.ENTRIES, np.uint64)
        self.write(at, bytes(vm.PAGE))
        return at

    def _child(self, table: int, index: int, level: int, dirty: dict) -> int:
        """The next-level table under entry `index` of a `level` table, made if there is none."""
        e = int(self.tables[table][index])
        if e & vm.AMDGPU_PTE_VALID:
            if self.fmt.is_leaf(e, level):
                raise ValueError(f"page table entry {index} of level {level} is a huge-page leaf, not a directory")
            return e & vm.ADDRESS_MASK
        child = self._new_table()
        self._set(table, index, self.fmt.directory(child), dirty)
        return child

    def _set(self, table: int, index: int, value: int, dirty: dict) -> None:
        self.tables[table][index] = value
        lo, hi = dirty.get(table, (index, index))
        dirty[table] = (min(lo, index), max(hi, index))

    def map(self, va: int, address: int, size: int, *, system: bool, writable: bool = True) -> None:
        """Map [va, va+size) to `address` (VRAM physical, or a bus address if system), largest pages first."""
        dirty: dict[int, tuple[int, int]] = {}
        end = va + size
        while va < end:
            for level in (*HUGE, vm.AMDGPU_VM_PTB):
                span = 1 << vm.LEVEL_SHIFT[level]
                if level == vm.AMDGPU_VM_PTB or (va % span == 0 and address % span == 0 and va + span <= end):
                    break
            table = self.root
            for parent in range(vm.AMDGPU_VM_PDB2, level):
                table = self._child(table, (va >> vm.LEVEL_SHIFT[parent]) & (vm.ENTRIES - 1), parent, dirty)
            self._set(table, (va >> vm.LEVEL_SHIFT[level]) & (vm.ENTRIES - 1),
                      self.fmt.leaf(address, level, system=system, writable=writable), dirty)
            va, address = va + span, address + span
        self._flush(dirty)

    def unmap(self, va: int, size: int) -> None:
        """Clear the leaves covering [va, va+size) (as `map` laid them out)."""
        dirty: dict[int, tuple[int, int]] = {}
        end = va + size
        while va < end:
            table, level = self.root, vm.AMDGPU_VM_PDB2
            while True:
                index = (va >> vm.LEVEL_SHIFT[level]) & (vm.ENTRIES - 1)
                e = int(self.tables[table][index])
                if not e & vm.AMDGPU_PTE_VALID:
                    raise ValueError(f"unmap of {va:#x}: not mapped")
                if self.fmt.is_leaf(e, level):
                    self._set(table, index, 0, dirty)
                    va += 1 << vm.LEVEL_SHIFT[level]
                    break
                table, level = e & vm.ADDRESS_MASK, level + 1
        self._flush(dirty)

    def _flush(self, dirty: dict) -> None:
        for table, (lo, hi) in dirty.items():
            self.write(table + 8 * lo, self.tables[table][lo:hi + 1].tobytes())


class Hub:
    """VM context 0 and invalidate engine 17 of one hub (`prefix` "GCVM" or "MMVM" of register module `regs`)."""

    def __init__(self, mmio, regs, prefix: str, family: str):
        self.mmio, self.regs, self.prefix, self.family = mmio, regs, prefix, family

    def reg(self, name: str):
        return getattr(self.regs, f"reg{self.prefix}_{name}")

    def enable(self, root: int) -> None:
        w = self.mmio.write
        for name, value in (("PAGE_TABLE_START_ADDR", 0), ("PAGE_TABLE_END_ADDR", (VA_END >> 12) - 1),
                            ("PAGE_TABLE_BASE_ADDR", vm.PteFormat.directory(root))):
            w(self.reg(f"CONTEXT0_{name}_LO32"), value & 0xFFFFFFFF)
            w(self.reg(f"CONTEXT0_{name}_HI32"), value >> 32)
        w(self.reg("CONTEXT0_CNTL"), vm.VM_CONTEXT_CNTL__ENABLE_CONTEXT(1)
          | vm.VM_CONTEXT_CNTL__PAGE_TABLE_DEPTH(vm.LEVELS - 1)
          | vm.VM_CONTEXT_CNTL__PAGE_TABLE_BLOCK_SIZE[self.family](0))

    def flush(self, clear_fault: bool = False) -> None:
        """Invalidate VMID 0's translations (gmc_v11_0_flush_vm_hub): semaphore, request, ack, release."""
        wait_until(lambda: self.mmio.read(self.reg("INVALIDATE_ENG17_SEM")), lambda v: v & 1,
                   f"{self.prefix}_INVALIDATE_ENG17_SEM was never granted", TLB_TIMEOUT_S)
        self.mmio.write(self.reg("INVALIDATE_ENG17_REQ"), vm.VM_INVALIDATE_REQ__PER_VMID_INVALIDATE_REQ(1)
                        | vm.VM_INVALIDATE_REQ__INVALIDATE_L2_PTES(1) | vm.VM_INVALIDATE_REQ__INVALIDATE_L2_PDE0(1)
                        | vm.VM_INVALIDATE_REQ__INVALIDATE_L2_PDE1(1) | vm.VM_INVALIDATE_REQ__INVALIDATE_L2_PDE2(1)
                        | vm.VM_INVALIDATE_REQ__INVALIDATE_L1_PTES(1)
                        | vm.VM_INVALIDATE_REQ__CLEAR_PROTECTION_FAULT_STATUS_ADDR(int(clear_fault)))
        wait_until(lambda: self.mmio.read(self.reg("INVALIDATE_ENG17_ACK")),
                   lambda v: vm.VM_INVALIDATE_ACK__PER_VMID_INVALIDATE_ACK.get(v) & 1,
                   f"{self.prefix}_INVALIDATE_ENG17_ACK never acknowledged VMID 0", TLB_TIMEOUT_S)
        self.mmio.write(self.reg("INVALIDATE_ENG17_SEM"), 0)

    def fault(self) -> tuple[int, bool] | None:
        """(address, write) of the latched protection fault, or None."""
        status = self.mmio.read(self.reg("L2_PROTECTION_FAULT_STATUS_LO32"))
        if not status:
            return None
        page = self.mmio.read(self.reg("L2_PROTECTION_FAULT_ADDR_LO32")) | \
            (self.mmio.read(self.reg("L2_PROTECTION_FAULT_ADDR_HI32")) & 0xF) << 32
        return page << 12, bool(vm.VM_L2_PROTECTION_FAULT_STATUS__RW.get(status))


class Gmc:
    """VRAM, the page tables and both hubs of one GPU."""

    def __init__(self, mmio, vram, arch: str, start: int, visible: int, end: int, gc, mmhub):
        """VRAM [start, visible) is in BAR0's reach, [visible, end) is not; the rest belongs to the boot."""
        self.vram, self.mmio = vram, mmio
        self.visible = ExtentAllocator(start, visible)
        self.hidden = ExtentAllocator(visible, end)
        self.hidden_start = visible
        self.tables = PageTables(arch, vram.write, lambda: self._alloc_visible(vm.PAGE))
        self.hubs = [Hub(mmio, gc, "GCVM", versions.family(arch)), Hub(mmio, mmhub, "MMVM", versions.family(arch))]
        for hub in self.hubs:
            hub.enable(self.tables.root)
        self.flush()

    def _alloc_visible(self, size: int, align: int = vm.PAGE) -> int:
        at = self.visible.alloc(size, align)
        if at is None:
            raise OutOfMemory(f"no {size:#x} bytes of CPU-visible VRAM left", size=size, heap="vram (visible)")
        return at

    def alloc(self, size: int) -> int:
        """VRAM physical address of `size` fresh bytes, mapped at VRAM_VA + address (BAR0's reach last)."""
        align = 1 << 21 if size >= 1 << 21 else vm.PAGE
        at = self.hidden.alloc(size, align)
        if at is None:
            at = self.visible.alloc(size, align)
        if at is None:
            raise OutOfMemory(f"no {size:#x} bytes of VRAM left", size=size, heap="vram")
        return self._map(at, size)

    def alloc_visible(self, size: int) -> int:
        """Like alloc, in BAR0's reach: for what the CPU reads and writes."""
        return self._map(self._alloc_visible(size), size)

    def _map(self, at: int, size: int) -> int:
        self.tables.map(VRAM_VA + at, at, round_up(size, vm.PAGE), system=False)
        self.flush()
        return at

    def free(self, at: int, size: int) -> None:
        self.tables.unmap(VRAM_VA + at, round_up(size, vm.PAGE))
        self.flush()
        (self.visible if at < self.hidden_start else self.hidden).free(at, size)

    def map_system(self, bus_address: int, size: int) -> int:
        """Map a DMA window; its GPU VA."""
        self.tables.map(SYSTEM_VA + bus_address, bus_address, round_up(size, vm.PAGE), system=True)
        self.flush()
        return SYSTEM_VA + bus_address

    def flush(self, clear_fault: bool = False) -> None:
        """HDP flush (the table writes went through BAR0), then both hubs' TLBs."""
        nbio.flush_hdp(self.mmio)
        for hub in self.hubs:
            hub.flush(clear_fault)
