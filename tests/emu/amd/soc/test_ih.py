"""The IH ring both sides: the emulated OSSSYS writes 32-byte vectors at MC addresses and copies its write
pointer; the AM driver's IhRing polls them, wraps, and hands space back through IH_RB_RPTR."""
import pytest

from gputwin.abi.amdgpu import ih as iv
from gputwin.abi.amdgpu import versions
from gputwin.drivers.amd.am.ih import IH_RING_BYTES, IhRing
from gputwin.emu.amd.soc.regfile import RegisterError
from tests.emu.amd.soc.am_rig import booted

RING_AT = 64 << 20


def _rig(arch="gfx1100"):
    f, pci, chip = booted(arch)
    ring = IhRing(chip.mmio, chip.vram, versions.osssys(arch), RING_AT, RING_AT + IH_RING_BYTES, chip.mc_base)
    return f, chip, ring


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_vectors_arrive_in_order_with_every_field(arch):
    f, chip, ring = _rig(arch)
    sent = [iv.InterruptVector(iv.SOC21_IH_CLIENTID_GRBM_CP, iv.GFX_11_0_0__SRCID__CP_EOP_INTERRUPT,
                               iv.cp_ring_id(1, 2, 3), vmid=5, timestamp=0x1234_5678_9ABC, pasid=7, node_id=1,
                               src_data=(i, 0xFFFFFFFF, 2, 3)) for i in range(3)]
    for v in sent:
        f.blocks["ih"].post(v)
    assert ring.poll() == sent and ring.poll() == []
    raw = bytes(f.vram[RING_AT:RING_AT + 32])
    assert raw[0] == iv.SOC21_IH_CLIENTID_GRBM_CP and raw[1] == 181 and raw[2] == iv.cp_ring_id(1, 2, 3)


def test_the_ring_wraps_and_a_full_ring_overflows():
    f, chip, ring = _rig()
    ih, per_ring = f.blocks["ih"], IH_RING_BYTES // iv.IV_BYTES
    for round_ in range(3):   # three times around: the driver's read pointer keeps up
        for i in range(per_ring // 2):
            ih.post(iv.InterruptVector(iv.SOC21_IH_CLIENTID_GFX, iv.GFX_11_0_0__SRCID__SDMA_TRAP, src_data=(i, 0, 0, 0)))
        assert [v.src_data[0] for v in ring.poll()] == list(range(per_ring // 2))
    for i in range(per_ring):   # nobody reads: the last slot stays free, the rest overflows
        ih.post(iv.InterruptVector(iv.SOC21_IH_CLIENTID_GFX, iv.GFX_11_0_0__SRCID__SDMA_TRAP))
    assert iv.IH_RB_WPTR__RB_OVERFLOW.get(chip.mmio.read(versions.osssys("gfx1100").regIH_RB_WPTR))
    got = ring.poll()
    assert len(got) == per_ring - 1 and ring.overflows == 1
    assert not iv.IH_RB_WPTR__RB_OVERFLOW.get(chip.mmio.read(versions.osssys("gfx1100").regIH_RB_WPTR))
    ih.post(iv.InterruptVector(iv.SOC21_IH_CLIENTID_GFX, iv.GFX_11_0_0__SRCID__SDMA_TRAP, src_data=(9, 0, 0, 0)))
    assert [v.src_data[0] for v in ring.poll()] == [9]   # written again after the clear


def test_a_virtual_address_ring_is_not_modelled():
    f, chip, ring = _rig()
    regs = versions.osssys("gfx1100")
    with pytest.raises(RegisterError, match="MC_SPACE"):
        chip.mmio.write(regs.regIH_RB_CNTL, iv.IH_RB_CNTL__RB_ENABLE(1))


def test_a_disabled_ring_drops_vectors():
    f, chip, ring = _rig()
    chip.mmio.write(versions.osssys("gfx1100").regIH_RB_CNTL, 0)
    f.blocks["ih"].post(iv.InterruptVector(iv.SOC21_IH_CLIENTID_GFX, 0))
    assert ring.poll() == []
