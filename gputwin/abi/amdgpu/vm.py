"""GPU page-table entries and VM-context register fields of GC 11 / GC 12 (Linux amdgpu_vm.h, gmc_v11_0.c,
gmc_v12_0.c, gc_*_sh_mask.h).

Tables are 512 entries of 64 bits (block size 9), four levels for a 48-bit VA: PDB2 (bits 47:39), PDB1
(38:30), PDB0 (29:21), PTB (20:12). An entry's address field (bits 47:12) is a VRAM physical address, or a
bus address when SYSTEM is set. A PDB1 or PDB0 entry with the PDE-is-PTE bit is a leaf mapping 1 GiB or 2 MiB
(huge pages); GC 12 moved that bit to 63 (GC 11: 54) and the memory type to bits 55:54 (GC 11: 50:48)."""
from __future__ import annotations

from dataclasses import dataclass

from gputwin.abi.bitfield import Field

AMDGPU_PTE_VALID = 1 << 0
AMDGPU_PTE_SYSTEM = 1 << 1
AMDGPU_PTE_SNOOPED = 1 << 2
AMDGPU_PTE_TMZ = 1 << 3
AMDGPU_PTE_EXECUTABLE = 1 << 4
AMDGPU_PTE_READABLE = 1 << 5
AMDGPU_PTE_WRITEABLE = 1 << 6
AMDGPU_PTE_FRAG = Field(7, 5)            # the mapping is 2 ** (12 + FRAG) contiguous bytes
AMDGPU_PTE_PRT = 1 << 51
AMDGPU_PDE_PTE = 1 << 54                 # GC 9..11: a PDB entry that is a leaf
AMDGPU_PTE_LOG = 1 << 55
AMDGPU_PTE_TF = 1 << 56
AMDGPU_PDE_BFS = Field(59, 4)
AMDGPU_PTE_MTYPE_NV10 = Field(48, 3)
AMDGPU_PTE_PRT_GFX12 = 1 << 56
AMDGPU_PTE_MTYPE_GFX12 = Field(54, 2)
AMDGPU_PDE_BFS_GFX12 = Field(58, 5)
AMDGPU_PDE_PTE_GFX12 = 1 << 63          # GC 12: a PDB entry that is a leaf
AMDGPU_PTE_IS_PTE = 1 << 63              # GC 12: set in every leaf entry (gmc_v12_0_get_vm_pte)
ADDRESS_MASK = 0x0000_FFFF_FFFF_F000     # bits 47:12

# memory types (amdgpu_vm.h MTYPE_* of GC 11 / 12)
MTYPE_NC, MTYPE_UC = 0, 3

AMDGPU_VM_PDB2, AMDGPU_VM_PDB1, AMDGPU_VM_PDB0, AMDGPU_VM_PTB = 0, 1, 2, 3
LEVELS = 4
ENTRIES = 512
PAGE = 1 << 12
LEVEL_SHIFT = {AMDGPU_VM_PDB2: 39, AMDGPU_VM_PDB1: 30, AMDGPU_VM_PDB0: 21, AMDGPU_VM_PTB: 12}
VA_BITS = 48


@dataclass(frozen=True)
class PteFormat:
    """Where the bits that moved between GC 11 and GC 12 sit."""
    pde_pte: int          # leaf bit of a PDB1 / PDB0 entry
    leaf_extra: int       # bits every leaf entry carries besides the permission bits
    mtype: Field

    def leaf(self, address: int, level: int, *, system: bool, writable: bool, mtype: int = MTYPE_UC,
             executable: bool = True) -> int:
        """A leaf entry mapping `address` at `level` (PTB: 4 KiB, PDB0: 2 MiB, PDB1: 1 GiB)."""
        frag = LEVEL_SHIFT[level] - 12
        e = (address & ADDRESS_MASK) | AMDGPU_PTE_VALID | AMDGPU_PTE_READABLE | AMDGPU_PTE_FRAG(frag)
        e |= self.mtype(mtype) | self.leaf_extra
        if system:
            e |= AMDGPU_PTE_SYSTEM | AMDGPU_PTE_SNOOPED
        if writable:
            e |= AMDGPU_PTE_WRITEABLE
        if executable:
            e |= AMDGPU_PTE_EXECUTABLE
        if level != AMDGPU_VM_PTB:
            e |= self.pde_pte
        return e

    @staticmethod
    def directory(address: int) -> int:
        """A PDE pointing at the next level's table in VRAM."""
        return (address & ADDRESS_MASK) | AMDGPU_PTE_VALID

    def is_leaf(self, entry: int, level: int) -> bool:
        return level == AMDGPU_VM_PTB or bool(entry & self.pde_pte)


PTE_FORMATS = {
    "gfx11": PteFormat(pde_pte=AMDGPU_PDE_PTE, leaf_extra=0, mtype=AMDGPU_PTE_MTYPE_NV10),
    "gfx12": PteFormat(pde_pte=AMDGPU_PDE_PTE_GFX12, leaf_extra=AMDGPU_PTE_IS_PTE, mtype=AMDGPU_PTE_MTYPE_GFX12),
}


def pte_format(arch: str) -> PteFormat:
    return PTE_FORMATS[arch[:5]]


# VM_CONTEXT0_CNTL (GCVM_ and MMVM_): depth is levels - 1; the block size field moved from bits 6:3 to 7:4
VM_CONTEXT_CNTL__ENABLE_CONTEXT = Field(0, 1)
VM_CONTEXT_CNTL__PAGE_TABLE_DEPTH = Field(1, 2)
VM_CONTEXT_CNTL__PAGE_TABLE_BLOCK_SIZE = {"gfx11": Field(3, 4), "gfx12": Field(4, 4)}
# VM_INVALIDATE_ENG*_REQ / _ACK
VM_INVALIDATE_REQ__PER_VMID_INVALIDATE_REQ = Field(0, 16)
VM_INVALIDATE_REQ__FLUSH_TYPE = Field(16, 3)
VM_INVALIDATE_REQ__INVALIDATE_L2_PTES = Field(19, 1)
VM_INVALIDATE_REQ__INVALIDATE_L2_PDE0 = Field(20, 1)
VM_INVALIDATE_REQ__INVALIDATE_L2_PDE1 = Field(21, 1)
VM_INVALIDATE_REQ__INVALIDATE_L2_PDE2 = Field(22, 1)
VM_INVALIDATE_REQ__INVALIDATE_L1_PTES = Field(23, 1)
VM_INVALIDATE_REQ__CLEAR_PROTECTION_FAULT_STATUS_ADDR = Field(24, 1)
VM_INVALIDATE_ACK__PER_VMID_INVALIDATE_ACK = Field(0, 16)
# VM_L2_PROTECTION_FAULT_STATUS (GC 12: _LO32)
VM_L2_PROTECTION_FAULT_STATUS__MORE_FAULTS = Field(0, 1)
VM_L2_PROTECTION_FAULT_STATUS__PERMISSION_FAULTS = Field(4, 4)
VM_L2_PROTECTION_FAULT_STATUS__MAPPING_ERROR = Field(8, 1)
VM_L2_PROTECTION_FAULT_STATUS__CID = Field(9, 9)
VM_L2_PROTECTION_FAULT_STATUS__RW = Field(18, 1)
VM_L2_PROTECTION_FAULT_STATUS__VMID = Field(20, 4)
# MC_VM_FB_LOCATION_BASE / _TOP count 16 MiB units
FB_LOCATION_SHIFT = 24
