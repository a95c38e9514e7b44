"""The emulated MEC's hardware queue descriptors (HQDs): the compute queues a kernel-less driver maps by
programming registers directly (amdgpu's hqd_load path), no MES or KIQ in between.

The CP_HQD_* / CP_MQD_* registers (regCP_MQD_BASE_ADDR .. regCP_HQD_PQ_WPTR_HI) are banked per ME / pipe /
queue; GRBM_GFX_CNTL selects the bank. Writing CP_HQD_ACTIVE = 1 activates the selected queue from its bank:
ring at CP_HQD_PQ_BASE(_HI) << 8 of 2 ** (PQ_CONTROL.QUEUE_SIZE + 1) dwords, read pointer reported at
CP_HQD_PQ_RPTR_REPORT_ADDR, doorbell at CP_HQD_PQ_DOORBELL_CONTROL.DOORBELL_OFFSET when DOORBELL_EN and inside
the MEC doorbell range (a queue without DOORBELL_EN, found by write-pointer polling, is not modelled: the
activation fails closed). It becomes a compute queue of the shared command processor (GPU.create_compute_queue),
run on each doorbell write. ACTIVE = 0 or a DEQUEUE_REQUEST unmaps it. Nothing runs unless the PSP loaded
the MEC microcode (function.firmware), and only on a VMID whose SH_MEM_BASES / SH_MEM_CONFIG (banked per VMID
by GRBM_GFX_CNTL.VMID) give the flat apertures the shader core reports."""
from __future__ import annotations

import numpy as np

from gputwin.abi.amdgpu import ip_bases, versions
from gputwin.abi.amdgpu import mqd
from gputwin.abi.amdgpu.ih import cp_ring_id
from gputwin.emu.amd.hwreg import PRIVATE_APERTURE_HI, SHARED_APERTURE_HI
from gputwin.emu.amd.soc.regfile import RegisterError

MEC_FIRMWARE = "RS64_MEC"


