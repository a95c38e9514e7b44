"""The 32-bit-halves fast paths (valu/fast.py) against Python integer arithmetic, lane by lane: full,
per-wave (broadcast) and uniform operands, carries at the wrap edges, EXEC-masked lanes, wave32/64."""
import operator

import numpy as np
import pytest

from gputwin.emu.amd import cdna3
from gputwin.emu.amd.valu import execute, fast, prepare
from gputwin.emu.amd.wave import compact

from .helpers import C, L, S, V, VCC, fill, group, inst, u64

M32, M64 = (1 << 32) - 1, (1 << 64) - 1
EDGES = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]


def _u32(rng, shape):
    v = rng.integers(0, 1 << 32, shape, dtype=np.uint64).astype(np.uint32)
    v.flat[:len(EDGES)] = EDGES
    return v


def _exec(rng, g, wave64):
    L_ = 64 if wave64 else 32
    ex = rng.integers(0, 4, (g.n, L_)) > 0       # about a quarter of the lanes masked off
    ex[0] = True
    return ex


def _lanes(a, shape):
    return [int(x) for x in np.broadcast_to(np.asarray(a, np.uint64), shape).ravel()]


def _check_vgpr(g, reg, want, old, ex):
    got = g.vgpr(reg).ravel()
    for i, (w, o, e) in enumerate(zip(want, old.ravel(), ex.ravel())):
        assert int(got[i]) == (w if e else int(o)), (reg, i)


def _check_mask(g, idx, want, ex):
    m = g.lane_mask(idx).ravel()
    assert [bool(x) for x in m] == [bool(w) and bool(e) for w, e in zip(want, ex.ravel())]


def _sources(g, rng, src0_kind):
    """v2 = b (per lane, wrap edges) and src0 of the asked kind; returns (a, b, src0) with a as the lanes see it."""
    shape = (g.n, g.lanes)
    b = _u32(rng, shape)
    fill(g, 2, b)
    if src0_kind == "vgpr":
        a = _u32(rng, shape)
        a[:, ::3] = b[:, ::3]                              # equal pairs too
        fill(g, 1, a)
        return a, b, V(1)
    if src0_kind == "per_wave_vgpr":
        a = np.array([[0xFFFFFFFF], [0], [0x80000000]], np.uint32)
        g.set_vgpr(1, a, np.ones(shape, bool))
        return a, b, V(1)
    if src0_kind == "const":
        return np.uint32(5), b, C(133)                     # inline constant 5
    if src0_kind == "literal":
        return np.uint32(0x8000001F), b, L(0x8000001F)
    a = np.array([[0xFFFFFFFF], [1], [0x80000000]], np.uint32) if src0_kind == "sgpr_per_wave" \
        else np.uint32(0xFFFFFFFF)
    g.s[30] = np.broadcast_to(a, (g.n, 1))[:, 0]
    return a, b, S(30)


