"""DS: LDS addressing and forms, out-of-range behaviour, atomics, and the cross-lane swizzle/permutes."""
from __future__ import annotations

import numpy as np
import pytest

from gputwin.errors import IllegalInstruction, MemoryFault
from tests.emu.amd.helpers import run

LANE = np.arange(32, dtype=np.uint32)


def test_store_load_offsets_two_address_forms_and_sub_dword():
    g = run("""ds_store_b32 v1, v2 offset:16
ds_store_2addr_b32 v1, v3, v4 offset0:1 offset1:2
ds_store_b64 v5, v[6:7]
ds_load_2addr_stride64_b32 v[10:11], v8 offset0:0 offset1:1
ds_load_b32 v12, v1 offset:16
ds_load_2addr_b32 v[13:14], v1 offset0:1 offset1:2
ds_load_i8 v15, v9 offset:3
ds_load_u16_d16_hi v16, v9""", n=1, lds_bytes=4096,
            vgprs={1: 0, 2: 0xAB, 3: 3, 4: 4, 5: 1024 + 8 * LANE, 6: LANE, 7: 100 + LANE, 8: 1024, 9: 0,
                   16: 0x1234})
    assert (g.vgpr(12) == 0xAB).all() and (g.vgpr(13) == 3).all() and (g.vgpr(14) == 4).all()
    assert (g.vgpr(10) == 0).all() and (g.vgpr(11) == 0).all()       # 1024 and 1024 + 256 (never written)
    # v15: byte 3 of dword 0 (zero) sign-extended; v16 high half = low 16 bits of dword 0
    assert (g.vgpr(15) == 0).all() and (g.vgpr(16) == 0x1234).all()


def test_two_address_stride64_and_64bit_forms():
    g = run("""ds_store_b64 v5, v[6:7]
ds_store_b64 v5, v[18:19] offset:512
ds_load_2addr_stride64_b64 v[10:13], v8 offset0:0 offset1:1
ds_load_2addr_b64 v[14:17], v9 offset0:0 offset1:1""", n=1, lds_bytes=4096,
            vgprs={5: 8 * LANE, 6: LANE, 7: 100 + LANE, 8: 8 * (LANE % 8), 9: 16 * (LANE % 8),
                   18: 64 + LANE, 19: 164 + LANE})
    k = LANE % 8
    assert (g.vgpr(10) == k).all() and (g.vgpr(11) == 100 + k).all()          # dword pair at 8*k
    assert (g.vgpr(12) == 64 + k).all() and (g.vgpr(13) == 164 + k).all()     # +512 bytes = pair 64+k
    assert (g.vgpr(14) == 2 * k).all() and (g.vgpr(17) == 100 + 2 * k + 1).all()


def test_out_of_range_reads_return_zero_and_writes_are_dropped():
    g = run("ds_store_b32 v1, v2\nds_load_b32 v3, v1\nds_load_b32 v4, v5", n=1, lds_bytes=64,
            vgprs={1: 4 * LANE, 2: 7 + LANE, 5: 4 * LANE})
    assert (g.vgpr(3)[0, :16] == 7 + LANE[:16]).all() and (g.vgpr(3)[0, 16:] == 0).all()
    assert (g.vgpr(4)[0, 16:] == 0).all()


def test_each_workgroup_has_its_own_lds():
    g = run("ds_store_b32 v1, v2\ns_barrier\nds_load_b32 v3, v1", n=4, waves_per_group=1, lds_bytes=4,
            vgprs={1: 0, 2: np.arange(4)[:, None] * 10 + LANE}, exec_mask=np.eye(4, 32, dtype=bool))
    assert [int(g.vgpr(3)[w, w]) for w in range(4)] == [0, 11, 22, 33]


def test_lds_atomics_serialise_in_lane_order():
    g = run("""ds_add_rtn_u32 v2, v1, v3
ds_max_rtn_i32 v4, v1, v5 offset:4
ds_cmpstore_rtn_b32 v6, v1, v7, v8 offset:8
ds_load_b32 v9, v1""", n=1, lds_bytes=16,
            vgprs={1: 0, 3: 2, 5: (LANE.view(np.int32) - 20).view(np.uint32), 7: LANE + 1, 8: LANE})
    assert (g.vgpr(2)[0] == 2 * LANE).all() and (g.vgpr(9)[0] == 64).all()
    running_max = np.maximum(0, LANE[:-1].view(np.int32) - 20)
    assert int(g.vgpr(4)[0, 0]) == 0 and (g.vgpr(4)[0].view(np.int32)[1:] == running_max).all()
    # cmpstore: DATA0 is the new value, DATA1 the comparand: mem 0 -> 1 (lane 0), 1 -> 2 (lane 1), ...
    assert (g.vgpr(6)[0] == LANE).all()


