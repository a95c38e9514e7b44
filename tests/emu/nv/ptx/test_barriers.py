"""Named barriers (barriers.py): bar.arrive counts warps without waiting, bar.sync waits for its barrier's
count only (other barriers and warps run on), a count-less bar.sync waits for every live warp of the
block, a barrier no arrival completes hangs, and operands PTX leaves undefined fail closed."""
import pytest

from gputwin.errors import GpuHang, IllegalInstruction
from tests.emu.nv.ptx.test_executor import kernel, run

SHARED = ".shared .align 4 .b32 s[128];"


@pytest.fixture(autouse=True)
def unchecked(monkeypatch):
    """The emulator's own semantics, on programs the sanitizers would rightly report (a spin on shared
    memory, exits before a barrier): checked runs are tests/emu/sanitizer/test_sync_nv.py."""
    monkeypatch.delenv("GPUTWIN_SANITIZE", raising=False)


def test_a_warp_waits_only_for_the_count_of_its_barrier():
    """Warps 0-1 meet at barrier 1 (64 threads) and exchange values; warps 2-3 spin on shared memory until
    warp 0 passes barrier 1 and writes the flag: a CTA-wide release would deadlock the spinners."""
    body = """
    shl.b32 %r2, %r0, 2;
    mov.u32 %r3, s;
    add.u32 %r4, %r3, %r2;
    setp.ge.u32 %p1, %r0, 64;
    @%p1 bra SPIN;
    st.shared.u32 [%r4], %r0;
    bar.sync 1, 64;
    xor.b32 %r5, %r2, 128;
    add.u32 %r6, %r3, %r5;
    ld.shared.u32 %r7, [%r6];
    st.shared.u32 [s+508], 1;
    bra DONE;
SPIN:
    ld.volatile.shared.u32 %r8, [s+508];
    setp.eq.u32 %p2, %r8, 0;
    @%p2 bra SPIN;
    mov.u32 %r7, 7;
DONE:
    st.global.u32 [%rd1], %r7;
    """
    got, _ = run(kernel(body, decls=SHARED), n=128)
    assert got.tolist() == [i ^ 32 for i in range(64)] + [7] * 64


def test_bar_arrive_releases_a_waiting_warp_and_does_not_wait():
    """Warp 1 waits at barrier 2 for 64 threads; warp 0 stores, arrives and goes on."""
    body = """
    setp.ge.u32 %p1, %r0, 32;
    @%p1 bra CONSUME;
    st.shared.u32 [s], 42;
    bar.arrive 2, 64;
    mov.u32 %r7, 1;
    bra DONE;
CONSUME:
    bar.sync 2, 64;
    ld.shared.u32 %r7, [s];
DONE:
    st.global.u32 [%rd1], %r7;
    """
    got, _ = run(kernel(body, decls=SHARED), n=64)
    assert got.tolist() == [1] * 32 + [42] * 32


def test_a_count_less_barrier_does_not_wait_for_exited_warps():
    body = """
    setp.ge.u32 %p1, %r0, 32;
    @%p1 bra DONE;
    bar.sync 0;
    st.global.u32 [%rd1], %r0;
DONE:
    """
    got, _ = run(kernel(body), n=64)
    assert got.tolist() == list(range(32)) + [0xDEAD] * 32


def test_a_barrier_no_arrival_completes_is_a_hang():
    body = """
    setp.ge.u32 %p1, %r0, 32;
    @%p1 bra DONE;
    bar.sync 3, 64;
DONE:
    """
    with pytest.raises(GpuHang, match=r"barrier 3 waits for 64 threads; 32 threads wait there and 0 arrived "
                                      r"with bar.arrive, and no other thread can arrive"):
        run(kernel(body), n=64)


@pytest.mark.parametrize("statement,why", [
    ("bar.sync 16;", r"barrier 16 \(a CTA has barriers 0..15\)"),
    ("bar.sync 0, 48;", "thread count 48 is not a multiple of the warp size"),
    ("bar.arrive 1, 0;", "bar.arrive needs a nonzero thread count"),
    ("and.b32 %r2, %r0, 1;\nbar.sync %r2, 32;", "lanes of warp 0 name different barriers or counts"),
])
def test_operands_ptx_leaves_undefined_fail_closed(statement, why):
    with pytest.raises(IllegalInstruction, match=why):
        run(kernel(statement), n=32)


def test_warps_arriving_with_different_counts_fail_closed():
    body = """
    setp.ge.u32 %p1, %r0, 32;
    @%p1 bra OTHER;
    bar.arrive 1, 64;
    bra DONE;
OTHER:
    bar.arrive 1, 96;
DONE:
    """
    with pytest.raises(IllegalInstruction, match="different thread counts"):
        run(kernel(body), n=96)
