"""The emulated GMC: the GFX hub's and the MM hub's VM context 0, their TLB-invalidate engine 17, the
protection-fault status, and the frame-buffer location.

Translation is done at invalidate time, not per access: when the driver's VM_INVALIDATE_ENG17_REQ names VMID
0, the GFX hub walks the four-level page table from VM_CONTEXT0_PAGE_TABLE_BASE_ADDR (VRAM physical
addresses, the entry formats of gputwin.abi.amdgpu.vm) and rebuilds the engines' address space (GPU.mem):
contiguous leaf mappings become one region over a numpy view of VRAM, or of the bus memory upstream (the
bridge SRAM) for SYSTEM pages. Shader and engine accesses then run at memory speed, and a page table changed
without an invalidate keeps the old translation, as a TLB does. An access outside every region faults
(MemoryFault); the SoC's interrupt routing (ih.py) records it here and posts the fault vector.

The MM hub's context is programmed like the GFX hub's (amdgpu does both); no modelled client translates
through it (the IH writes at MC addresses, through the FB aperture of mc.py), so its invalidate only
acknowledges."""
from __future__ import annotations

import numpy as np

from gputwin import sanitizer_config
from gputwin.abi.amdgpu import ip_bases, versions, vm
from gputwin.emu.amd.soc.regfile import RegisterError
from gputwin.emu.memory import AddressSpace
from gputwin.emu.pcie import PcieError

VMID0 = 1 << 0
PERMISSION_WRITE = 1 << 2   # PERMISSION_FAULTS bits: valid, read, write, execute


