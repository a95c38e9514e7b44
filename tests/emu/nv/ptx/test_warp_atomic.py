"""Warp operations (shfl modes, clamps and segments, vote, match, redux) and atomics (every op, shared
and global, colliding lanes in thread order, f16/bf16 adds), plus the conformance report."""
import numpy as np
import pytest

from gputwin.cli import main as cli_main
from tests.emu.nv.ptx.oprig import run_op, u32

LANES = np.arange(32)


def _shfl(mode, b, c):
    return run_op(f"mov.u32 %d, %tid.x; mad.lo.u32 %d, %d, 10, 5;\n"
                  f"shfl.sync.{mode}.b32 %d|%p, %d, {b}, {c}, -1;", "u32", "u32", u32(*range(32)))


def test_shfl_modes_with_clamp_and_segments():
    v = LANES * 10 + 5
    assert _shfl("up", 3, 0).tolist() == np.where(LANES >= 3, v[LANES - 3], v).tolist()
    assert _shfl("down", 5, 31).tolist() == np.where(LANES + 5 <= 31, v[np.minimum(LANES + 5, 31)], v).tolist()
    assert _shfl("bfly", 6, 31).tolist() == v[LANES ^ 6].tolist()
    # c = 0x1f1f... segmask 0x18 (8-lane segments), clamp 7: idx 2 reads lane 2 of its segment
    c = (0x18 << 8) | 7
    assert _shfl("idx", 2, c).tolist() == v[(LANES & 0x18) | 2].tolist()
    # down within 8-lane segments: c = (0x18 << 8) | 7; lanes past their segment's end keep their own value
    got = _shfl("down", 3, c).tolist()
    seg_max = (LANES & 0x18) | 7
    assert got == np.where(LANES + 3 <= seg_max, v[np.minimum(LANES + 3, 31)], v).tolist()


def test_vote_match_redux():
    x = u32(*(np.arange(32) % 5))
    body = "setp.eq.u32 %p, %a, 0; vote.sync.ballot.b32 %d, %p, -1;"
    ref = sum(1 << i for i in range(32) if i % 5 == 0)
    assert run_op(body, "u32", "u32", x).tolist() == [ref] * 32
    body = "setp.lt.u32 %p, %a, 5; vote.sync.all.pred %q, %p, -1; selp.u32 %d, 1, 0, %q;"
    assert run_op(body, "u32", "u32", x).tolist() == [1] * 32
    body = "setp.eq.u32 %p, %a, 1; vote.sync.uni.pred %q, %p, -1; selp.u32 %d, 1, 0, %q;"
    assert run_op(body, "u32", "u32", x).tolist() == [0] * 32
    assert run_op("match.any.sync.b32 %d, %a, -1;", "u32", "u32", x).tolist() == \
        [sum(1 << j for j in range(32) if j % 5 == i % 5) for i in range(32)]
    assert run_op("redux.sync.add.u32 %d, %a, -1;", "u32", "u32", x).tolist() == [int(x.sum())] * 32
    assert run_op("redux.sync.max.s32 %d, %a, -1;", "s32", "s32", u32(*(np.arange(32) - 40))).tolist() == \
        [(-9) & 0xFFFFFFFF] * 32




