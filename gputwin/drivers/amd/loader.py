"""The HSA code-object loader: a kernel of a loaded code object, ready to dispatch on a PM4 queue.

It turns the kernel descriptor into register values (COMPUTE_PGM_RSRC1/2/3 with the LDS size the CP
needs, the user SGPRs in the order AMDGPUUsage "Initial Kernel Execution State" gives) and lays out the
kernarg segment with the dispatch packet that code object v4 kernels read their sizes from.
"""
from __future__ import annotations

from gputwin.abi import amdhsa
from gputwin.abi import amd_regs as regs
from gputwin.abi.code_object import CodeObjectError, KernelInfo
from gputwin.drivers.hcq import round_up

LDS_GRANULE = 512          # COMPUTE_PGM_RSRC2.LDS_SIZE counts 128-dword blocks on gfx10+ (and gfx9's 64-dword x2)
DYNAMIC_STACK_BYTES = 1024   # per-lane stack the ROCm runtime gives a kernel with a dynamic stack (HIP default)
KERNARG_ALIGN = 64         # kernarg segments start on a 64-byte boundary; the dispatch packet follows, aligned
# user SGPRs the PM4 path cannot provide: these need an AQL queue (amd_queue_t) or a pre-gfx11 scratch setup
UNSUPPORTED_SGPRS = {
    "queue_ptr": "an amd_queue_t, which only AQL queues have",
    "private_segment_buffer": "a scratch buffer descriptor (pre-architected-flat-scratch targets)",
    "flat_scratch_init": "FLAT_SCRATCH initialisation (pre-architected-flat-scratch targets)",
}


def scratch_layout(per_lane: int, arch: str, props: dict[str, int]) -> tuple[int, int]:
    """(COMPUTE_TMPRING_SIZE, bytes of scratch backing) for waves using `per_lane` private bytes per lane.

    Every wave slot the GPU can have in flight (CUs x max_slots_scratch_cu) gets its own wave-sized piece,
    sized for 64 lanes as the ROCm runtime does; WAVES counts the slots of one shader engine and
    WAVESIZE the piece in 256-byte units (1 KiB on gfx9)."""
    granule = 1024 if arch.startswith("gfx9") else 256
    wave_bytes = round_up(max(per_lane, 16) * 64, granule)
    cus = max(props.get("simd_count", 2) // max(props.get("simd_per_cu", 2), 1), 1)
    ses = max(props.get("array_count", 1) // max(props.get("simd_arrays_per_engine", 1), 1), 1)
    waves = cus * props.get("max_slots_scratch_cu", 32)
    tmpring = regs.COMPUTE_TMPRING_SIZE__WAVES(min(waves // ses, 0xFFF)) | \
        regs.COMPUTE_TMPRING_SIZE__WAVESIZE(wave_bytes // granule)
    return tmpring, waves * wave_bytes


class LoadedKernel:
    """Everything a dispatch of one kernel needs, computed once at load time."""

    def __init__(self, info: KernelInfo, image_va: int, arch: str):
        self.info, self.name = info, info.name
        self.kd_va = image_va + info.kd_offset
        self.code_va = image_va + info.entry_offset
        props = info.descriptor.kernel_code_properties
        self.sgprs = amdhsa.user_sgpr_layout(props)
        for name, _, _ in self.sgprs:
            if name in UNSUPPORTED_SGPRS:
                raise NotImplementedError(f"kernel {info.name} asks for the {name} user SGPR: it needs "
                                          f"{UNSUPPORTED_SGPRS[name]}, which this PM4 loader does not provide")
        n_user = sum(n for _, _, n in self.sgprs)
        if n_user > min(info.user_sgpr_count, regs.COMPUTE_USER_DATA_COUNT):
            raise CodeObjectError(f"kernel {info.name}: descriptor enables {n_user} user SGPRs but "
                                  f"USER_SGPR_COUNT is {info.user_sgpr_count}")
        self.wave32 = info.wave32
        self.dispatch_ptr = any(n == "dispatch_ptr" for n, _, _ in self.sgprs)
        self.lds_bytes = info.group_segment_size
        self.scratch_per_lane = info.private_segment_size
        if amdhsa.KERNEL_CODE_PROPERTY_USES_DYNAMIC_STACK.get(props):   # the size is only a minimum: give
            self.scratch_per_lane = max(self.scratch_per_lane, DYNAMIC_STACK_BYTES)   # ROCm's default stack
        self.uses_scratch = bool(amdhsa.COMPUTE_PGM_RSRC2_ENABLE_PRIVATE_SEGMENT.get(info.rsrc2))
        self.rsrc1 = info.rsrc1
        if arch.startswith("gfx11"):   # as the ROCm runtime does: the CWSR trap handler runs gfx11 waves privileged
            self.rsrc1 |= amdhsa.COMPUTE_PGM_RSRC1_PRIV(1)
        self.rsrc3 = info.rsrc3
        self.max_block = int(info.metadata.get(".max_flat_workgroup_size", 1024))
        self.uses_printf = any(a.value_kind == "hidden_printf_buffer" for a in info.args)
        self.args_size = round_up(max(info.kernarg_size, 1), KERNARG_ALIGN)
        self.segment_size = self.args_size + (64 if self.dispatch_ptr else 0)

    def rsrc2(self, dynamic_lds: int = 0) -> int:
        """RSRC2 with LDS_SIZE filled in: the compiler leaves it 0 and the runtime programs it."""
        lds = round_up(self.lds_bytes + dynamic_lds, LDS_GRANULE) // LDS_GRANULE
        if lds >= 1 << amdhsa.COMPUTE_PGM_RSRC2_GRANULATED_LDS_SIZE.width:
            raise ValueError(f"kernel {self.name}: {self.lds_bytes + dynamic_lds} bytes of LDS do not fit")
        r2 = self.info.rsrc2 & ~amdhsa.COMPUTE_PGM_RSRC2_GRANULATED_LDS_SIZE.mask
        return r2 | amdhsa.COMPUTE_PGM_RSRC2_GRANULATED_LDS_SIZE(lds)

    def dispatch_packet(self, kernargs_va: int, grid, block, dims: int, dynamic_lds: int = 0) -> bytes:
        """The hsa_kernel_dispatch_packet_t a v4 kernel reads through s[dispatch_ptr]."""
        p = amdhsa.hsa_kernel_dispatch_packet_t(
            header=amdhsa.DISPATCH_PACKET_HEADER, setup=dims, workgroup_size_x=block[0], workgroup_size_y=block[1],
            workgroup_size_z=block[2], grid_size_x=grid[0] * block[0], grid_size_y=grid[1] * block[1],
            grid_size_z=grid[2] * block[2], private_segment_size=self.scratch_per_lane,
            group_segment_size=self.lds_bytes + dynamic_lds, kernel_object=self.kd_va, kernarg_address=kernargs_va)
        return bytes(p)

    def user_data(self, kernargs_va: int, dispatch_id: int) -> list[int]:
        """COMPUTE_USER_DATA_0.. values, packed in ABI order."""
        values = {"dispatch_ptr": kernargs_va + self.args_size, "kernarg_segment_ptr": kernargs_va,
                  "dispatch_id": dispatch_id, "private_segment_size": self.scratch_per_lane}
        out: list[int] = []
        for name, _, count in self.sgprs:
            v = values[name]
            out += [v & 0xFFFFFFFF, (v >> 32) & 0xFFFFFFFF][:count]
        return out
