"""DISPATCH_DIRECT: what the command processor hands the shader emulator, read from the COMPUTE_* register
state that SET_SH_REG left (gputwin.abi.amd_regs names the registers and fields)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from gputwin.abi import amd_regs as r
from gputwin.abi.code_object import MAX_WORKGROUP_SIZE

if TYPE_CHECKING:
    from gputwin.emu.amd.cp import ComputeQueue
    from gputwin.emu.amd.dispatch import Dispatch

GFX12_MAX_GRID_YZ = 1 << 16    # gfx12 passes workgroup ids Y and Z in TTMP7[15:0] / [31:16] (LLVM AMDGPUUsage)

# initiator bits with no effect on a synchronous, in-order emulator
_HARMLESS = 0
for _field in ("COMPUTE_SHADER_EN", "PARTIAL_TG_EN", "FORCE_START_AT_000", "USE_THREAD_DIMENSIONS", "ORDER_MODE",
               "SCALAR_L1_INV_VOL", "VECTOR_L1_INV_VOL", "TUNNEL_ENABLE", "CS_W32_EN", "DISABLE_DISP_PREMPT_EN"):
    _HARMLESS |= getattr(r, f"COMPUTE_DISPATCH_INITIATOR__{_field}").mask


def build_dispatch(q: "ComputeQueue", dim_x: int, dim_y: int, dim_z: int, initiator: int) -> "Dispatch | None":
    """The Dispatch for DISPATCH_DIRECT(dim, initiator) on queue q, or None for an empty grid."""
    from gputwin.emu.amd.dispatch import LDS_GRANULE, Dispatch
    if not r.COMPUTE_DISPATCH_INITIATOR__COMPUTE_SHADER_EN.get(initiator):
        raise q._bad("DISPATCH_DIRECT without COMPUTE_SHADER_EN is not modelled")
    if initiator & ~_HARMLESS:
        raise q._bad(f"DISPATCH_DIRECT initiator bits {initiator & ~_HARMLESS:#x} are not modelled")
    block = tuple(r.COMPUTE_NUM_THREAD_X__NUM_THREAD_FULL.get(q.sh_reg(reg))
                  for reg in (r.regCOMPUTE_NUM_THREAD_X, r.regCOMPUTE_NUM_THREAD_Y, r.regCOMPUTE_NUM_THREAD_Z))
    if min(block) == 0:
        raise q._bad(f"DISPATCH_DIRECT with a workgroup of {block} threads (COMPUTE_NUM_THREAD_* unset)")
    if block[0] * block[1] * block[2] > MAX_WORKGROUP_SIZE:
        raise q._bad(f"DISPATCH_DIRECT with a workgroup of {block} threads, more than {MAX_WORKGROUP_SIZE}")
    dims = (dim_x, dim_y, dim_z)
    if r.COMPUTE_DISPATCH_INITIATOR__USE_THREAD_DIMENSIONS.get(initiator):
        if any(d % b for d, b in zip(dims, block)):
            raise q._bad(f"DISPATCH_DIRECT of {dims} threads with partial workgroups of {block} is not modelled")
        dims = tuple(d // b for d, b in zip(dims, block))
    if min(dims) == 0:
        return None
    if q.gpu.arch.startswith("gfx12") and max(dims[1:]) > GFX12_MAX_GRID_YZ:
        raise q._bad(f"DISPATCH_DIRECT of {dims} workgroups: on gfx12 workgroup ids Y and Z must fit 16 bits "
                     f"(TTMP7), at most {GFX12_MAX_GRID_YZ} workgroups in Y and Z")
    if not r.COMPUTE_DISPATCH_INITIATOR__FORCE_START_AT_000.get(initiator):
        start = [q.sh_reg(reg) for reg in (r.regCOMPUTE_START_X, r.regCOMPUTE_START_Y, r.regCOMPUTE_START_Z)]
        if any(start):
            raise q._bad(f"DISPATCH_DIRECT starting at workgroup {tuple(start)} is not modelled")
    restart = [q.sh_reg(reg) for reg in (r.regCOMPUTE_RESTART_X, r.regCOMPUTE_RESTART_Y, r.regCOMPUTE_RESTART_Z)]
    if any(restart):
        raise q._bad(f"DISPATCH_DIRECT resuming at workgroup {tuple(restart)} is not modelled")

    profile = q.gpu.profile
    wave64 = not (profile.wave32 and r.COMPUTE_DISPATCH_INITIATOR__CS_W32_EN.get(initiator))
    rsrc1, rsrc2, rsrc3 = (q.sh_reg(reg) for reg in (r.regCOMPUTE_PGM_RSRC1, r.regCOMPUTE_PGM_RSRC2,
                                                     r.regCOMPUTE_PGM_RSRC3))
    lds = r.COMPUTE_PGM_RSRC2__LDS_SIZE.get(rsrc2) * LDS_GRANULE
    if lds > profile.lds_size_in_kb * 1024:
        raise q._bad(f"DISPATCH_DIRECT with COMPUTE_PGM_RSRC2.LDS_SIZE of {lds} bytes, more than the "
                     f"{profile.lds_size_in_kb} KiB a workgroup can have")
    n_user = min(r.COMPUTE_PGM_RSRC2__USER_SGPR.get(rsrc2), r.COMPUTE_USER_DATA_COUNT)
    user = [q.sh_reg(r.regCOMPUTE_USER_DATA_0 + i) for i in range(n_user)]
    code = ((q.sh_reg(r.regCOMPUTE_PGM_HI) << 32) | q.sh_reg(r.regCOMPUTE_PGM_LO)) << 8

    scratch_per_lane, scratch_base, scratch_waves = 0, None, None
    if r.COMPUTE_PGM_RSRC2__SCRATCH_EN.get(rsrc2):
        tmpring = q.sh_reg(r.regCOMPUTE_TMPRING_SIZE)
        wavesize = r.COMPUTE_TMPRING_SIZE__WAVESIZE.get(tmpring)
        # WAVES counts the slots of one shader engine on gfx11+ and of one XCC on gfx9 (ROCr's
        # amd_aql_queue.cpp); the emulator lays every engine's (XCC's) slots end to end
        per = profile.num_xcc if profile.arch.startswith("gfx9") else \
            profile.array_count // profile.simd_arrays_per_engine
        scratch_waves = r.COMPUTE_TMPRING_SIZE__WAVES.get(tmpring) * per
        scratch_per_lane = wavesize * profile.scratch_wave_granule // (64 if wave64 else 32)
        base = (q.sh_reg(r.regCOMPUTE_DISPATCH_SCRATCH_BASE_HI) << 32
                | q.sh_reg(r.regCOMPUTE_DISPATCH_SCRATCH_BASE_LO)) << 8
        scratch_base = base or None   # None: the emulator's private scratch
    group_segment, q.group_segment = q.group_segment, None   # a marker describes one dispatch
    return Dispatch(code_address=code, grid=dims, block=block, wave64=wave64, user_sgprs=user,
                    rsrc1=rsrc1, rsrc2=rsrc2, rsrc3=rsrc3, scratch_bytes_per_lane=scratch_per_lane,
                    scratch_base=scratch_base, scratch_waves=scratch_waves, group_segment=group_segment)
