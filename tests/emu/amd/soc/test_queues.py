"""HQD activation and the SDMA queue registers: the AM driver maps a compute queue from an MQD and an SDMA
ring by register writes; the emulated blocks turn them into queues of the shared engines, rung by doorbell.
Neither runs without the microcode the PSP loads."""
import struct

import numpy as np
import pytest

from gputwin.abi import amd_pm4 as pm4
from gputwin.abi import amd_sdma as sdma
from gputwin.abi.amdgpu import versions
from gputwin.drivers.amd.am import queues
from gputwin.drivers.amd.am.gmc import VRAM_VA, Gmc
from gputwin.drivers.amd.am.queues import DoorbellBar
from gputwin.emu.amd.soc.regfile import RegisterError
from tests.emu.amd.soc.am_rig import booted

MIB = 1 << 20
RING, PTRS, EOP, MQD, DATA = 40 * MIB, 41 * MIB, 42 * MIB, 43 * MIB, 44 * MIB


def _rig(arch="gfx1100", firmware=True):
    f, pci, chip = booted(arch)
    if not firmware:
        f.firmware.clear()
    queues.init_vmid0_apertures(chip.mmio, versions.gc(arch))
    gmc = Gmc(chip.mmio, chip.vram, arch, 32 * MIB, 256 * MIB, 512 * MIB, versions.gc(arch), versions.mmhub(arch))
    for at in (RING, PTRS, EOP, MQD, DATA):
        gmc.tables.map(VRAM_VA + at, at, MIB, system=False)
    gmc.flush()
    return f, pci, chip, versions.gc(arch)


def _mqd(doorbell=queues.COMPUTE_DOORBELL):
    return queues.compute_mqd(VRAM_VA + RING, 1 << 16, VRAM_VA + PTRS, VRAM_VA + PTRS + 8, VRAM_VA + EOP, 4096,
                              VRAM_VA + MQD, doorbell)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_hqd_activation_makes_a_compute_queue_from_the_registers_that_its_doorbell_runs(arch):
    f, pci, chip, gc = _rig(arch)
    queues.map_compute_queue(chip.mmio, gc, _mqd(), queues.COMPUTE_DOORBELL)
    q = f.blocks["gfx"].queues[(1, 0, 0)]
    assert (q.ring_va, q.ring_bytes, q.rptr_va) == (VRAM_VA + RING, 1 << 16, VRAM_VA + PTRS)
    packet = [pm4.PACKET3(pm4.PACKET3_WRITE_DATA, 3), pm4.WRITE_DATA_DST_SEL(pm4.PACKET3_WRITE_DATA__DST_SEL__MEMORY),
              (VRAM_VA + DATA) & 0xFFFFFFFF, (VRAM_VA + DATA) >> 32, 0xABCD]
    f.vram[RING:RING + 20] = np.frombuffer(np.asarray(packet, np.uint32).tobytes(), np.uint8)
    DoorbellBar(pci.bar(2)).write64(queues.COMPUTE_DOORBELL, len(packet))
    assert int(f.vram[DATA:DATA + 4].view("<u4")[0]) == 0xABCD
    assert int(f.vram[PTRS:PTRS + 8].view("<u8")[0]) == len(packet)     # read pointer reported, in dwords
    chip.mmio.write(gc.regGRBM_GFX_CNTL, 1 << 2)                         # ME 1, pipe 0, queue 0
    assert chip.mmio.read(gc.regCP_HQD_PQ_RPTR) == len(packet)
    queues.unmap_compute_queue(chip.mmio, gc)
    assert f.blocks["gfx"].queues == {} and f.gpu.queues == []
    with pytest.raises(RegisterError, match="reaches no queue"):
        DoorbellBar(pci.bar(2)).write64(queues.COMPUTE_DOORBELL, 10)


def test_hqd_registers_are_banked_per_queue():
    f, pci, chip, gc = _rig()
    for queue, value in ((0, 0x111), (1, 0x222)):
        chip.mmio.write(gc.regGRBM_GFX_CNTL, 1 << 2 | queue << 8)
        chip.mmio.write(gc.regCP_HQD_PQ_BASE, value)
    chip.mmio.write(gc.regGRBM_GFX_CNTL, 1 << 2)
    assert chip.mmio.read(gc.regCP_HQD_PQ_BASE) == 0x111


