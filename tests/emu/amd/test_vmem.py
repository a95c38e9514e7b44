"""FLAT/GLOBAL/SCRATCH: addressing forms, sub-dword and d16 loads, stores under EXEC, atomics, faults."""
from __future__ import annotations

import numpy as np
import pytest

from gputwin.emu.amd.hwreg import SHARED_APERTURE_HI
from gputwin.emu.amd.standalone import Arena
from gputwin.emu.memory import AddressSpace
from gputwin.errors import MemoryFault
from tests.emu.amd.helpers import run

LANE = np.arange(32, dtype=np.uint32)


def setup(data=None, nbytes=4096):
    arena = Arena()
    va = arena.alloc(nbytes, data)
    return arena, va, {0: va & 0xFFFFFFFF, 1: va >> 32}


def test_global_load_saddr_plus_vaddr_plus_negative_offset():
    arena, va, s = setup(np.arange(1024, dtype=np.uint32))
    g = run("global_load_b32 v2, v1, s[0:1] offset:-8", sgprs=s, vgprs={1: 4 * LANE + 8}, mem=arena.mem)
    assert (g.vgpr(2) == LANE).all()


def test_global_load_64bit_vgpr_address_multi_dword():
    arena, va, _ = setup(np.arange(1024, dtype=np.uint32))
    addr = va + 16 * LANE.astype(np.uint64)
    g = run("global_load_b128 v[4:7], v[2:3], off", vgprs={2: addr & 0xFFFFFFFF, 3: addr >> 32}, mem=arena.mem)
    for k in range(4):
        assert (g.vgpr(4 + k) == 4 * LANE + k).all()


def test_sub_dword_loads_sign_and_zero_extend_and_d16_keeps_the_other_half():
    data = np.array([0x80, 0xFF, 0x34, 0x92], np.uint8)
    arena, va, s = setup(data)
    g = run("""global_load_u8 v2, v1, s[0:1]
global_load_i8 v3, v1, s[0:1]
global_load_u16 v4, v1, s[0:1] offset:2
global_load_i16 v5, v1, s[0:1] offset:2
global_load_d16_b16 v6, v1, s[0:1] offset:2
global_load_d16_hi_i8 v7, v1, s[0:1]""", sgprs=s, vgprs={1: 0, 6: 0xAAAA5555, 7: 0x1234ABCD}, mem=arena.mem)
    assert [int(g.vgpr(r)[0, 0]) for r in range(2, 8)] == \
        [0x80, 0xFFFFFF80, 0x9234, 0xFFFF9234, 0xAAAA9234, 0xFF80ABCD]


def test_stores_only_write_exec_lanes_and_narrow_stores_write_their_bytes():
    arena, va, s = setup()
    ex = np.zeros((1, 32), bool)
    ex[0, ::2] = True
    run("global_store_b32 v1, v2, s[0:1]\nglobal_store_b8 v3, v2, s[0:1]\nglobal_store_d16_hi_b16 v4, v2, s[0:1]",
        n=1, sgprs=s, vgprs={1: 4 * LANE, 2: 0x11223344 + LANE, 3: 1024 + LANE, 4: 2048 + 2 * LANE},
        exec_mask=ex, mem=arena.mem)
    words = arena.array(va, np.uint32, 32)
    assert (words[::2] == 0x11223344 + LANE[::2]).all() and (words[1::2] == 0).all()
    b = arena.array(va + 1024, np.uint8, 32)
    assert (b[::2] == ((0x44 + LANE) & 0xFF)[::2]).all() and (b[1::2] == 0).all()
    h = arena.array(va + 2048, np.uint16, 32)
    assert (h[::2] == 0x1122).all() and (h[1::2] == 0).all()


def test_store_to_the_same_address_last_lane_wins():
    arena, va, s = setup()
    run("global_store_b32 v1, v2, s[0:1]", n=2, sgprs=s, vgprs={1: 0, 2: LANE}, mem=arena.mem)
    assert arena.array(va, np.uint32, 1)[0] == 31