def test_bpermute_pulls_and_permute_pushes():
    g = run("ds_bpermute_b32 v2, v1, v3\nds_permute_b32 v4, v1, v3", n=1, lds_bytes=0,
            vgprs={1: 4 * ((LANE + 1) % 32), 3: 100 + LANE})
    assert (g.vgpr(2)[0] == 100 + (LANE + 1) % 32).all()      # lane i reads lane i+1
    assert (g.vgpr(4)[0] == 100 + (LANE - 1) % 32).all()      # lane i wrote to lane i+1


def test_bpermute_from_an_inactive_lane_reads_zero():
    ex = np.ones((1, 32), bool)
    ex[0, 0] = False
    g = run("ds_bpermute_b32 v2, v1, v3", n=1, vgprs={1: 0, 3: 5 + LANE, 2: 9}, exec_mask=ex)
    assert int(g.vgpr(2)[0, 0]) == 9 and (g.vgpr(2)[0, 1:] == 0).all()


def test_swizzle_bitmask_and_quad_perm_modes():
    g = run("ds_swizzle_b32 v2, v1 offset:swizzle(SWAP,16)\nds_swizzle_b32 v3, v1 offset:swizzle(QUAD_PERM,3,2,1,0)\n"
            "ds_swizzle_b32 v4, v1 offset:swizzle(BROADCAST,8,5)", n=1, vgprs={1: LANE})
    assert (g.vgpr(2)[0] == LANE ^ 16).all()
    assert (g.vgpr(3)[0] == (LANE & np.uint32(0xFFFFFFFC)) | (3 - (LANE & 3))).all()
    assert (g.vgpr(4)[0] == (LANE & np.uint32(0xFFFFFFF8)) | 5).all()


def test_wave64_bpermute_spans_all_64_lanes():
    lane = np.arange(64, dtype=np.uint32)
    g = run("ds_bpermute_b32 v2, v1, v3", n=1, wave64=True, vgprs={1: 4 * (63 - lane), 3: lane})
    assert (g.vgpr(2)[0] == 63 - lane).all()


def test_mskor_clears_then_sets_bits():
    g = run("ds_store_b32 v1, v2\nds_mskor_rtn_b32 v5, v1, v3, v4\nds_load_b32 v6, v1", n=1, lds_bytes=4,
            vgprs={1: 0, 2: 0xFF00FF00, 3: 0x0000FFFF, 4: 0x00000001}, exec_mask=np.eye(1, 32, dtype=bool))
    assert int(g.vgpr(5)[0, 0]) == 0xFF00FF00 and int(g.vgpr(6)[0, 0]) == 0xFF000001


def _f64_bits(x):
    return np.asarray(x, np.float64).view(np.uint64)