@pytest.mark.parametrize("wave64", [False, True])
@pytest.mark.parametrize("layout", ["lanes", "per_wave", "uniform_sgpr"])
def test_mad_u64_u32_matches_integer_arithmetic(wave64, layout, rng):
    g = group(3, wave64)
    shape = (g.n, g.lanes)
    if layout == "lanes":                        # every operand differs per lane, carries everywhere
        a, b = _u32(rng, shape), _u32(rng, shape)
        clo, chi = _u32(rng, shape), _u32(rng, shape)
        a[0, 7] = b[0, 7] = clo[0, 7] = M32      # the low carry makes the high dword wrap: 2^64 exactly
        chi[0, 7] = 1
        fill(g, 1, a)
        fill(g, 2, b)
        src0, src1 = V(1), V(2)
    else:                                        # the compiler's global-id form: wg_id * size + tid
        a = np.array([[0xFFFFFFFF], [7], [0x12345]], np.uint32)
        b = np.uint32(0xFFFFFFFF if layout == "per_wave" else 256)
        g.s[15], g.s[2] = a[:, 0], b
        src0, src1 = S(15), S(2)
        clo = _u32(rng, shape)
        chi = np.broadcast_to(np.array([[M32], [0], [1]], np.uint32), shape)
    fill(g, 4, clo)
    g.set_vgpr(5, chi[:, :1] if layout != "lanes" else chi, np.ones(shape, bool))   # stored per wave
    ex = _exec(rng, g, wave64)
    g.set_exec(ex)
    old6, old7 = g.vgpr(6).copy(), g.vgpr(7).copy()
    i = inst("v_mad_u64_u32", "VOP3SD", vdst=V(6, 2), sdst=S(20), src0=src0, src1=src1, src2=V(4, 2))
    assert fast.build(i) is not None
    execute(g, i)
    exact = [x * y + (lo | hi << 32) for x, y, lo, hi in
             zip(_lanes(a, shape), _lanes(b, shape), _lanes(clo, shape), _lanes(chi, shape))]
    _check_vgpr(g, 6, [e & M32 for e in exact], old6, ex)
    _check_vgpr(g, 7, [(e >> 32) & M32 for e in exact], old7, ex)
    _check_mask(g, 20, [e > M64 for e in exact], ex)


@pytest.mark.parametrize("src2", [C(129), L(0xFFFFFFFF)])
def test_mad_u64_u32_with_a_32_bit_constant_addend(src2, rng):
    # collatz's 3n + 1: no carry out is possible, the sum is computed in one uint64 add
    g = group(2)
    a = _u32(rng, (2, 32))
    fill(g, 1, a)
    ex = _exec(rng, g, False)
    g.set_exec(ex)
    old1, old2 = g.vgpr(6).copy(), g.vgpr(7).copy()
    execute(g, inst("v_mad_u64_u32", "VOP3SD", vdst=V(6, 2), sdst=S(20), src0=V(1), src1=C(131), src2=src2))
    c = 1 if src2.kind == "const" else 0xFFFFFFFF
    exact = [x * 3 + c for x in _lanes(a, (2, 32))]
    _check_vgpr(g, 6, [e & M32 for e in exact], old1, ex)
    _check_vgpr(g, 7, [e >> 32 for e in exact], old2, ex)
    _check_mask(g, 20, [False] * 64, ex)


def test_mad_u64_u32_null_sdst_and_unwritten_high_dword():
    g = group(2)
    fill(g, 0, np.arange(64, dtype=np.uint32).reshape(2, 32))
    g.s[15], g.s[2] = [3, 0xFFFFFFFF], 256
    i = inst("v_mad_u64_u32", "VOP3SD", vdst=V(1, 2), sdst=S(124), src0=S(15), src1=S(2), src2=V(0, 2))
    execute(g, i)
    want = np.array([3, 0xFFFFFFFF], np.uint64)[:, None] * np.uint64(256) + \
        np.arange(64, dtype=np.uint64).reshape(2, 32)
    np.testing.assert_array_equal(u64(g, 1), want)


@pytest.mark.parametrize("name", ["v_lshlrev_b64", "v_lshrrev_b64", "v_ashrrev_i64"])
@pytest.mark.parametrize("count", [0, 1, 2, 31, 32, 33, 63, 64 + 3])
def test_64bit_shift_by_constant_matches_integer_arithmetic(name, count, rng):
    g = group(3, True)
    shape = (g.n, g.lanes)
    lo = _u32(rng, shape)
    hi = np.array([[0x80000001], [0x7FFFFFFF], [0]], np.uint32)      # one high dword per wave
    fill(g, 2, lo)
    g.set_vgpr(3, hi, np.ones(shape, bool))
    ex = _exec(rng, g, True)
    g.set_exec(ex)
    old0, old1 = g.vgpr(0).copy(), g.vgpr(1).copy()
    src0 = C(128 + count) if count <= 64 else L(count)
    i = inst(name, vdst=V(0, 2), src0=src0, src1=V(2, 2))
    assert fast.build(i) is not None
    execute(g, i)
    n = count & 63
    want = []
    for x, y in zip(_lanes(lo, shape), _lanes(hi, shape)):
        v = x | y << 32
        if name == "v_lshlrev_b64":
            r = (v << n) & M64
        elif name == "v_lshrrev_b64":
            r = v >> n
        else:
            r = ((v - (1 << 64) if v >> 63 else v) >> n) & M64
        want.append(r)
    _check_vgpr(g, 0, [w & M32 for w in want], old0, ex)
    _check_vgpr(g, 1, [w >> 32 for w in want], old1, ex)