class VmHub:
    """VM context 0 and invalidate engine 17 of one hub; `prefix` is "GCVM" or "MMVM"."""

    def __init__(self, function, module, prefix: str, on_invalidate=None):
        self.function, self.prefix, self.on_invalidate = function, prefix, on_invalidate
        self.family = versions.family(function.arch)
        self._addr = {}
        regs, bases = function.regs, ip_bases(function.arch)
        for name in ("CONTEXT0_CNTL", "CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32", "CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32",
                     "CONTEXT0_PAGE_TABLE_START_ADDR_LO32", "CONTEXT0_PAGE_TABLE_START_ADDR_HI32",
                     "CONTEXT0_PAGE_TABLE_END_ADDR_LO32", "CONTEXT0_PAGE_TABLE_END_ADDR_HI32",
                     "L2_PROTECTION_FAULT_STATUS_LO32", "L2_PROTECTION_FAULT_ADDR_LO32",
                     "L2_PROTECTION_FAULT_ADDR_HI32", "INVALIDATE_ENG17_ACK"):
            reg = getattr(module, f"reg{prefix}_{name}")
            self._addr[name] = reg.address(bases)
            regs.add(self._addr[name], reg.name)
        self._sem = 0
        sem = getattr(module, f"reg{prefix}_INVALIDATE_ENG17_SEM")
        regs.add(sem.address(bases), sem.name, read=self._sem_read, write=self._sem_write)
        req = getattr(module, f"reg{prefix}_INVALIDATE_ENG17_REQ")
        regs.add(req.address(bases), req.name, write=self._invalidate)

    def reset(self) -> None:
        for name in self._addr:
            self.set(name, 0)
        self._sem = 0

    def value(self, name: str) -> int:
        return self.function.regs.value(self._addr[name])

    def set(self, name: str, value: int) -> None:
        self.function.regs.get(self._addr[name]).value = value & 0xFFFFFFFF

    def _pair(self, name: str) -> int:
        return self.value(f"{name}_LO32") | self.value(f"{name}_HI32") << 32

    # --- the invalidate handshake -----------------------------------------------------------------
    def _sem_read(self) -> int:
        """The semaphore is free (this model has one client per engine): a read acquires it."""
        self._sem = 1
        return 1

    def _sem_write(self, value: int) -> None:
        self._sem = value & 1

    def _invalidate(self, value: int) -> None:
        vmids = vm.VM_INVALIDATE_REQ__PER_VMID_INVALIDATE_REQ.get(value)
        if vmids & ~VMID0:
            raise RegisterError(f"{self.function.name}: {self.prefix}_INVALIDATE_ENG17_REQ {value:#x} names VMIDs "
                                f"{vmids:#x}; only VMID 0 is modelled")
        if vm.VM_INVALIDATE_REQ__CLEAR_PROTECTION_FAULT_STATUS_ADDR.get(value):
            for name in ("L2_PROTECTION_FAULT_STATUS_LO32", "L2_PROTECTION_FAULT_ADDR_LO32",
                         "L2_PROTECTION_FAULT_ADDR_HI32"):
                self.set(name, 0)
        if vmids and self.on_invalidate is not None:
            self.on_invalidate(self)
        self.set("INVALIDATE_ENG17_ACK", vmids)

    # --- the walk ---------------------------------------------------------------------------------
    def enabled(self) -> bool:
        return bool(vm.VM_CONTEXT_CNTL__ENABLE_CONTEXT.get(self.value("CONTEXT0_CNTL")))

    def leaves(self) -> list[tuple[int, int, bool, int, bool]]:
        """Every readable leaf of the enabled context 0, merged into runs: (va, size, system, address,
        writable), ascending by va, clipped to the context's START..END range."""
        cntl = self.value("CONTEXT0_CNTL")
        depth = vm.VM_CONTEXT_CNTL__PAGE_TABLE_DEPTH.get(cntl)
        block = vm.VM_CONTEXT_CNTL__PAGE_TABLE_BLOCK_SIZE[self.family].get(cntl)
        if depth != vm.LEVELS - 1 or block != 0:
            raise RegisterError(f"{self.function.name}: {self.prefix}_CONTEXT0_CNTL {cntl:#x}: page tables of depth "
                                f"{depth} and block size {block} are not modelled (depth 3, block size 0 are)")
        root = self._pair("CONTEXT0_PAGE_TABLE_BASE_ADDR")
        start = self._pair("CONTEXT0_PAGE_TABLE_START_ADDR") << 12
        end = (self._pair("CONTEXT0_PAGE_TABLE_END_ADDR") + 1) << 12
        if not root & vm.AMDGPU_PTE_VALID:
            return []
        fmt = vm.pte_format(self.function.arch)
        found: list[tuple[np.ndarray, ...]] = []
        self._walk(fmt, root & vm.ADDRESS_MASK, vm.AMDGPU_VM_PDB2, 0, found)
        if not found:
            return []
        va, size, entry = (np.concatenate(parts) for parts in zip(*found))
        order = np.argsort(va, kind="stable")
        va, size, entry = va[order], size[order], entry[order]
        address = entry & np.uint64(vm.ADDRESS_MASK) & ~(size - np.uint64(1))
        kind = entry & np.uint64(vm.AMDGPU_PTE_SYSTEM | vm.AMDGPU_PTE_WRITEABLE)
        # a run continues while the next leaf follows in VA and in target, with the same kind
        joined = (va[1:] == va[:-1] + size[:-1]) & (address[1:] == address[:-1] + size[:-1]) & (kind[1:] == kind[:-1])
        starts = np.flatnonzero(np.concatenate(([True], ~joined)))
        lengths = np.add.reduceat(size, starts)
        out = []
        for lo, n, a, k in zip(va[starts].tolist(), lengths.tolist(), address[starts].tolist(), kind[starts].tolist()):
            clo, chi = max(lo, start), min(lo + n, end)   # clip to the context's range
            if clo < chi:
                out.append((clo, chi - clo, bool(k & vm.AMDGPU_PTE_SYSTEM), a + clo - lo, bool(k & vm.AMDGPU_PTE_WRITEABLE)))
        return out

    def _table(self, address: int) -> np.ndarray:
        vram = self.function.vram
        if address + vm.PAGE > vram.size:
            raise RegisterError(f"{self.function.name}: page table at {address:#x} lies outside VRAM")
        return vram[address:address + vm.PAGE].view("<u8")

    def _walk(self, fmt: vm.PteFormat, table: int, level: int, va0: int, found: list) -> None:
        """Collect (va, size, entry) arrays of the readable leaves under `table`; directories recurse."""
        entries = self._table(table)
        index = np.flatnonzero(entries & np.uint64(vm.AMDGPU_PTE_VALID))
        e = entries[index]
        shift = vm.LEVEL_SHIFT[level]
        leaf = np.ones(index.size, bool) if level == vm.AMDGPU_VM_PTB else (e & np.uint64(fmt.pde_pte)) != 0
        for i, d in zip(index[~leaf].tolist(), e[~leaf].tolist()):
            self._walk(fmt, d & vm.ADDRESS_MASK, level + 1, va0 + (i << shift), found)
        readable = leaf & ((e & np.uint64(vm.AMDGPU_PTE_READABLE)) != 0)   # no READABLE: an access faults
        if readable.any():
            va = np.uint64(va0) + (index[readable].astype(np.uint64) << np.uint64(shift))
            found.append((va, np.full(va.size, 1 << shift, np.uint64), e[readable]))