def test_lds_f64_min_max_cmpstore_and_f32_forms_in_lane_order():
    vals = np.array([3.0, -0.0, 0.0, np.nan, -1e-310, 5e-324, -np.inf, 2.5] * 4)   # denormals, zeros, NaN
    vb = _f64_bits(vals)
    lo, hi = (vb & np.uint64(0xFFFFFFFF)).astype(np.uint32), (vb >> np.uint64(32)).astype(np.uint32)
    g = run("""ds_store_b64 v1, v[8:9]
ds_store_b64 v1, v[8:9] offset:8
ds_min_rtn_f64 v[4:5], v1, v[2:3]
ds_max_f64 v1, v[2:3] offset:8
ds_cmpstore_rtn_f64 v[6:7], v1, v[10:11], v[12:13] offset:16
ds_min_f32 v1, v14 offset:24
ds_cmpstore_f32 v1, v15, v16 offset:28
ds_load_b128 v[20:23], v1
ds_load_b128 v[24:27], v1 offset:16""", n=1, lds_bytes=64,
            vgprs={1: 0, 2: lo, 3: hi, 8: 0, 9: 0x40240000,            # memory starts at 10.0
                   10: LANE, 11: 0, 12: np.where(LANE == 0, 0, LANE - 1), 13: 0,   # chain 0 -> 1 -> 2 ...
                   14: np.float32(-0.0).view(np.uint32), 15: 0x3F800000, 16: 0x80000000})
    mins = [10.0]
    for v in vals[:-1]:
        m = mins[-1]
        mins.append(m if np.isnan(v) or not (v < m or (v == m and np.signbit(v))) else v)
    olds = g.vgpr(4)[0].astype(np.uint64) | g.vgpr(5)[0].astype(np.uint64) << np.uint64(32)
    assert olds.tolist() == _f64_bits(mins).tolist()
    words = [int(w) for w in (g.vgpr(20 + k)[0, 0] for k in range(8))]
    as64 = lambda i: words[i] | words[i + 1] << 32
    assert as64(0) == int(_f64_bits(-np.inf)) and as64(2) == int(_f64_bits(10.0))   # max: 10 stays
    # cmpstore chain: lane i compares memory with i - 1 (lane 0 with 0) and stores i: ends at 31
    assert as64(4) == 31 and (g.vgpr(6)[0] == np.r_[0, np.arange(31)]).all()
    assert words[6] == 0x80000000                 # min(+0 (zero LDS), -0) = -0
    assert words[7] == 0x3F800000                 # f32 cmpstore: LDS +0 equals comparand -0 as floats


def test_append_and_consume_count_active_lanes_wave_by_wave():
    ex = np.ones((3, 32), bool)
    ex[1, 10:] = False                           # 10 lanes in wave 1
    ex[2] = False                                # wave 2 does not issue
    g = run("""s_mov_b32 m0, 8
ds_append v1 offset:4
ds_consume v2 offset:8
ds_load_b32 v3, v4 offset:12
ds_load_b32 v5, v4 offset:16""", n=3, waves_per_group=3, lds_bytes=64, exec_mask=ex,
            vgprs={1: 0xAAAA, 2: 0xBBBB, 4: 0})
    # counters at 12 (append) and 16 (consume) start at 0; each wave sees the value before its lanes count
    assert (g.vgpr(1)[0] == 0).all() and (g.vgpr(1)[1, :10] == 32).all() and (g.vgpr(1)[1, 10:] == 0xAAAA).all()
    assert (g.vgpr(2)[1, :10] == (-32) & 0xFFFFFFFF).all() and (g.vgpr(1)[2] == 0xAAAA).all()
    assert int(g.vgpr(3)[0, 0]) == 42 and int(g.vgpr(5)[0, 0]) == (-42) & 0xFFFFFFFF


def test_gds_accesses_are_not_modelled():
    with pytest.raises(IllegalInstruction, match="GDS"):
        run("ds_add_u32 v1, v2 gds", n=1, lds_bytes=64)


@pytest.mark.parametrize("line", ["ds_gws_init v1 gds", "ds_gws_sema_v gds", "ds_gws_barrier v1 offset:4 gds",
                                  "ds_ordered_count v5, v1 offset:4 gds", "ds_add_gs_reg_rtn v[4:5], v1 gds"])
def test_gws_and_gds_register_ops_fail_closed_naming_the_instruction(line):
    with pytest.raises(IllegalInstruction, match=rf"{line.split()[0]} with gds: .*GDS.* not modelled \(pc=0x"):
        run(line, n=1, lds_bytes=64)


def test_misaligned_lds_atomic_faults():
    with pytest.raises(MemoryFault, match="misaligned"):
        run("ds_add_u32 v1, v2", n=1, lds_bytes=64, vgprs={1: 2})


def test_lds_float_max_skips_exec_masked_lanes_and_returns_in_lane_order():
    vals = (np.random.default_rng(3).standard_normal(32) * 100).astype(np.float32)
    vals[[4, 9]] = [np.float32(1e6), np.nan]              # lane 4 (masked) would win; NaN is skipped
    ex = np.ones((1, 32), bool)
    ex[0, 4::8] = False
    g = run("ds_max_rtn_f32 v2, v1, v3\nds_load_b32 v4, v1", n=1, lds_bytes=16, exec_mask=ex,
            vgprs={1: 0, 2: 0xDEAD, 3: vals.view(np.uint32)})
    mem, olds = np.float32(0.0), []
    for v, a in zip(vals, ex[0]):
        olds.append(mem)
        if a and not np.isnan(v) and v > mem:
            mem = v
    got = g.vgpr(2)[0]
    assert (got[ex[0]] == np.array(olds, np.float32).view(np.uint32)[ex[0]]).all()
    assert (got[~ex[0]] == 0xDEAD).all() and int(g.vgpr(4)[0, 0]) == int(np.float32(mem).view(np.uint32))