def test_64bit_shift_by_per_lane_count_uses_the_table_path():
    i = inst("v_lshlrev_b64", vdst=V(0, 2), src0=V(4), src1=V(2, 2))
    assert fast.build(i) is None and prepare(i) is not None


CARRY = {  # name -> (subtract, reverse, carry in)
    "v_add_co_u32": (False, False, False), "v_sub_co_u32": (True, False, False),
    "v_subrev_co_u32": (True, True, False), "v_add_co_ci_u32": (False, False, True),
    "v_sub_co_ci_u32": (True, False, True), "v_subrev_co_ci_u32": (True, True, True),
}


@pytest.mark.parametrize("name", sorted(CARRY))
@pytest.mark.parametrize("form", ["VOP2", "VOP3SD"])
@pytest.mark.parametrize("wave64", [False, True])
@pytest.mark.parametrize("src0_kind", ["vgpr", "sgpr_per_wave", "sgpr_uniform", "per_wave_vgpr"])
def test_carry_ops_match_integer_arithmetic(name, form, wave64, src0_kind, rng):
    sub, rev, has_cin = CARRY[name]
    g = group(3, wave64)
    shape = (g.n, g.lanes)
    a, b, src0 = _sources(g, rng, src0_kind)
    cin = rng.integers(0, 2, shape).astype(bool)
    cin_idx = VCC if form == "VOP2" else 40
    g.set_lane_mask(cin_idx, cin)
    sdst = VCC if form == "VOP2" else 44
    ex = _exec(rng, g, wave64)
    g.set_exec(ex)
    old = g.vgpr(0).copy()
    ops = dict(vdst=V(0), sdst=S(sdst), src0=src0, src1=V(2))
    if has_cin:
        ops["src2"] = S(cin_idx)
    i = inst(name, form, **ops)
    assert fast.build(i) is not None
    execute(g, i)
    want, carry = [], []
    for x, y, c in zip(_lanes(a, shape), _lanes(b, shape), cin.ravel()):
        c = int(c) if has_cin else 0
        if rev:
            x, y = y, x
        v = x - y - c if sub else x + y + c
        want.append(v & M32)
        carry.append(v < 0 if sub else v > M32)
    _check_vgpr(g, 0, want, old, ex)
    _check_mask(g, sdst, carry, ex)


def test_carry_in_all_zero_and_carry_out_all_zero_write_zero_masks():
    g = group(2, True)
    fill(g, 1, np.arange(128, dtype=np.uint32).reshape(2, 64))
    g.set_lane_mask(VCC, np.ones((2, 64), bool))
    g.set_lane_mask(40, np.zeros((2, 64), bool))
    g.s[30] = 0x1000
    execute(g, inst("v_add_co_ci_u32", "VOP3SD", vdst=V(0), sdst=S(VCC), src0=S(30), src1=V(1), src2=S(40)))
    np.testing.assert_array_equal(g.vgpr(0), np.arange(128).reshape(2, 64) + 0x1000)
    assert not g.lane_mask(VCC).any() and not g.s[VCC:VCC + 2].any()


def test_dpp_or_clamp_forms_take_the_table_path():
    assert fast.build(inst("v_add_co_u32", "VOP3SD", vdst=V(0), sdst=S(8), src0=V(1), src1=V(2),
                           clamp=True)) is None


