"""The PM4 compute front end (gputwin.emu.amd.cp) driven through a hand-built ring and doorbell."""
import re

import numpy as np
import pytest

from gputwin.abi import amd_pm4 as pm4
from gputwin.abi import amd_regs as regs
from gputwin.errors import MemoryFault, PacketError
from tests.emu.amd.gpu_rig import CODE, DATA, RING_BYTES, Rig, release_mem, set_sh, wait_reg_mem, write_data


def test_write_data_stores_consecutive_dwords_and_advances_rptr():
    r = Rig()
    pkt = write_data(DATA + 8, 0x11, 0x22, 0x33)
    r.submit(*pkt)
    assert r.u32(8, 3).tolist() == [0x11, 0x22, 0x33]
    assert r.rptr == r.wptr == 4 * len(pkt)


def test_write_data_one_addr_keeps_the_last_value():
    r = Rig()
    r.submit(*write_data(DATA, 1, 2, 3, one_addr=True))
    assert r.u32(0, 2).tolist() == [3, 0]


def test_release_mem_writes_32_and_64_bit_data_and_reports_interrupt_context():
    r = Rig()
    r.submit(*release_mem(DATA + 0x10, 0x1_2345_6789, data_sel=pm4.DATA_SEL_64, int_sel=2, ctx=77),
             *release_mem(DATA + 0x20, 0xAABBCCDD_EEFF0011, data_sel=pm4.DATA_SEL_LOW_32))
    assert int(r.data[0x10:0x18].view(np.uint64)[0]) == 0x1_2345_6789
    assert r.u32(0x20, 2).tolist() == [0xEEFF0011, 0]   # only the low dword
    assert [(e.kind, e.ctx_id) for e in r.events] == [("interrupt", 77)]


def test_release_mem_timestamp_is_monotonic():
    r = Rig()
    r.submit(*release_mem(DATA, 0, data_sel=pm4.DATA_SEL_GPU_COUNTER_64),
             *release_mem(DATA + 8, 0, data_sel=pm4.DATA_SEL_GPU_COUNTER_64))
    t0, t1 = r.data[0:16].view(np.uint64).tolist()
    assert 0 < t0 <= t1


@pytest.mark.parametrize("func,value,ref,passes", [
    (1, 4, 5, True), (1, 5, 5, False), (2, 5, 5, True), (3, 5, 5, True), (3, 4, 5, False),
    (4, 4, 5, True), (4, 5, 5, False), (5, 5, 5, True), (5, 4, 5, False), (6, 6, 5, True), (6, 5, 5, False),
    (0, 0, 5, True)])
def test_wait_reg_mem_compare_functions(func, value, ref, passes):
    r = Rig()
    r.u32(0)[0] = value
    r.submit(*wait_reg_mem(DATA, ref, func), *write_data(DATA + 4, 9))
    assert (r.u32(4)[0] == 9) == passes
    assert r.q.parked == (not passes)


def test_wait_reg_mem_masks_the_value_before_comparing():
    r = Rig()
    r.u32(0)[0] = 0xFF05
    r.submit(*wait_reg_mem(DATA, 5, 3, mask=0xFF), *write_data(DATA + 4, 1))
    assert r.u32(4)[0] == 1


def test_parked_queue_resumes_when_memory_changes_and_any_doorbell_rings():
    r = Rig()
    r.submit(*wait_reg_mem(DATA, 1), *write_data(DATA + 4, 7))
    assert r.u32(4)[0] == 0 and r.q.parked
    r.u32(0)[0] = 1            # the host writes the signal; nothing runs until the GPU is poked
    assert r.u32(4)[0] == 0
    r.gpu.run()
    assert r.u32(4)[0] == 7 and not r.q.parked


def test_one_queue_releases_another_queue_waiting_on_memory():
    r = Rig()
    other = r.gpu.create_compute_queue(DATA + 0x8000, 0x1000, DATA + 0x100, DATA + 0x108)
    r.submit(*wait_reg_mem(DATA, 5), *write_data(DATA + 4, 0xAB))
    assert r.q.parked
    pkt = write_data(DATA, 5)
    r.gpu.mem.write(DATA + 0x8000, np.array(pkt, np.uint32))
    r.gpu.ring_doorbell(other, len(pkt))
    assert r.u32(4)[0] == 0xAB


