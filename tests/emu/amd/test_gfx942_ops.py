"""CDNA3 instruction semantics on the emulator (gputwin/emu/amd/cdna3.py), one wave64 per test: MFMA
layouts and sums, AGPR moves, SDWA selects and dst_unused, GFX9 v_cmpx, 16-bit result zero-extension,
v_lshl_add_u64. Snippets are assembled by llvm-mc-19 -mcpu=gfx942; inputs sit in `in` as one dword per
lane per row (row r at byte 256 * r), results go to `out` the same way."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.standalone import Arena
from tests.oracles import oracle

LLVM_MC, OBJCOPY = shutil.which("llvm-mc-19"), shutil.which("llvm-objcopy-19")
pytestmark = oracle("llvm-mc-19", "llvm-objcopy-19")


@functools.lru_cache(maxsize=None)
def asm942(text: str) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        obj, bin_ = os.path.join(d, "a.o"), os.path.join(d, "a.bin")
        subprocess.run([LLVM_MC, "-triple=amdgcn", "-mcpu=gfx942", "-filetype=obj", "-o", obj], input=text,
                       text=True, check=True, capture_output=True)
        subprocess.run([OBJCOPY, "-O", "binary", "--only-section=.text", obj, bin_], check=True)
        with open(bin_, "rb") as f:
            return f.read()


def run(body: str, rows_in: np.ndarray, rows_out: int) -> np.ndarray:
    """Run `body` on one wave64 with v1 = lane * 4, s[0:1] = in, s[2:3] = out; returns (rows_out, 64)."""
    code = asm942("v_lshlrev_b32_e32 v1, 2, v0\n" + body + "\ns_endpgm\n")
    arena = Arena()
    src = arena.alloc(max(rows_in.nbytes, 4), np.ascontiguousarray(rows_in, np.uint32))
    dst = arena.alloc(256 * rows_out)
    d = Dispatch(code_address=0, code=code, grid=(1, 1, 1), block=(64, 1, 1), wave64=True,
                 user_sgprs=[src & 0xFFFFFFFF, src >> 32, dst & 0xFFFFFFFF, dst >> 32])
    run_dispatch(arena.mem, d, arch="gfx942")
    return arena.array(dst, np.uint32, 64 * rows_out).reshape(rows_out, 64)


def loads(first_reg: int, rows: int) -> str:
    """Rows 0..15 from v1 + offset; rows 16.. from v63 = v1 + 4096 (GLOBAL offsets stop at 4095)."""
    return "\n".join(["v_add_u32_e32 v63, 0x1000, v1"] + [
        f"global_load_dword v{first_reg + r}, {'v1' if r < 16 else 'v63'}, s[0:1] offset:{256 * (r % 16)}"
        for r in range(rows)]) + "\ns_waitcnt vmcnt(0)"


def stores(first_reg: int, rows: int, reg: str = "v") -> str:
    return "\n".join(f"global_store_dword v1, {reg}{first_reg + r}, s[2:3] offset:{256 * r}" for r in range(rows))


def lanes_of(m: int, k: int):
    """Per the CDNA3 layout: lane l holds row/column l % m and k = (k / g) * (l // m) + t."""
    lane = np.arange(64)
    g = 64 // m
    per = k // g
    return lane % m, (per * (lane // m))[:, None] + np.arange(per)[None, :]


def pack16(x: np.ndarray) -> np.ndarray:
    """(64, 2 * n) 16-bit values -> (n, 64) dwords, element 2j in the low half."""
    h = x.view(np.uint16).astype(np.uint32)
    return (h[:, 0::2] | h[:, 1::2] << 16).T


def out_index(m: int, nregs: int):
    lane, r = np.arange(64)[None, :], np.arange(nregs)[:, None]
    g = 64 // m
    return (r % 4) + 4 * (lane // m) + 4 * g * (r // 4), np.broadcast_to(lane % m, (nregs, 64))


def test_mfma_32x32x8_f16_into_agprs_matches_numpy():
    rng = np.random.default_rng(1)
    a = rng.integers(-6, 7, (32, 8)).astype(np.float16)
    b = rng.integers(-6, 7, (8, 32)).astype(np.float16)
    idx, ks = lanes_of(32, 8)
    regs = np.concatenate([pack16(a[idx[:, None], ks]), pack16(b[ks, idx[:, None]])])   # A: 2 regs, B: 2 regs
    body = "\n".join([loads(2, 4), "v_mfma_f32_32x32x8_f16 a[0:15], v[2:3], v[4:5], 0", "s_nop 7"]
                     + [f"v_accvgpr_read_b32 v{6 + r}, a{r}" for r in range(16)] + [stores(6, 16)])
    got = run(body, regs, 16).view(np.float32)
    rows, cols = out_index(32, 16)
    want = (a.astype(np.float32) @ b.astype(np.float32))[rows, cols]
    assert (got.view(np.uint32) == want.view(np.uint32)).all()


def test_mfma_i8_16x16x32_accumulates_into_vgprs_with_wrap():
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    b = rng.integers(-128, 128, (32, 16)).astype(np.int8)
    c = rng.integers(-2**31, 2**31, (16, 16), dtype=np.int64).astype(np.int32)
    c[0, 0] = 2**31 - 1                                         # wraps when the products are positive
    idx, ks = lanes_of(16, 32)
    pa = a[idx[:, None], ks].view(np.uint32).T                  # 8 bytes per lane -> 2 dwords
    pb = b[ks, idx[:, None]].copy().view(np.uint32).T
    rows, cols = out_index(16, 4)
    regs = np.concatenate([pa, pb, c[rows, cols].view(np.uint32)])
    body = "\n".join([loads(2, 8), "v_mfma_i32_16x16x32_i8 v[6:9], v[2:3], v[4:5], v[6:9]", "s_nop 7", stores(6, 4)])
    got = run(body, regs, 4).view(np.int32)
    full = a.astype(np.int64) @ b.astype(np.int64) + c
    want = ((full + 2**31) % 2**32 - 2**31).astype(np.int32)[rows, cols]
    assert (got == want).all()


@pytest.mark.approx_model
def test_mfma_f32_16x16x4_matches_the_model_c_then_k_in_float64_rounded_once():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 4)).astype(np.float32)
    b = rng.standard_normal((4, 16)).astype(np.float32)
    c = rng.standard_normal((16, 16)).astype(np.float32)
    idx, ks = lanes_of(16, 4)
    rows, cols = out_index(16, 4)
    regs = np.concatenate([a[idx, ks[:, 0]][None].view(np.uint32), b[ks[:, 0], idx][None].view(np.uint32),
                           c[rows, cols].view(np.uint32)])
    body = "\n".join([loads(2, 6), "v_accvgpr_write_b32 a0, v4", "v_accvgpr_write_b32 a1, v5",
                      "v_accvgpr_write_b32 a2, v6", "v_accvgpr_write_b32 a3, v7",
                      "v_mfma_f32_16x16x4_f32 a[0:3], v2, v3, a[0:3]", "s_nop 7", stores(0, 4, "a")])
    got = run(body, regs, 4).view(np.float32)
    tot = c.astype(np.float64)
    for k in range(4):
        tot = tot + a[:, k, None].astype(np.float64) * b[None, k, :].astype(np.float64)
    assert (got.view(np.uint32) == tot.astype(np.float32)[rows, cols].view(np.uint32)).all()


def test_sdwa_preserve_sign_extend_and_byte_selects():
    x = np.random.default_rng(4).integers(0, 2**32, (1, 64), dtype=np.uint64).astype(np.uint32)
    x[0, :4] = [0x80FF7F01, 0x7F80FF00, 0xFFFFFFFF, 0x01020304]
    body = "\n".join([loads(2, 1), "v_mov_b32_e32 v3, 0x55555555", "v_mov_b32_e32 v4, 0x55555555",
                      "v_mov_b32_e32 v5, 0x55555555",
                      "v_mov_b32_sdwa v3, v2 dst_sel:BYTE_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_3",
                      "v_mov_b32_sdwa v4, sext(v2) dst_sel:WORD_0 dst_unused:UNUSED_SEXT src0_sel:BYTE_2",
                      "v_add_u32_sdwa v5, v2, v2 dst_sel:BYTE_0 dst_unused:UNUSED_SEXT src0_sel:BYTE_1 src1_sel:WORD_1",
                      stores(3, 3)])
    got = run(body, x, 3).astype(np.int64)
    v = x[0].astype(np.int64)
    b3, b2, b1, w1 = v >> 24, v >> 16 & 0xFF, v >> 8 & 0xFF, v >> 16
    assert (got[0] == (0x55555555 & ~0xFF00) | b3 << 8).all()
    s16 = ((b2 ^ 0x80) - 0x80) & 0xFFFF                         # sext byte -> 16 bits, then sext upward
    assert (got[1] == (s16 | np.where(s16 & 0x8000, 0xFFFF0000, 0))).all()
    s8 = (b1 + w1) & 0xFF
    assert (got[2] == (s8 | np.where(s8 & 0x80, 0xFFFFFF00, 0))).all()


def test_gfx9_cmpx_writes_vcc_and_exec():
    body = "\n".join(["s_mov_b64 s[4:5], exec", "v_cmpx_gt_u32_e32 vcc, 40, v0", "s_mov_b64 s[6:7], exec",
                      "s_mov_b64 s[8:9], vcc", "s_mov_b64 exec, s[4:5]", "v_mov_b32_e32 v2, s6", "v_mov_b32_e32 v3, s7",
                      "v_mov_b32_e32 v4, s8", "v_mov_b32_e32 v5, s9", stores(2, 4)])
    got = run(body, np.zeros((1, 64), np.uint32), 4)
    mask = (1 << 40) - 1
    assert (got[:, 0] == [mask & 0xFFFFFFFF, mask >> 32, mask & 0xFFFFFFFF, mask >> 32]).all()


def test_gfx9_cmp_tru_is_true_on_every_active_lane_even_for_nan():
    """GFX9's v_cmp_tru / v_cmpx_tru (RDNA3's v_cmp_t): all ones under EXEC, whatever the inputs (NaN)."""
    body = "\n".join(["v_mov_b32_e32 v2, 0", "v_mov_b32_e32 v3, 0x7ff80000", "s_mov_b64 s[4:5], exec",
                      "v_cmpx_gt_u32_e32 vcc, 50, v0",                       # lanes 0..49 stay active
                      "v_cmp_tru_f64_e32 vcc, v[2:3], v[2:3]", "s_mov_b64 s[6:7], vcc",
                      "v_cmpx_tru_f32_e32 vcc, v3, v3", "s_mov_b64 s[8:9], exec", "s_mov_b64 exec, s[4:5]",
                      "v_mov_b32_e32 v2, s6", "v_mov_b32_e32 v3, s7", "v_mov_b32_e32 v4, s8", "v_mov_b32_e32 v5, s9",
                      stores(2, 4)])
    got = run(body, np.zeros((1, 64), np.uint32), 4)
    mask = (1 << 50) - 1
    assert (got[:, 0] == [mask & 0xFFFFFFFF, mask >> 32, mask & 0xFFFFFFFF, mask >> 32]).all()


def test_16bit_results_zero_the_high_half_except_op_sel_forms():
    body = "\n".join(["v_mov_b32_e32 v2, -1", "v_add_u16_e32 v2, 1, v0", "v_mov_b32_e32 v3, -1",
                      "v_cvt_f16_u16_e32 v4, v0", "v_mov_b32_e32 v3, -1", "v_fma_f16 v3, v4, v4, v4", stores(2, 2)])
    got = run(body, np.zeros((1, 64), np.uint32), 2)
    lane = np.arange(64)
    assert (got[0] == lane + 1).all()
    h = lane.astype(np.float64)                               # fma: exact in float64, one rounding to f16
    assert (got[1] == (0xFFFF0000 | (h * h + h).astype(np.float16).view(np.uint16).astype(np.uint32))).all()


def test_lshl_add_u64_shifts_by_the_low_three_bits():
    x = np.random.default_rng(5).integers(0, 2**32, (4, 64), dtype=np.uint64).astype(np.uint32)
    body = "\n".join([loads(2, 4), "v_lshl_add_u64 v[2:3], v[2:3], 3, v[4:5]", "v_and_b32_e32 v6, 15, v0",
                      "v_lshl_add_u64 v[4:5], v[4:5], v6, 0", stores(2, 4)])
    got = run(body, x, 4).astype(np.uint64)
    a = x[0].astype(np.uint64) | x[1].astype(np.uint64) << np.uint64(32)
    b = x[2].astype(np.uint64) | x[3].astype(np.uint64) << np.uint64(32)
    r1 = (a << np.uint64(3)) + b
    r2 = b << (np.arange(64, dtype=np.uint64) & np.uint64(15) & np.uint64(7))
    assert (got[0] | got[1] << np.uint64(32) == r1).all()
    assert (got[2] | got[3] << np.uint64(32) == r2).all()


MFMA_FORMS = {   # mnemonic: (M, K, element dtype, bits per element)
    "v_mfma_f32_16x16x16_f16": (16, 16, np.float16, 16), "v_mfma_f32_32x32x8_f16": (32, 8, np.float16, 16),
    "v_mfma_f32_16x16x16_bf16": (16, 16, "bf16", 16), "v_mfma_f32_32x32x8_bf16": (32, 8, "bf16", 16),
    "v_mfma_f32_16x16x4_f32": (16, 4, np.float32, 32), "v_mfma_f32_32x32x2_f32": (32, 2, np.float32, 32),
    "v_mfma_i32_16x16x32_i8": (16, 32, np.int8, 8), "v_mfma_i32_32x32x16_i8": (32, 16, np.int8, 8),
}


def _pack(vals: np.ndarray, dtype, bits: int) -> np.ndarray:
    """(64, per_lane) element values -> (dwords, 64) register rows, element 0 in the low bits."""
    if dtype == "bf16":
        raw = (vals.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)   # small integers: exact
    else:
        raw = vals.astype(dtype)
    return np.ascontiguousarray(raw).view(np.uint32).reshape(64, -1).T


@pytest.mark.parametrize("name", sorted(MFMA_FORMS))
def test_every_modelled_mfma_form_matches_numpy_on_exact_data(name):
    m, k, dtype, bits = MFMA_FORMS[name]
    rng = np.random.default_rng(len(name))
    a, b = rng.integers(-8, 8, (m, k)), rng.integers(-8, 8, (k, m))
    c = rng.integers(-50, 50, (m, m))
    idx, ks = lanes_of(m, k)
    nin = ks.shape[1] * bits // 32
    nout = m * m // 64
    rows, cols = out_index(m, nout)
    cdt = np.int32 if dtype is np.int8 else np.float32
    regs = np.concatenate([_pack(a[idx[:, None], ks], dtype, bits), _pack(b[ks, idx[:, None]], dtype, bits),
                           c[rows, cols].astype(cdt).view(np.uint32)])
    va, vb, vc = 2, 2 + nin, 2 + 2 * nin
    srcs = [f"v{r}" if n == 1 else f"v[{r}:{r + n - 1}]" for r, n in ((va, nin), (vb, nin), (vc, nout))]
    body = "\n".join([loads(2, 2 * nin + nout), f"{name} {srcs[2]}, {srcs[0]}, {srcs[1]}, {srcs[2]}", "s_nop 7",
                      stores(vc, nout)])
    got = run(body, regs, nout)
    want = (a @ b + c)[rows, cols].astype(cdt).view(np.uint32)
    assert (got == want).all()


def test_cache_invalidate_and_writeback_leave_memory_as_written():
    # buffer_inv / buffer_wbl2 (the fences of agent-scope atomics): no caches are emulated, so the store
    # before them is what the load after them sees, whatever the scope bits
    x = (np.arange(64, dtype=np.uint64) * 2654435761 % (1 << 32)).astype(np.uint32)
    got = run(loads(2, 1) + """
global_store_dword v1, v2, s[2:3]
buffer_wbl2 sc1
buffer_inv sc0 sc1
buffer_wbl2 sc0 sc1
buffer_inv sc1
global_load_dword v3, v1, s[2:3]
s_waitcnt vmcnt(0)
v_add_u32_e32 v3, 1, v3
global_store_dword v1, v3, s[2:3] offset:256""", x[None, :].astype(np.uint32), 2)
    assert (got[0] == x).all() and (got[1] == x + 1).all()