class Gmc:
    """Both hubs, the FB location, and the last protection fault."""

    def __init__(self, function):
        self.function = function
        gpu = function.gpu
        self.gfxhub = VmHub(function, versions.gc(function.arch), "GCVM", self._rebuild)
        self.mmhub = VmHub(function, versions.mmhub(function.arch), "MMVM")
        self._backings: dict[tuple, np.ndarray] = {}   # region (va, size, system, address, writable) -> its array
        self._runs: list[tuple[int, int, bool, int, bool]] = []   # the last walk's leaf runs
        self._regions: dict[tuple, object] = {}       # region key -> its emu.memory.Region in the current space
        self._install(AddressSpace(f"{function.name} GPU VM (no page table yet)"))

    def _install(self, mem: AddressSpace) -> None:
        """Make `mem` the GPU's address space; racecheck's tracker of the queues (their clocks) lives on."""
        gpu = self.function.gpu
        mem.queue_races = gpu.mem.queue_races
        gpu.mem = mem

    def _rebuild(self, hub: VmHub) -> None:
        self._runs = hub.leaves() if hub.enabled() else []
        self._remap()

    def noted(self, va: int) -> None:
        """An allocation note (alloc_notes.py) for va: cut the regions anew if it lies in one (a
        sub-allocation of a mapped DMA window); an allocation not mapped yet is cut by the invalidate that
        maps it."""
        if sanitizer_config.checkers() and self.function.gpu.mem.find(va) is not None:
            self._remap()

    def _remap(self) -> None:
        """A fresh address space from the last walk. A piece that did not change keeps its backing array, so
        what the engines cached per mapping (decoded programs) stays valid. While a sanitizer is on, the
        runs are cut at the driver's allocations (extents for memcheck), VRAM regions share the board's
        record of written bytes (initcheck), which a fresh allocation clears, and a piece that did not
        change keeps racecheck's record of which operations touched its bytes."""
        mem = AddressSpace(f"{self.function.name} GPU VM")
        kept: dict[tuple, np.ndarray] = {}
        regions: dict[tuple, object] = {}
        notes = self.function.blocks["alloc_notes"] if sanitizer_config.checkers() else None
        written, seen = self.function.vram_written, set()
        for va, size, system, address, writable in self._runs:
            for pva, psize, extent, owner in notes.pieces(va, size) if notes else [(va, size, None, None)]:
                key = (pva, psize, system, address + pva - va, writable)
                backing = self._backings[key] if key in self._backings else self._backing(system, key[3], psize)
                if backing is None:
                    continue   # nothing backs it: an access faults
                kept[key] = backing
                shadow = None
                if written is not None and not system:
                    shadow = written[key[3]:key[3] + psize]
                    if notes and owner in notes.fresh:
                        shadow[:] = False   # VRAM of a fresh allocation holds nothing the user wrote
                        seen.add(owner)
                mem.map(pva, psize, backing, writable=writable, name="system" if system else "vram", extent=extent,
                        shadow=shadow)
                region = regions[key] = mem.find(pva)
                if key in self._regions:
                    region.queue_shadow = self._regions[key].queue_shadow
        if notes:
            notes.fresh -= seen
        self._backings, self._regions = kept, regions
        self._install(mem)

    def _backing(self, system: bool, address: int, size: int) -> np.ndarray | None:
        """The array behind a leaf run: the bus memory upstream (SYSTEM: the bridge SRAM) or VRAM; None if
        nothing is there."""
        if system:
            upstream = self.function.upstream
            if upstream is None:
                return None
            try:
                return upstream.view(address, size)
            except PcieError:
                return None
        return self.function.vram[address:address + size] if address + size <= self.function.vram_size else None

    def reset(self) -> None:
        """Power-on (Mode1 reset): contexts off, nothing translates."""
        self.gfxhub.reset()
        self.mmhub.reset()
        self._backings, self._runs, self._regions = {}, [], {}
        self._install(AddressSpace(f"{self.function.name} GPU VM (no page table yet)"))

    def record_fault(self, address: int, write: bool) -> None:
        """What the GFX hub latches for a fault (L2_PROTECTION_FAULT_STATUS / _ADDR), MORE_FAULTS if one is
        still latched."""
        hub = self.gfxhub
        status = hub.value("L2_PROTECTION_FAULT_STATUS_LO32")
        if status:
            hub.set("L2_PROTECTION_FAULT_STATUS_LO32", status | vm.VM_L2_PROTECTION_FAULT_STATUS__MORE_FAULTS(1))
            return
        mapped = self.function.gpu.mem.find(address) is not None   # then a write to a read-only page
        hub.set("L2_PROTECTION_FAULT_STATUS_LO32", vm.VM_L2_PROTECTION_FAULT_STATUS__RW(int(write))
                | (vm.VM_L2_PROTECTION_FAULT_STATUS__PERMISSION_FAULTS(PERMISSION_WRITE) if mapped
                   else vm.VM_L2_PROTECTION_FAULT_STATUS__MAPPING_ERROR(1)))
        hub.set("L2_PROTECTION_FAULT_ADDR_LO32", (address >> 12) & 0xFFFFFFFF)
        hub.set("L2_PROTECTION_FAULT_ADDR_HI32", (address >> 44) & 0xF)


def attach(function) -> Gmc:
    return Gmc(function)
