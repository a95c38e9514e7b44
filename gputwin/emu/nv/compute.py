"""The compute class (AMPERE_COMPUTE_A / HOPPER_COMPUTE_A): QMD launches through SEND_PCAS_A +
SEND_SIGNALING_PCAS2_B (or the older SEND_SIGNALING_PCAS_B), report semaphores (SET_REPORT_SEMAPHORE_A..D),
shader memory windows and cache invalidations (accepted: the emulator keeps no caches).

A launch reads the QMD (V03_00, gputwin.abi.nv_qmd) at QMD_ADDRESS_SHIFTED8 << 8: program address, grid
(CTA_RASTER_*), block (CTA_THREAD_DIMENSION*), shared memory, constant buffer 0 (the kernel parameters sit
at the arch's parameter offset in it), then runs the shader and performs RELEASE0/1/2 semaphores and a
dependent QMD (DEPENDENT_QMD0, action SCHEDULE), as the hardware does when the grid completes.

The emulated SM executes PTX: its program format is `.entry` name, NUL, PTX module text, NUL at the
program address (docs/mock-nv.md); gputwin.emu.nv.ptx runs it.
"""
from __future__ import annotations

import numpy as np

from gputwin.abi import nv_methods as m
from gputwin.abi import nv_qmd as q
from gputwin.emu.nv.channel import MethodError
from gputwin.emu.nv.host import release

_STATE = (m.COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_A, m.COMPUTE_SET_SHADER_SHARED_MEMORY_WINDOW_B,
          m.COMPUTE_SET_SHADER_LOCAL_MEMORY_A, m.COMPUTE_SET_SHADER_LOCAL_MEMORY_B,
          m.COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_A, m.COMPUTE_SET_SHADER_LOCAL_MEMORY_WINDOW_B,
          m.COMPUTE_SEND_PCAS_A, m.COMPUTE_SET_REPORT_SEMAPHORE_A, m.COMPUTE_SET_REPORT_SEMAPHORE_B,
          m.COMPUTE_SET_REPORT_SEMAPHORE_C)
MAX_PROGRAM_BYTES = 16 << 20
MAX_DEPENDENT_CHAIN = 1 << 16


