"""DS exchange and compare-store forms with their exact return values, address-before-destination reads,
fields the hardware ignores on no-return forms, and LDS reads with no LDS allocated. References are a
plain-Python model of the LDS (a dict of dwords) following the RDNA3 ISA guide's pseudocode; gfx942's
ds_cmpst takes the compare value first (GFX9 order), gfx11's ds_cmpstore the new value first."""
from __future__ import annotations

import numpy as np
import pytest

from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.standalone import Arena
from tests.emu.amd.helpers import run

LANE = np.arange(32, dtype=np.uint32)
M32 = 0xFFFFFFFF


def _exec(seed):
    m = np.random.default_rng(seed).random((1, 32)) < 0.75
    m[0, 0] = True
    return m


@pytest.mark.parametrize("stride64", [False, True])
def test_storexchg_2addr_rtn_b32_returns_both_old_values(stride64):
    rng = np.random.default_rng(11 + stride64)
    init = rng.integers(0, 1 << 32, 1024, dtype=np.uint32)     # LDS dwords, stored with ds_store_b32
    d0, d1 = rng.integers(0, 1 << 32, 32, dtype=np.uint32), rng.integers(0, 1 << 32, 32, dtype=np.uint32)
    op = "ds_storexchg_2addr_stride64_rtn_b32" if stride64 else "ds_storexchg_2addr_rtn_b32"
    scale = 256 if stride64 else 4
    addr = 4 * LANE if stride64 else 16 * LANE                # no two lanes touch the same dword
    m = _exec(3)
    g = run(f"""ds_store_b32 v20, v21
ds_store_b32 v20, v22 offset:{1 * scale}
ds_store_b32 v20, v23 offset:{2 * scale}
s_mov_b32 exec_lo, s0
{op} v[4:5], v10, v2, v3 offset0:1 offset1:2
s_mov_b32 exec_lo, -1
ds_load_b32 v6, v10 offset:{scale}
ds_load_b32 v7, v10 offset:{2 * scale}""", n=1, lds_bytes=4096, sgprs={0: int(np.packbits(m[0][::-1]).view(">u4")[0])},
            vgprs={20: addr, 21: init[:32], 22: init[32:64], 23: init[64:96], 10: addr, 2: d0, 3: d1,
                   4: 0xDEAD0000 + LANE, 5: 0xBEEF0000 + LANE})
    lds = {}
    for lane in range(32):                                    # the model: what each store left
        a = int(addr[lane])
        lds[a], lds[a + scale], lds[a + 2 * scale] = init[lane], init[32 + lane], init[64 + lane]
    want4, want5 = (0xDEAD0000 + LANE).copy(), (0xBEEF0000 + LANE).copy()
    for lane in range(32):
        if m[0, lane]:
            a = int(addr[lane])
            want4[lane], lds[a + scale] = lds[a + scale], d0[lane]
            want5[lane], lds[a + 2 * scale] = lds[a + 2 * scale], d1[lane]
    assert np.array_equal(g.vgpr(4)[0], want4) and np.array_equal(g.vgpr(5)[0], want5)
    assert np.array_equal(g.vgpr(6)[0], [lds[int(a) + scale] for a in addr])
    assert np.array_equal(g.vgpr(7)[0], [lds[int(a) + 2 * scale] for a in addr])


def test_storexchg_2addr_stride64_rtn_b64_and_destination_over_the_address():
    lo, hi = 0x11110000 + LANE, 0x22220000 + LANE
    g = run("""ds_store_2addr_stride64_b64 v10, v[0:1], v[0:1] offset0:1 offset1:2
ds_storexchg_2addr_stride64_rtn_b64 v[10:13], v10, v[6:7], v[8:9] offset0:1 offset1:2
ds_load_2addr_stride64_b64 v[14:17], v20 offset0:1 offset1:2""", n=1, lds_bytes=4096,
            vgprs={10: 8 * LANE, 20: 8 * LANE, 0: lo, 1: hi, 6: 0xAAAA0000 + LANE, 7: 0xBBBB0000 + LANE,
                   8: 0xCCCC0000 + LANE, 9: 0xDDDD0000 + LANE})
    # VDST v[10:13] overlaps ADDR v10: both addresses are taken before the old values are written
    for reg, want in ((10, lo), (11, hi), (12, lo), (13, hi), (14, 0xAAAA0000 + LANE), (15, 0xBBBB0000 + LANE),
                      (16, 0xCCCC0000 + LANE), (17, 0xDDDD0000 + LANE)):
        assert np.array_equal(g.vgpr(reg)[0], want), reg


def test_load_2addr_whose_destination_overlaps_the_address():
    g = run("""ds_store_2addr_b32 v1, v2, v3 offset0:0 offset1:3
ds_load_2addr_b32 v[1:2], v1 offset0:0 offset1:3
ds_load_2addr_b64 v[5:8], v5 offset0:0 offset1:1""", n=1, lds_bytes=4096,
            vgprs={1: 16 * LANE, 2: 7000 + LANE, 3: 9000 + LANE, 5: 16 * LANE})
    assert np.array_equal(g.vgpr(1)[0], 7000 + LANE) and np.array_equal(g.vgpr(2)[0], 9000 + LANE)
    # b64 at 16*lane: (7000+l, 0) and at 16*lane + 8: (0, 9000+l) - 12 bytes in is offset1:3 of the b32 form
    assert np.array_equal(g.vgpr(5)[0], 7000 + LANE) and np.array_equal(g.vgpr(8)[0], 9000 + LANE)
    assert not g.vgpr(6).any() and not g.vgpr(7).any()