def test_atomics_return_pre_op_values_in_lane_order():
    arena, va, s = setup(np.array([10, 0, 7, 0xFFFFFFFF], np.uint32))
    g = run("""global_atomic_add_u32 v2, v1, v3, s[0:1] glc
global_atomic_max_i32 v4, v1, v5, s[0:1] offset:8 glc
global_atomic_inc_u32 v6, v1, v7, s[0:1] offset:12 glc
global_atomic_sub_u32 v1, v3, s[0:1] offset:4""", n=1,
            sgprs=s, vgprs={1: 0, 3: 1, 5: LANE.view(np.int32) - 16, 7: 0xFFFFFFFF}, mem=arena.mem)
    assert (g.vgpr(2)[0] == 10 + LANE).all()
    assert arena.array(va, np.uint32, 4).tolist() == [42, (-32) & 0xFFFFFFFF, 15, 31]
    assert (g.vgpr(4)[0].view(np.int32) == np.maximum.accumulate(np.r_[7, LANE[:-1].astype(np.int64) - 16])).all()
    assert (g.vgpr(6)[0] == np.r_[0xFFFFFFFF, np.arange(31)]).all()


def test_cmpswap_and_64bit_atomics():
    arena, va, s = setup(np.array([5, 0, 1, 0], np.uint32))
    g = run("""global_atomic_cmpswap_b32 v2, v1, v[4:5], s[0:1] glc
global_atomic_add_u64 v[6:7], v1, v[8:9], s[0:1] offset:8 glc""", n=1, sgprs=s,
            vgprs={1: 0, 4: 100 + LANE, 5: 5 + 100 * LANE, 8: 0xFFFFFFFF, 9: 0}, mem=arena.mem)
    # lane 0 compares 5 == 5 and stores 100; later lanes compare against 100 + 100*lane: lane 1 (cmp 105)
    # fails, ... no other lane matches 100
    assert int(g.vgpr(2)[0, 0]) == 5 and (g.vgpr(2)[0, 1:] == 100).all()
    words = arena.array(va, np.uint32, 4)
    assert words[0] == 100
    assert int(words[2]) | int(words[3]) << 32 == 1 + 32 * 0xFFFFFFFF     # carries into the high dword
    old = g.vgpr(6)[0].astype(np.uint64) | g.vgpr(7)[0].astype(np.uint64) << np.uint64(32)
    assert (old == 1 + np.arange(32, dtype=np.uint64) * 0xFFFFFFFF).all()


def test_flat_reaches_global_and_the_shared_aperture():
    arena, va, _ = setup(np.arange(64, dtype=np.uint32))
    lds_addr = (SHARED_APERTURE_HI << 32) + 4 * LANE.astype(np.uint64)
    g = run("""v_mov_b32 v6, 0x77
flat_store_b32 v[4:5], v6
flat_load_b32 v7, v[4:5]
flat_load_b32 v8, v[2:3]
s_waitcnt vmcnt(0) lgkmcnt(0)
ds_load_b32 v9, v10""", n=1, lds_bytes=256, mem=arena.mem,
            vgprs={2: (va + 4 * LANE.astype(np.uint64)) & 0xFFFFFFFF, 3: va >> 32, 4: lds_addr & 0xFFFFFFFF,
                   5: lds_addr >> 32, 10: 4 * LANE})
    assert (g.vgpr(7) == 0x77).all() and (g.vgpr(8) == LANE).all() and (g.vgpr(9) == 0x77).all()


def test_unmapped_lane_faults_and_masked_lanes_do_not():
    arena, va, s = setup()
    ex = np.ones((2, 32), bool)
    ex[0, 5] = False
    bad = 4 * LANE
    bad[5] = 1 << 20                                 # only lane 5 of each wave is out of range
    run("global_load_b32 v2, v1, s[0:1]", n=1, sgprs=s, vgprs={1: bad}, exec_mask=ex[:1], mem=arena.mem)
    with pytest.raises(MemoryFault, match="write of 4 bytes at an unmapped address") as e:
        run("global_store_b32 v1, v2, s[0:1]", n=2, sgprs=s, vgprs={1: bad}, exec_mask=ex, mem=arena.mem)
    assert e.value.address == va + (1 << 20) and e.value.write is True and e.value.wave == 1


def test_store_to_read_only_memory_faults():
    arena = Arena()
    va = arena.alloc(64, writable=False)
    with pytest.raises(MemoryFault, match="write of 4 bytes at an unmapped address"):
        run("global_store_b32 v1, v2, s[0:1]", n=1, sgprs={0: va & 0xFFFFFFFF, 1: va >> 32}, vgprs={1: 0},
            mem=arena.mem)