def test_atomics_on_shared_serialise_in_thread_order():
    from gputwin.emu.nv.ptx import load_module
    from tests.emu.nv.ptx.rig import Rig
    text = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 fin)
{
.reg .b32 %r<12>;
.reg .b64 %rd<8>;
.reg .pred %p;
.shared .align 8 .b32 sm[8];
mov.u32 %r0, %tid.x;
mov.u32 %r1, sm;
setp.lt.u32 %p, %r0, 8;
@%p shl.b32 %r2, %r0, 2;
@%p add.u32 %r3, %r1, %r2;
@%p st.shared.u32 [%r3], 5;
bar.sync 0;
atom.shared.inc.u32 %r4, [%r1], 6;
atom.shared.dec.u32 %r5, [%r1+4], 3;
atom.shared.cas.b32 %r6, [%r1+8], %r0, 100;
atom.shared.exch.b32 %r7, [%r1+12], %r0;
atom.shared.max.s32 %r8, [%r1+16], %r0;
atom.shared.add.u32 %r9, [%r1+20], %r0;
bar.sync 0;
ld.param.u64 %rd0, [out];
mul.wide.u32 %rd1, %r0, 24;
add.u64 %rd1, %rd0, %rd1;
st.global.v2.u32 [%rd1], {%r4, %r5};
st.global.v2.u32 [%rd1+8], {%r6, %r7};
st.global.v2.u32 [%rd1+16], {%r8, %r9};
@%p ld.shared.u32 %r10, [%r3];
ld.param.u64 %rd2, [fin];
mul.wide.u32 %rd3, %r0, 4;
add.u64 %rd3, %rd2, %rd3;
@%p st.global.u32 [%rd3], %r10;
ret;
}
"""
    r = Rig()
    out, fin = r.buf(nbytes=24 * 40), r.buf(nbytes=4 * 8)
    r.run(load_module(text), "k", [out, fin], block=(40,))
    got = r.get(out, np.uint32, 6 * 40).reshape(40, 6)
    inc, dec, cas, exch, mx, add = 5, 5, 5, 5, 5, 5
    ref = []
    for t in range(40):
        row = [inc, dec, cas, exch, mx, add]
        inc = 0 if inc >= 6 else inc + 1
        dec = 3 if dec == 0 or dec > 3 else dec - 1
        cas = 100 if cas == t else cas
        exch, mx, add = t, max(mx, t), (add + t) & 0xFFFFFFFF
        ref.append(row)
    assert got.tolist() == ref
    assert r.get(fin, np.uint32, 6).tolist() == [inc, dec, cas, exch, mx, add]


def test_atomic_half_and_float_adds_round_each_step():
    from gputwin.emu.nv.ptx import load_module
    from tests.emu.nv.ptx.rig import Rig
    text = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 acc, .param .u64 x)
{
.reg .b32 %r<4>;
.reg .b16 %h<4>;
.reg .f32 %f<4>;
.reg .b64 %rd<8>;
mov.u32 %r0, %tid.x;
ld.param.u64 %rd0, [acc];
ld.param.u64 %rd1, [x];
mul.wide.u32 %rd2, %r0, 4;
add.u64 %rd3, %rd1, %rd2;
ld.global.f32 %f1, [%rd3];
red.global.add.f32 [%rd0], %f1;
cvt.rn.f16.f32 %h1, %f1;
atom.global.add.noftz.f16 %h2, [%rd0+4], %h1;
ret;
}
"""
    rng = np.random.default_rng(80)
    x = (rng.standard_normal(64) * 100).astype(np.float32)
    x[5] = 1e-39                                                # a subnormal addend: .f32 atomics flush it
    r = Rig()
    acc, px = r.buf(np.zeros(2, np.uint32)), r.buf(x)
    r.run(load_module(text), "k", [acc, px], block=(64,))
    f, h = np.float32(0), np.float16(0)
    for v in x:
        v = np.float32(0) if abs(v) < np.finfo(np.float32).tiny else v
        f = np.float32(f + v)
        h = np.float16(np.float32(h) + np.float32(np.float16(v)))   # f16 + f16 is exact in f32, then one rounding
    out = r.get(acc, np.uint32, 2)
    assert out[0] == np.array(f).view(np.uint32) and (out[1] & 0xFFFF) == np.array(h).view(np.uint16)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_conformance_reports_every_family(arch, capsys):
    assert cli_main(["conformance", "--arch", arch]) == 0
    text = capsys.readouterr().out
    for fam in ("integer", "float", "compare", "convert", "memory", "atomic", "control", "warp", "tensor"):
        assert f"  {fam} " in text
    assert "hardware recordings: none yet" in text and "UNMODELLED" not in text