def test_cmpstore_b32_stores_data0_where_memory_equals_data1_and_rtn_returns_old():
    rng = np.random.default_rng(5)
    new, cmp = rng.integers(100, 200, 32, dtype=np.uint32), rng.integers(0, 4, 32, dtype=np.uint32)
    m = _exec(8)
    # ds_cmpstore_b32 v1, v2, v3 offset:8 with VDST = v9 set (a no-return form: the hardware ignores VDST),
    # then the returning form at offset 12 (v4 = old)
    g = run(""".long 0xd8400008, 0x09030201
s_mov_b32 exec_lo, s0
ds_cmpstore_rtn_b32 v4, v1, v2, v3 offset:12
s_mov_b32 exec_lo, -1
ds_load_b32 v5, v1 offset:8
ds_load_b32 v6, v1 offset:12""", n=1, lds_bytes=4096, sgprs={0: int(np.packbits(m[0][::-1]).view(">u4")[0])},
            vgprs={1: 16 * LANE, 2: new, 3: cmp, 4: 0x5A5A5A5A, 9: 0x9999})
    # The preceding memory is 0 at both offsets: the model starts from zeros (fresh LDS)
    want5 = np.where(cmp == 0, new, 0)
    want6 = np.where(m[0] & (cmp == 0), new, 0)
    assert np.array_equal(g.vgpr(5)[0], want5) and np.array_equal(g.vgpr(6)[0], want6)
    assert np.array_equal(g.vgpr(4)[0], np.where(m[0], 0, 0x5A5A5A5A))
    assert (g.vgpr(9) == 0x9999).all()


def test_cmpstore_rtn_b64_compares_all_64_bits():
    g = run("""ds_store_b64 v1, v[10:11]
ds_cmpstore_rtn_b64 v[4:5], v1, v[2:3], v[6:7]
ds_load_b64 v[8:9], v1""", n=1, lds_bytes=4096,
            vgprs={1: 8 * LANE, 10: 5, 11: LANE % 2, 2: 0xAAAA, 3: 0xBBBB, 6: 5, 7: 0})
    match = LANE % 2 == 0                                   # memory (5, l % 2) equals compare (5, 0)
    assert np.array_equal(g.vgpr(4)[0], np.full(32, 5)) and np.array_equal(g.vgpr(5)[0], LANE % 2)
    assert np.array_equal(g.vgpr(8)[0], np.where(match, 0xAAAA, 5))
    assert np.array_equal(g.vgpr(9)[0], np.where(match, 0xBBBB, LANE % 2))


def test_lds_access_with_no_lds_allocated_reads_zero():
    g = run("""ds_load_b32 v2, v1
ds_load_u16 v3, v1
ds_load_2addr_b32 v[4:5], v1 offset1:1
ds_store_b32 v1, v6
ds_add_rtn_u32 v7, v1, v6
ds_storexchg_2addr_rtn_b32 v[8:9], v1, v6, v6 offset1:1""", n=1, lds_bytes=0,
            vgprs={1: 4 * LANE, 2: 1, 3: 1, 4: 1, 5: 1, 6: 3, 7: 1, 8: 1, 9: 1})
    for reg in (2, 3, 4, 5, 7, 8, 9):
        assert not g.vgpr(reg).any(), reg


def test_gfx942_cmpst_takes_the_compare_value_first():
    from tests.emu.amd.test_gfx942_ops import LLVM_MC, OBJCOPY, asm942
    if LLVM_MC is None or OBJCOPY is None:
        pytest.skip("needs llvm-mc-19 and llvm-objcopy-19 to assemble gfx942 snippets")
    code = asm942("""v_lshlrev_b32_e32 v1, 2, v0
v_mov_b32_e32 v2, 7
ds_write_b32 v1, v2
v_and_b32_e32 v3, 1, v0
v_add_u32_e32 v3, 6, v3
v_mov_b32_e32 v4, 0x99
ds_cmpst_rtn_b32 v5, v1, v3, v4
ds_read_b32 v6, v1
s_waitcnt lgkmcnt(0)
v_mov_b32_e32 v7, 0
global_store_dword v1, v5, s[0:1]
global_store_dword v1, v6, s[0:1] offset:256
s_endpgm""")
    arena = Arena()
    out = arena.alloc(512)
    run_dispatch(arena.mem, Dispatch(code_address=0, code=code, block=(64, 1, 1), wave64=True, lds_bytes=256,
                                     user_sgprs=[out & M32, out >> 32]), arch="gfx942")
    got = arena.array(out, np.uint32, 128).reshape(2, 64)
    lane = np.arange(64)
    assert (got[0] == 7).all()                                         # the old value
    assert np.array_equal(got[1], np.where(lane % 2 == 1, 0x99, 7))    # compare (6 + lane % 2) == 7 on odd lanes
