"""Integer VALU operations: wrap, carries into VCC/SDST, clamp saturation, bit manipulation."""
import numpy as np
import pytest

from gputwin.emu.amd.valu import execute

from .helpers import C, L, S, V, VCC, fill, group, inst, u64



def _rand(rng, shape=(2, 32)):
    v = rng.integers(0, 1 << 32, shape, dtype=np.uint64).astype(np.uint32)
    v.flat[:6] = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0xFFFFFFFE]
    return v


def _mask_bits(g, idx):
    return g.lane_mask(idx)


@pytest.fixture
def ab(rng):
    g = group(2)
    a, b = _rand(rng), _rand(rng)[:, ::-1].copy()
    fill(g, 1, a)
    fill(g, 2, b)
    return g, a.astype(np.int64), b.astype(np.int64)


def test_add_co_u32_writes_sum_and_carry_to_sdst(ab):
    g, a, b = ab
    execute(g, inst("v_add_co_u32", "VOP3SD", vdst=V(0), sdst=S(8), src0=V(1), src1=V(2)))
    np.testing.assert_array_equal(g.vgpr(0), (a + b) & 0xFFFFFFFF)
    np.testing.assert_array_equal(_mask_bits(g, 8), (a + b) > 0xFFFFFFFF)


def test_sub_co_and_subrev_co_borrow(ab):
    g, a, b = ab
    execute(g, inst("v_sub_co_u32", "VOP3SD", vdst=V(0), sdst=S(8), src0=V(1), src1=V(2)))
    np.testing.assert_array_equal(g.vgpr(0), (a - b) & 0xFFFFFFFF)
    np.testing.assert_array_equal(_mask_bits(g, 8), a < b)
    execute(g, inst("v_subrev_co_u32", "VOP3SD", vdst=V(3), sdst=S(10), src0=V(1), src1=V(2)))
    np.testing.assert_array_equal(g.vgpr(3), (b - a) & 0xFFFFFFFF)
    np.testing.assert_array_equal(_mask_bits(g, 10), b < a)


def test_add_co_ci_chains_carry_through_vcc_and_masks_inactive_lanes(ab, rng):
    g, a, b = ab
    cin = rng.integers(0, 2, (2, 32)).astype(bool)
    g.set_lane_mask(VCC, cin)
    ex = rng.integers(0, 2, (2, 32)).astype(bool)
    g.set_exec(ex)
    fill_old = g.vgpr(0).copy()
    execute(g, inst("v_add_co_ci_u32", "VOP2", vdst=V(0), sdst=S(VCC), src0=V(1), src1=V(2), src2=S(VCC)))
    s = a + b + cin
    np.testing.assert_array_equal(g.vgpr(0), np.where(ex, s & 0xFFFFFFFF, fill_old))
    np.testing.assert_array_equal(g.lane_mask(VCC), ex & (s > 0xFFFFFFFF))


def test_sub_co_ci_borrow_in(ab, rng):
    g, a, b = ab
    cin = rng.integers(0, 2, (2, 32)).astype(bool)
    g.set_lane_mask(12, cin)
    execute(g, inst("v_sub_co_ci_u32", "VOP3SD", vdst=V(0), sdst=S(14), src0=V(1), src1=V(2), src2=S(12)))
    d = a - b - cin
    np.testing.assert_array_equal(g.vgpr(0), d & 0xFFFFFFFF)
    np.testing.assert_array_equal(g.lane_mask(14), d < 0)


def test_add_nc_clamp_saturates_unsigned_and_signed(ab):
    g, a, b = ab
    execute(g, inst("v_add_nc_u32", vdst=V(0), src0=V(1), src1=V(2), clamp=True))
    np.testing.assert_array_equal(g.vgpr(0), np.minimum(a + b, 0xFFFFFFFF))
    execute(g, inst("v_sub_nc_i32", vdst=V(3), src0=V(1), src1=V(2), clamp=True))
    sa, sb = a - ((a >> 31) << 32), b - ((b >> 31) << 32)
    np.testing.assert_array_equal(g.vgpr(3).view(np.int32), np.clip(sa - sb, -2 ** 31, 2 ** 31 - 1))
    execute(g, inst("v_sub_nc_u32", "VOP2", vdst=V(4), src0=V(1), src1=V(2)))
    np.testing.assert_array_equal(g.vgpr(4), (a - b) & 0xFFFFFFFF)