_LDS_ROUND_TRIP = {   # store 7 at LDS address 0, load it back, store the result to out[lane] (s[0:1] = out)
    "gfx1100": "ds_store_b32 v1, v2\nds_load_b32 v3, v1\nglobal_store_b32 v4, v3, s[0:1]",
    "gfx1201": "ds_store_b32 v1, v2\nds_load_b32 v3, v1\nglobal_store_b32 v4, v3, s[0:1]",
    "gfx942": "ds_write_b32 v1, v2\nds_read_b32 v3, v1\nglobal_store_dword v4, v3, s[0:1]",
}


@pytest.mark.parametrize("arch", sorted(_LDS_ROUND_TRIP))
@pytest.mark.parametrize("lds_bytes,expect", [(0, 0), (4, 7), (512, 7)])
def test_lds_without_an_allocation_reads_zero_and_drops_writes(arch, lds_bytes, expect, monkeypatch):
    monkeypatch.delenv("GPUTWIN_SANITIZE", raising=False)   # what the hardware does (memcheck reports it)
    from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
    from gputwin.emu.amd.isa import assemble
    from gputwin.emu.memory import AddressSpace
    wave64 = arch == "gfx942"
    lanes = 64 if wave64 else 32
    text = "v_mov_b32 v1, 0\nv_mov_b32 v2, 7\nv_lshlrev_b32 v4, 2, v0\n" + _LDS_ROUND_TRIP[arch] + "\ns_endpgm"
    mem = AddressSpace()
    out = mem.map(0x10000, 4 * lanes)
    out[:] = 0xFF
    run_dispatch(mem, Dispatch(0x1000, code=assemble(text, arch), block=(lanes, 1, 1), wave64=wave64,
                               user_sgprs=(0x10000, 0), lds_bytes=lds_bytes), arch=arch)
    assert out.view(np.uint32).tolist() == [expect] * lanes


def test_lds_b128_read_straddling_the_end_of_a_small_allocation_reads_zero(monkeypatch):
    monkeypatch.delenv("GPUTWIN_SANITIZE", raising=False)   # what the hardware does (memcheck reports it)
    from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
    from gputwin.emu.amd.isa import assemble
    from gputwin.emu.memory import AddressSpace
    mem = AddressSpace()
    out = mem.map(0x10000, 16 * 32)
    out[:] = 0xFF
    text = ("v_mov_b32 v1, 0\nds_load_b128 v[2:5], v1\nv_lshlrev_b32 v6, 4, v0\n"
            "global_store_b128 v6, v[2:5], s[0:1]\ns_endpgm")
    run_dispatch(mem, Dispatch(0x1000, code=assemble(text, "gfx1100"), block=(32, 1, 1), user_sgprs=(0x10000, 0),
                               lds_bytes=4))
    assert not out.any()   # 16 bytes at 0 do not fit 4 bytes of LDS: the whole access reads 0


def test_address_plus_offset_wraps_at_32_bits():
    # clang folds a constant into a negative base (LDS[63 - l] as base -4l, offset:252): the sum is 32-bit
    g = run("""ds_store_b32 v1, v2
ds_load_b32 v3, v4 offset:124
ds_store_b32 v5, v2 offset:8""", n=1, lds_bytes=256,
            vgprs={1: 4 * LANE, 2: 1000 + LANE, 4: (-4 * LANE.astype(np.int64)) & 0xFFFFFFFF, 5: 0xFFFFFFF8})
    assert (g.vgpr(3) == 1000 + (31 - LANE)).all()
    # 0xFFFFFFF8 + 8 wraps to address 0 (every lane stores there; LDS dword 0 holds one lane's value)
    g2 = run("ds_store_b32 v5, v2 offset:8\nds_load_b32 v6, v7", n=1, lds_bytes=256,
             vgprs={2: 1000 + LANE, 5: 0xFFFFFFF8, 7: 0})
    assert np.isin(g2.vgpr(6), 1000 + LANE).all()