class ComputeEngine:
    def __init__(self, channel, class_id: int):
        self.ch, self.gpu, self.class_id = channel, channel.gpu, class_id
        self.regs: dict[int, int] = {}

    def _bad(self, what: str, addr: int | None) -> MethodError:
        return MethodError(f"compute class {self.class_id:#x}: {what} ({self.ch.describe(addr)})",
                           queue=self.ch.name, address=addr)

    def method(self, method: int, data: int, addr: int) -> bool:
        if method in _STATE:
            self.regs[method] = data
        elif method == m.COMPUTE_SEND_SIGNALING_PCAS2_B:
            action = data & 0xF
            if action != m.PCAS2_B_ACTION_INVALIDATE_COPY_SCHEDULE and action != 2:
                raise self._bad(f"SEND_SIGNALING_PCAS2_B action {action} is not modelled", addr)
            self.launch(self.regs.get(m.COMPUTE_SEND_PCAS_A, 0) << 8, addr)
        elif method == m.COMPUTE_SEND_SIGNALING_PCAS_B:
            if data & m.PCAS_B_SCHEDULE:
                self.launch(self.regs.get(m.COMPUTE_SEND_PCAS_A, 0) << 8, addr)
        elif method == m.COMPUTE_SET_REPORT_SEMAPHORE_D:
            self._report_semaphore(data, addr)
        elif method not in (m.COMPUTE_NO_OPERATION, m.COMPUTE_INVALIDATE_SHADER_CACHES_NO_WFI):
            raise self._bad(f"method {method:#x} is not modelled", addr)
        return True

    def _report_semaphore(self, d: int, addr: int) -> None:
        if d & 3 != m.REPORT_SEMAPHORE_D_OPERATION_RELEASE:
            raise self._bad(f"SET_REPORT_SEMAPHORE_D operation {d & 3} is not modelled", addr)
        va = (self.regs.get(m.COMPUTE_SET_REPORT_SEMAPHORE_A, 0) & m.UPPER_ADDRESS_MASK[self.class_id]) << 32 | self.regs.get(
            m.COMPUTE_SET_REPORT_SEMAPHORE_B, 0)
        one_word = bool(d & m.REPORT_SEMAPHORE_D_STRUCTURE_SIZE_ONE_WORD)
        release(self.ch, va, self.regs.get(m.COMPUTE_SET_REPORT_SEMAPHORE_C, 0), False, not one_word,
                f"SET_REPORT_SEMAPHORE on {self.ch.name}")

    # --- QMD launches -----------------------------------------------------------------------------------
    def launch(self, qmd_va: int, addr: int | None) -> None:
        for _ in range(MAX_DEPENDENT_CHAIN):
            qmd = q.QMD(self.gpu.mem.read(qmd_va, q.QMD_SIZE))
            self._run(qmd, qmd_va, addr)
            if not qmd.get("DEPENDENT_QMD0_ENABLE"):
                return
            action = qmd.get("DEPENDENT_QMD0_ACTION")
            if action not in (q.DEPENDENT_QMD_ACTION_QMD_SCHEDULE, q.DEPENDENT_QMD_ACTION_QMD_INVALIDATE_COPY_SCHEDULE):
                raise self._bad(f"QMD at {qmd_va:#x}: DEPENDENT_QMD0_ACTION {action} is not modelled", addr)
            qmd_va = qmd.get("DEPENDENT_QMD0_POINTER") << 8
        raise self._bad(f"more than {MAX_DEPENDENT_CHAIN} dependent QMDs in a chain", addr)

    def _run(self, qmd: q.QMD, qmd_va: int, addr: int | None) -> None:
        major, minor = qmd.get("QMD_MAJOR_VERSION"), qmd.get("QMD_VERSION")
        if (major, minor) != (q.QMD_MAJOR_VERSION_03, q.QMD_VERSION_00):
            raise self._bad(f"QMD at {qmd_va:#x} is version {major:02d}_{minor:02d}; only 03_00 is modelled", addr)
        grid = (qmd.get("CTA_RASTER_WIDTH"), qmd.get("CTA_RASTER_HEIGHT"), qmd.get("CTA_RASTER_DEPTH"))
        block = tuple(qmd.get(f"CTA_THREAD_DIMENSION{i}") for i in range(3))
        if 0 in block or block[0] * block[1] * block[2] > 1024:
            raise self._bad(f"QMD at {qmd_va:#x}: block {block} (1..1024 threads)", addr)
        shared = qmd.get("SHARED_MEMORY_SIZE")
        if shared > self.gpu.profile.max_shared_bytes:
            raise self._bad(f"QMD at {qmd_va:#x}: {shared} bytes of shared memory exceed "
                            f"{self.gpu.profile.max_shared_bytes}", addr)
        if 0 not in grid:
            self._execute(qmd, qmd_va, grid, block, shared, addr)
        self.gpu.stats.launches += 1
        for i in range(3):
            if qmd.get(f"RELEASE{i}_ENABLE"):
                self._release(qmd, i, qmd_va, addr)

    def _release(self, qmd: q.QMD, i: int, qmd_va: int, addr) -> None:
        if qmd.get(f"RELEASE{i}_REDUCTION_ENABLE"):
            raise self._bad(f"QMD at {qmd_va:#x}: RELEASE{i} reductions are not modelled", addr)
        size = qmd.get(f"RELEASE{i}_STRUCTURE_SIZE")
        va = qmd.get(f"RELEASE{i}_ADDRESS_UPPER") << 32 | qmd.get(f"RELEASE{i}_ADDRESS_LOWER")
        wide = bool(qmd.get(f"RELEASE{i}_PAYLOAD64B"))
        payload = qmd.get(f"RELEASE{i}_PAYLOAD_LOWER") | (qmd.get(f"RELEASE{i}_PAYLOAD_UPPER") << 32 if wide else 0)
        release(self.ch, va, payload, wide, size == q.RELEASE_STRUCTURE_SIZE_FOUR_WORDS,
                f"QMD RELEASE{i} on {self.ch.name}")

    def _program(self, va: int) -> tuple[str, str]:
        """The entry name and PTX text at a program address (NUL-terminated, one after the other)."""
        region = self.gpu.mem.find(va)
        if region is None:
            self.gpu.mem.view(va, 1)          # raises the MemoryFault
        data = region.data[va - region.base: va - region.base + MAX_PROGRAM_BYTES]
        nuls, pos, step = [], 0, 0x1000
        while len(nuls) < 2 and pos < data.size:      # scan in growing chunks: programs are small, regions large
            chunk = data[pos:pos + step]
            nuls += (np.flatnonzero(chunk == 0)[:2 - len(nuls)] + pos).tolist()
            pos, step = pos + chunk.size, step * 2
        if len(nuls) < 2 or nuls[0] == 0 or nuls[1] == nuls[0] + 1:
            raise MethodError(f"program at {va:#x} is not an emulated-SM program (entry name, NUL, PTX text, NUL)",
                              queue=self.ch.name, address=va)
        return (data[:nuls[0]].tobytes().decode("ascii", "replace"),
                data[nuls[0] + 1:nuls[1]].tobytes().decode("utf-8", "replace"))

    def _execute(self, qmd: q.QMD, qmd_va: int, grid, block, shared: int, addr) -> None:
        from gputwin.emu.nv.ptx import load_module, run_kernel
        if not qmd.get("CONSTANT_BUFFER_VALID0"):
            raise self._bad(f"QMD at {qmd_va:#x} has no constant buffer 0 (kernel parameters)", addr)
        prog_va = qmd.get("PROGRAM_ADDRESS_UPPER") << 32 | qmd.get("PROGRAM_ADDRESS_LOWER")
        name, text = self._program(prog_va)
        mod = load_module(text)
        if name not in mod.kernels:
            raise MethodError(f"program at {prog_va:#x} names entry {name!r}, which its PTX does not define",
                              queue=self.ch.name, address=prog_va)
        k = mod.kernels[name]
        cb_va = qmd.get("CONSTANT_BUFFER_ADDR_UPPER0") << 32 | qmd.get("CONSTANT_BUFFER_ADDR_LOWER0")
        cb_size = qmd.get("CONSTANT_BUFFER_SIZE_SHIFTED40") << 4
        off = self.gpu.profile.cbank0_param_offset
        if off + k.params_size > cb_size:
            raise self._bad(f"constant buffer 0 of {cb_size} bytes cannot hold {k.params_size} parameter bytes at "
                            f"{off:#x} for {name}", addr)
        params = self.gpu.mem.read(cb_va + off, k.params_size)
        dynamic = max(shared - k.static_shared_bytes, 0)
        races = self.gpu.mem.queue_races
        if races is not None:           # racecheck across channels: the launch is one operation of this channel
            races.begin(self.ch.name, f"the kernel {name} at {prog_va:#x}")
        try:
            counters = run_kernel(self.gpu.mem, mod, name, grid=grid, block=block, params=params,
                                  dynamic_shared_bytes=dynamic, arch=self.gpu.arch)
        finally:
            if races is not None:
                races.end()
        self.gpu.stats.warps += getattr(counters, "warps", 0)
        self.gpu.stats.warp_insts += getattr(counters, "warp_insts", 0)
        self.gpu.stats.lane_ops += getattr(counters, "lane_ops", 0)