def test_flat_private_aperture_reaches_the_lane_scratch():
    from gputwin.emu.amd.hwreg import PRIVATE_APERTURE_HI
    g = run("""v_mov_b32 v3, 0x55
flat_store_b32 v[1:2], v3
scratch_load_b32 v4, off, off offset:4""", n=2, scratch_bytes=8,
            vgprs={1: 4, 2: PRIVATE_APERTURE_HI})
    assert (g.vgpr(4) == 0x55).all()


def test_consecutive_multi_dword_store_and_load_round_trip():
    arena, va, s = setup()
    g = run("global_store_b64 v1, v[2:3], s[0:1] offset:8\nglobal_load_b64 v[4:5], v1, s[0:1] offset:8", n=2, sgprs=s,
            vgprs={1: 8 * (np.arange(2)[:, None] * 32 + LANE), 2: LANE, 3: 100 + LANE}, mem=arena.mem)
    words = arena.array(va + 8, np.uint32, 128).reshape(64, 2)
    assert (words[:, 0] == np.tile(LANE, 2)).all() and (words[:, 1] == np.tile(100 + LANE, 2)).all()
    assert (g.vgpr(4) == LANE).all() and (g.vgpr(5) == 100 + LANE).all()


# --- float atomics: one address hit by every lane in lane order, EXEC-masked lanes skipped ----------
F32 = np.float32
HARD_F32 = np.array([1.5, -0.0, 0.0, 1e-45, -1e-45, 3.4e38, 3.4e38, -np.inf, np.nan, 2.0, -3.25, 1e-40,
                     0.1, 0.2, 0.3, -0.0] * 2, F32)


def _fminmax_ref(old, src, want_max):
    """minNum / maxNum on bits: a NaN operand yields the other (memory kept when both are NaN),
    -0 below +0."""
    o, s = np.uint32(old).view(F32), np.uint32(src).view(F32)
    if np.isnan(s):
        return old
    if np.isnan(o):
        return src
    if o == s:
        neg_o, neg_s = np.signbit(o), np.signbit(s)
        return (old if neg_s or not neg_o else src) if want_max else (src if neg_s and not neg_o else old)
    return src if (s > o) == want_max else old


def _sequential(op, start, lanes, active):
    """(pre-op values per lane, final memory) applying op lane by lane over the active lanes."""
    mem, olds = start, []
    for v, a in zip(lanes, active):
        olds.append(mem)
        if a:
            mem = op(mem, v)
    return olds, mem


@pytest.mark.parametrize("name", ["add", "min", "max"])
def test_float_atomics_apply_lane_by_lane_and_return_pre_op_bits(name):
    bits = HARD_F32.view(np.uint32)
    start = np.float32(0.5).view(np.uint32)
    arena, va, s = setup(np.array([start, 0, 0, 0], np.uint32))
    ex = np.ones((1, 32), bool)
    ex[0, 5::7] = False
    g = run(f"global_atomic_{name}_f32 v2, v1, v3, s[0:1] glc\nglobal_atomic_{name}_f32 v1, v3, s[0:1] offset:4",
            n=1, sgprs=s, vgprs={1: 0, 2: 0xDEAD, 3: bits}, exec_mask=ex, mem=arena.mem)
    op = {"add": lambda m, v: int((np.float32(np.uint32(m).view(F32)) + np.uint32(v).view(F32)).view(np.uint32)),
          "min": lambda m, v: int(_fminmax_ref(np.uint32(m), np.uint32(v), False)),
          "max": lambda m, v: int(_fminmax_ref(np.uint32(m), np.uint32(v), True))}[name]
    with np.errstate(all="ignore"):
        olds, final = _sequential(op, int(start), [int(b) for b in bits], ex[0])
        _, final0 = _sequential(op, 0, [int(b) for b in bits], ex[0])
    got = arena.array(va, np.uint32, 2)
    assert int(got[0]) == final and int(got[1]) == final0
    assert [int(x) for x in g.vgpr(2)[0, ex[0]]] == [o for o, a in zip(olds, ex[0]) if a]
    assert (g.vgpr(2)[0, ~ex[0]] == 0xDEAD).all()                     # masked lanes keep their VGPR