def test_16bit_add_wraps_and_saturates():
    g = group(1)
    fill(g, 1, np.uint32(0x0000FFF0))
    fill(g, 2, np.uint32(0x00000020))
    execute(g, inst("v_add_nc_u16", vdst=V(0), src0=V(1), src1=V(2)))
    execute(g, inst("v_add_nc_u16", vdst=V(3), src0=V(1), src1=V(2), clamp=True))
    execute(g, inst("v_add_nc_i16", vdst=V(4), src0=V(2), src1=L(0x7FF0), clamp=True))
    assert g.vgpr(0)[0, 0] & 0xFFFF == 0x0010 and g.vgpr(3)[0, 0] & 0xFFFF == 0xFFFF
    assert g.vgpr(4)[0, 0] & 0xFFFF == 0x7FFF


def test_multiplies(ab):
    g, a, b = ab
    sa, sb = a - ((a >> 31) << 32), b - ((b >> 31) << 32)
    execute(g, inst("v_mul_lo_u32", vdst=V(0), src0=V(1), src1=V(2)))
    execute(g, inst("v_mul_hi_u32", vdst=V(3), src0=V(1), src1=V(2)))
    execute(g, inst("v_mul_hi_i32", vdst=V(4), src0=V(1), src1=V(2)))
    execute(g, inst("v_mul_u32_u24", "VOP2", vdst=V(5), src0=V(1), src1=V(2)))
    execute(g, inst("v_mul_i32_i24", "VOP2", vdst=V(6), src0=V(1), src1=V(2)))
    full = [int(x) * int(y) for x, y in zip(a.ravel(), b.ravel())]
    np.testing.assert_array_equal(g.vgpr(0).ravel(), [p & 0xFFFFFFFF for p in full])
    np.testing.assert_array_equal(g.vgpr(3).ravel(), [p >> 32 for p in full])
    sfull = [int(x) * int(y) for x, y in zip(sa.ravel(), sb.ravel())]
    np.testing.assert_array_equal(g.vgpr(4).ravel(), [(p >> 32) & 0xFFFFFFFF for p in sfull])
    u24 = [(int(x) & 0xFFFFFF) * (int(y) & 0xFFFFFF) & 0xFFFFFFFF for x, y in zip(a.ravel(), b.ravel())]
    np.testing.assert_array_equal(g.vgpr(5).ravel(), u24)
    s24 = lambda v: (int(v) & 0xFFFFFF) - ((int(v) & 0x800000) << 1)
    np.testing.assert_array_equal(g.vgpr(6).ravel(), [(s24(x) * s24(y)) & 0xFFFFFFFF for x, y in
                                                      zip(a.ravel(), b.ravel())])