def test_a_doorbell_outside_the_mec_range_rings_nothing():
    f, pci, chip, gc = _rig()
    queues.map_compute_queue(chip.mmio, gc, _mqd(0x800), 0x800)
    queues.unmap_compute_queue(chip.mmio, gc)
    chip.mmio.write(gc.regCP_MEC_DOORBELL_RANGE_UPPER, (0x800 // 4 - 1) << 2)   # the range now ends below it
    chip.mmio.write(gc.regGRBM_GFX_CNTL, 1 << 2)
    chip.mmio.write(gc.regCP_HQD_ACTIVE, 1)
    assert (1, 0, 0) in f.blocks["gfx"].queues
    with pytest.raises(RegisterError, match="reaches no queue"):
        DoorbellBar(pci.bar(2)).write64(0x800, 1)


def test_queues_refuse_to_run_without_their_microcode():
    f, pci, chip, gc = _rig(firmware=False)
    with pytest.raises(RegisterError, match="RS64_MEC"):
        queues.map_compute_queue(chip.mmio, gc, _mqd(), queues.COMPUTE_DOORBELL)
    with pytest.raises(RegisterError, match="SDMA_UCODE_TH0"):
        queues.map_sdma_queue(chip.mmio, gc, VRAM_VA + RING, 1 << 16, VRAM_VA + PTRS, queues.SDMA_DOORBELL)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_sdma_queue_registers_map_a_ring_its_doorbell_runs_in_bytes(arch):
    f, pci, chip, gc = _rig(arch)
    queues.map_sdma_queue(chip.mmio, gc, VRAM_VA + RING, 1 << 16, VRAM_VA + PTRS, queues.SDMA_DOORBELL)
    fence = [sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_FENCE), (VRAM_VA + DATA) & 0xFFFFFFFF, (VRAM_VA + DATA) >> 32, 77]
    f.vram[RING:RING + 16] = np.frombuffer(struct.pack("<4I", *fence), np.uint8)
    DoorbellBar(pci.bar(2)).write64(queues.SDMA_DOORBELL, 16)
    assert int(f.vram[DATA:DATA + 4].view("<u4")[0]) == 77
    assert int(f.vram[PTRS:PTRS + 8].view("<u8")[0]) == 16 and chip.mmio.read(gc.regSDMA0_QUEUE0_RB_RPTR) == 16
    queues.unmap_sdma_queue(chip.mmio, gc)
    assert f.gpu.queues == []


def test_queues_without_a_doorbell_are_not_modelled():
    f, pci, chip, gc = _rig()
    m = _mqd()
    m.cp_hqd_pq_doorbell_control = 0
    with pytest.raises(RegisterError, match="DOORBELL_EN"):
        queues.map_compute_queue(chip.mmio, gc, m, queues.COMPUTE_DOORBELL)
    chip.mmio.write(gc.regSDMA0_QUEUE0_DOORBELL, 0)
    with pytest.raises(RegisterError, match="DOORBELL.ENABLE"):
        chip.mmio.write(gc.regSDMA0_QUEUE0_RB_CNTL, 1)


def test_a_queue_on_a_vmid_with_other_apertures_is_not_modelled():
    f, pci, chip, gc = _rig()
    chip.mmio.write(gc.regGRBM_GFX_CNTL, 0)
    chip.mmio.write(gc.regSH_MEM_BASES, 0x00030004)        # apertures the shader core does not report
    with pytest.raises(RegisterError, match="SH_MEM_BASES 0x30004"):
        queues.map_compute_queue(chip.mmio, gc, _mqd(), queues.COMPUTE_DOORBELL)
    assert f.gpu.queues == []
    chip.mmio.write(gc.regGRBM_GFX_CNTL, 1 << 2)
    assert chip.mmio.read(gc.regCP_HQD_ACTIVE) == 0        # the refused activation reads back inactive