def test_ring_wraps_around_its_end():
    r = Rig()
    filler = [pm4.PACKET3(pm4.PACKET3_NOP, 0x3FE // 4 - 2)] + [0] * (0x3FE // 4 - 1)
    for _ in range(4):
        r.submit(*filler)
    r.submit(*write_data(DATA, 0x5A5A, 0x6B6B))   # straddles RING_BYTES
    assert r.wptr > RING_BYTES and r.u32(0, 2).tolist() == [0x5A5A, 0x6B6B]


def test_copy_data_immediate_memory_and_64bit():
    r = Rig()
    c = pm4.PACKET3_COPY_DATA__SRC_SEL, pm4.PACKET3_COPY_DATA__DST_SEL, pm4.PACKET3_COPY_DATA__COUNT_SEL
    r.u32(0x40, 2)[:] = [0xDEAD, 0xBEEF]
    r.submit(pm4.PACKET3(pm4.PACKET3_COPY_DATA, 4), c[0](5) | c[1](5), 0x1234, 0, DATA, 0,
             pm4.PACKET3(pm4.PACKET3_COPY_DATA, 4), c[0](1) | c[1](5) | c[2](1), DATA + 0x40, 0, DATA + 8, 0)
    assert r.u32(0, 4).tolist() == [0x1234, 0, 0xDEAD, 0xBEEF]


def test_indirect_buffer_runs_and_returns_to_the_ring():
    r = Rig()
    ib = write_data(DATA + 4, 0x77) + write_data(DATA + 8, 0x88)
    r.gpu.mem.write(DATA + 0x1000, np.array(ib, np.uint32))
    r.submit(pm4.PACKET3(pm4.PACKET3_INDIRECT_BUFFER, 2), DATA + 0x1000, 0, len(ib) | pm4.INDIRECT_BUFFER_VALID,
             *write_data(DATA + 12, 0x99))
    assert r.u32(4, 3).tolist() == [0x77, 0x88, 0x99]
    assert not r.q.ibs and r.rptr == r.wptr


def test_wait_inside_an_indirect_buffer_parks_and_resumes_there():
    r = Rig()
    ib = wait_reg_mem(DATA, 1) + write_data(DATA + 4, 0x42)
    r.gpu.mem.write(DATA + 0x1000, np.array(ib, np.uint32))
    r.submit(pm4.PACKET3(pm4.PACKET3_INDIRECT_BUFFER, 2), DATA + 0x1000, 0, len(ib) | pm4.INDIRECT_BUFFER_VALID,
             *write_data(DATA + 8, 0x43))
    assert r.u32(4, 2).tolist() == [0, 0] and r.q.parked
    r.u32(0)[0] = 1
    r.gpu.run()
    assert r.u32(4, 2).tolist() == [0x42, 0x43]


def test_set_sh_reg_and_uconfig_reg_fill_the_register_files():
    r = Rig()
    r.submit(*set_sh(regs.regCOMPUTE_USER_DATA_0, 1, 2, 3),
             pm4.PACKET3(pm4.PACKET3_SET_UCONFIG_REG, 1), regs.uconfig_reg_offset(regs.regGRBM_GFX_INDEX), 0xE0000000)
    assert [r.q.sh_reg(regs.regCOMPUTE_USER_DATA_0 + i) for i in range(3)] == [1, 2, 3]
    assert r.q.uconfig[regs.uconfig_reg_offset(regs.regGRBM_GFX_INDEX)] == 0xE0000000


def test_acquire_mem_event_write_and_nop_are_accepted():
    r = Rig()
    r.submit(pm4.PACKET3(pm4.PACKET3_ACQUIRE_MEM, 6), 0, 0xFFFFFFFF, 0xFFFFFF, 0, 0, 10, 0xC3B1,
             pm4.PACKET3(pm4.PACKET3_EVENT_WRITE, 0), pm4.EVENT_TYPE(pm4.CS_PARTIAL_FLUSH) | pm4.EVENT_INDEX(4),
             pm4.PACKET3(pm4.PACKET3_NOP, 2), 1, 2, 3, *write_data(DATA, 5))
    assert r.u32(0)[0] == 5 and r.gpu.stats.packets == 4


def test_unknown_opcode_names_opcode_queue_and_ring_offset_and_stops_the_queue():
    r = Rig()
    r.submit(*write_data(DATA, 1), pm4.PACKET3(0xEE, 0), 0, *write_data(DATA + 4, 2))
    (event,) = r.events
    assert event.kind == "error" and isinstance(event.error, PacketError)
    msg = str(event.error)
    assert "0xee" in msg and r.q.name in msg and f"ring offset {4 * len(write_data(DATA, 1)):#x}" in msg
    assert event.error.opcode == 0xEE and event.error.ring_offset == 4 * len(write_data(DATA, 1))
    assert r.q.stopped and r.u32(4)[0] == 0
    r.doorbell()
    assert len(r.events) == 1    # a stopped queue stays stopped


def test_memory_fault_in_a_packet_is_reported_with_the_address():
    r = Rig()
    r.submit(*write_data(0xDEAD_0000, 1))
    (event,) = r.events
    assert event.kind == "memory_fault" and event.error.address == 0xDEAD_0000 and r.q.stopped


def test_without_a_listener_the_fault_is_raised_to_the_doorbell_writer():
    r = Rig(listen=False)
    with pytest.raises(MemoryFault, match="access to unmapped address"):
        r.submit(*write_data(0xDEAD_0000, 1))


def _program(r, code: bytes, *, block=(64, 1, 1), user=(), rsrc2=0, wave32=True):
    r.gpu.mem.write(CODE, code)
    return [*set_sh(regs.regCOMPUTE_PGM_LO, CODE >> 8, CODE >> 40),
            *set_sh(regs.regCOMPUTE_PGM_RSRC1, 0, rsrc2 | regs.COMPUTE_PGM_RSRC2__USER_SGPR(len(user))),
            *set_sh(regs.regCOMPUTE_NUM_THREAD_X, *block),
            *(set_sh(regs.regCOMPUTE_USER_DATA_0, *user) if user else [])]


def _dispatch(grid, *, wave32=True):
    initiator = regs.COMPUTE_DISPATCH_INITIATOR__COMPUTE_SHADER_EN(1) | \
        regs.COMPUTE_DISPATCH_INITIATOR__FORCE_START_AT_000(1) | regs.COMPUTE_DISPATCH_INITIATOR__CS_W32_EN(wave32)
    return [pm4.PACKET3(pm4.PACKET3_DISPATCH_DIRECT, 3), *grid, initiator]


S_ENDPGM = bytes([0x00, 0x00, 0xB0, 0xBF])   # llvm-mc-19 -mcpu=gfx1100: s_endpgm


def test_dispatch_direct_builds_the_dispatch_from_sh_registers(monkeypatch):
    import gputwin.emu.amd.dispatch as dispatch_mod
    seen = []
    monkeypatch.setattr(dispatch_mod, "run_dispatch", lambda mem, d, arch: seen.append((d, arch)) or dispatch_mod.Counters())
    r = Rig()
    r.submit(*_program(r, S_ENDPGM, block=(8, 4, 2), user=(0xAAAA, 0xBBBB)), *_dispatch((3, 2, 1)),
             *_dispatch((1, 1, 1), wave32=False), *_dispatch((0, 1, 1)))
    assert len(seen) == 2      # the empty grid runs nothing
    d, arch = seen[0]
    assert arch == "gfx1100" and d.code_address == CODE and d.grid == (3, 2, 1) and d.block == (8, 4, 2)
    assert list(d.user_sgprs) == [0xAAAA, 0xBBBB] and not d.wave64 and seen[1][0].wave64


def test_dispatch_direct_thread_dimensions_become_workgroups(monkeypatch):
    import gputwin.emu.amd.dispatch as dispatch_mod
    seen = []
    monkeypatch.setattr(dispatch_mod, "run_dispatch", lambda mem, d, arch: seen.append(d) or dispatch_mod.Counters())
    r = Rig()
    init = _dispatch((64, 8, 1))
    init[-1] |= regs.COMPUTE_DISPATCH_INITIATOR__USE_THREAD_DIMENSIONS(1)
    r.submit(*_program(r, S_ENDPGM, block=(32, 4, 1)), *init)
    assert seen[0].grid == (2, 2, 1)


def test_dispatch_direct_runs_an_empty_kernel_on_the_emulator():
    r = Rig()
    r.submit(*_program(r, S_ENDPGM), *_dispatch((4, 1, 1)), *write_data(DATA, 1))
    assert not r.events and r.gpu.stats.dispatches == 1 and r.u32(0)[0] == 1


def test_dispatch_direct_kernel_stores_through_user_sgpr_pointer():
    # llvm-mc-19 -mcpu=gfx1100 -show-encoding: v_mov_b32 v1, 42; v_lshlrev_b32 v2, 2, v0;
    # v_add_nc_u32 v1, v1, v0; global_store_b32 v2, v1, s[0:1]; s_endpgm
    code = bytes([0xaa, 0x02, 0x02, 0x7e, 0x82, 0x00, 0x04, 0x30, 0x01, 0x01, 0x02, 0x4a,
                  0x00, 0x00, 0x6a, 0xdc, 0x02, 0x01, 0x00, 0x00]) + S_ENDPGM
    r = Rig()
    r.submit(*_program(r, code, block=(64, 1, 1), user=(DATA, 0)), *_dispatch((1, 1, 1)))
    assert not r.events, r.events[0].error
    assert r.u32(0, 64).tolist() == [42 + i for i in range(64)]


def test_dispatch_fault_stops_queue_with_the_faulting_address():
    code = bytes([0x00, 0x00, 0x52, 0xdc, 0x02, 0x00, 0x00, 0x01]) + S_ENDPGM   # global_load_b32 v1, v2, s[0:1]
    r = Rig()
    r.submit(*_program(r, code, block=(1, 1, 1), user=(0x7777_0000, 0)), *_dispatch((1, 1, 1)))
    (event,) = r.events
    assert event.kind == "memory_fault" and event.error.address == 0x7777_0000 and r.q.stopped


def test_dispatch_without_compute_shader_en_is_rejected():
    r = Rig()
    d = _dispatch((1, 1, 1))
    d[-1] = 0
    r.submit(*_program(r, S_ENDPGM), *d)
    assert r.events[0].kind == "error" and "COMPUTE_SHADER_EN" in str(r.events[0].error)


def test_type0_packet_is_rejected():
    r = Rig()
    r.submit(0x00001234)
    assert "type-0" in str(r.events[0].error)


@pytest.mark.parametrize("arch,block,grid,rsrc2,match", [
    ("gfx1100", (32, 33, 1), (1, 1, 1), 0, r"workgroup of \(32, 33, 1\) threads, more than 1024"),
    ("gfx942", (1024, 2, 1), (1, 1, 1), 0, r"workgroup of \(1024, 2, 1\) threads, more than 1024"),
    ("gfx1201", (32, 1, 1), (1, 65537, 1), 0, "workgroup ids Y and Z must fit 16 bits"),
    ("gfx1201", (32, 1, 1), (1, 1, 65537), 0, "workgroup ids Y and Z must fit 16 bits"),
    ("gfx1100", (32, 1, 1), (1, 1, 1), regs.COMPUTE_PGM_RSRC2__LDS_SIZE(129), "LDS_SIZE of 66048 bytes"),
])
def test_dispatch_beyond_the_hardware_limits_is_a_packet_error(arch, block, grid, rsrc2, match):
    r = Rig(arch=arch)
    r.submit(*_program(r, S_ENDPGM, block=block, rsrc2=rsrc2), *_dispatch(grid))
    (event,) = r.events
    assert isinstance(event.error, PacketError) and event.error.opcode == pm4.PACKET3_DISPATCH_DIRECT
    assert re.search(match, str(event.error)) and r.gpu.stats.dispatches == 0 and r.q.stopped
    assert event.error.ring_offset == 4 * len(_program(r, S_ENDPGM, block=block, rsrc2=rsrc2))


def test_gfx1201_dispatch_at_the_16_bit_limit_runs():
    r = Rig(arch="gfx1201")
    r.submit(*_program(r, S_ENDPGM, block=(1, 1, 1)), *_dispatch((1, 65536, 1)))
    assert not r.events and r.gpu.stats.dispatches == 1