class HqdBlock:
    def __init__(self, function):
        self.function = function
        gc, bases, regs = versions.gc(function.arch), ip_bases(function.arch), function.regs
        self.gc = gc
        self.first = gc.regCP_MQD_BASE_ADDR.address(bases)
        self.banks: dict[tuple[int, int, int], np.ndarray] = {}
        self.queues: dict[tuple[int, int, int], object] = {}   # active HQDs: (me, pipe, queue) -> GPU queue
        self._doorbells: dict[tuple[int, int, int], int] = {}
        self._grbm = gc.regGRBM_GFX_CNTL.address(bases)
        regs.add(self._grbm, gc.regGRBM_GFX_CNTL.name)
        for reg in (gc.regCP_MEC_DOORBELL_RANGE_LOWER, gc.regCP_MEC_DOORBELL_RANGE_UPPER):
            regs.add(reg.address(bases), reg.name)
        self.sh_mem: dict[int, dict[str, int]] = {}   # VMID -> SH_MEM_CONFIG / SH_MEM_BASES
        for name in ("SH_MEM_CONFIG", "SH_MEM_BASES"):
            regs.add(getattr(gc, f"reg{name}").address(bases), name,
                     read=lambda n=name: self._vmid_bank().get(n, 0),
                     write=lambda v, n=name: self._vmid_bank().__setitem__(n, v))
        hooks = {gc.regCP_HQD_ACTIVE: self._active, gc.regCP_HQD_DEQUEUE_REQUEST: self._dequeue}
        special = {reg.address(bases) - self.first: fn for reg, fn in hooks.items()}
        for i in range(mqd.HQD_IMAGE_DWORDS):
            regs.add(self.first + i, f"CP_HQD bank dword {i}", read=lambda i=i: self._read(i),
                     write=special.get(i) or (lambda v, i=i: self._store(i, v)))
        self._rptr = gc.regCP_HQD_PQ_RPTR.address(bases) - self.first

    def reset(self) -> None:
        for key in list(self.queues):
            self._unmap(key)
        self.banks.clear()
        self.sh_mem.clear()
        self.function.regs.get(self._grbm).value = 0

    # --- banks ------------------------------------------------------------------------------------
    def selected(self) -> tuple[int, int, int]:
        g = self.function.regs.value(self._grbm)
        return mqd.GRBM_GFX_CNTL__MEID.get(g), mqd.GRBM_GFX_CNTL__PIPEID.get(g), mqd.GRBM_GFX_CNTL__QUEUEID.get(g)

    def _vmid_bank(self) -> dict[str, int]:
        return self.sh_mem.setdefault(mqd.GRBM_GFX_CNTL__VMID.get(self.function.regs.value(self._grbm)), {})

    def _check_apertures(self, key, vmid: int) -> None:
        """The shader core reports fixed flat apertures (LDS 1 << 48, scratch 2 << 48, 64-bit mode): a queue
        whose VMID was set up otherwise is not modelled."""
        sh = self.sh_mem.get(vmid, {})
        bases, config = sh.get("SH_MEM_BASES", 0), sh.get("SH_MEM_CONFIG", 0)
        if (mqd.SH_MEM_BASES__SHARED_BASE.get(bases), mqd.SH_MEM_BASES__PRIVATE_BASE.get(bases),
                mqd.SH_MEM_CONFIG__ADDRESS_MODE.get(config)) != (SHARED_APERTURE_HI >> 16, PRIVATE_APERTURE_HI >> 16, 0):
            raise RegisterError(f"{self.function.name}: CP_HQD_ACTIVE on ME{key[0]} pipe {key[1]} queue {key[2]}: "
                                f"VMID {vmid} has SH_MEM_BASES {bases:#x} / SH_MEM_CONFIG {config:#x}; only 64-bit "
                                f"mode with shared base {SHARED_APERTURE_HI >> 16:#x} and private base "
                                f"{PRIVATE_APERTURE_HI >> 16:#x} (address bits 63:48) is modelled")

    def _bank(self) -> np.ndarray:
        return self.banks.setdefault(self.selected(), np.zeros(mqd.HQD_IMAGE_DWORDS, np.uint32))

    def _store(self, i: int, value: int) -> None:
        self._bank()[i] = value

    def _read(self, i: int) -> int:
        q = self.queues.get(self.selected())
        if i == self._rptr and q is not None:
            return (q.rptr // 4) % (q.ring_bytes // 4)
        return int(self._bank()[i])

    def reg(self, reg) -> int:
        return int(self._bank()[reg.address(ip_bases(self.function.arch)) - self.first])

    # --- activation -------------------------------------------------------------------------------
    def _active(self, value: int) -> None:
        """ACTIVE reads back 1 only once the queue is mapped (a refused activation leaves it 0)."""
        key = self.selected()
        if mqd.CP_HQD_ACTIVE__ACTIVE.get(value):
            if key not in self.queues:
                self._map(key)
        else:
            self._unmap(key)
        self._store(self.gc.regCP_HQD_ACTIVE.address(ip_bases(self.function.arch)) - self.first, value)

    def _dequeue(self, value: int) -> None:
        if mqd.CP_HQD_DEQUEUE_REQUEST__DEQUEUE_REQ.get(value):
            self._unmap(self.selected())
            self._store(self.gc.regCP_HQD_ACTIVE.address(ip_bases(self.function.arch)) - self.first, 0)

    def _map(self, key) -> None:
        f, gc = self.function, self.gc
        if MEC_FIRMWARE not in f.firmware:
            raise RegisterError(f"{f.name}: CP_HQD_ACTIVE on ME{key[0]} pipe {key[1]} queue {key[2]}: the MEC "
                                f"microcode ({MEC_FIRMWARE}) was not loaded by the PSP, the MEC does not run")
        bell = self.reg(gc.regCP_HQD_PQ_DOORBELL_CONTROL)
        if not mqd.CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN.get(bell):
            raise RegisterError(f"{f.name}: CP_HQD_ACTIVE on ME{key[0]} pipe {key[1]} queue {key[2]} without "
                                f"DOORBELL_EN: a queue the MEC finds by polling its write pointer is not modelled")
        self._check_apertures(key, mqd.CP_HQD_VMID__VMID.get(self.reg(gc.regCP_HQD_VMID)))
        ring = (self.reg(gc.regCP_HQD_PQ_BASE) | self.reg(gc.regCP_HQD_PQ_BASE_HI) << 32) << 8
        size = 4 << (mqd.CP_HQD_PQ_CONTROL__QUEUE_SIZE.get(self.reg(gc.regCP_HQD_PQ_CONTROL)) + 1)
        rptr = (self.reg(gc.regCP_HQD_PQ_RPTR_REPORT_ADDR) | self.reg(gc.regCP_HQD_PQ_RPTR_REPORT_ADDR_HI) << 32) & ~3
        wptr = (self.reg(gc.regCP_HQD_PQ_WPTR_POLL_ADDR) | self.reg(gc.regCP_HQD_PQ_WPTR_POLL_ADDR_HI) << 32) & ~7
        q = f.gpu.create_compute_queue(ring, size, rptr, wptr, name=f"hqd{key[0]}.{key[1]}.{key[2]}")
        self.queues[key] = q
        offset = mqd.CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET.get(bell)
        bases = ip_bases(f.arch)
        lo = mqd.CP_MEC_DOORBELL_RANGE__OFFSET.get(f.regs.value(gc.regCP_MEC_DOORBELL_RANGE_LOWER.address(bases)))
        hi = mqd.CP_MEC_DOORBELL_RANGE__OFFSET.get(f.regs.value(gc.regCP_MEC_DOORBELL_RANGE_UPPER.address(bases)))
        if lo <= offset <= hi:   # outside the MEC's range the doorbell goes to no queue
            f.doorbells.claim(4 * offset, lambda value, q=q: f.gpu.ring_doorbell(q, value))
            self._doorbells[key] = 4 * offset

    def _unmap(self, key) -> None:
        q = self.queues.pop(key, None)
        if q is not None:
            self.function.gpu.destroy_queue(q)
        if key in self._doorbells:
            self.function.doorbells.release(self._doorbells.pop(key))

    def doorbell_of(self, queue) -> int | None:
        """The doorbell BAR offset of an active compute queue (None: not this block's, or no doorbell)."""
        return next((self._doorbells.get(k) for k, q in self.queues.items() if q is queue), None)

    def ring_id(self, queue) -> int | None:
        """The IV ring_id of a compute queue (me, pipe, queue); None for a queue this block does not own."""
        for (me, pipe, qid), q in self.queues.items():
            if q is queue:
                return cp_ring_id(me, pipe, qid)
        return None


def attach(function) -> HqdBlock:
    return HqdBlock(function)
