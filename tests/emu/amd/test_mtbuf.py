"""MTBUF (mtbuf.py): tbuffer loads/stores typed by the FORMAT field, against values computed here from the
buffer bytes (numpy views for the integer/float widening); range checks per component; unmodelled
formats fail closed. Syntax and format names: llvm-mc-19 -mcpu=gfx1100."""
from __future__ import annotations

import numpy as np
import pytest

from gputwin.emu.amd.standalone import Arena
from gputwin.errors import IllegalInstruction
from tests.emu.amd.helpers import run
from tests.emu.amd.test_mubuf import typed_vsharp, vsharp

LANE = np.arange(32, dtype=np.uint32)


def _buffer(data: bytes):
    arena = Arena()
    return arena, arena.alloc(len(data), np.frombuffer(data, np.uint8))


@pytest.mark.parametrize("fmt,dtype", [("16_16_SINT", np.int16), ("16_16_UINT", np.uint16), ("8_8_SINT", np.int8),
                                        ("8_8_UINT", np.uint8)])
def test_integer_formats_extend_and_fill_missing_components(fmt, dtype):
    rng = np.random.default_rng(71)
    raw = rng.integers(0, 256, 1024, dtype=np.uint8).tobytes()
    arena, va = _buffer(raw)
    size = np.dtype(dtype).itemsize
    g = run(f"tbuffer_load_format_xyzw v[4:7], v1, s[4:7], 0 format:[BUF_FMT_{fmt}] offen", n=1,
            sgprs=vsharp(va, 1024), vgprs={1: 4 * LANE + 1}, mem=arena.mem)
    comps = np.frombuffer(raw, np.uint8)
    for c in range(2):
        at = 4 * LANE + 1 + c * size
        vals = np.array([int(np.frombuffer(comps[a:a + size].tobytes(), dtype)[0]) for a in at], np.int64)
        assert np.array_equal(g.vgpr(4 + c)[0], (vals & 0xFFFFFFFF).astype(np.uint32)), c
    assert not g.vgpr(6).any() and (g.vgpr(7) == 1).all()          # z = 0, w = 1 for integer formats


def test_f16_format_converts_exactly_and_w_is_one_point_zero():
    vals = np.array([1.5, -0.0, 6.1e-5, 65504.0, np.inf, np.nan] * 11, np.float16)[:64]
    vals.view(np.uint16)[5] = 0x7D01                                  # a signalling NaN: quieted, payload kept
    arena, va = _buffer(vals.tobytes())
    g = run("tbuffer_load_format_xyzw v[4:7], v1, s[4:7], 0 format:[BUF_FMT_16_16_FLOAT] offen", n=1,
            sgprs=vsharp(va, 128), vgprs={1: 4 * LANE}, mem=arena.mem)
    x, y = vals[0::2].astype(np.float32).view(np.uint32), vals[1::2].astype(np.float32).view(np.uint32)
    assert np.array_equal(g.vgpr(4)[0], x) and np.array_equal(g.vgpr(5)[0, 3:], y[3:])
    assert g.vgpr(5)[0, 2] == 0x7F800000 | 0x101 << 13 | 0x400000    # 0x7D01: payload << 13, quiet bit set
    assert (g.vgpr(7) == 0x3F800000).all() and not g.vgpr(6).any()


def test_32bit_formats_round_trip_and_range_check_the_whole_element():
    # RDNA4 guide: "for typed-buffer, if any component of the thread is out of bounds, the whole thread is"
    arena, va = _buffer(np.arange(64, dtype=np.uint32).tobytes())
    g = run("""tbuffer_store_format_xyz v[2:4], v1, s[4:7], 0 format:[BUF_FMT_32_32_FLOAT] offen
tbuffer_load_format_xyz v[8:10], v1, s[4:7], 0 format:[BUF_FMT_32_32_32_UINT] offen""", n=1,
            sgprs=vsharp(va, 8 * 12 + 4), vgprs={1: 8 * LANE, 2: 1000 + LANE, 3: 2000 + LANE, 4: 3000 + LANE},
            mem=arena.mem)
    mem = arena.array(va, np.uint32, 64)
    for lane in range(32):
        stored = 8 * lane + 8 <= 100                    # NUM_RECORDS = 100 bytes; lane 12 (x fits, y not): nothing
        assert mem[2 * lane] == (1000 + lane if stored else 2 * lane)
        assert mem[2 * lane + 1] == (2000 + lane if stored else 2 * lane + 1)   # z: not in a 2-component format
    got = np.stack([g.vgpr(8 + c)[0] for c in range(3)])
    for lane in range(32):
        loaded = 8 * lane + 12 <= 100
        for c in range(3):
            assert got[c, lane] == (mem[2 * lane + c] if loaded else 0), (lane, c)