def test_mad_u64_u32_and_i64_i32_carry_out(ab, rng):
    g, a, b = ab
    c = rng.integers(0, 1 << 63, (2, 32), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    fill(g, 4, c)
    execute(g, inst("v_mad_u64_u32", "VOP3SD", vdst=V(6, 2), sdst=S(20), src0=V(1), src1=V(2), src2=V(4, 2)))
    exact = [int(x) * int(y) + int(z) for x, y, z in zip(a.ravel(), b.ravel(), c.ravel())]
    np.testing.assert_array_equal(u64(g, 6).ravel(), [e & (2 ** 64 - 1) for e in exact])
    np.testing.assert_array_equal(g.lane_mask(20).ravel(), [e >> 64 == 1 for e in exact])
    execute(g, inst("v_mad_i64_i32", "VOP3SD", vdst=V(8, 2), sdst=S(22), src0=V(1), src1=V(2), src2=V(4, 2)))
    sg = lambda v, n: int(v) - ((int(v) >> (n - 1)) << n)
    sexact = [sg(x, 32) * sg(y, 32) + sg(z, 64) for x, y, z in zip(a.ravel(), b.ravel(), c.ravel())]
    np.testing.assert_array_equal(u64(g, 8).ravel(), [e & (2 ** 64 - 1) for e in sexact])
    np.testing.assert_array_equal(g.lane_mask(22).ravel(), [(e >> 64) & 1 == 1 for e in sexact])


def test_shifts_32_64_16(ab):
    g, a, b = ab
    execute(g, inst("v_lshlrev_b32", "VOP2", vdst=V(0), src0=V(1), src1=V(2)))
    execute(g, inst("v_ashrrev_i32", "VOP2", vdst=V(3), src0=V(1), src1=V(2)))
    np.testing.assert_array_equal(g.vgpr(0), (b << (a & 31)) & 0xFFFFFFFF)
    sb = b - ((b >> 31) << 32)
    np.testing.assert_array_equal(g.vgpr(3).view(np.int32), sb >> (a & 31))
    fill(g, 4, np.uint64(0x8000000100000003))
    execute(g, inst("v_lshrrev_b64", vdst=V(6, 2), src0=V(1), src1=V(4, 2)))
    execute(g, inst("v_ashrrev_i64", vdst=V(8, 2), src0=V(1), src1=V(4, 2)))
    sh = (a & 63).astype(np.uint64)
    np.testing.assert_array_equal(u64(g, 6), np.uint64(0x8000000100000003) >> sh)
    np.testing.assert_array_equal(u64(g, 8).view(np.int64), np.int64(-0x7FFFFFFEFFFFFFFD) >> sh.astype(np.int64))
    execute(g, inst("v_lshlrev_b16", vdst=V(10), src0=C(128 + 17), src1=L(0x1234)))   # shift by 17 & 15 = 1
    assert g.vgpr(10)[0, 0] & 0xFFFF == 0x2468


def test_bitfield_ops(ab):
    g, a, b = ab
    fill(g, 3, np.arange(64, dtype=np.uint32).reshape(2, 32))     # offsets/widths sweep incl. 0 and >31
    execute(g, inst("v_bfe_u32", vdst=V(0), src0=V(1), src1=V(3), src2=V(3)))
    execute(g, inst("v_bfe_i32", vdst=V(4), src0=V(1), src1=V(3), src2=V(3)))
    o = np.arange(64).reshape(2, 32) & 31
    ufield = (a >> o) & ((1 << o) - 1)
    np.testing.assert_array_equal(g.vgpr(0), ufield)
    sfield = np.where((o > 0) & ((ufield >> np.maximum(o - 1, 0)) & 1 == 1), ufield - (1 << o), ufield)
    np.testing.assert_array_equal(g.vgpr(4).view(np.int32), sfield)
    execute(g, inst("v_bfi_b32", vdst=V(5), src0=V(1), src1=V(2), src2=V(3)))
    np.testing.assert_array_equal(g.vgpr(5), (a & b) | (~a & np.arange(64).reshape(2, 32)) & 0xFFFFFFFF)
    execute(g, inst("v_alignbit_b32", vdst=V(6), src0=V(1), src1=V(2), src2=V(3)))
    np.testing.assert_array_equal(g.vgpr(6), (((a << 32) | b) >> o) & 0xFFFFFFFF)
    execute(g, inst("v_alignbyte_b32", vdst=V(7), src0=V(1), src1=V(2), src2=V(3)))
    np.testing.assert_array_equal(g.vgpr(7), (((a << 32) | b) >> (8 * (o & 3))) & 0xFFFFFFFF)


def test_perm_b32_selectors():
    g = group(1)
    fill(g, 1, np.uint32(0x80_41_02_C3))
    fill(g, 2, np.uint32(0x17_26_B5_04))
    sels = [0x03020100, 0x07060504, 0x0C0D0809, 0x0A0B0E0F, 0x00050207]
    fill(g, 3, np.array(sels * 7, np.uint32)[:32])
    execute(g, inst("v_perm_b32", vdst=V(0), src0=V(1), src1=V(2), src2=V(3)))
    data = (0x8041_02C3 << 32) | 0x1726_B504
    def byte(sel):
        if sel < 8:
            return (data >> (8 * sel)) & 0xFF
        if sel < 12:
            return 0xFF * ((data >> (8 * (2 * (sel - 8) + 1) + 7)) & 1)
        return 0 if sel == 12 else 0xFF
    want = [sum(byte((s >> (8 * k)) & 0xFF) << (8 * k) for k in range(4)) for s in sels]
    np.testing.assert_array_equal(g.vgpr(0)[0, :5], want)


def test_counting_ops():
    vals = np.array([0, 1, 0x80000000, 0x00F00000, 0xFFFFFFFF, 0x40000000, 0xBFFFFFFF, 0x00000100] * 4, np.uint32)
    g = group(1)
    fill(g, 1, vals)
    execute(g, inst("v_clz_i32_u32", "VOP1", vdst=V(0), src0=V(1)))
    execute(g, inst("v_ctz_i32_b32", "VOP1", vdst=V(2), src0=V(1)))
    execute(g, inst("v_cls_i32", "VOP1", vdst=V(3), src0=V(1)))
    execute(g, inst("v_bcnt_u32_b32", vdst=V(4), src0=V(1), src1=C(129)))
    execute(g, inst("v_bfrev_b32", "VOP1", vdst=V(5), src0=V(1)))
    py = [int(v) for v in vals[:8]]
    clz = [32 - v.bit_length() if v else -1 for v in py]
    ctz = [(v & -v).bit_length() - 1 if v else -1 for v in py]
    def cls(v):
        for i in range(1, 32):
            if (v >> (31 - i)) & 1 != v >> 31:
                return i
        return -1
    np.testing.assert_array_equal(g.vgpr(0)[0, :8].view(np.int32), clz)
    np.testing.assert_array_equal(g.vgpr(2)[0, :8].view(np.int32), ctz)
    np.testing.assert_array_equal(g.vgpr(3)[0, :8].view(np.int32), [cls(v) for v in py])
    np.testing.assert_array_equal(g.vgpr(4)[0, :8], [bin(v).count("1") + 1 for v in py])
    np.testing.assert_array_equal(g.vgpr(5)[0, :8], [int(f"{v:032b}"[::-1], 2) for v in py])


def test_mbcnt_counts_lanes_below():
    g = group(2, wave64=True)
    mask = 0xF0F0_1234_8000_0001
    fill(g, 1, np.uint32(mask & 0xFFFFFFFF))
    fill(g, 2, np.uint32(mask >> 32))
    execute(g, inst("v_mbcnt_lo_u32_b32", vdst=V(0), src0=V(1), src1=C(128)))
    execute(g, inst("v_mbcnt_hi_u32_b32", vdst=V(0), src0=V(2), src1=V(0)))
    want = [bin(mask & ((1 << l) - 1)).count("1") for l in range(64)]
    np.testing.assert_array_equal(g.vgpr(0)[1], want)


def test_int_min_max_med3_signedness(ab):
    g, a, b = ab
    execute(g, inst("v_min_i32", "VOP2", vdst=V(0), src0=V(1), src1=V(2)))
    execute(g, inst("v_max_u32", "VOP2", vdst=V(3), src0=V(1), src1=V(2)))
    sa, sb = a - ((a >> 31) << 32), b - ((b >> 31) << 32)
    np.testing.assert_array_equal(g.vgpr(0).view(np.int32), np.minimum(sa, sb))
    np.testing.assert_array_equal(g.vgpr(3), np.maximum(a, b))
    execute(g, inst("v_med3_i32", vdst=V(4), src0=V(1), src1=V(2), src2=C(128)))
    np.testing.assert_array_equal(g.vgpr(4).view(np.int32), np.median(np.stack([sa, sb, 0 * sa]), axis=0))


def test_three_operand_bitwise_and_adds(ab):
    g, a, b = ab
    execute(g, inst("v_add3_u32", vdst=V(0), src0=V(1), src1=V(2), src2=C(129)))
    execute(g, inst("v_lshl_add_u32", vdst=V(3), src0=V(1), src1=C(132), src2=V(2)))
    execute(g, inst("v_xad_u32", vdst=V(4), src0=V(1), src1=V(2), src2=V(2)))
    execute(g, inst("v_and_or_b32", vdst=V(5), src0=V(1), src1=V(2), src2=C(128 + 7)))
    execute(g, inst("v_xnor_b32", "VOP2", vdst=V(6), src0=V(1), src1=V(2)))
    m = 0xFFFFFFFF
    np.testing.assert_array_equal(g.vgpr(0), (a + b + 1) & m)
    np.testing.assert_array_equal(g.vgpr(3), ((a << 4) + b) & m)
    np.testing.assert_array_equal(g.vgpr(4), ((a ^ b) + b) & m)
    np.testing.assert_array_equal(g.vgpr(5), (a & b) | 7)
    np.testing.assert_array_equal(g.vgpr(6), ~(a ^ b) & m)


def test_cndmask_vop2_vcc_and_vop3_sgpr_select(ab, rng):
    g, a, b = ab
    sel = rng.integers(0, 2, (2, 32)).astype(bool)
    g.set_lane_mask(VCC, sel)
    g.set_lane_mask(30, ~sel)
    execute(g, inst("v_cndmask_b32", "VOP2", vdst=V(0), src0=V(1), src1=V(2), src2=S(VCC)))
    np.testing.assert_array_equal(g.vgpr(0), np.where(sel, b, a))
    execute(g, inst("v_cndmask_b32", vdst=V(3), src0=V(1), src1=C(128), src2=S(30)))
    np.testing.assert_array_equal(g.vgpr(3), np.where(~sel, 0, a))
