"""mma.sync for bf16 (m16n8k16) and tf32 (m16n8k8) and ldmatrix .trans: fragments placed per lane from the
PTX ISA's fragment tables (written out here), results against the documented accumulation (fidelity
"approximate": C + exact products in k order in float64, one rounding)."""
import numpy as np
import pytest

from gputwin.emu.nv.ptx import load_module
from tests.emu.nv.ptx.rig import Rig

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def frag_kernel(mnemonic, na, nb):
    regs_a = ", ".join(f"%a{i}" for i in range(na))
    regs_b = ", ".join(f"%b{i}" for i in range(nb))
    loads = "\n".join(f"ld.global.b32 %a{i}, [%rd1+{4 * i}];" for i in range(na))
    loads += "\n" + "\n".join(f"ld.global.b32 %b{i}, [%rd2+{4 * i}];" for i in range(nb))
    loads += "\n" + "\n".join(f"ld.global.f32 %c{i}, [%rd3+{4 * i}];" for i in range(4))
    return HEAD + f""".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{{
.reg .b32 %t, %a<4>, %b<2>;
.reg .f32 %c<4>, %d<4>;
.reg .b64 %rd<8>;
mov.u32 %t, %tid.x;
ld.param.u64 %rd1, [pa];
mad.wide.u32 %rd1, %t, {4 * na}, %rd1;
ld.param.u64 %rd2, [pb];
mad.wide.u32 %rd2, %t, {4 * nb}, %rd2;
ld.param.u64 %rd3, [pc];
mad.wide.u32 %rd3, %t, 16, %rd3;
{loads}
{mnemonic} {{%d0, %d1, %d2, %d3}}, {{{regs_a}}}, {{{regs_b}}}, {{%c0, %c1, %c2, %c3}};
ld.param.u64 %rd4, [pd];
mad.wide.u32 %rd4, %t, 16, %rd4;
st.global.v4.f32 [%rd4], {{%d0, %d1, %d2, %d3}};
ret;
}}
"""


def _c_places(lane):
    g, q = lane // 4, lane % 4
    return [(g, 2 * q), (g, 2 * q + 1), (g + 8, 2 * q), (g + 8, 2 * q + 1)]


def _reference(A, B, C):
    acc = C.astype(np.float64)
    for k in range(A.shape[1]):
        acc = acc + A[:, k:k + 1] * B[k:k + 1, :]
    return acc.astype(np.float32)


def _run(mnemonic, afrag, bfrag, C):
    cfrag = np.array([[C[r, c] for r, c in _c_places(l)] for l in range(32)], np.float32)
    r = Rig()
    pa, pb, pc, pd = r.buf(afrag), r.buf(bfrag), r.buf(cfrag), r.buf(nbytes=512)
    r.run(load_module(frag_kernel(mnemonic, afrag.shape[1], bfrag.shape[1])), "k", [pa, pb, pc, pd], block=(32,))
    d = r.get(pd, np.float32, 128).reshape(32, 4)
    D = np.zeros((16, 8), np.float32)
    for l in range(32):
        for i, (row, col) in enumerate(_c_places(l)):
            D[row, col] = d[l, i]
    return D


def test_mma_bf16_m16n8k16():
    rng = np.random.default_rng(90)
    bf = lambda x: (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint32)
    A = (rng.integers(-64, 64, (16, 16)) / 16).astype(np.float32)
    B = (rng.integers(-64, 64, (16, 8)) / 8).astype(np.float32)
    C = rng.standard_normal((16, 8)).astype(np.float32)
    afrag, bfrag = np.zeros((32, 4), np.uint32), np.zeros((32, 2), np.uint32)
    for l in range(32):
        g, q = l // 4, l % 4
        for i, (row, k0) in enumerate([(g, 2 * q), (g + 8, 2 * q), (g, 2 * q + 8), (g + 8, 2 * q + 8)]):
            afrag[l, i] = bf(A[row, k0]) | (bf(A[row, k0 + 1]) << 16)
        for i, k0 in enumerate([2 * q, 2 * q + 8]):
            bfrag[l, i] = bf(B[k0, g]) | (bf(B[k0 + 1, g]) << 16)
    D = _run("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", afrag, bfrag, C)
    assert (D.view(np.uint32) == _reference(A.astype(np.float64), B.astype(np.float64), C).view(np.uint32)).all()


def test_mma_tf32_m16n8k8_ignores_low_mantissa_bits():
    rng = np.random.default_rng(91)
    A = rng.standard_normal((16, 8)).astype(np.float32)
    B = rng.standard_normal((8, 8)).astype(np.float32)
    C = rng.standard_normal((16, 8)).astype(np.float32)
    afrag, bfrag = np.zeros((32, 4), np.uint32), np.zeros((32, 2), np.uint32)
    for l in range(32):
        g, q = l // 4, l % 4
        for i, (row, k) in enumerate([(g, q), (g + 8, q), (g, q + 4), (g + 8, q + 4)]):
            afrag[l, i] = A.view(np.uint32)[row, k]
        for i, k in enumerate([q, q + 4]):
            bfrag[l, i] = B.view(np.uint32)[k, g]
    D = _run("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", afrag, bfrag, C)
    trunc = lambda M: (M.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    assert (D.view(np.uint32) == _reference(trunc(A), trunc(B), C).view(np.uint32)).all()


@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_x2(trans):
    text = HEAD + f""".visible .entry k(.param .u64 src, .param .u64 out)
{{
.reg .b32 %t, %r<4>, %s;
.reg .b64 %rd<8>;
.shared .align 16 .b8 sm[256];
mov.u32 %t, %tid.x;
ld.param.u64 %rd1, [src];
mad.wide.u32 %rd2, %t, 8, %rd1;
ld.global.v2.u32 {{%r0, %r1}}, [%rd2];
mov.u32 %s, sm;
shl.b32 %r2, %t, 3;
add.u32 %r2, %r2, %s;
st.shared.v2.u32 [%r2], {{%r0, %r1}};
bar.sync 0;
and.b32 %r3, %t, 15;
shl.b32 %r3, %r3, 4;
add.u32 %r3, %r3, %s;
ldmatrix.sync.aligned.m8n8.x2{'.trans' if trans else ''}.shared.b16 {{%r0, %r1}}, [%r3];
ld.param.u64 %rd3, [out];
mad.wide.u32 %rd4, %t, 8, %rd3;
st.global.v2.u32 [%rd4], {{%r0, %r1}};
ret;
}}
"""
    M = np.arange(128, dtype=np.uint16) * 3 + 1          # two 8x8 b16 matrices, rows of 16 bytes
    r = Rig()
    ps, po = r.buf(M), r.buf(nbytes=256)
    r.run(load_module(text), "k", [ps, po], block=(32,))
    out = r.get(po, np.uint32, 64).reshape(32, 2)
    mats = M.reshape(2, 8, 8)
    if trans:
        mats = mats.transpose(0, 2, 1)
    for l in range(32):
        g, q = l // 4, l % 4
        for i in range(2):
            assert int(out[l, i]) == int(mats[i, g, 2 * q]) | (int(mats[i, g, 2 * q + 1]) << 16)
