"""run_dispatch: the initial wave state (SGPR/VGPR layout, EXEC, LDS, scratch), faults, watchdog, counters."""
from __future__ import annotations

import re
import time

import numpy as np
import pytest

from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.standalone import Arena
from gputwin.errors import GpuHang, IllegalInstruction, MemoryFault
from tests.emu.amd.helpers import asm, kernel

CODE = 0x40000


def rsrc2(user=0, tgid=(0, 0, 0), tid_cnt=0, scratch=False):
    return int(scratch) | user << 1 | tgid[0] << 7 | tgid[1] << 8 | tgid[2] << 9 | tid_cnt << 11


def dispatch(text, **kw):
    return Dispatch(code_address=CODE, code=asm(text + "\ns_endpgm\n"), **kw)


# out[(wg_y * 2 + wg_x) * 64 + tid] = (wg_x, wg_y, s2, v0): 16 bytes per work-item
STORE_IDS = """
s_lshl_b32 s5, s4, 1
s_add_u32 s5, s5, s3
s_lshl_b32 s5, s5, 6
v_and_b32 v1, 0x3ff, v0
v_add_nc_u32 v1, s5, v1
v_lshlrev_b32 v2, 4, v1
v_mov_b32 v3, s3
v_mov_b32 v4, s4
v_mov_b32 v5, s2
v_mov_b32 v6, v0
global_store_b128 v2, v[3:6], s[0:1]
"""