@pytest.mark.parametrize("text,what", [
    ("tbuffer_store_format_x v2, v1, s[4:7], 0 format:[BUF_FMT_10_11_11_FLOAT] offen", "packed format BUF_FMT_10"),
    ("tbuffer_store_format_x v2, v1, s[4:7], 0 format:[BUF_FMT_2_10_10_10_UNORM] offen", "packed format BUF_FMT_2_"),
    ("tbuffer_load_format_x v2, v1, s[4:7], 0 format:[BUF_FMT_11_11_10_FLOAT] offen", "BUF_FMT_11_11_10_FLOAT"),
    ("tbuffer_store_format_x v2, v1, s[4:7], 0 format:[BUF_FMT_10_10_10_2_UINT] offen", "BUF_FMT_10_10_10_2_UINT"),
    ("tbuffer_load_d16_format_x v2, v1, s[4:7], 0 format:[BUF_FMT_32_UINT] offen", "32-bit integer format"),
    ("tbuffer_store_d16_format_xy v2, v1, s[4:7], 0 format:[BUF_FMT_32_32_SINT] offen", "32-bit integer format"),
])
def test_unmodelled_packed_formats_packed_stores_and_d16_with_32_bit_integers_fail_closed(text, what):
    arena, va = _buffer(bytes(256))
    with pytest.raises(IllegalInstruction, match=what):
        run(text, n=1, sgprs=vsharp(va, 256), mem=arena.mem)


def _norm_reference(raw: np.ndarray, kind: str, bits: int, dtype=np.float32) -> np.ndarray:
    """Bits (of `dtype`: f32, or f16 for d16 loads) of each component by the formula, rounded once with
    Python's exact fractions: nearest, ties to even; past f16's largest finite + half an ulp, inf."""
    from fractions import Fraction
    top = (1 << (bits - 1)) - 1
    signed = raw.astype(np.int64) - ((raw.astype(np.int64) >> (bits - 1)) << bits)
    vals = {"UNORM": [Fraction(int(v), 2 * top + 1) for v in raw],
            "SNORM": [max(Fraction(int(v), top), Fraction(-1)) for v in signed],
            "USCALED": [Fraction(int(v)) for v in raw], "SSCALED": [Fraction(int(v)) for v in signed]}[kind]
    out, udt = [], np.uint32 if dtype == np.float32 else np.uint16
    for q in vals:
        if dtype == np.float16 and abs(q) >= 65520:
            out.append(np.float16(np.inf if q > 0 else -np.inf).view(udt))
            continue
        lo = dtype(float(q))
        cands = [c for c in (lo, np.nextafter(lo, dtype(np.inf)), np.nextafter(lo, dtype(-np.inf))) if np.isfinite(c)]
        best = min(cands, key=lambda c: (abs(Fraction(float(c)) - q), int(dtype(c).view(udt)) & 1))
        out.append(dtype(best).view(udt))
    return np.array(out, udt)


def _norm_codes(count: int, bits: int):
    """`count` n-bit codes (the range ends and the signed extremes first, then spread out) and a buffer of them."""
    raw = np.arange(count, dtype=np.int64) * (1 if bits == 8 else 1021) % (1 << bits)
    raw[:6] = [0, 1, (1 << bits) - 1, 1 << (bits - 1), (1 << (bits - 1)) + 1, (1 << (bits - 1)) - 1]
    return raw, _buffer(raw.astype(np.uint8 if bits == 8 else np.uint16).tobytes())


