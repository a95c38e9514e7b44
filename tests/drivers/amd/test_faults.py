"""What a caller learns when GPU work goes wrong, end to end: open_device("MOCKAMD") -> load -> launch ->
synchronize, with hand-assembled gfx1100 code in place of a clang kernel's body (docs/contracts.md, Errors)."""
import numpy as np
import pytest

import gputwin
from gputwin.abi import amd_pm4 as pm4
from gputwin.abi import amd_sdma as sdma
from gputwin.emu.amd.isa import assemble
from gputwin.errors import DeviceLost
from tests.abi.patch_code_object import with_code


def _load(dev, hsaco, text: str = "", raw: bytes = b""):
    """saxpy(float* y, float* x, float a, int n) of the v5 fixture, its body replaced by `text` (then `raw`
    bytes, then s_endpgm). Its descriptor gives s[0:1] = kernarg pointer, 8 VGPRs and no LDS."""
    code = (assemble(text, "gfx1100") if text else b"") + raw + assemble("s_endpgm", "gfx1100")
    return dev.load(with_code(hsaco["v5"], "saxpy", code), "saxpy")


def _fault(dev, prg, grid=1, block=32):
    y = dev.alloc(4096)
    prg(y, y, 1.0, 0, grid=grid, block=block)
    with pytest.raises(BaseException) as e:
        dev.synchronize()
    with pytest.raises(DeviceLost, match="earlier error"):   # the device is lost, saying why
        dev.alloc(16)
    return e.value


@pytest.fixture(params=["MOCKAMD", "MOCKUSBAMD"])
def dev(request):
    """The KFD driver and the kernel-less AM driver report the same errors with the same facts."""
    d = gputwin.open_device(request.param)
    yield d
    d.close()


def test_unmodelled_instruction_is_an_illegal_instruction_naming_it(dev, hsaco):
    prefix = "v_mov_b32 v1, 1\ns_nop 0"
    prg = _load(dev, hsaco, prefix + "\ns_rfe_b64 s[0:1]")
    e = _fault(dev, prg)
    assert type(e) is gputwin.IllegalInstruction and not isinstance(e, gputwin.GpuHang)
    offset = len(assemble(prefix, "gfx1100"))
    assert e.instruction == "s_rfe_b64 s[0:1]" and e.arch == "gfx1100" and e.wave == 0
    assert e.kernel == "saxpy" and e.kernel_offset == offset and e.pc == prg.kernel.code_va + offset
    assert "s_rfe_b64" in str(e) and "kernel=saxpy" in str(e) and "arch=gfx1100" in str(e)


def test_rejected_encoding_names_the_raw_word(dev, hsaco):
    e = _fault(dev, _load(dev, hsaco, "s_nop 0", raw=bytes.fromhex("ffffffff")))
    assert type(e) is gputwin.IllegalInstruction
    assert e.instruction == ".long 0xffffffff" and e.kernel_offset == 4 and e.pc == e.code_address + 4
    mapping = gputwin.device.emulated_gpu(dev).mem.find(e.pc)   # the decoder names the offset in its mapping
    assert f"no encoding format matches word 0xffffffff at offset {e.pc - mapping.base:#x}" in str(e)


def test_s_trap_is_a_trap_fault_with_its_id_from_the_wave_that_trapped(dev, hsaco):
    # the second wave of each 64-item workgroup traps; the first jumps over the trap
    prg = _load(dev, hsaco, "v_cmp_gt_u32 vcc_lo, 32, v0\ns_cbranch_vccnz 1\ns_trap 2")
    e = _fault(dev, prg, grid=2, block=64)
    assert type(e) is gputwin.GpuFault and e.kind == "trap" and e.trap_id == 2
    assert e.wave == 1 and e.instruction == "s_trap 2" and e.kernel_offset == 8
    assert "trap" in str(e) and "trap_id=2" in str(e)


@pytest.mark.parametrize("op,write", [("global_store_b32 v[1:2], v1, off", True),
                                      ("global_load_b32 v3, v[1:2], off", False)])
def test_memory_fault_carries_pc_wave_write_kernel_and_offset(dev, hsaco, op, write):
    prefix = "v_mov_b32 v1, 0x40\nv_mov_b32 v2, 0"
    e = _fault(dev, _load(dev, hsaco, f"{prefix}\n{op}"))
    offset = len(assemble(prefix, "gfx1100"))
    assert type(e) is gputwin.MemoryFault
    assert (e.address, e.write, e.wave, e.kernel, e.kernel_offset) == (0x40, write, 0, "saxpy", offset)
    assert e.pc == e.code_address + offset and e.arch == "gfx1100" and "memory fault" in str(e)


def test_clang_kernel_memory_fault_names_the_kernel(dev, hsaco):
    buf = dev.alloc(4096)
    prg = dev.load(hsaco["v5"], "fault")
    prg(buf, 1 << 36, grid=1, block=32)
    with pytest.raises(gputwin.MemoryFault) as e:
        dev.synchronize()
    assert e.value.address == buf.va + (1 << 36) and e.value.write is True
    assert e.value.kernel == "fault" and 0 <= e.value.kernel_offset < 256 and e.value.wave == 0


