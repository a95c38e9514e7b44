"""The kernel-less AM driver on an emulated board attached in-process: buffers without a CPU pointer, copies
through the DMA window, kernels on the HQD-mapped compute queue, faults reported from the IH ring."""
import numpy as np
import pytest

from gputwin.abi.amdgpu import ih as iv
from gputwin.drivers.amd.am.device import AMDevice
from gputwin.emu.amd.soc import board
from gputwin.errors import MemoryFault
from gputwin.mock.pci import DirectPciDevice


@pytest.fixture(params=["gfx1100", "gfx1201"])
def board_dev(request):
    function = board.build(request.param)
    dev = AMDevice(DirectPciDevice(function, host_window_bytes=256 << 10), "MOCKUSBAMD")
    yield function, dev
    dev.close()


def test_buffers_have_no_cpu_pointer_and_copies_larger_than_the_window_round_trip(board_dev):
    function, dev = board_dev
    data = np.random.default_rng(1).integers(0, 1 << 32, size=300_000, dtype=np.uint32)   # ~1.2 MB, > 256 KiB
    buf = dev.alloc(data.nbytes)
    assert buf.host_addr is None and dev.staging_size == 128 << 10
    dev.copyin(buf, data)
    pa = buf.meta[1]
    assert np.array_equal(function.vram[pa:pa + data.nbytes].view(np.uint32), data)   # really in VRAM
    out = np.empty_like(data)
    dev.copyout(out, buf)
    assert np.array_equal(out, data)


def test_a_kernel_runs_on_the_hqd_queue_and_signals_through_bar0(hsaco):
    function = board.build("gfx1100")
    dev = AMDevice(DirectPciDevice(function), "MOCKUSBAMD")
    y, x = dev.alloc(256), dev.alloc(256)
    dev.copyin(y, np.arange(64, dtype=np.float32))
    dev.copyin(x, np.full(64, 0.5, np.float32))
    dev.load(hsaco["v5"], "saxpy")(y, x, 4.0, 64, grid=2, block=32)
    out = np.empty(64, np.float32)
    dev.copyout(out, y)
    assert out.tolist() == [i + 2.0 for i in range(64)]
    eops = [v for v in function.blocks["ih"].posted if v.src_id == iv.GFX_11_0_0__SRCID__CP_EOP_INTERRUPT]
    assert dev.timeline_signal.value == dev.timeline_value - 1 and not eops   # AM signals without interrupts


def test_a_kernel_fault_goes_to_the_ih_ring_with_its_address_and_to_the_caller(hsaco):
    function = board.build("gfx1100")
    dev = AMDevice(DirectPciDevice(function), "MOCKUSBAMD")
    buf = dev.alloc(4096)
    dev.load(hsaco["v5"], "fault")(buf, 1 << 36, grid=1, block=32)
    with pytest.raises(MemoryFault) as e:
        dev.synchronize()
    bad = buf.va + (1 << 36)
    assert e.value.address == bad and e.value.write is True and e.value.kernel == "fault"
    faults = [v for v in function.blocks["ih"].posted
              if (v.client_id, v.src_id) == (iv.SOC21_IH_CLIENTID_GFX, iv.UTCL2_1_0__SRCID__FAULT)]
    assert len(faults) == 1 and iv.fault_address(faults[0].src_data) == bad & ~0xFFF


def test_without_the_fault_record_the_ih_vector_and_fault_registers_tell_the_address(hsaco):
    """A real chip has no gputwin fault record: the driver falls back to the IV and GCVM fault status."""
    function = board.build("gfx1100")
    dev = AMDevice(DirectPciDevice(function), "MOCKUSBAMD")
    function.blocks["interrupts"].keeps_record = False
    buf = dev.alloc(4096)
    dev.load(hsaco["v5"], "fault")(buf, 1 << 36, grid=1, block=32)
    with pytest.raises(MemoryFault) as e:
        dev.synchronize()
    assert e.value.address == (buf.va + (1 << 36)) & ~0xFFF and e.value.write is True and e.value.kernel is None



@pytest.mark.parametrize("keeps_record", [True, False])
def test_an_sdma_copy_to_an_unmapped_address_is_a_memory_fault(keeps_record):
    function = board.build("gfx1100")
    dev = AMDevice(DirectPciDevice(function), "MOCKUSBAMD")
    function.blocks["interrupts"].keeps_record = keeps_record
    src = dev.alloc(4096)
    bad = 0x7000_0000_0000
    dev._enqueue(lambda wait, sig: dev._copy_queue().wait(dev.timeline_signal, wait).copy(bad, src.va, 256)
                 .signal(dev.timeline_signal, sig))
    with pytest.raises(MemoryFault) as e:
        dev.synchronize()
    assert e.value.address == (bad if keeps_record else bad & ~0xFFF) and e.value.write is True
    if keeps_record:
        assert e.value.queue == "sdma queue 1"