@pytest.mark.parametrize("kind", ["UNORM", "SNORM", "USCALED", "SSCALED"])
@pytest.mark.parametrize("bits", [8, 16])
def test_norm_and_scaled_formats_convert_to_f32_by_the_formula(kind, bits):
    comps = "_".join([str(bits)] * 2)
    raw, (arena, va) = _norm_codes(64, bits)
    g = run(f"tbuffer_load_format_xyzw v[4:7], v1, s[4:7], 0 format:[BUF_FMT_{comps}_{kind}] offen", n=1,
            sgprs=vsharp(va, 256), vgprs={1: 2 * bits // 8 * LANE}, mem=arena.mem)
    ref = _norm_reference(raw.astype(np.uint64), kind, bits)
    assert np.array_equal(g.vgpr(4)[0], ref[0::2]) and np.array_equal(g.vgpr(5)[0], ref[1::2])
    assert not g.vgpr(6).any() and (g.vgpr(7) == 0x3F800000).all()  # float results: w = 1.0
    if kind == "SNORM":      # the most negative code clamps to -1.0, like the one above it
        assert g.vgpr(5)[0, 1] == g.vgpr(4)[0, 2] == np.float32(-1.0).view(np.uint32)   # codes -2^(n-1), -(2^(n-1)-1)


_GFX942_RAW = (np.arange(256, dtype=np.uint32) * 2654435761).astype(np.uint32)


def _run942(body: str, rows: int) -> np.ndarray:
    """gfx942 (wave64): `body` with s[4:7] a raw V# over the 1024 bytes of _GFX942_RAW; returns its output rows."""
    from tests.emu.amd.test_gfx942_ops import run as run942
    return run942("s_mov_b32 s4, s0\ns_mov_b32 s5, s1\ns_mov_b32 s6, 1024\ns_mov_b32 s7, 0\n" + body, _GFX942_RAW, rows)


def test_gfx942_tbuffer_reads_dfmt_and_nfmt():
    raw = _GFX942_RAW
    body = """tbuffer_load_format_xy v[2:3], v1, s[4:7], dfmt:5, nfmt:1, 0 offen
tbuffer_load_format_xyzw v[4:7], v1, s[4:7], dfmt:10, nfmt:5, 0 offen
tbuffer_load_format_x v8, v1, s[4:7], dfmt:4, nfmt:7, 0 offen
s_waitcnt vmcnt(0)
global_store_dword v1, v2, s[2:3]
global_store_dword v1, v3, s[2:3] offset:256
global_store_dword v1, v4, s[2:3] offset:512
global_store_dword v1, v7, s[2:3] offset:768
global_store_dword v1, v8, s[2:3] offset:1024"""
    out = _run942(body, 5)
    word = raw[:64]
    h = np.stack([word & 0xFFFF, word >> 16]).astype(np.uint64)
    assert np.array_equal(out[0], _norm_reference(h[0], "SNORM", 16))       # 16_16 SNORM
    assert np.array_equal(out[1], _norm_reference(h[1], "SNORM", 16))
    assert np.array_equal(out[2], (word & 0xFF).astype(np.int8).astype(np.int32).view(np.uint32))   # 8_8_8_8 SINT
    assert np.array_equal(out[3], (word >> 24).astype(np.uint8).astype(np.int8).astype(np.int32).view(np.uint32))
    assert np.array_equal(out[4], word)                                       # 32 FLOAT: the bits


def test_gfx1201_vbuffer_tbuffer_uses_the_same_formats():
    from tests.emu.amd.test_gfx12 import run12
    arena, va = _buffer((np.arange(64, dtype=np.uint32) + 7).tobytes())
    g = run12("tbuffer_load_format_xy v[2:3], v1, s[4:7], null format:[BUF_FMT_32_UINT] offen\ns_wait_loadcnt 0",
              n=1, sgprs=vsharp(va, 256), vgprs={1: 4 * LANE}, mem=arena.mem)
    assert np.array_equal(g.vgpr(2)[0], 7 + LANE) and not g.vgpr(3).any()   # y: past the 1-component format


# --- narrow stores: the VGPR value converted to the format, against a reference in exact rationals ---------
def _f32(x) -> int:
    return int(np.float32(x).view(np.uint32))


def _near(x) -> list[int]:
    """x as f32 and its two f32 neighbours (so a rounding tie is hit from both sides)."""
    b = _f32(x)
    return [b - 1, b, b + 1] if b & 0x7FFFFFFF else [b, b + 1]


def _store_inputs(bits: int, kind: str) -> np.ndarray:
    """128 VGPR values: f32 specials (NaNs, infinities, zeros, denormals), the format's range ends and its
    exact .5 ties, or for integer formats the edges of the narrower range."""
    top = (1 << (bits - 1)) - 1
    if kind in ("UINT", "SINT"):
        ints = [0, 1, 2, top - 1, top, top + 1, 2 * top, 2 * top + 1, 2 * top + 2, -1, -top, -top - 1, -top - 2,
                0x7FFFFFFF, -0x80000000, 0x12345678, 1 << bits, (1 << bits) + 5]
        vals = [v & 0xFFFFFFFF for v in ints]
    else:
        vals = [0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0xFFFFFFFF, 0x7FFFFFFF, 0x7F800000, 0xFF800000,
                0, 0x80000000, 1, 0x007FFFFF, 0x80000001, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF]
        for x in (1.0, -1.0, 0.5, -0.5, 0.25, -0.25, 2.0, -2.0, 1e10, -1e10):
            vals += _near(x)
        scale = {"UNORM": 2 * top + 1, "SNORM": top}.get(kind, 1)
        for k in (0, 1, 2, 3, top - 1, top, top + 1, 2 * top, 2 * top + 1, -1, -2, -top, -top - 1, -top - 2):
            vals += _near((k + 0.5) / scale)                        # just below, at, just above the tie
        if kind == "FLOAT":                                          # f16 overflow, denormal and mantissa ties
            vals += _near(65504.0) + _near(65520.0) + _near(-65520.0) + _near(2.0 ** -24) + _near(2.0 ** -25)
            vals += _near(3 * 2.0 ** -25) + _near(1 + 2.0 ** -11) + _near(1 + 3 * 2.0 ** -11) + _near(2.0 ** -14)
    vals = np.array(vals, np.uint64).astype(np.uint32)
    return np.resize(vals, 128)


def _encode_reference(v: int, bits: int, kind: str) -> int:
    from fractions import Fraction
    top, mask = (1 << (bits - 1)) - 1, (1 << bits) - 1
    if kind == "UINT":
        return min(v, mask)
    if kind == "SINT":
        s = v - (1 << 32) if v >> 31 else v
        return max(-top - 1, min(top, s)) & mask
    f = float(np.uint32(v).view(np.float32))
    if kind == "FLOAT":                              # numpy's own f32 -> f16 (IEEE nearest even, overflow to inf)
        if f != f:
            return -1                                # NaN: checked apart (any quiet NaN of the same sign)
        with np.errstate(over="ignore"):
            return int(np.float32(f).astype(np.float16).view(np.uint16))
    if f != f:
        return 0
    lo, hi, scale = {"UNORM": (0, 1, 2 * top + 1), "SNORM": (-1, 1, top), "USCALED": (0, mask, 1),
                     "SSCALED": (-top - 1, top, 1)}[kind]
    q = Fraction(lo) if f < lo else Fraction(hi) if f > hi else Fraction(f)
    return round(q * scale) & mask                   # Fraction rounds half to even


@pytest.mark.parametrize("bits,kind", [(b, k) for b in (8, 16) for k in ("UNORM", "SNORM", "USCALED", "SSCALED", "UINT",
                                                                         "SINT", "FLOAT") if (b, k) != (8, "FLOAT")])
def test_narrow_stores_convert_like_the_reference(bits, kind):
    vals = _store_inputs(bits, kind)
    size = bits // 8
    arena, va = _buffer(bytes(4 * size * 32 + 64))
    run(f"tbuffer_store_format_xyzw v[2:5], v1, s[4:7], 0 format:[BUF_FMT_{'_'.join([str(bits)] * 4)}_{kind}] offen",
        n=1, sgprs=vsharp(va, 4 * size * 32), vgprs={1: 4 * size * LANE, **{2 + c: vals[c::4] for c in range(4)}},
        mem=arena.mem)
    got = arena.array(va, np.uint8 if bits == 8 else np.uint16, 128).astype(np.int64)
    want = np.array([_encode_reference(int(v), bits, kind) for v in vals])
    nan = want < 0
    assert np.array_equal(got[~nan], want[~nan]), [(hex(int(v)), int(g), int(w)) for v, g, w in
                                                   zip(vals[~nan], got[~nan], want[~nan]) if g != w][:5]
    sign = (vals[nan] >> 31).astype(np.int64) << 15
    assert ((got[nan] & 0x7E00) == 0x7E00).all() and ((got[nan] & 0x8000) == sign).all()   # quiet NaN, sign kept


def test_narrow_stores_write_only_their_bytes_and_only_whole_elements_in_range():
    arena, va = _buffer(bytes(range(256)))
    run("tbuffer_store_format_xy v[2:3], v1, s[4:7], 0 format:[BUF_FMT_8_8_UINT] offen offset:1", n=1,
        sgprs=vsharp(va, 2 * 20 + 2), vgprs={1: 2 * LANE, 2: 0x100 + LANE, 3: LANE}, mem=arena.mem)
    got = arena.array(va, np.uint8, 256)
    want = np.arange(256, dtype=np.uint8)
    for lane in range(32):
        at = 2 * lane + 1
        if at + 2 <= 42:                              # the whole element in range (lane 20: x alone fits: nothing)
            want[at], want[at + 1] = 255, lane        # x: 0x100 + lane saturates to 255
    assert np.array_equal(got, want)


def test_gfx1201_buffer_format_ops_read_the_vsharp_format_at_bits_108_to_113():
    # RDNA4 V# word 3 (ROCR's SQ_BUF_RSRC_WORD3_GFX12): FORMAT [17:12], 6 bits, numbered as on gfx11
    from tests.emu.amd.test_gfx12 import run12
    raw = (np.arange(64, dtype=np.uint32) * 2654435761).astype(np.uint32)
    arena, va = _buffer(raw.tobytes() + bytes(512))
    ident = 4 | 5 << 3 | 6 << 6 | 7 << 9
    s = vsharp(va, 1024)
    s[7] |= 46 << 12 | ident                                       # BUF_FMT_8_8_8_8_UINT
    s.update({k + 4: v for k, v in vsharp(va + 256, 256).items()})
    s[11] |= 57 << 12 | ident                                      # BUF_FMT_16_16_16_16_FLOAT
    halves = np.array([1.0, -2.5, 65520.0, 1e-8], np.float32).view(np.uint32)
    g = run12("""buffer_load_format_xyzw v[4:7], v1, s[4:7], null offen
buffer_load_d16_format_xyz v[14:15], v1, s[4:7], null offen
buffer_store_format_xyzw v[10:13], v2, s[8:11], null offen
s_wait_loadcnt 0
s_wait_storecnt 0""", n=1, sgprs=s, mem=arena.mem,
              vgprs={1: 4 * LANE, 2: 8 * LANE, 15: 0xFFFF0000, **{10 + c: halves[c] for c in range(4)}})
    for c in range(4):
        assert np.array_equal(g.vgpr(4 + c)[0], (raw[:32] >> (8 * c)) & 0xFF), c
    b = [(raw[:32] >> (8 * c)) & 0xFF for c in range(3)]                       # d16: 16-bit integers, packed
    assert np.array_equal(g.vgpr(14)[0], b[0] | b[1] << 16) and np.array_equal(g.vgpr(15)[0], 0xFFFF0000 | b[2])
    stored = arena.array(va + 256, np.uint16, 128).reshape(32, 4)
    assert (stored == np.array([0x3C00, 0xC100, 0x7C00, 0x0000], np.uint16)).all()   # f16: 65520 -> inf, 1e-8 -> 0


# --- d16 forms: 16 bits a component, two per VGPR --------------------------------------------------------
def _fmt_number(name: str) -> int:
    from gputwin.emu.amd.isa.table import load
    return next(v for v, n in load("gfx1100").buf_format.items() if n.strip("[]") == name)


@pytest.mark.parametrize("kind", ["UNORM", "SNORM", "USCALED", "SSCALED"])
@pytest.mark.parametrize("bits", [8, 16])
def test_d16_loads_round_the_formula_once_to_f16_and_keep_unwritten_halves(kind, bits):
    comps = "_".join([str(bits)] * 4)
    raw, (arena, va) = _norm_codes(128, bits)
    s = vsharp(va, 1024)
    s.update({k + 4: v for k, v in typed_vsharp(va, 1024, _fmt_number(f"BUF_FMT_{comps}_{kind}")).items()})
    g = run(f"tbuffer_load_d16_format_xyz v[4:5], v1, s[4:7], 0 format:[BUF_FMT_{comps}_{kind}] offen\n"
            "buffer_load_d16_hi_format_x v6, v1, s[8:11], 0 offen", n=1,       # (only buffer_* has a hi form)
            sgprs=s, vgprs={1: 4 * bits // 8 * LANE, 5: 0xABCD0000 + LANE, 6: 0x1234}, mem=arena.mem)
    ref = _norm_reference(raw.astype(np.uint64), kind, bits, np.float16).astype(np.uint32).reshape(32, 4)
    assert np.array_equal(g.vgpr(4)[0], ref[:, 0] | ref[:, 1] << 16)                      # x | y << 16
    assert np.array_equal(g.vgpr(5)[0], (0xABCD0000 + LANE) & 0xFFFF0000 | ref[:, 2])     # z; high half kept
    assert np.array_equal(g.vgpr(6)[0], ref[:, 0] << 16 | 0x1234)                         # hi: x; low half kept


def test_d16_integer_and_f16_loads_and_the_missing_w():
    raw = (np.arange(64, dtype=np.uint32) * 2654435761).astype(np.uint32)
    arena, va = _buffer(raw.tobytes())
    g = run("""tbuffer_load_d16_format_xyzw v[2:3], v1, s[4:7], 0 format:[BUF_FMT_8_8_SINT] offen
tbuffer_load_d16_format_xyzw v[4:5], v1, s[4:7], 0 format:[BUF_FMT_16_16_FLOAT] offen
tbuffer_load_d16_format_xy v6, v1, s[4:7], 0 format:[BUF_FMT_32_FLOAT] offen""", n=1, sgprs=vsharp(va, 256),
            vgprs={1: 4 * LANE}, mem=arena.mem)
    word = raw[:32]
    b0, b1 = (word & 0xFF).astype(np.int8), ((word >> 8) & 0xFF).astype(np.int8)
    as16 = lambda v: v.astype(np.int16).view(np.uint16).astype(np.uint32)               # noqa: E731
    assert np.array_equal(g.vgpr(2)[0], as16(b0) | as16(b1) << 16)                       # sign-extended to 16 bits
    assert np.array_equal(g.vgpr(3)[0], np.full(32, 1 << 16, np.uint32))                 # z = 0, w = 1
    assert np.array_equal(g.vgpr(4)[0], word) and (g.vgpr(5)[0] == 0x3C000000).all()    # f16 bits as they are; w = 1.0
    with np.errstate(over="ignore"):
        want = word.view(np.float32).astype(np.float16).view(np.uint16).astype(np.uint32)
    nan = np.isnan(word.view(np.float32))
    assert np.array_equal((g.vgpr(6)[0] & 0xFFFF)[~nan], want[~nan]) and not (g.vgpr(6)[0] >> 16).any()
    assert ((g.vgpr(6)[0][nan] & 0x7E00) == 0x7E00).all()


@pytest.mark.parametrize("bits,kind", [(8, "UNORM"), (16, "SNORM"), (8, "SSCALED"), (16, "USCALED"), (8, "UINT"),
                                       (8, "SINT"), (16, "SINT")])
def test_d16_stores_convert_the_16_bit_halves_like_the_reference(bits, kind):
    if kind in ("UINT", "SINT"):
        halves = np.resize(np.array([0, 1, 127, 128, 255, 256, 0x7FFF, 0x8000, 0xFF80, 0xFF7F, 0xFFFF, 0x1234],
                                    np.uint16), 128)
        as32 = halves.astype(np.uint32) if kind == "UINT" else halves.view(np.int16).astype(np.int32).view(np.uint32)
    else:
        specials = [0x7E00, 0xFE00, 0x7C01, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x0001, 0x83FF, 0x3C00, 0xBC00, 0x3800,
                    0xB800, 0x3C01, 0xBC01, 0x7BFF, 0xFBFF, 0x5BF8, 0x57F0, 0x4D00, 0xD808, 0x2C00]
        halves = np.resize(np.array(specials, np.uint16), 128)
        with np.errstate(invalid="ignore"):
            as32 = halves.view(np.float16).astype(np.float32).view(np.uint32)
    size = bits // 8
    arena, va = _buffer(bytes(4 * size * 32))
    packed = halves.astype(np.uint32).reshape(32, 4)
    run(f"tbuffer_store_d16_format_xyzw v[2:3], v1, s[4:7], 0 format:[BUF_FMT_{'_'.join([str(bits)] * 4)}_{kind}] "
        f"offen", n=1, sgprs=vsharp(va, 4 * size * 32), mem=arena.mem,
        vgprs={1: 4 * size * LANE, 2: packed[:, 0] | packed[:, 1] << 16, 3: packed[:, 2] | packed[:, 3] << 16})
    got = arena.array(va, np.uint8 if bits == 8 else np.uint16, 128).astype(np.int64)
    want = np.array([_encode_reference(int(v), bits, kind) for v in as32])
    assert np.array_equal(got, want)


def test_d16_stores_to_f16_formats_copy_the_half_and_hi_takes_the_high_half():
    halves = np.array([0x7D01, 0xFC00, 0x3C00, 0x8001], np.uint16)              # a signalling NaN stays as it is
    arena, va = _buffer(bytes(512))
    s = vsharp(va, 512)
    s.update({k + 4: v for k, v in typed_vsharp(va, 512, _fmt_number("BUF_FMT_16_FLOAT")).items()})
    run("""tbuffer_store_d16_format_xy v2, v1, s[4:7], 0 format:[BUF_FMT_16_16_FLOAT] offen
buffer_store_d16_hi_format_x v3, v1, s[8:11], 0 offen offset:256""", n=1,
        sgprs=s, vgprs={1: 4 * LANE, 2: int(halves[0]) | int(halves[1]) << 16,
                                      3: int(halves[2]) << 16 | int(halves[3])}, mem=arena.mem)
    pairs = arena.array(va, np.uint16, 64).reshape(32, 2)
    assert (pairs == halves[:2]).all()
    assert (arena.array(va + 256, np.uint16, 64).reshape(32, 2)[:, 0] == 0x3C00).all()


def test_gfx942_d16_spellings_format_d16_and_format_d16_hi():
    raw = _GFX942_RAW
    w3 = 2 << 15 | 4 << 12 | 4 | 5 << 3 | 6 << 6 | 7 << 9            # V#: DATA_FORMAT 16, NUM_FORMAT UINT
    body = f"""s_mov_b32 s8, s2
s_mov_b32 s9, s3
s_mov_b32 s10, 1024
s_mov_b32 s11, {w3:#x}
tbuffer_load_format_d16_xyzw v[2:3], v1, s[4:7], dfmt:12, nfmt:0, 0 offen
s_waitcnt vmcnt(0)
global_store_dword v1, v2, s[2:3]
global_store_dword v1, v3, s[2:3] offset:256
buffer_store_format_d16_hi_x v2, v1, s[8:11], 0 offen offset:512"""
    out = _run942(body, 3)
    halves = raw.view(np.uint16).astype(np.uint64)
    lane = np.arange(64)
    ref = _norm_reference(halves, "UNORM", 16, np.float16).astype(np.uint32)    # 16_16_16_16 UNORM at 4 * lane
    x, y, z, w = (ref[2 * lane + k] for k in range(4))
    assert np.array_equal(out[0], x | y << 16) and np.array_equal(out[1], z | w << 16)
    assert np.array_equal(out[2], y)                 # the high half stored as a 16-bit UINT; bytes 2-3 untouched (0)


# --- packed formats (loads): fields from the low bits up, as Mesa lays out R11G11B10 / R10G10B10A2 ----------
def _small_float(v: np.ndarray, mbits: int) -> list:
    """An unsigned 5-bit-exponent float (11-bit: 6 mantissa bits, 10-bit: 5) as a Python float, by the formula."""
    import math
    out = []
    for x in v.tolist():
        e, m = x >> mbits, x & ((1 << mbits) - 1)
        out.append(math.ldexp(m, -14 - mbits) if e == 0 else
                   (math.inf if m == 0 else math.nan) if e == 31 else math.ldexp((1 << mbits) + m, e - 15 - mbits))
    return out


def test_10_11_11_float_loads_every_11_and_10_bit_value_exactly():
    i = np.arange(2048, dtype=np.uint32)
    words = i | (2047 - i) << 11 | (i & 0x3FF) << 22                 # x: every 11-bit value, y reversed, z every 10-bit
    arena, va = _buffer(words.tobytes())
    g = run("tbuffer_load_format_xyzw v[4:7], v1, s[4:7], 0 format:[BUF_FMT_10_11_11_FLOAT] offen", n=64,
            sgprs=vsharp(va, 4 * 2048), vgprs={1: (4 * i).reshape(64, 32)}, mem=arena.mem)
    for reg, field, mbits in ((4, i, 6), (5, 2047 - i, 6), (6, i & 0x3FF, 5)):
        want = np.array(_small_float(field, mbits), np.float32)
        got = g.vgpr(reg).reshape(-1)
        nan = np.isnan(want)
        assert np.array_equal(got[~nan], want[~nan].view(np.uint32)), reg
        assert ((got[nan] & 0xFFC00000) == 0x7FC00000).all()             # NaN: positive, quiet
    assert (g.vgpr(7) == 0x3F800000).all()                                 # no w: 1.0


@pytest.mark.parametrize("kind", ["UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT"])
def test_2_10_10_10_loads_split_the_dword_low_bits_first(kind):
    rng = np.random.default_rng(5)
    words = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    words[:8] = [0, 0xFFFFFFFF, 0x3FF, 0x200, 0x201, 0x1FF, 0x80000000, 0x40000000]
    arena, va = _buffer(words.tobytes())
    g = run(f"tbuffer_load_format_xyzw v[4:7], v1, s[4:7], 0 format:[BUF_FMT_2_10_10_10_{kind}] offen", n=2,
            sgprs=vsharp(va, 256), vgprs={1: (4 * np.arange(64, dtype=np.uint32)).reshape(2, 32)}, mem=arena.mem)
    for c, (shift, bits) in enumerate(((0, 10), (10, 10), (20, 10), (30, 2))):
        field = (words >> shift) & ((1 << bits) - 1)
        if kind in ("UINT", "SINT"):
            want = field if kind == "UINT" else \
                (field.astype(np.int64) - ((field >> (bits - 1)) << bits).astype(np.int64)).astype(np.uint32)
        else:
            want = _norm_reference(field.astype(np.uint64), kind, bits)
        assert np.array_equal(g.vgpr(4 + c).reshape(-1), want), c


def test_gfx942_packed_dfmt_2_10_10_10_and_10_11_11():
    raw = _GFX942_RAW
    body = """tbuffer_load_format_xyzw v[2:5], v1, s[4:7], dfmt:9, nfmt:0, 0 offen
tbuffer_load_format_xyz v[6:8], v1, s[4:7], dfmt:6, nfmt:7, 0 offen
s_waitcnt vmcnt(0)
global_store_dword v1, v5, s[2:3]
global_store_dword v1, v8, s[2:3] offset:256"""
    out = _run942(body, 2)
    word = raw[:64]
    assert np.array_equal(out[0], _norm_reference((word >> 30).astype(np.uint64), "UNORM", 2))   # w: 2 bits / 3
    z = np.array(_small_float((word >> 22) & 0x3FF, 5), np.float32)
    nan = np.isnan(z)
    assert np.array_equal(out[1][~nan], z[~nan].view(np.uint32))