def test_unknown_pm4_packet_is_a_packet_error_naming_opcode_and_ring_offset(dev):
    wait, sig = dev._next_value()
    q = dev._compute_queue().wait(dev.timeline_signal, wait)
    offset = (dev.compute_ring.put + len(q.cmds)) * 4 % dev.ring_size
    dev._submit(q.pkt3(pm4.PACKET3_CLEAR_STATE, 0).signal(dev.timeline_signal, sig))
    with pytest.raises(gputwin.PacketError, match="CLEAR_STATE") as e:
        dev.synchronize()
    assert (e.value.opcode, e.value.ring_offset) == (pm4.PACKET3_CLEAR_STATE, offset)
    assert e.value.queue.startswith("compute queue") and e.value.arch == "gfx1100"


def test_unknown_sdma_packet_is_a_packet_error_naming_opcode_and_ring_offset(dev):
    wait, sig = dev._next_value()
    q = dev._copy_queue().wait(dev.timeline_signal, wait)
    offset = (dev.copy_ring.put + len(q.cmds)) * 4 % dev.ring_size
    dev._submit(q.q(sdma.SDMA_PKT_HEADER(sdma.SDMA_OP_SRBM_WRITE)).signal(dev.timeline_signal, sig))
    with pytest.raises(gputwin.PacketError, match="SRBM_WRITE") as e:
        dev.synchronize()
    assert (e.value.opcode, e.value.ring_offset) == (sdma.SDMA_OP_SRBM_WRITE, offset)
    assert e.value.queue.startswith("sdma queue")


def test_a_fresh_device_works_after_each_kind_of_fault(hsaco):
    d = gputwin.open_device("MOCKAMD")
    _fault(d, _load(d, hsaco, "s_trap 1"))
    d.close()
    d = gputwin.open_device("MOCKAMD")
    y = d.alloc(64)
    d.copyin(y, np.arange(16, dtype=np.float32))
    d.load(hsaco["v5"], "saxpy")(y, y, 2.0, 16, grid=1, block=32)
    out = np.empty(16, np.float32)
    d.copyout(out, y)
    assert out.tolist() == [3.0 * i for i in range(16)]
    d.close()


@pytest.mark.parametrize("store_first", [False, True])
def test_lds_access_with_no_lds_allocated_reads_zero(dev, hsaco, store_first, monkeypatch):
    # saxpy's descriptor allocates no LDS: the store is dropped, the load reads 0 (docs/emulator.md); what
    # the hardware does, so without the sanitizers (memcheck reports exactly this access)
    monkeypatch.delenv("GPUTWIN_SANITIZE", raising=False)
    text = ("s_load_b64 s[4:5], s[0:1], 0x0\nv_mov_b32 v1, 0\nv_mov_b32 v2, 7\n"
            + ("ds_store_b32 v1, v2\n" if store_first else "")
            + "ds_load_b32 v3, v1\nv_lshlrev_b32 v4, 2, v0\ns_waitcnt lgkmcnt(0)\nglobal_store_b32 v4, v3, s[4:5]")
    prg = _load(dev, hsaco, text)
    assert prg.kernel.lds_bytes == 0
    y = dev.alloc(128)
    dev.copyin(y, np.full(32, 0xFFFFFFFF, np.uint32))
    prg(y, y, 1.0, 0, grid=1, block=32)
    out = np.empty(32, np.uint32)
    dev.copyout(out, y)
    assert out.tolist() == [0] * 32


def test_a_fault_on_another_gpu_of_the_process_is_not_this_devices(hsaco):
    d0, d1 = gputwin.open_device("MOCKAMD,MOCKAMD")
    try:
        _fault(d1, _load(d1, hsaco, "s_trap 2"))
        d0._sleep(0.01)   # its memory and hw-exception events fired too (they are the process's), for gpu 1
        y = d0.alloc(64)
        d0.copyin(y, np.arange(16, dtype=np.float32))
        out = np.empty(16, np.float32)
        d0.copyout(out, y)
        assert out.tolist() == list(range(16))
    finally:
        d0.close()
        d1.close()


def test_an_emulator_failure_is_a_gpu_fault_naming_it_not_a_hang(dev, hsaco, monkeypatch):
    import gputwin.emu.amd.dispatch as dispatch

    def broken(*args, **kw):
        raise IndexError("index 7 is out of bounds")
    monkeypatch.setattr(dispatch, "run_dispatch", broken)
    e = _fault(dev, dev.load(hsaco["v5"], "saxpy"))
    assert type(e) is gputwin.GpuFault and e.kind == "error"
    assert "emulator error: IndexError: index 7 is out of bounds" in str(e)


@pytest.mark.parametrize("kind,arch,block", [("MOCKAMD", "gfx1201", 32), ("MOCKAMD", "gfx942", 64),
                                             ("MOCKUSBAMD", "gfx1201", 32)])
def test_memory_fault_names_kernel_and_arch_on_the_other_archs(kind, arch, block):
    from pathlib import Path
    blob = (Path(__file__).resolve().parents[3] / "fixtures" / "drivers" / f"kernels_{arch}_v5.hsaco").read_bytes()
    d = gputwin.open_device(f"{kind}:{arch}")
    try:
        buf = d.alloc(4096)
        d.load(blob, "fault")(buf, 1 << 36, grid=1, block=block)
        with pytest.raises(gputwin.MemoryFault) as e:
            d.synchronize()
        assert (e.value.address, e.value.write, e.value.arch) == (buf.va + (1 << 36), True, arch)
        assert e.value.kernel == "fault" and e.value.pc == e.value.code_address + e.value.kernel_offset
    finally:
        d.close()
