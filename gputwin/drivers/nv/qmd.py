"""The QMD (V03_00) of one launch: grid, block, shared memory, constant bank 0 and the program.

For SASS from a cubin (a real GPU) the QMD also carries what the hardware sizes per CTA from the program:
REGISTER_COUNT_V (EIATTR_REGCOUNT), BARRIER_COUNT (EIATTR_NUM_BARRIERS, at least 1) and the L1/shared split
(MIN/MAX/TARGET_SM_CONFIG_SHARED_MEM_SIZE, encoded as KiB / 4 + 1 of a carveout the SM offers). The emulated
SM (PTX) takes its registers from the PTX and ignores those fields, so they stay zero there.
"""
from __future__ import annotations

from gputwin.abi import nv_qmd as q

# shared-memory carveouts (KiB) per SM, CUDA programming guide "compute capabilities" tables
CARVEOUTS_KIB = {"sm_80": (0, 8, 16, 32, 64, 100, 132, 164), "sm_90": (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)}


def sm_config(shared_bytes: int, arch: str) -> tuple[int, int]:
    """(smallest carveout holding `shared_bytes`, largest carveout), each as the QMD's KiB / 4 + 1."""
    kib = CARVEOUTS_KIB.get(arch)
    if kib is None:
        raise ValueError(f"no shared-memory carveouts known for {arch}; known: {', '.join(CARVEOUTS_KIB)}")
    fit = next((k for k in kib if k * 1024 >= shared_bytes), None)
    if fit is None:
        raise ValueError(f"{shared_bytes} bytes of shared memory exceed {arch}'s largest carveout ({kib[-1]} KiB)")
    return fit // 4 + 1, kib[-1] // 4 + 1


def launch_qmd(*, grid, block, shared_bytes: int, program_va: int, cb_va: int, cb_size: int,
               registers: int = 0, barriers: int = 1, arch: str | None = None) -> q.QMD:
    """`arch` given (a SASS program): registers, barriers and the shared-memory config are set from it."""
    qmd = q.QMD()
    for f in ("INVALIDATE_TEXTURE_HEADER_CACHE", "INVALIDATE_TEXTURE_SAMPLER_CACHE", "INVALIDATE_TEXTURE_DATA_CACHE",
              "INVALIDATE_SHADER_DATA_CACHE", "INVALIDATE_SHADER_CONSTANT_CACHE", "SM_GLOBAL_CACHING_ENABLE",
              "API_VISIBLE_CALL_LIMIT", "SAMPLER_INDEX", "CONSTANT_BUFFER_VALID0"):
        qmd.set(f, 1)
    qmd.set("QMD_MAJOR_VERSION", q.QMD_MAJOR_VERSION_03).set("QMD_VERSION", q.QMD_VERSION_00)
    qmd.set("CTA_RASTER_WIDTH", grid[0]).set("CTA_RASTER_HEIGHT", grid[1]).set("CTA_RASTER_DEPTH", grid[2])
    for i in range(3):
        qmd.set(f"CTA_THREAD_DIMENSION{i}", block[i])
    qmd.set("SHARED_MEMORY_SIZE", shared_bytes).set("BARRIER_COUNT", max(1, barriers))
    qmd.set("PROGRAM_ADDRESS_LOWER", program_va & 0xFFFFFFFF).set("PROGRAM_ADDRESS_UPPER", program_va >> 32)
    qmd.set("CONSTANT_BUFFER_ADDR_LOWER0", cb_va & 0xFFFFFFFF).set("CONSTANT_BUFFER_ADDR_UPPER0", cb_va >> 32)
    qmd.set("CONSTANT_BUFFER_SIZE_SHIFTED40", cb_size >> 4)
    if arch is not None:
        fit, largest = sm_config(shared_bytes, arch)
        qmd.set("REGISTER_COUNT_V", registers)
        qmd.set("MIN_SM_CONFIG_SHARED_MEM_SIZE", fit).set("TARGET_SM_CONFIG_SHARED_MEM_SIZE", fit)
        qmd.set("MAX_SM_CONFIG_SHARED_MEM_SIZE", largest)
    return qmd
