"""MUBUF through a V#: raw and structured addressing, per-dword range checks by OOB_SELECT (loads read 0,
stores and atomics are dropped), soffset outside the check, EXEC masking, atomics, unmodelled forms."""
from __future__ import annotations

import numpy as np
import pytest

from gputwin.emu.amd.standalone import Arena
from gputwin.errors import IllegalInstruction, MemoryFault
from tests.emu.amd.helpers import run

LANE = np.arange(32, dtype=np.uint32)
RAW, STRUCT, DISABLED, STRUCT_OFF = 3, 1, 2, 0


def vsharp(base, num_records, stride=0, oob=RAW, swizzle=0, add_tid=0):
    return {4: base & 0xFFFFFFFF, 5: (base >> 32) & 0xFFFF | stride << 16 | swizzle << 30,
            6: num_records, 7: oob << 28 | add_tid << 23}


def setup(words=256):
    arena = Arena()
    va = arena.alloc(4 * words, np.arange(words, dtype=np.uint32) + 1000)
    return arena, va


def test_raw_load_reads_zero_past_num_records_and_soffset_is_not_checked():
    arena, va = setup()
    s = vsharp(va, 64) | {3: 8}
    g = run("buffer_load_b32 v2, v1, s[4:7], s3 offen offset:4", n=1, sgprs=s, vgprs={1: 4 * LANE},
            mem=arena.mem)
    inside = 4 * LANE + 4 + 4 <= 64                 # offset + inst offset, without soffset
    want = np.where(inside, 1000 + (4 * LANE + 4 + 8) // 4, 0)
    assert (g.vgpr(2)[0] == want).all()


def test_multi_dword_loads_check_each_dword():
    arena, va = setup()
    g = run("buffer_load_b128 v[4:7], v1, s[4:7], 0 offen", n=1, sgprs=vsharp(va, 4 * 6), vgprs={1: 16 * (LANE % 2)},
            mem=arena.mem)
    # lane with offset 0: dwords 0-3 inside; offset 16: dwords 4, 5 inside, 6, 7 past NUM_RECORDS = 24 bytes
    even, odd = [int(g.vgpr(4 + k)[0, 0]) for k in range(4)], [int(g.vgpr(4 + k)[0, 1]) for k in range(4)]
    assert even == [1000, 1001, 1002, 1003] and odd == [1004, 1005, 0, 0]


@pytest.mark.parametrize("oob", [STRUCT, STRUCT_OFF])
def test_structured_index_times_stride_and_index_range(oob):
    arena, va = setup()
    g = run("buffer_load_b32 v3, v[1:2], s[4:7], 0 idxen offen offset:4", n=1,
            sgprs=vsharp(va, 10, stride=12, oob=oob), vgprs={1: LANE, 2: 4 * (LANE % 2)}, mem=arena.mem)
    off = 4 + 4 * (LANE % 2)                        # 4 or 8 bytes into a 12-byte record
    want = np.where(LANE < 10, 1000 + (12 * LANE + off) // 4, 0)
    assert (g.vgpr(3)[0] == want).all()


def test_structured_with_offset_checks_the_offset_against_the_stride():
    arena, va = setup()
    g = run("buffer_load_b32 v3, v[1:2], s[4:7], 0 idxen offen", n=1,
            sgprs=vsharp(va, 100, stride=8, oob=STRUCT_OFF), vgprs={1: 1, 2: 4 * (LANE % 4)}, mem=arena.mem)
    want = np.where(4 * (LANE % 4) + 4 <= 8, 1000 + (8 + 4 * (LANE % 4)) // 4, 0)
    assert (g.vgpr(3)[0] == want).all()


@pytest.mark.parametrize("records", [0, 1])
def test_oob_select_2_checks_only_that_num_records_is_not_zero(records):
    # Mesa's ac_build_buffer_descriptor: OOB_SELECT 2 is out of range exactly when NUM_RECORDS == 0
    arena, va = setup()
    g = run("buffer_load_b32 v2, v1, s[4:7], 0 offen", n=1, sgprs=vsharp(va, records, oob=DISABLED),
            vgprs={1: 4 * LANE}, mem=arena.mem)
    assert (g.vgpr(2)[0] == (1000 + LANE if records else 0)).all()


def test_stores_drop_out_of_range_dwords_and_masked_lanes():
    arena, va = setup()
    ex = np.ones((1, 32), bool)
    ex[0, 3] = False
    s = vsharp(va, 100)                                       # b64 stores: 100 bytes of records
    s.update({k + 4: v for k, v in vsharp(va, 540).items()})  # b16 stores: 540 bytes
    run("buffer_store_b64 v[2:3], v1, s[4:7], 0 offen\nbuffer_store_b16 v2, v4, s[8:11], 0 offen offset:512",
        n=1, sgprs=s, vgprs={1: 8 * LANE, 2: 7 + LANE, 3: 70 + LANE, 4: 2 * LANE}, exec_mask=ex, mem=arena.mem)
    words = arena.array(va, np.uint32, 256)
    for lane in range(32):                                    # lane 12: only its first dword fits
        lo, hi = words[2 * lane], words[2 * lane + 1]
        ok = lane != 3
        assert lo == (7 + lane if ok and 8 * lane + 4 <= 100 else 1000 + 2 * lane)
        assert hi == (70 + lane if ok and 8 * lane + 8 <= 100 else 1001 + 2 * lane)
    halves = arena.array(va + 512, np.uint16, 64)
    for lane in range(32):                                    # lanes 0..13 fit below 540 bytes
        kept = np.array([1000 + (512 + 2 * lane) // 4], np.uint32).view(np.uint16)[lane % 2]
        assert halves[lane] == (7 + lane if lane != 3 and 512 + 2 * lane + 2 <= 540 else kept)


def test_atomics_serialise_return_with_glc_and_skip_out_of_range_lanes():
    arena, va = setup()
    g = run("""buffer_atomic_add_u32 v2, v1, s[4:7], 0 offen glc
buffer_atomic_cmpswap_b32 v[4:5], v3, s[4:7], 0 offen offset:4 glc""", n=1, sgprs=vsharp(va, 8),
            vgprs={1: np.where(LANE < 20, 0, 8), 2: 1 + LANE, 3: 0, 4: 500 + LANE,
                   5: np.r_[1001, 500 + np.arange(31)].astype(np.uint32)}, mem=arena.mem)
    added = (1 + LANE[:20]).astype(np.int64)
    assert arena.array(va, np.uint32, 1)[0] == 1000 + added.sum()
    assert (g.vgpr(2)[0, :20] == 1000 + np.r_[0, np.cumsum(added)[:-1]]).all()
    assert (g.vgpr(2)[0, 20:] == 0).all()                                     # out of range: returns 0
    # cmpswap chain: lane i expects the value lane i-1 stored (lane 0 expects 1001, the initial value)
    assert arena.array(va + 4, np.uint32, 1)[0] == 531 and (g.vgpr(4)[0] == np.r_[1001, 500 + LANE[:-1]]).all()


def test_unmapped_in_range_address_faults_with_its_wave():
    arena, va = setup()
    with pytest.raises(MemoryFault, match="read of 4 bytes at an unmapped address") as e:
        run("buffer_load_b32 v2, v1, s[4:7], 0 offen", n=2, sgprs=vsharp(va, 1 << 30),
            vgprs={1: np.where(np.arange(2)[:, None] == 1, 1 << 20, 0) + 0 * LANE}, mem=arena.mem)
    assert e.value.address == va + (1 << 20) and e.value.wave == 1


@pytest.mark.parametrize("text,what", [
    ("buffer_load_b32 v2, v1, s[4:7], 0 offen", "SWIZZLE"),
    ("buffer_load_b32 v2, v1, s[8:11], 0 offen", "ADD_TID"),
    ("buffer_load_b32 v[2:3], v1, s[4:7], 0 offen tfe", "tfe"),
    ("tbuffer_load_format_x v2, v1, s[4:7], 0 format:[BUF_FMT_32_FLOAT] offen", "tbuffer"),
])
def test_unmodelled_buffer_forms_fail_closed(text, what):
    arena, va = setup()
    s = vsharp(va, 64, swizzle=1)
    s.update({k + 4: v for k, v in vsharp(va, 64, add_tid=1).items()})
    with pytest.raises(IllegalInstruction, match=what):
        run(text, n=1, sgprs=s, vgprs={1: 0}, mem=arena.mem)


# --- buffer_load/store_format_*: typed by the V#'s FORMAT (mtbuf.py) ---------------------------------
IDENTITY = 4 | 5 << 3 | 6 << 6 | 7 << 9          # DST_SEL_X..W = X, Y, Z, W


def typed_vsharp(base, num_records, fmt, dst_sel=IDENTITY):
    s = vsharp(base, num_records)
    s[7] |= fmt << 12 | dst_sel
    return s


def test_format_loads_take_the_format_of_each_waves_vsharp():
    # wave 0: BUF_FMT_16_16_UNORM (23), wave 1: BUF_FMT_16_16_SINT (28), on the same bytes
    arena, va = setup()
    rows = {k: [a, b] for k, (a, b) in enumerate(zip(typed_vsharp(va, 1024, 23).values(),
                                                      typed_vsharp(va, 1024, 28).values()), start=4)}
    g = run("buffer_load_format_xyzw v[4:7], v1, s[4:7], 0 offen", n=2, sgprs=rows, vgprs={1: 4 * LANE},
            mem=arena.mem)
    word = np.arange(32, dtype=np.uint32) + 1000
    lo, hi = (word & 0xFFFF).astype(np.float64), (word >> 16).astype(np.float64)
    assert np.array_equal(g.vgpr(4)[0], (lo / 65535).astype(np.float32).view(np.uint32))
    assert np.array_equal(g.vgpr(5)[0], (hi / 65535).astype(np.float32).view(np.uint32))
    assert (g.vgpr(7)[0] == 0x3F800000).all() and (g.vgpr(7)[1] == 1).all()     # w: 1.0 vs integer 1
    assert np.array_equal(g.vgpr(4)[1], (word & 0xFFFF).astype(np.int16).astype(np.int32).view(np.uint32))
    assert not g.vgpr(6).any()


def test_format_store_writes_32_bit_components_and_swizzled_selects_fail_closed():
    arena, va = setup()
    g = run("buffer_store_format_xy v[2:3], v1, s[4:7], 0 offen", n=1, sgprs=typed_vsharp(va, 1024, 50),
            vgprs={1: 8 * LANE, 2: LANE + 7, 3: LANE + 9}, mem=arena.mem)     # BUF_FMT_32_32_FLOAT
    got = arena.array(va, np.uint32, 64)
    assert np.array_equal(got[0::2], LANE + 7) and np.array_equal(got[1::2], LANE + 9)
    with pytest.raises(IllegalInstruction, match="DST_SEL 0x0 other than X, Y, Z, W"):
        run("buffer_load_format_x v2, v1, s[4:7], 0 offen", n=1, sgprs=typed_vsharp(va, 64, 22, dst_sel=0),
            vgprs={1: 0}, mem=arena.mem)


def test_gfx942_format_loads_read_data_and_num_format_from_the_vsharp():
    from tests.emu.amd.test_gfx942_ops import run as run942
    raw = (np.arange(64, dtype=np.uint32) * 2654435761).astype(np.uint32)
    w3 = 10 << 15 | 0 << 12 | IDENTITY                   # DATA_FORMAT 8_8_8_8, NUM_FORMAT UNORM
    body = f"""s_mov_b32 s4, s0
s_mov_b32 s5, s1
s_mov_b32 s6, 256
s_mov_b32 s7, {w3:#x}
buffer_load_format_xyzw v[4:7], v1, s[4:7], 0 offen
s_waitcnt vmcnt(0)
global_store_dword v1, v4, s[2:3]
global_store_dword v1, v7, s[2:3] offset:256"""
    out = run942(body, raw, 2)
    assert np.array_equal(out[0], ((raw & 0xFF) / 255.0).astype(np.float32).view(np.uint32))
    assert np.array_equal(out[1], ((raw >> 24) / 255.0).astype(np.float32).view(np.uint32))


# --- gfx942: GFX9 range checks (CDNA3 ISA guide, "Range Checking"): raw by the component's first byte, ---
# --- structured by index only, format instructions all or nothing ----------------------------------------
def _gfx942(body: str, records: int, stride: int = 0, rows: int = 4, w3: int = 0):
    from tests.emu.amd.test_gfx942_ops import run as run942
    words = (np.arange(64 * 4, dtype=np.uint32) + 1000)
    head = f"""s_mov_b32 s4, s0
s_or_b32 s5, s1, {stride << 16 | 1 << 30:#x}
s_mov_b32 s6, {records}
s_mov_b32 s7, {w3:#x}
"""
    return run942(head + body + "\ns_waitcnt vmcnt(0)", words, rows), words


def test_gfx942_raw_loads_check_each_dwords_first_byte_against_num_records():
    # V# bit 62 (cache swizzle, a cache hint on GFX9) is set: it must not change the addressing
    out, words = _gfx942("""buffer_load_dword v2, v1, s[4:7], 0 offen
v_lshlrev_b32_e32 v6, 2, v1
buffer_load_dwordx4 v[8:11], v6, s[4:7], 0 offen
global_store_dword v1, v2, s[2:3]
global_store_dword v1, v8, s[2:3] offset:256
global_store_dword v1, v10, s[2:3] offset:512
global_store_dword v1, v11, s[2:3] offset:768""", records=41)
    lane = np.arange(64)
    assert np.array_equal(out[0], np.where(4 * lane < 41, words[lane], 0))      # lane 10: dword at 40 < 41 is read
    for row, k in ((1, 0), (2, 2), (3, 3)):                                   # dwordx4 at 16 * lane, per dword
        assert np.array_equal(out[row], np.where(16 * lane + 4 * k < 41, words[4 * lane + k], 0)), k


def test_gfx942_stores_drop_dwords_past_num_records_and_atomics_check_their_start():
    out, words = _gfx942("""v_add_u32_e32 v2, 7, v0
v_add_u32_e32 v3, 70, v0
v_lshlrev_b32_e32 v6, 1, v1
buffer_store_dwordx2 v[2:3], v6, s[4:7], 0 offen
s_waitcnt vmcnt(0)
v_mov_b32_e32 v4, 5
buffer_atomic_add v4, v1, s[4:7], 0 offen offset:512 sc0
s_waitcnt vmcnt(0)
buffer_load_dword v5, v1, s[4:7], 0 offen
buffer_load_dword v7, v1, s[4:7], 0 offen offset:256
buffer_load_dword v8, v1, s[4:7], 0 offen offset:512
s_waitcnt vmcnt(0)
global_store_dword v1, v5, s[2:3]
global_store_dword v1, v7, s[2:3] offset:256
global_store_dword v1, v8, s[2:3] offset:512
global_store_dword v1, v4, s[2:3] offset:768""", records=4 * 150 + 1)
    lane = np.arange(64)
    mem = words.copy()
    for k in (0, 1):                                   # the store's dword k of lane l sits at byte 8 l + 4 k
        at = 8 * lane + 4 * k
        keep = at < 601
        mem[(at // 4)[keep]] = ((7 if k == 0 else 70) + lane)[keep]
    inside = 512 + 4 * lane < 601                     # atomic: lanes whose dword starts inside
    after = np.where(inside, mem[128 + lane] + 5, mem[128 + lane])
    assert np.array_equal(out[0], np.where(4 * lane < 601, mem[lane], 0))
    assert np.array_equal(out[1], np.where(256 + 4 * lane < 601, mem[64 + lane], 0))
    assert np.array_equal(out[2], np.where(inside, after, 0))
    assert np.array_equal(out[3], np.where(inside, mem[128 + lane], 0))     # glc: the pre-op value, 0 outside


def test_gfx942_structured_checks_the_index_only_and_format_loads_all_or_nothing():
    out, words = _gfx942("""buffer_load_dword v2, v[0:1], s[4:7], 0 idxen offen offset:8
s_mov_b32 s7, 0
v_lshlrev_b32_e32 v6, 1, v1
tbuffer_load_format_xy v[8:9], v6, s[4:7], dfmt:11, nfmt:4, 0 offen
buffer_load_dwordx2 v[10:11], v6, s[4:7], 0 offen
global_store_dword v1, v2, s[2:3]
global_store_dword v1, v9, s[2:3] offset:256
global_store_dword v1, v11, s[2:3] offset:512""", records=10, stride=12, rows=3)
    lane = np.arange(64)
    # structured: index = lane < 10 records of 12 bytes; the offset (4 lane + 8) may exceed the stride
    assert np.array_equal(out[0], np.where(lane < 10, words[(12 * lane + 4 * lane + 8) // 4], 0))
    # raw with NUM_RECORDS = 10 bytes: lane 1's element starts at 8 < 10, so its y (at 12) is read too;
    # the dwordx2 load checks y on its own and reads 0 there
    assert np.array_equal(out[1], np.where(8 * lane < 10, words[2 * lane + 1], 0))
    assert np.array_equal(out[2], np.where(8 * lane + 4 < 10, words[2 * lane + 1], 0))


def test_gfx942_idxen_with_stride_zero_fails_closed():
    with pytest.raises(IllegalInstruction, match="idxen with V# STRIDE 0"):
        _gfx942("buffer_load_dword v2, v[0:1], s[4:7], 0 idxen offen", records=10)


# --- gfx12: OOB_SELECT 3 reduces NUM_RECORDS by soffset (RDNA4 guide, "Buffer Out Of Bounds Selection") -----
@pytest.mark.parametrize("oob", [RAW, STRUCT])
def test_gfx1201_raw_mode_counts_soffset_against_num_records(oob):
    from tests.emu.amd.test_gfx12 import run12
    arena, va = setup()
    g = run12("buffer_load_b32 v2, v1, s[4:7], s3 offen offset:4\ns_wait_loadcnt 0", n=1,
              sgprs=vsharp(va, 64, oob=oob) | {3: 8}, vgprs={1: 4 * LANE}, mem=arena.mem)
    inside = 8 + 4 * LANE + 4 + 4 <= 64 if oob == RAW else np.ones(32, bool)   # mode 1: index 0 < 64
    assert (g.vgpr(2)[0] == np.where(inside, 1000 + (4 * LANE + 4 + 8) // 4, 0)).all()


def test_gfx1201_typed_store_is_all_or_nothing_with_soffset():
    from tests.emu.amd.test_gfx12 import run12
    arena, va = setup()
    run12("tbuffer_store_format_xy v[2:3], v1, s[4:7], s3 format:[BUF_FMT_32_32_UINT] offen\ns_wait_storecnt 0",
          n=1, sgprs=vsharp(va, 100) | {3: 8}, vgprs={1: 8 * LANE, 2: 7 + LANE, 3: 70 + LANE}, mem=arena.mem)
    words = arena.array(va, np.uint32, 256)
    for lane in range(32):                      # the element (8 bytes) must end by 100 - soffset = 92: lane 11 not
        ok = 8 * lane + 8 <= 92
        assert words[2 + 2 * lane] == (7 + lane if ok else 1002 + 2 * lane), lane
        assert words[3 + 2 * lane] == (70 + lane if ok else 1003 + 2 * lane), lane