def test_float_atomic_min_max_pick_minus_zero_and_skip_nan():
    pos0, neg0, qnan = 0x00000000, 0x80000000, 0x7FC00000
    arena, va, s = setup(np.array([pos0, neg0, qnan, 0x3F800000], np.uint32))
    run("""global_atomic_min_f32 v1, v2, s[0:1]
global_atomic_max_f32 v1, v3, s[0:1] offset:4
global_atomic_min_f32 v1, v3, s[0:1] offset:8
global_atomic_max_f32 v1, v4, s[0:1] offset:12""", n=1, sgprs=s,
        vgprs={1: 0, 2: neg0, 3: pos0, 4: qnan}, exec_mask=np.eye(1, 32, dtype=bool), mem=arena.mem)
    # min(+0, -0) = -0; max(-0, +0) = +0; min(NaN, +0) = +0; max(1.0, NaN) = 1.0
    assert arena.array(va, np.uint32, 4).tolist() == [neg0, pos0, pos0, 0x3F800000]


def test_float_cmpswap_compares_as_floats():
    # memory +0 with comparand -0 swaps (equal as floats); NaN never equals itself; DATA[63:32] is the comparand
    arena, va, s = setup(np.array([0x00000000, 0x7FC00000], np.uint32))
    g = run("""global_atomic_cmpswap_f32 v6, v1, v[2:3], s[0:1] glc
global_atomic_cmpswap_f32 v7, v1, v[4:5], s[0:1] offset:4 glc""", n=1, sgprs=s,
            vgprs={1: 0, 2: 0x40490FDB, 3: 0x80000000, 4: 0x3F800000, 5: 0x7FC00000},
            exec_mask=np.eye(1, 32, dtype=bool), mem=arena.mem)
    assert arena.array(va, np.uint32, 2).tolist() == [0x40490FDB, 0x7FC00000]
    assert int(g.vgpr(6)[0, 0]) == 0 and int(g.vgpr(7)[0, 0]) == 0x7FC00000


def test_flat_atomic_add_f32_reaches_global_memory():
    arena, va, _ = setup(np.array([np.float32(1.0).view(np.uint32)], np.uint32))
    g = run("flat_atomic_add_f32 v6, v[2:3], v4 glc", n=2,
            vgprs={2: va & 0xFFFFFFFF, 3: va >> 32, 4: np.float32(0.25).view(np.uint32)}, mem=arena.mem)
    assert arena.array(va, np.float32, 1)[0] == 1.0 + 64 * 0.25
    assert (g.vgpr(6).view(np.float32).ravel() == 1.0 + 0.25 * np.arange(64)).all()


def test_loads_whose_destination_overlaps_the_address_read_the_address_first():
    mem = AddressSpace()
    data = (np.arange(0x1000) % 251).astype(np.uint8)
    mem.map(0x10000, 0x1000)[:] = data
    lane = np.arange(32, dtype=np.uint32)
    g = run("global_load_b64 v[1:2], v[1:2], off\nglobal_load_b32 v3, v3, s[0:1]\n"
            "s_load_b64 s[4:5], s[4:5], 0x0\ns_waitcnt lgkmcnt(0) vmcnt(0)", n=1, mem=mem,
            vgprs={1: 0x10000 + 8 * lane, 2: 0, 3: 4 * lane}, sgprs={0: 0x10000, 1: 0, 4: 0x10010, 5: 0})
    words = data.view(np.uint32)
    assert np.array_equal(g.vgpr(1)[0], words[2 * lane]) and np.array_equal(g.vgpr(2)[0], words[2 * lane + 1])
    assert np.array_equal(g.vgpr(3)[0], words[lane])
    assert int(g.s[4][0]) == words[4] and int(g.s[5][0]) == words[5]


def test_global_load_whose_address_wraps_past_2_64_faults():
    """Issue 11 defect 4 through the shader: vaddr = 2**64 - 2 must not reach a mapping via the wrap."""
    from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
    from gputwin.emu.amd.isa import assemble
    from gputwin.emu.memory import AddressSpace
    m = AddressSpace()
    m.map(0x100000, 0x1000)
    code = assemble("v_mov_b32 v0, -2\nv_mov_b32 v1, -1\n"
                    "global_load_b32 v2, v[0:1], off\ns_waitcnt vmcnt(0)\ns_endpgm")
    with pytest.raises(MemoryFault, match="unmapped") as e:
        run_dispatch(m, Dispatch(0x1000, code=code, block=(32, 1, 1)))
    assert e.value.address == (1 << 64) - 2