@pytest.mark.parametrize("wave64", [False, True])
def test_user_sgprs_then_workgroup_ids_and_partial_wave_exec(wave64):
    arena = Arena()
    out = arena.alloc(16 * 64 * 6)
    c = run_dispatch(arena.mem, dispatch(STORE_IDS, grid=(2, 3, 1), block=(40, 1, 1), wave64=wave64,
                                         user_sgprs=[out & 0xFFFFFFFF, out >> 32, 0x1234],
                                         rsrc2=rsrc2(user=3, tgid=(1, 1, 0))))
    got = arena.array(out, np.uint32, 4 * 64 * 6).reshape(6, 64, 4)
    for wg in range(6):
        assert (got[wg, :40, 0] == wg % 2).all() and (got[wg, :40, 1] == wg // 2).all()
        assert (got[wg, :40, 2] == 0x1234).all() and (got[wg, :40, 3] == np.arange(40)).all()
        assert (got[wg, 40:] == 0).all()                    # lanes past the block never ran
    lanes = 64 if wave64 else 32
    waves = 6 * -(-40 // lanes)
    assert c.waves == waves
    assert c.wave_insts == 12 * waves and c.lane_ops == 12 * 6 * 40


def test_work_item_ids_are_packed_into_v0():
    arena = Arena()
    out = arena.alloc(4 * 64)
    text = "v_lshlrev_b32 v1, 2, v7\nglobal_store_b32 v1, v0, s[0:1]"
    # v7 = flat id: the kernel computes it from the packed ids to check the packing
    text = ("v_and_b32 v1, 0x3ff, v0\nv_bfe_u32 v2, v0, 10, 10\nv_bfe_u32 v3, v0, 20, 10\n"
            "v_lshl_add_u32 v7, v3, 5, v1\nv_lshl_add_u32 v7, v2, 3, v7\n" + text)
    run_dispatch(arena.mem, dispatch(text, block=(8, 4, 2), user_sgprs=[out & 0xFFFFFFFF, out >> 32],
                                     rsrc2=rsrc2(user=2, tid_cnt=2)))
    flat = np.arange(64)
    x, y, z = flat % 8, (flat // 8) % 4, flat // 32
    assert (arena.array(out, np.uint32, 64) == x | y << 10 | z << 20).all()


def test_mode_comes_from_rsrc1_float_mode_dx10_ieee():
    arena = Arena()
    out = arena.alloc(4)
    rsrc1 = 0xF0 << 12 | 1 << 21 | 1 << 23
    run_dispatch(arena.mem, dispatch("s_getreg_b32 s2, hwreg(HW_REG_MODE)\nv_mov_b32 v1, s2\nv_mov_b32 v2, 0\n"
                                     "global_store_b32 v2, v1, s[0:1]", user_sgprs=[out & 0xFFFFFFFF, out >> 32],
                                     rsrc1=rsrc1))
    assert arena.array(out, np.uint32, 1)[0] == 0xF0 | 1 << 8 | 1 << 9


def test_lds_is_private_to_each_workgroup_and_barriers_order_waves():
    # wave 1 of each workgroup writes its workgroup id into LDS after a long detour; wave 0 waits at the
    # barrier, then reads it: the waves run split (different paths) and must meet at s_barrier.
    text = """
s_getreg_b32 s6, hwreg(HW_REG_HW_ID1, 0, 5)
v_mov_b32 v1, 0
s_cmp_eq_u32 s6, 0
s_cbranch_scc1 reader
s_mov_b32 s7, 20
spin:
s_sub_u32 s7, s7, 1
s_cmp_lg_u32 s7, 0
s_cbranch_scc1 spin
v_mov_b32 v2, s2
ds_store_b32 v1, v2
reader:
s_waitcnt lgkmcnt(0)
s_barrier
ds_load_b32 v3, v1
s_waitcnt lgkmcnt(0)
s_lshl_b32 s8, s2, 3
s_lshl_b32 s9, s6, 2
s_add_u32 s8, s8, s9
v_mov_b32 v4, s8
global_store_b32 v4, v3, s[0:1]
"""
    arena = Arena()
    out = arena.alloc(8 * 4)
    run_dispatch(arena.mem, dispatch(text, grid=(4, 1, 1), block=(64, 1, 1), lds_bytes=64,
                                     user_sgprs=[out & 0xFFFFFFFF, out >> 32], rsrc2=rsrc2(user=2, tgid=(1, 0, 0))))
    assert arena.array(out, np.uint32, 8).reshape(4, 2).tolist() == [[w, w] for w in range(4)]


def test_scratch_is_private_per_lane():
    text = """
v_mov_b32 v1, 0
v_add_nc_u32 v2, s2, v0
scratch_store_b32 off, v2, off offset:8
v_mov_b32 v2, 0
scratch_load_b32 v3, off, off offset:8
s_waitcnt vmcnt(0)
v_lshlrev_b32 v4, 2, v0
s_lshl_b32 s3, s2, 8
v_add_nc_u32 v4, s3, v4
global_store_b32 v4, v3, s[0:1]
"""
    arena = Arena()
    out = arena.alloc(4 * 128)
    run_dispatch(arena.mem, dispatch(text, grid=(2, 1, 1), block=(64, 1, 1), scratch_bytes_per_lane=16,
                                     user_sgprs=[out & 0xFFFFFFFF, out >> 32], rsrc2=rsrc2(user=2, tgid=(1, 0, 0))))
    got = arena.array(out, np.uint32, 128).reshape(2, 64)
    assert (got == np.arange(64) + np.arange(2)[:, None]).all()


def test_scratch_access_past_the_lane_allocation_faults():
    with pytest.raises(MemoryFault, match="scratch"):
        run_dispatch(Arena().mem, dispatch("v_mov_b32 v1, 0\nscratch_store_b32 off, v1, off offset:16",
                                           scratch_bytes_per_lane=16))


def test_fault_at_unmapped_address_names_address_pc_and_wave():
    # workgroup 1 (wave 1) reads 1 MiB past the buffer; workgroup 0 is fine
    text = "s_lshl_b32 s3, s2, 20\nv_mov_b32 v1, s3\nglobal_load_b32 v2, v1, s[0:1]\ns_waitcnt vmcnt(0)"
    arena = Arena()
    buf = arena.alloc(4096)
    with pytest.raises(MemoryFault, match="read of 4 bytes at an unmapped address") as e:
        run_dispatch(arena.mem, dispatch(text, grid=(2, 1, 1), block=(32, 1, 1),
                                         user_sgprs=[buf & 0xFFFFFFFF, buf >> 32], rsrc2=rsrc2(user=2, tgid=(1, 0, 0))))
    assert e.value.address == buf + (1 << 20)
    assert e.value.pc == CODE + 8 and e.value.wave == 1 and e.value.write is False


def test_code_at_an_unmapped_address_faults():
    with pytest.raises(MemoryFault, match="instruction fetch from unmapped address") as e:
        run_dispatch(Arena().mem, Dispatch(code_address=0xDEAD000))
    assert e.value.address == 0xDEAD000 and e.value.pc == 0xDEAD000


def test_code_fetched_from_memory():
    arena = Arena()
    out = arena.alloc(4)
    code = arena.alloc(64, asm("v_mov_b32 v1, 7\nv_mov_b32 v2, 0\nglobal_store_b32 v2, v1, s[0:1]\ns_endpgm"))
    run_dispatch(arena.mem, Dispatch(code_address=code, user_sgprs=[out & 0xFFFFFFFF, out >> 32]))
    assert arena.array(out, np.uint32, 1)[0] == 7


def test_undecodable_bytes_raise_illegal_instruction_with_pc():
    with pytest.raises(IllegalInstruction, match="no encoding format matches word 0xffffffff") as e:
        run_dispatch(Arena().mem, Dispatch(code_address=CODE, code=asm("s_nop 0") + b"\xff\xff\xff\xff" * 4))
    assert e.value.pc == CODE + 4


def test_running_off_the_end_of_the_code_is_illegal():
    with pytest.raises(IllegalInstruction, match="no instruction"):
        run_dispatch(Arena().mem, Dispatch(code_address=CODE, code=asm("s_nop 0")))


def test_watchdog_raises_gpu_hang(monkeypatch):
    d = dispatch("loop:\ns_branch loop")
    with pytest.raises(GpuHang, match="watchdog"):
        run_dispatch(Arena().mem, d, watchdog_s=0.2)
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "0.1")
    with pytest.raises(GpuHang, match="watchdog"):
        run_dispatch(Arena().mem, d)


def test_bad_launch_shapes_are_rejected():
    with pytest.raises(ValueError, match=re.escape("bad dispatch shape grid=(1, 1, 1) block=(2048, 1, 1)")):
        run_dispatch(Arena().mem, dispatch("s_nop 0", block=(2048, 1, 1)))
    with pytest.raises(ValueError, match=re.escape("bad dispatch shape grid=(0, 1, 1) block=(1, 1, 1)")):
        run_dispatch(Arena().mem, dispatch("s_nop 0", grid=(0, 1, 1)))


def test_large_dispatches_run_in_batches_of_whole_workgroups(monkeypatch):
    import gputwin.emu.amd.dispatch as dispatch_mod
    monkeypatch.setattr(dispatch_mod, "MAX_BATCH_LANES", 512)      # two 256-item workgroups per batch
    arena, k = kernel("lds", "reduce_sum", False)
    x = np.random.default_rng(0).integers(0, 1000, 256 * 5).astype(np.uint32)
    out = arena.alloc(4 * 5)
    c = k(out, arena.alloc(x.nbytes, x), grid=(5, 1, 1), block=(256, 1, 1))
    assert (arena.array(out, np.uint32, 5) == x.reshape(5, 256).sum(axis=1)).all()
    assert c.waves == 5 * 8


def test_watchdog_fires_while_divergent_groups_take_turns():
    # waves 0 and 1 spin in two different loops forever; the scheduler alternates between them
    text = """
s_getreg_b32 s6, hwreg(HW_REG_HW_ID1, 0, 5)
s_cmp_eq_u32 s6, 0
s_cbranch_scc1 b
a:
s_nop 0
s_branch a
b:
s_nop 0
s_branch b"""
    with pytest.raises(GpuHang, match="watchdog"):
        run_dispatch(Arena().mem, dispatch(text, block=(64, 1, 1)), watchdog_s=0.2)


def test_scratch_backing_must_be_mapped_when_given():
    text = "v_mov_b32 v1, 3\nscratch_store_b32 off, v1, off\nscratch_load_b32 v2, off, off"
    with pytest.raises(MemoryFault, match="scratch backing"):
        run_dispatch(Arena().mem, dispatch(text, scratch_bytes_per_lane=16, scratch_base=0x7000000))
    # mapped: each lane's word goes through the backing and comes back (read out through a global store)
    text = ("v_add_nc_u32 v1, 3, v0\nscratch_store_b32 off, v1, off\nscratch_load_b32 v2, off, off\n"
            "s_waitcnt vmcnt(0)\nv_lshlrev_b32 v3, 2, v0\nglobal_store_b32 v3, v2, s[0:1]")
    arena = Arena()
    out, backing = arena.alloc(4 * 32), arena.alloc(4096)
    run_dispatch(arena.mem, dispatch(text, block=(32, 1, 1), scratch_bytes_per_lane=16, scratch_base=backing,
                                     user_sgprs=[out & 0xFFFFFFFF, out >> 32], rsrc2=rsrc2(user=2)))
    assert arena.array(out, np.uint32, 32).tolist() == [3 + lane for lane in range(32)]


def test_scratch_stores_land_in_the_mapped_backing():
    text = "v_add_nc_u32 v1, 3, v0\nscratch_store_b32 off, v1, off"
    arena = Arena()
    backing = arena.alloc(4096)
    run_dispatch(arena.mem, dispatch(text, block=(32, 1, 1), scratch_bytes_per_lane=16, scratch_base=backing))
    words = arena.array(backing, np.uint32, 1024)
    assert sorted(words[words != 0].tolist()) == [3 + lane for lane in range(32)]
    assert words[:32].tolist() == [3 + lane for lane in range(32)]      # slot 0, dword 0 of each lane


def _swizzled(slot, lane, byte, lanes, per_lane):
    """Reference for the hardware's flat scratch layout: wave slots of lanes * per_lane bytes; inside a slot
    dword k of lane L at (k * lanes + L) * 4."""
    return slot * lanes * per_lane + (byte // 4 * lanes + lane) * 4 + byte % 4


@pytest.mark.parametrize("wave64", [False, True])
def test_scratch_backing_uses_the_hardware_swizzle_for_every_width_and_alignment(wave64):
    # per lane: b128 at 16, b64 at 36 (4-aligned only), b32 at 50 (straddles dwords), b16 at 61, b8 at 7;
    # each stored value encodes (width, lane, byte) so every byte's place is checked
    lanes, per_lane = (64 if wave64 else 32), 64
    text = """
v_lshlrev_b32 v10, 8, v0
v_or_b32 v1, 0x10000000, v10
v_or_b32 v2, 0x11000000, v10
v_or_b32 v3, 0x12000000, v10
v_or_b32 v4, 0x13000000, v10
scratch_store_b128 off, v[1:4], off offset:16
v_or_b32 v5, 0x20000000, v10
v_or_b32 v6, 0x21000000, v10
scratch_store_b64 off, v[5:6], off offset:36
v_or_b32 v7, 0x30000000, v10
scratch_store_b32 off, v7, off offset:50
v_or_b32 v8, 0x4000, v0
scratch_store_b16 off, v8, off offset:61
scratch_store_b8 off, v0, off offset:7
s_waitcnt vmcnt(0)
scratch_load_b128 v[11:14], off, off offset:16
scratch_load_b64 v[15:16], off, off offset:36
scratch_load_b32 v17, off, off offset:50
scratch_load_u16 v18, off, off offset:61
scratch_load_u8 v19, off, off offset:7
s_waitcnt vmcnt(0)
v_lshlrev_b32 v20, 5, v0
global_store_b128 v20, v[11:14], s[0:1]
global_store_b128 v20, v[15:18], s[0:1] offset:16
"""
    arena = Arena()
    backing = arena.alloc(2 * lanes * per_lane)
    out = arena.alloc(32 * lanes)
    run_dispatch(arena.mem, dispatch(text, block=(lanes, 1, 1), wave64=wave64, scratch_bytes_per_lane=per_lane,
                                     scratch_base=backing, user_sgprs=[out & 0xFFFFFFFF, out >> 32],
                                     rsrc2=rsrc2(user=2)))
    mem = arena.array(backing, np.uint8, 2 * lanes * per_lane)
    expect = np.zeros_like(mem)
    for lane in range(lanes):
        values = [(16, [0x10000000, 0x11000000, 0x12000000, 0x13000000]), (36, [0x20000000, 0x21000000]),
                  (50, [0x30000000])]
        for at, words in values:
            data = np.array([w | lane << 8 for w in words], "<u4").view(np.uint8)
            for i, b in enumerate(data):
                expect[_swizzled(0, lane, at + i, lanes, per_lane)] = b
        for i, b in enumerate(np.array([0x4000 | lane], "<u2").view(np.uint8)):
            expect[_swizzled(0, lane, 61 + i, lanes, per_lane)] = b
        expect[_swizzled(0, lane, 7, lanes, per_lane)] = lane
    assert (mem == expect).all()
    got = arena.array(out, np.uint32, 8 * lanes).reshape(lanes, 8)
    lane = np.arange(lanes, dtype=np.uint32)
    assert (got[:, 0] == 0x10000000 | lane << 8).all() and (got[:, 3] == 0x13000000 | lane << 8).all()
    assert (got[:, 4] == 0x20000000 | lane << 8).all() and (got[:, 5] == 0x21000000 | lane << 8).all()
    assert (got[:, 6] == 0x30000000 | lane << 8).all()
    assert (got[:, 7] == 0x4000 | lane).all()


@pytest.mark.parametrize("backing", [False, True])
def test_per_lane_and_uniform_scratch_offsets_agree_in_both_homes(backing):
    # per-lane VGPR offsets (the general path) and one offset for the group (the dword-row fast path)
    lanes, per_lane = 32, 64
    text = """
v_and_b32 v10, 3, v0
v_lshlrev_b32 v10, 3, v10
v_or_b32 v1, 0x1000, v0
v_or_b32 v2, 0x2000, v0
scratch_store_b64 v10, v[1:2], off offset:4
v_or_b32 v3, 0x3000, v0
scratch_store_b32 off, v3, off offset:48
s_waitcnt vmcnt(0)
scratch_load_b64 v[4:5], v10, off offset:4
scratch_load_b128 v[6:9], off, off offset:4
s_waitcnt vmcnt(0)
v_lshlrev_b32 v20, 5, v0
global_store_b128 v20, v[4:7], s[0:1]
global_store_b64 v20, v[8:9], s[0:1] offset:16
scratch_load_b32 v11, off, off offset:48
s_waitcnt vmcnt(0)
global_store_b32 v20, v11, s[0:1] offset:24
"""
    arena = Arena()
    base = arena.alloc(2 * lanes * per_lane) if backing else None
    out = arena.alloc(32 * lanes)
    run_dispatch(arena.mem, dispatch(text, grid=(2, 1, 1), block=(lanes, 1, 1), scratch_bytes_per_lane=per_lane,
                                     scratch_base=base, user_sgprs=[out & 0xFFFFFFFF, out >> 32], rsrc2=rsrc2(user=2)))
    got = arena.array(out, np.uint32, 8 * lanes).reshape(lanes, 8)
    lane = np.arange(lanes, dtype=np.uint32)
    slot = (lane & 3) * 2                   # dword index of the b64 inside the 4..36 window
    assert (got[:, 0] == 0x1000 | lane).all() and (got[:, 1] == 0x2000 | lane).all()
    words = np.zeros((lanes, 8), np.uint32)     # dwords 1..8 of each lane, as the b64 left them
    words[lane, slot], words[lane, slot + 1] = 0x1000 | lane, 0x2000 | lane
    assert (got[:, 2:6] == words[:, :4]).all()                      # the b128 at offset 4 reads dwords 1..4
    assert (got[:, 6] == 0x3000 | lane).all()
    if backing:
        mem = arena.array(base, np.uint32, 2 * lanes * per_lane // 4)
        for w in range(2):
            for L in (0, 5, 31):
                for k in range(8):
                    assert mem[_swizzled(w, L, 4 + 4 * k, lanes, per_lane) // 4] == words[L, k]


def test_waves_take_backing_slots_in_batches_and_get_their_slot_offset():
    # 6 one-wave workgroups, a backing with 2 slots: at most 2 waves in flight; each wave spills its
    # workgroup id and reads it back, and reports the private segment wave offset SGPR (s3)
    text = """
v_mov_b32 v1, s2
scratch_store_b32 off, v1, off offset:4
s_waitcnt vmcnt(0)
scratch_load_b32 v2, off, off offset:4
s_waitcnt vmcnt(0)
v_mov_b32 v3, s3
s_lshl_b32 s4, s2, 7
v_lshlrev_b32 v4, 2, v0
v_add_nc_u32 v4, s4, v4
global_store_b32 v4, v2, s[0:1]
global_store_b32 v4, v3, s[0:1] offset:768
"""
    arena = Arena()
    per_lane, lanes = 8, 32
    backing = arena.alloc(2 * lanes * per_lane)
    out = arena.alloc(2 * 768)
    d = dispatch(text, grid=(6, 1, 1), block=(32, 1, 1), scratch_bytes_per_lane=per_lane, scratch_base=backing,
                 scratch_waves=2, user_sgprs=[out & 0xFFFFFFFF, out >> 32],
                 rsrc2=rsrc2(user=2, tgid=(1, 0, 0), scratch=True))
    run_dispatch(arena.mem, d)
    got = arena.array(out, np.uint32, 2 * 192).reshape(2, 6, 32)
    assert (got[0] == np.arange(6)[:, None]).all()                   # each wave read back its own spill
    assert (got[1] == (np.arange(6) % 2 * lanes * per_lane)[:, None]).all()   # slot s at s * wave bytes
    words = arena.array(backing, np.uint32, 2 * lanes * 2).reshape(2, 2, lanes)
    assert (words[:, 1] == np.array([4, 5])[:, None]).all()          # the last batch's waves hold the slots


def test_a_backing_too_small_for_its_slots_or_a_workgroup_faults():
    arena = Arena()
    backing = arena.alloc(4096)          # one page: 2 slots of 32 lanes x 64 bytes
    text = "scratch_store_b32 off, v0, off"
    with pytest.raises(MemoryFault, match="holds 2 wave slots of 2048 bytes, fewer than the 3 that COMPUTE_TMPRING"):
        run_dispatch(arena.mem, dispatch(text, block=(32, 1, 1), scratch_bytes_per_lane=64, scratch_base=backing,
                                         scratch_waves=3))
    with pytest.raises(MemoryFault, match="holds 2 wave slots of 2048 bytes .*fewer than the 4 waves of one work"):
        run_dispatch(arena.mem, dispatch(text, block=(128, 1, 1), scratch_bytes_per_lane=64, scratch_base=backing))


@pytest.mark.parametrize("wave64", [False, True])
def test_workgroup_info_sgpr_holds_wave_count_and_wave_id(wave64):
    arena = Arena()
    out = arena.alloc(4 * 2 * 160)
    text = """s_mul_i32 s4, s2, 160
v_add_nc_u32 v1, s4, v0
v_lshlrev_b32 v1, 2, v1
v_mov_b32 v2, s3
global_store_b32 v1, v2, s[0:1]"""
    run_dispatch(arena.mem, dispatch(text, grid=(2, 1, 1), block=(160, 1, 1), wave64=wave64,
                                     user_sgprs=[out & 0xFFFFFFFF, out >> 32],
                                     rsrc2=rsrc2(user=2, tgid=(1, 0, 0)) | 1 << 10))
    lanes = 64 if wave64 else 32
    waves = -(-160 // lanes)
    item = np.arange(2 * 160) % 160
    assert (arena.array(out, np.uint32, 2 * 160) == waves | (item // lanes) << 20).all()


# --- the watchdog (gputwin/emu/watchdog.py) --------------------------------------------------------------
def test_a_runaway_branch_loop_is_caught_by_the_instruction_budget(monkeypatch):
    monkeypatch.setenv("GPUTWIN_WATCHDOG_INSTS", "20000")
    with pytest.raises(GpuHang, match="GPUTWIN_WATCHDOG_INSTS") as e:
        run_dispatch(Arena().mem, dispatch("s_mov_b32 s0, 0\nloop:\ns_add_u32 s0, s0, 1\ns_branch loop"))
    text = str(e.value)
    # deterministic: exactly the budget was executed, and the message says where the wave is stuck
    assert "a wave executed 20000 instructions without ending" in text
    assert "0 of 1 waves finished, 20000 wave-instructions executed" in text
    assert f"1 at pc={CODE + 4:#x} (code offset 0x4)" in text or f"1 at pc={CODE + 8:#x} (code offset 0x8)" in text
    assert "GPUTWIN_WATCHDOG_S=300 s" in text


def test_the_budget_counts_each_wave_through_splits_merges_and_batches(monkeypatch):
    import gputwin.emu.amd.dispatch as dispatch_mod
    monkeypatch.setattr(dispatch_mod, "MAX_BATCH_LANES", 4 * 32)      # 4 one-wave workgroups per batch
    # wave of workgroup x loops 3 * (x + 1) times (3 instructions each): waves diverge and end apart
    text = """
s_add_u32 s1, s0, 1
s_mul_i32 s1, s1, 3
loop:
s_sub_u32 s1, s1, 1
s_cmp_lg_u32 s1, 0
s_cbranch_scc1 loop"""
    d = dispatch(text, grid=(10, 1, 1), block=(32, 1, 1), rsrc2=rsrc2(tgid=(1, 0, 0)))
    longest = 2 + 3 * 3 * 10 + 1                 # the last wave's instructions, s_endpgm included
    c = run_dispatch(Arena().mem, d, watchdog_insts=longest)
    assert c.wave_insts == sum(2 + 9 * (x + 1) + 1 for x in range(10)) > 10 * longest // 2
    with pytest.raises(GpuHang, match=f"a wave executed {longest - 1} instructions without ending") as e:
        run_dispatch(Arena().mem, d, watchdog_insts=longest - 1)
    assert "8 of 10 waves finished" in str(e.value)     # batches of 4: workgroups 0..7 ended, then 8 and 9 ran


def test_a_huge_grid_of_short_waves_stops_at_the_wall_clock():
    t0 = time.monotonic()
    with pytest.raises(GpuHang, match=r"wall-clock limit of 0\.3 s \(GPUTWIN_WATCHDOG_S\)") as e:
        run_dispatch(Arena().mem, dispatch("v_mov_b32 v1, 0", grid=(1 << 24, 1, 1), block=(32, 1, 1)),
                     watchdog_s=0.3)
    assert time.monotonic() - t0 < 3            # was: the whole grid (30 s), checks restarted per batch
    assert re.search(r"\d+ of 16777216 waves finished", str(e.value))


def test_a_dispatch_inside_an_open_scope_keeps_its_deadline():
    from gputwin.emu import watchdog
    spent = watchdog.Watchdog(seconds=1e-9)
    time.sleep(0.001)
    with watchdog.scope(spent):
        with pytest.raises(GpuHang, match="wall-clock limit"):
            run_dispatch(Arena().mem, dispatch("s_nop 0"))
    run_dispatch(Arena().mem, dispatch("s_nop 0"))      # outside the scope: a fresh watchdog


def test_the_default_limits_let_a_divergent_kernel_finish(monkeypatch):
    monkeypatch.delenv("GPUTWIN_WATCHDOG_S", raising=False)
    monkeypatch.delenv("GPUTWIN_WATCHDOG_INSTS", raising=False)
    arena, k = kernel("diverge", "collatz_steps", False)
    n = 4096
    out = arena.alloc(4 * n)
    c = k(out, 1, grid=(n // 256, 1, 1), block=(256, 1, 1))
    assert c.waves == n // 32 and int(arena.array(out, np.uint32, n).max()) == 237   # 3711: the longest below 4096
