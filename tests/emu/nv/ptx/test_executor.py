"""Execution model: divergence and reconvergence, inactive lanes, barriers, local memory, faults, trap,
the watchdog, fail-closed planning and parse errors."""
import numpy as np
import pytest

from gputwin.emu.nv.ptx import PtxError, load_module
from gputwin.errors import GpuFault, GpuHang, MemoryFault
from tests.emu.nv.ptx.rig import Rig

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def kernel(body, params=".param .u64 out", decls=""):
    return HEAD + f""".visible .entry k({params})
{{
.reg .b32 %r<16>;
.reg .b64 %rd<16>;
.reg .pred %p<8>;
.reg .f32 %f<8>;
{decls}
mov.u32 %r0, %tid.x;
ld.param.u64 %rd0, [out];
mad.wide.u32 %rd1, %r0, 4, %rd0;
{body}
ret;
}}
"""


def run(text, n=32, nbytes=None, grid=(1,), **kw):
    r = Rig()
    out = r.buf(np.full((nbytes or 4 * n * grid[0]) // 4, 0xDEAD, np.uint32))
    c = r.run(load_module(text), "k", [out], grid=grid, block=(n,), **kw)
    return r.get(out, np.uint32, (nbytes or 4 * n * grid[0]) // 4), c


def test_predicated_store_leaves_inactive_lanes_alone():
    got, c = run(kernel("setp.lt.u32 %p1, %r0, 5;\n@%p1 st.global.u32 [%rd1], %r0;"))
    assert got.tolist() == list(range(5)) + [0xDEAD] * 27
    assert c.warps == 1


def test_divergent_branches_reconverge_for_warp_ops():
    body = """
    and.b32 %r1, %r0, 1;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra EVEN;
    mul.lo.u32 %r2, %r0, 100;
    bra JOIN;
EVEN:
    add.u32 %r2, %r0, 1000;
JOIN:
    activemask.b32 %r3;
    shfl.sync.idx.b32 %r4, %r2, 3, 31, -1;
    add.u32 %r5, %r3, %r4;
    st.global.u32 [%rd1], %r5;
    """
    got, _ = run(kernel(body))
    assert got.tolist() == [(0xFFFFFFFF + 300) & 0xFFFFFFFF] * 32   # all lanes back together; lane 3 had 300


def test_warp_ops_see_only_the_lanes_that_arrived():
    body = """
    setp.lt.u32 %p1, %r0, 10;
    @!%p1 bra DONE;
    activemask.b32 %r3;
    setp.ne.u32 %p2, %r0, 4;
    vote.sync.ballot.b32 %r4, %p2, %r3;
    add.u32 %r5, %r3, %r4;
    st.global.u32 [%rd1], %r5;
DONE:
    """
    got, _ = run(kernel(body))
    assert got.tolist() == [(0x3FF + (0x3FF & ~0x10)) & 0xFFFFFFFF] * 10 + [0xDEAD] * 22


def test_data_dependent_loop_and_partial_warp():
    body = """
    mov.u32 %r2, 0;
    mov.u32 %r3, %r0;
LOOP:
    setp.eq.u32 %p1, %r3, 0;
    @%p1 bra OUT;
    add.u32 %r2, %r2, %r3;
    sub.u32 %r3, %r3, 1;
    bra LOOP;
OUT:
    st.global.u32 [%rd1], %r2;
    """
    got, c = run(kernel(body), n=40)
    assert got.tolist() == [t * (t + 1) // 2 for t in range(40)]
    assert c.warps == 2 and c.lane_ops < 32 * c.warp_insts


def test_barrier_orders_shared_memory_across_warps():
    body = """
    mov.u32 %r1, sm;
    shl.b32 %r2, %r0, 2;
    add.u32 %r3, %r1, %r2;
    mul.lo.u32 %r4, %r0, 3;
    st.shared.u32 [%r3], %r4;
    bar.sync 0;
    sub.u32 %r5, 127, %r0;
    shl.b32 %r6, %r5, 2;
    add.u32 %r7, %r1, %r6;
    ld.shared.u32 %r8, [%r7];
    st.global.u32 [%rd1], %r8;
    """
    got, _ = run(kernel(body, decls=".shared .align 4 .b32 sm[128];"), n=128)
    assert got.tolist() == [(127 - t) * 3 for t in range(128)]


def test_dynamic_shared_memory_and_generic_addressing(monkeypatch):
    monkeypatch.delenv("GPUTWIN_SANITIZE", raising=False)   # the emulator's own fault (memcheck reports it)
    body = """
    mov.u64 %rd2, dyn;
    cvta.shared.u64 %rd3, %rd2;
    mul.wide.u32 %rd4, %r0, 4;
    add.u64 %rd5, %rd3, %rd4;
    st.u32 [%rd5], %r0;
    bar.sync 0;
    xor.b32 %r1, %r0, 1;
    mul.wide.u32 %rd6, %r1, 4;
    add.u64 %rd7, %rd3, %rd6;
    ld.u32 %r2, [%rd7];
    st.global.u32 [%rd1], %r2;
    """
    text = HEAD + ".extern .shared .align 16 .b8 dyn[];\n" + kernel(body)[len(HEAD):]
    got, _ = run(text, n=64, dynamic_shared_bytes=256)
    assert got.tolist() == [t ^ 1 for t in range(64)]
    with pytest.raises(MemoryFault, match="shared access outside"):
        run(text, n=64, dynamic_shared_bytes=128)


def _shared_reverse(extra):
    body = f"""
    mov.u32 %r5, %ctaid.x;
    mad.lo.u32 %r6, %r5, 1000, %r0;
    mov.u32 %r3, sh;
    shl.b32 %r1, %r0, 2;
    add.u32 %r4, %r3, %r1;
    st.shared.u32 [%r4], %r6;
    bar.sync 0;
    sub.u32 %r7, 31, %r0;
    mad.lo.u32 %r8, %r7, 4, %r3;
    ld.shared.u32 %r2, [%r8+{extra}];
    mul.wide.u32 %rd4, %r5, 128;
    add.u64 %rd5, %rd1, %rd4;
    st.global.u32 [%rd5], %r2;
    """
    return HEAD + ".shared .align 4 .b8 sh[128];\n" + kernel(body)[len(HEAD):]


def test_full_warp_shared_load_per_cta_and_out_of_bounds(monkeypatch):
    monkeypatch.delenv("GPUTWIN_SANITIZE", raising=False)   # the emulator's own fault (memcheck reports it)
    # whole warps of two CTAs read their own CTA's shared memory in reverse, through a 32-bit base
    got, _ = run(_shared_reverse(0), n=32, grid=(2,))
    assert got.tolist() == [c * 1000 + 31 - t for c in range(2) for t in range(32)]
    with pytest.raises(MemoryFault, match="4-byte shared access outside the CTA's 128 bytes") as e:
        run(_shared_reverse(4), n=32, grid=(2,))      # lane 0 reads byte 128
    assert e.value.address == 128


def test_local_memory_is_per_thread():
    body = """
    mov.u64 %rd2, loc;
    st.local.u32 [%rd2], %r0;
    st.local.u32 [%rd2+4], 7;
    ld.local.u32 %r1, [%rd2];
    ld.local.u32 %r2, [%rd2+4];
    add.u32 %r3, %r1, %r2;
    st.global.u32 [%rd1], %r3;
    """
    got, _ = run(kernel(body, decls=".local .align 4 .b8 loc[8];"))
    assert got.tolist() == [t + 7 for t in range(32)]


def test_out_of_bounds_global_access_faults_with_address_and_line():
    body = "add.u64 %rd2, %rd1, 4096;\nst.global.u32 [%rd2], %r0;"
    text = kernel(body)
    with pytest.raises(MemoryFault, match=r"PTX line 1[0-9]") as e:
        run(text)
    assert e.value.address >= 0x1_0000_0000 + 4096 and e.value.write and e.value.ptx_line == 15


def test_full_warp_load_partly_below_its_buffer_faults_at_the_first_bad_lane():
    # lane 0 reads 4 bytes below the buffer (unmapped), lanes 1..31 inside it: the whole-warp gather
    # must not wrap around or clip; the checked path names lane 0's address
    r = Rig()
    out = r.buf(np.zeros(32, np.uint32))
    text = kernel("ld.global.u32 %r1, [%rd1+-4];\nst.global.u32 [%rd1], %r1;")
    if r.mem.find(out - 4) is not None:
        pytest.skip("needs the arena's first buffer to start a mapping with nothing below it")
    with pytest.raises(MemoryFault, match="load from unmapped global") as e:
        r.run(load_module(text), "k", [out], block=(32,))
    assert e.value.address == out - 4 and not e.value.write


def test_misaligned_access_faults():
    with pytest.raises(MemoryFault, match="misaligned 4-byte global") as e:
        run(kernel("add.u64 %rd2, %rd1, 2;\nld.global.u32 %r1, [%rd2];"))
    assert e.value.address % 4 == 2


def test_trap_is_a_gpu_fault_of_kind_trap():
    with pytest.raises(GpuFault, match="trap at PTX line") as e:
        run(kernel("setp.eq.u32 %p1, %r0, 7;\n@%p1 trap;"))
    assert e.value.kind == "trap" and e.value.ptx_line == 15


def test_runaway_kernel_is_a_hang(monkeypatch):
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "0.01")
    with pytest.raises(GpuHang, match="GPUTWIN_WATCHDOG_S"):
        run(kernel("SPIN:\nbra SPIN;"))


def test_runaway_kernel_is_caught_by_the_shared_step_budget(monkeypatch):
    """GPUTWIN_WATCHDOG_INSTS bounds the steps deterministically, whatever the wall-clock limit."""
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "3600")
    monkeypatch.setenv("GPUTWIN_WATCHDOG_INSTS", "5000")
    with pytest.raises(GpuHang, match=r"after 50\d\d steps \(limits: GPUTWIN_WATCHDOG_INSTS=5000 steps"):
        run(kernel("SPIN:\nbra SPIN;"))


def test_unmodelled_instruction_fails_its_kernel_naming_line():
    text = kernel("dp4a.u32.u32 %r1, %r2, %r3, %r4;")
    mod = load_module(text)                      # the module loads: other kernels in it stay usable
    assert mod.kernels["k"].params_size == 8
    with pytest.raises(PtxError, match=r"PTX line 14: instruction dp4a\.u32\.u32 is not modelled"):
        run(text)


def test_parse_errors_name_line_and_token():
    with pytest.raises(PtxError, match=r"PTX line 4: .*at '\?'"):
        load_module(HEAD + ".visible .entry k() { ? }")


def test_clock_is_deterministic_and_lanemasks():
    body = """
    mov.u32 %r1, %clock;
    mov.u32 %r2, %lanemask_lt;
    mov.u32 %r3, %clock;
    sub.u32 %r4, %r3, %r1;
    add.u32 %r5, %r4, %r2;
    st.global.u32 [%rd1], %r5;
    """
    a, _ = run(kernel(body))
    b, _ = run(kernel(body))
    assert a.tolist() == b.tolist() == [8 + (1 << t) - 1 for t in range(32)]


def test_multi_cta_batches_and_ctaid():
    body = """
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mad.lo.u32 %r3, %r1, %r2, %r0;
    mul.wide.u32 %rd2, %r3, 4;
    add.u64 %rd3, %rd0, %rd2;
    st.global.u32 [%rd3], %r1;
    """
    import gputwin.emu.nv.ptx.executor as ex
    old = ex.MAX_BATCH_THREADS
    try:
        ex.MAX_BATCH_THREADS = 64                        # force several batches
        got, c = run(kernel(body), n=32, grid=(5,))
    finally:
        ex.MAX_BATCH_THREADS = old
    assert got.tolist() == [t // 32 for t in range(160)]
    assert c.warps == 5


def test_cp_async_copies_and_zero_fills():
    body = """
    mov.u32 %r1, sm;
    shl.b32 %r2, %r0, 4;
    add.u32 %r3, %r1, %r2;
    ld.param.u64 %rd2, [src];
    mul.wide.u32 %rd3, %r0, 16;
    add.u64 %rd4, %rd2, %rd3;
    cp.async.cg.shared.global [%r3], [%rd4], 16, %r0;
    cp.async.commit_group;
    cp.async.wait_group 0;
    bar.sync 0;
    ld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r3];
    add.u32 %r8, %r4, %r7;
    st.global.u32 [%rd1], %r8;
    """
    text = kernel(body, params=".param .u64 out, .param .u64 src", decls=".shared .align 16 .b8 sm[512];")
    r = Rig()
    src = np.arange(4 * 32, dtype=np.uint32) + 1
    out, psrc = r.buf(nbytes=128), r.buf(src)
    r.run(load_module(text), "k", [out, psrc], block=(32,))
    # thread t copies min(t, 16) bytes of its 16 and zero-fills the rest: words 0 and 3 of row t
    def kept(word, first_byte, t):
        nbytes = max(0, min(4, t - first_byte))
        return int(word) & ((1 << (8 * nbytes)) - 1)
    ref = [kept(src[4 * t], 0, t) + kept(src[4 * t + 3], 12, t) for t in range(32)]
    assert r.get(out, np.uint32, 32).tolist() == ref


def test_syncwarp_does_not_wait_for_other_warps():
    body = """
    setp.lt.u32 %p1, %r0, 32;
    @%p1 bra FIRST;
    bar.warp.sync -1;
    st.global.u32 [%rd1], 2;
    bra END;
FIRST:
    bar.warp.sync -1;
    st.global.u32 [%rd1], 1;
END:
    """
    got, _ = run(kernel(body), n=64)
    assert got.tolist() == [1] * 32 + [2] * 32


def test_unmodelled_variant_fails_before_anything_runs():
    text = kernel("atom.global.add.noftz.f16x2 %r1, [%rd1], %r0;\nst.global.u32 [%rd1], 1;")
    with pytest.raises(PtxError, match=r"atom\.global\.add\.noftz\.f16x2 is not modelled"):
        run(text)


def test_module_for_a_newer_target_does_not_run_on_an_older_device():
    text = kernel("st.global.u32 [%rd1], %r0;").replace(".target sm_80", ".target sm_90")
    assert run(text, arch="sm_90")[0].tolist() == list(range(32))
    with pytest.raises(PtxError, match="module targets sm_90; the device is sm_80"):
        run(text, arch="sm_80")


def test_module_globals_and_constants_with_initialisers():
    text = HEAD + """.global .align 4 .b32 table[4] = {10, -20, 30, 0x40};
.const .align 8 .f64 scale[2] = {0d3FF8000000000000, 0d4000000000000000};
.global .align 8 .u64 ptr = generic(table);
""" + kernel("""
    and.b32 %r1, %r0, 3;
    mul.wide.u32 %rd2, %r1, 4;
    ld.global.u64 %rd3, [ptr];
    add.u64 %rd4, %rd3, %rd2;
    ld.global.u32 %r2, [%rd4];
    ld.const.f64 %fd1, [scale+8];
    cvt.rzi.s32.f64 %r3, %fd1;
    mul.lo.s32 %r4, %r2, %r3;
    st.global.u32 [%rd1], %r4;
    """, decls=".reg .f64 %fd<2>;")[len(HEAD):]
    got, _ = run(text, n=8)
    assert got.view(np.int32).tolist() == [20, -40, 60, 128] * 2


FUNC = HEAD + """.func (.param .b32 ret) twice(.param .b32 x)
{
.reg .b32 %a<3>;
ld.param.b32 %a1, [x];
setp.gt.u32 %p, %a1, 20;
@%p bra BIG;
shl.b32 %a2, %a1, 1;
st.param.b32 [ret], %a2;
ret;
BIG:
CALLSELF
st.param.b32 [ret], 99;
ret;
}
.visible .entry k(.param .u64 out)
{
.reg .b32 %r<4>;
.reg .b64 %rd<4>;
mov.u32 %r0, %tid.x;
ld.param.u64 %rd0, [out];
mad.wide.u32 %rd1, %r0, 4, %rd0;
{
.reg .b32 %tmp;
.param .b32 p0;
st.param.b32 [p0], %r0;
.param .b32 r0;
call.uni (r0), twice, (p0);
ld.param.b32 %r1, [r0];
}
st.global.u32 [%rd1], %r1;
ret;
}
"""


def test_divergent_function_returns_rejoin_the_caller():
    text = FUNC.replace(".reg .b32 %a<3>;", ".reg .b32 %a<3>;\n.reg .pred %p;").replace("CALLSELF\n", "")
    got, _ = run(text, n=32)
    assert got.tolist() == [2 * t if t <= 20 else 99 for t in range(32)]


def test_recursion_is_refused_naming_the_call():
    text = FUNC.replace(".reg .b32 %a<3>;", ".reg .b32 %a<3>;\n.reg .pred %p;").replace(
        "CALLSELF\n", "{\n.param .b32 q0;\nst.param.b32 [q0], %a1;\n.param .b32 q1;\n"
                      "call.uni (q1), twice, (q0);\n}\n")
    with pytest.raises(PtxError, match="recursive call to twice"):
        run(text)


def test_sync_warp_ops_wait_for_members_in_out_of_line_blocks():
    body = """
    setp.lt.u32 %p1, %r0, 16;
    @%p1 bra COLD;
    mov.u32 %r2, 1;
JOIN:
    shfl.sync.idx.b32 %r3, %r2, 3, 31, -1;
    setp.eq.u32 %p2, %r2, 2;
    vote.sync.ballot.b32 %r4, %p2, -1;
    add.u32 %r5, %r3, %r4;
    st.global.u32 [%rd1], %r5;
    bra END;
COLD:
    mov.u32 %r2, 2;
    bra JOIN;
END:
    """
    got, _ = run(kernel(body))
    assert got.tolist() == [2 + 0xFFFF] * 32         # lane 3's value from the cold block; 16 lanes voted


def test_divergent_shuffle_whose_members_never_come_still_finishes():
    body = """
    setp.lt.u32 %p1, %r0, 16;
    @%p1 bra OTHER;
    shfl.sync.idx.b32 %r3, %r0, 20, 31, -1;
    bra OUT;
OTHER:
    shfl.sync.idx.b32 %r3, %r0, 5, 31, -1;
OUT:
    st.global.u32 [%rd1], %r3;
    """
    got, _ = run(kernel(body))
    assert got.tolist() == [5] * 16 + [20] * 16          # each group reads within itself (PTX: undefined)


def test_vector_access_must_be_aligned_to_the_whole_vector():
    body = "add.u64 %rd2, %rd0, 8;\nld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd2];"
    with pytest.raises(MemoryFault, match="misaligned 16-byte global") as e:
        run(kernel(body))
    assert e.value.address % 16 == 8


def test_match_all_and_128_bit_loads_fail_closed():
    body = """
    shr.u32 %r1, %r0, 4;
    match.all.sync.b32 %r2|%p1, %r1, -1;
    selp.u32 %r3, 1, 0, %p1;
    add.u32 %r4, %r2, %r3;
    st.global.u32 [%rd1], %r4;
    """
    got, _ = run(kernel(body))
    assert got.tolist() == [0] * 32                      # two different values: no match, p false
    got, _ = run(kernel(body.replace("shr.u32 %r1, %r0, 4;", "shr.u32 %r1, %r0, 5;")))
    assert got.tolist() == [0xFFFFFFFF + 1 & 0xFFFFFFFF] * 32
    with pytest.raises(PtxError, match="registers of type .b128 are not modelled"):
        run(kernel(".reg .b128 %q;\nld.global.b128 %q, [%rd0];"))


def test_warp_count_of_a_step_mask():
    from gputwin.emu.nv.ptx.executor import _warps_in
    rng = np.random.default_rng(70)
    for density in (0.0, 0.01, 0.3, 1.0):
        mask = rng.random(64 * 32) < density
        mask[32 * 5 + 31] = density > 0          # a warp whose only active lane is its last
        want = sum(any(mask[w * 32:(w + 1) * 32]) for w in range(64))
        assert _warps_in(mask, 64) == want


# --- malformed PTX found by the fuzz campaign (issue 11, "later surfaces"): PtxError naming the line, never a
# builtin's IndexError/KeyError/ValueError or a 12 GiB allocation
@pytest.mark.parametrize("body,match", [
    ("shr.u32 %r1, %r2;", r"PTX line 14: shr\.u32: too few operands for shr \(2 given\)"),
    ("mul.wide.b64 %rd2, %rd1, %rd1;", r"PTX line 14: mul\.wide\.b64: \.wide needs a 16- or 32-bit integer type"),
    ("add.rn.f32 %f1, %f2;", r"PTX line 14: add\.rn\.f32: add takes 3 operands, 2 given"),
    ("fma.rn.s32 %r1, %r2, %r3, %r4;", r"PTX line 14: fma\.rn\.s32: fma needs a floating-point type, not \.s32"),
    ("st.global.u32 %rd1, %r1;", r"PTX line 14: st\.global\.u32: the address operand must be in brackets"),
])
def test_malformed_statements_are_ptx_errors(body, match):
    with pytest.raises(PtxError, match=match):
        run(kernel(body))


def test_malformed_integer_and_huge_register_range_are_ptx_errors():
    with pytest.raises(PtxError, match=r"PTX line 10: expected an integer \(at '-'\)"):
        load_module(kernel("", decls=".reg .b32 %q<->;"))
    with pytest.raises(PtxError, match=r"PTX line 10: %q<2147483647> declares more than the 65536 registers"):
        run(kernel("", decls=".reg .b32 %q<2147483647>;"))      # planned (and refused) in well under a second


def test_shared_memory_past_the_per_block_maximum_is_refused_before_allocation():
    from gputwin.emu.memory import AddressSpace
    from gputwin.emu.nv.ptx import run_kernel
    huge = load_module(kernel("", decls=".shared .align 4 .b8 big[4294967295];"))
    with pytest.raises(PtxError, match=r"kernel k declares 4294967295 bytes of \.shared; sm_90 allows 232448"):
        run_kernel(AddressSpace(), huge, "k", grid=(3, 1, 1), block=(32, 1, 1), params=bytes(8), arch="sm_90")
    fits = load_module(kernel("", decls=".shared .align 4 .b8 s[1024];"))
    with pytest.raises(ValueError, match=r"1024 static \+ 166912 dynamic shared bytes; sm_80 allows 166912"):
        run_kernel(AddressSpace(), fits, "k", params=bytes(8), dynamic_shared_bytes=163 << 10, arch="sm_80")


def test_call_parameter_access_past_its_slot_and_unknown_param_types_are_ptx_errors():
    base = FUNC.replace(".reg .b32 %a<3>;", ".reg .b32 %a<3>;\n.reg .pred %p;").replace("CALLSELF\n", "")
    with pytest.raises(PtxError, match=r"st\.param\.b32: 4 bytes at offset \d+ past the \d+-byte \.param"):
        run(base.replace("st.param.b32 [ret], %a2;", "st.param.b32 [ret+64], %a2;"))
    with pytest.raises(PtxError, match=r"ld\.param\.b32: 4 bytes at offset \d+ past the \d+-byte \.param"):
        run(base.replace("ld.param.b32 %a1, [x];", "ld.param.b32 %a1, [x+64];"))
    with pytest.raises(PtxError, match=r"out has no known type \(\.u%64\)"):
        load_module(kernel("", params=".param .u%64 out"))
    with pytest.raises(PtxError, match=r"x has no known type \(\.%b32\)"):
        run(base.replace(".func (.param .b32 ret) twice(.param .b32 x)", ".func (.param .b32 ret) twice(.param .%b32 x)"))


def test_a_huge_grid_of_short_ctas_is_a_hang_at_the_watchdog(monkeypatch):
    # fuzz (gpfifo): a QMD with CTA_RASTER_WIDTH ~2^31 ran for minutes: the deadline was checked only inside
    # a batch, and each batch of short CTAs ended before its first check
    import time
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "0.3")
    t0 = time.monotonic()
    with pytest.raises(GpuHang, match=r"PTX kernel k still running after 0\.3 s .*of 16777216 CTAs finished"):
        run(kernel(""), n=1024, grid=(1 << 24,), nbytes=4)
    assert time.monotonic() - t0 < 5