@pytest.mark.parametrize("count", [0, 1, 2, 3, 4, 7, 9])
@pytest.mark.parametrize("layout", ["lanes", "small_index", "per_wave_index_uniform_base", "per_wave_base"])
def test_lshl_add_u64_matches_integer_arithmetic(count, layout, rng):
    cdna3._register_valu()                       # the gfx942 table entry, as the CDNA3 handler adds it
    g = group(3, True)                           # gfx942 runs wave64
    shape = (g.n, g.lanes)
    lo = _u32(rng, shape)
    if layout == "lanes":                        # both operands per lane: carries into and out of the high dword
        hi, blo, bhi = _u32(rng, shape), _u32(rng, shape), _u32(rng, shape)
        lo[0, 9], hi[0, 9], blo[0, 9], bhi[0, 9] = M32, M32, 1 << count & M32 or 1, M32   # wraps past 2^64
        fill(g, 2, lo)
        fill(g, 3, hi)
        fill(g, 4, blo)
        fill(g, 5, bhi)
        src2 = V(4, 2)
    elif layout == "small_index":                # no bits cross into the high dword; the base still carries
        lo = rng.integers(0, 1 << 25, shape, dtype=np.uint32)
        hi, bhi = np.uint32(0), _u32(rng, shape)
        blo = rng.integers(0xF0000000, 0xFE000000, shape, dtype=np.uint32)   # max(index) + max(base) fits
        fill(g, 2, lo)
        g.set_vgpr(3, hi, np.ones(shape, bool))
        fill(g, 4, blo)
        fill(g, 5, bhi)
        src2 = V(4, 2)
    else:                                        # the compiler's form: zero-extended index + SGPR base
        hi = np.array([[0], [1], [0x80000000]], np.uint32) if layout == "per_wave_base" else np.uint32(0)
        fill(g, 2, lo)
        g.set_vgpr(3, hi, np.ones(shape, bool))  # stored per wave / uniform
        blo = np.array([[0xFFFFFFF0], [0], [0x80000000]], np.uint32) if layout == "per_wave_base" \
            else np.uint32(0xFFFFFF00)
        bhi = np.array([[M32], [7], [0]], np.uint32) if layout == "per_wave_base" else np.uint32(0x7FFF)
        g.s[40] = np.broadcast_to(blo, (g.n, 1))[:, 0]
        g.s[41] = np.broadcast_to(bhi, (g.n, 1))[:, 0]
        src2 = S(40, 2)
    ex = _exec(rng, g, True)
    g.set_exec(ex)
    old0, old1 = g.vgpr(0).copy(), g.vgpr(1).copy()
    i = inst("v_lshl_add_u64", vdst=V(0, 2), src0=V(2, 2), src1=C(128 + count), src2=src2)
    assert fast.build(i) is not None
    execute(g, i)
    want = [((x | y << 32) << (count & 7)) + (b0 | b1 << 32) & M64 for x, y, b0, b1 in
            zip(_lanes(lo, shape), _lanes(hi, shape), _lanes(blo, shape), _lanes(bhi, shape))]
    _check_vgpr(g, 0, [w & M32 for w in want], old0, ex)
    _check_vgpr(g, 1, [w >> 32 for w in want], old1, ex)


def test_lshl_add_u64_keeps_a_per_wave_high_dword_compact():
    cdna3._register_valu()
    g = group(2, True)
    fill(g, 2, np.arange(128, dtype=np.uint32).reshape(2, 64))
    g.s[6], g.s[7] = [0x1000, 0x2000], [5, 6]
    execute(g, inst("v_lshl_add_u64", vdst=V(0, 2), src0=V(2, 2), src1=C(130), src2=S(6, 2)))
    assert compact(g.vgpr(1)).shape == (2, 1)
    np.testing.assert_array_equal(u64(g, 0), (np.array([5, 6], np.uint64)[:, None] << np.uint64(32)) +
                                  np.array([0x1000, 0x2000], np.uint64)[:, None] + np.arange(128, dtype=np.uint64)
                                  .reshape(2, 64) * np.uint64(4))


def test_lshl_add_u64_by_per_lane_count_uses_the_table_path():
    cdna3._register_valu()
    i = inst("v_lshl_add_u64", vdst=V(0, 2), src0=V(2, 2), src1=V(4), src2=V(6, 2))
    assert fast.build(i) is None and prepare(i) is not None


PLAIN = {"v_mov_b32": lambda a, b: a, "v_and_b32": lambda a, b: a & b, "v_or_b32": lambda a, b: a | b,
         "v_xor_b32": lambda a, b: a ^ b, "v_lshlrev_b32": lambda a, b: (b << (a & 31)) & M32,
         "v_lshrrev_b32": lambda a, b: b >> (a & 31), "v_add_nc_u32": lambda a, b: (a + b) & M32,
         "v_sub_nc_u32": lambda a, b: (a - b) & M32, "v_subrev_nc_u32": lambda a, b: (b - a) & M32}


@pytest.mark.parametrize("name", sorted(PLAIN))
@pytest.mark.parametrize("form", ["e32", "VOP3"])
@pytest.mark.parametrize("src0_kind", ["vgpr", "sgpr_per_wave", "const", "literal"])
def test_plain_32bit_ops_match_integer_arithmetic_under_exec(name, form, src0_kind, rng):
    g = group(3, False)
    shape = (g.n, g.lanes)
    a, b, src0 = _sources(g, rng, src0_kind)
    ex = _exec(rng, g, False)
    g.set_exec(ex)
    old = g.vgpr(0).copy()
    encoding = ("VOP1" if name == "v_mov_b32" else "VOP2") if form == "e32" else "VOP3"
    ops = dict(vdst=V(0), src0=src0) if name == "v_mov_b32" else dict(vdst=V(0), src0=src0, src1=V(2))
    i = inst(name, encoding, **ops)
    assert fast.build(i) is not None
    execute(g, i)
    want = [PLAIN[name](x, y) for x, y in zip(_lanes(a, shape), _lanes(b, shape))]
    _check_vgpr(g, 0, want, old, ex)
    assert np.array_equal(g.vgpr(2), b)                 # a source aliased by v_mov is not disturbed


@pytest.mark.parametrize("name", sorted(fast._COMPARE))
@pytest.mark.parametrize("form", ["VOPC", "VOP3"])
@pytest.mark.parametrize("src0_kind", ["vgpr", "sgpr_per_wave", "const"])
def test_integer_compares_match_the_table_path_and_integer_order(name, form, src0_kind, rng):
    from gputwin.emu.amd.valu import OPS, _fetch, _run_op
    results = []
    for path in ("fast", "table"):
        g = group(3, True)
        a, b, src0 = _sources(g, np.random.default_rng(5), src0_kind)
        g.set_exec(_exec(np.random.default_rng(7), g, True))
        ops = dict(src0=src0, src1=V(2)) | (dict(sdst=S(20)) if form == "VOP3" else {})
        i = inst(name, form, **ops)
        if path == "fast":
            fast.build(i)(g)
        else:
            op = OPS[name]
            _run_op(g, i, op, *_fetch(g, i, op))
        results.append((g.lane_mask(VCC if form == "VOPC" else 20).copy(), g.exec.copy()))
    (fm, ex), (tm, _) = results
    assert np.array_equal(fm, tm)
    signed = name.endswith("i32")
    rel = getattr(operator, name.split("_")[2])
    cast = (lambda v: v - (1 << 32) if v >> 31 else v) if signed else (lambda v: v)     # noqa: E731
    want = [rel(cast(x), cast(y)) for x, y in zip(_lanes(a, fm.shape), _lanes(b, fm.shape))]
    assert [bool(m) for m in fm.ravel()] == [w and bool(e) for w, e in zip(want, ex.ravel())]
