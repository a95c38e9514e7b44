"""The checkers' pieces on their own: configuration, allocation extents and the nearest-allocation
report, the initcheck shadow kept by engine writes, LDS race epochs, and the standalone dispatch path."""
from __future__ import annotations

import numpy as np
import pytest

from gputwin import sanitizer_config as config
from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.program import program_for
from gputwin.emu.amd.standalone import Arena
from gputwin.emu.memory import AddressSpace
from gputwin.emu.memops import copy, fill
from gputwin.emu.sanitizer import initcheck, memcheck
from gputwin.emu.sanitizer.racecheck import LdsRaces
from gputwin.errors import GpuFault, MemoryFault, SanitizerError
from tests.emu.amd.helpers import asm

U64 = np.uint64


def test_config_reads_subsets_all_and_rejects_unknown_names():
    assert config.checkers({}) == frozenset()
    assert config.checkers({"GPUTWIN_SANITIZE": " memcheck, racecheck "}) == {"memcheck", "racecheck"}
    assert config.checkers({"GPUTWIN_SANITIZE": "all"}) == set(config.CHECKERS)
    with pytest.raises(ValueError, match="unknown checker.*memchek.*valid: memcheck"):
        config.checkers({"GPUTWIN_SANITIZE": "memchek"})
    assert not config.report_all({}) and config.report_all({"GPUTWIN_SANITIZE_REPORT": "all"})
    with pytest.raises(ValueError, match="GPUTWIN_SANITIZE_REPORT"):
        config.report_all({"GPUTWIN_SANITIZE_REPORT": "some"})


def test_sanitizer_error_is_a_gpu_fault():
    e = SanitizerError("x", address=4)
    assert isinstance(e, GpuFault) and e.kind == "sanitizer" and e.findings == ["x"]


def test_accesses_are_bounded_by_the_extent_not_the_page_and_faults_are_left_to_the_fault():
    mem = AddressSpace()
    mem.map(0x10000, 0x1000, extent=100, name="buf")
    mem.map(0x20000, 0x1000)
    inside = np.array([0x10000, 0x10060], U64)
    assert memcheck.outside_allocations(mem, inside, 4) is None
    bad = memcheck.outside_allocations(mem, np.array([0x10000, 0x10062, 0x20ffc, 0x30000], U64), 4)
    assert bad.tolist() == [False, True, False, False]      # unmapped: left to the MemoryFault
    near = memcheck.nearest_allocation
    assert near(mem, 0x10070, 4) == "12 bytes past the end of a 100-byte allocation at 0x10000 (buf)"
    assert near(mem, 0x1fff0, 4) == "16 bytes before the start of a 4096-byte allocation at 0x20000"
    assert "the last 2 of its 4 bytes past the end" in memcheck.nearest_allocation(mem, 0x10062, 4)


def test_engine_writes_initialise_undefined_memory(monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE", "initcheck")
    mem = AddressSpace()
    mem.map(0x10000, 0x1000, undefined=True)
    mem.map(0x20000, 0x1000)                        # defined (the CPU maps it): never tracked
    mem.write(0x20000, bytes(16))
    addrs = np.array([0x10000, 0x10008, 0x10010, 0x20000], U64)
    assert initcheck.uninitialised(mem, addrs, 4).tolist() == [True, True, True, False]
    fill(mem, 0x10000, b"\xff", 8)                   # an SDMA fill
    copy(mem, 0x10008, 0x20000, 4)                   # a copy
    assert initcheck.uninitialised(mem, addrs, 4).tolist() == [False, False, True, False]
    initcheck.mark(mem, np.array([0x10010], U64), 2)   # a 2-byte shader store: half the dword
    assert initcheck.uninitialised(mem, addrs, 4).tolist() == [False, False, True, False]
    assert initcheck.uninitialised(mem, np.array([0x10010], U64), 2) is None


def test_no_shadow_when_initcheck_is_off(monkeypatch):
    monkeypatch.delenv("GPUTWIN_SANITIZE", raising=False)
    mem = AddressSpace()
    mem.map(0x10000, 0x1000, undefined=True)
    assert mem.find(0x10000).shadow is None


def test_lds_race_is_found_in_either_order():
    def run(first_writer: bool):
        r = LdsRaces(64, 1)
        wg = np.zeros(1, np.int64)
        if first_writer:
            assert r.access(np.array([8]), np.array([1]), wg, 4, True) is None
            return r.access(np.array([8]), np.array([0]), wg, 4, False)
        assert r.access(np.array([8]), np.array([0]), wg, 4, False) is None
        return r.access(np.array([8]), np.array([1]), wg, 4, True)
    raw, war = run(True), run(False)
    assert (raw.kind, raw.other_wave) == ("read-after-write", 1)
    assert (war.kind, war.other_wave) == ("write-after-read", 0)


def test_a_barrier_orders_lds_accesses_and_one_wave_never_races_itself():
    r = LdsRaces(64, 2)
    wg0 = np.zeros(1, np.int64)
    assert r.access(np.array([0]), np.array([3]), wg0, 4, True) is None
    assert r.access(np.array([0]), np.array([3]), wg0, 4, False) is None     # same wave
    r.barrier(np.array([0]))
    assert r.access(np.array([0]), np.array([5]), wg0, 4, False) is None     # after the barrier
    both = r.access(np.array([16, 16]), np.array([5, 6]), np.zeros(2, np.int64), 4, True)   # one instruction
    assert (both.kind, both.other_wave) == ("write-after-write", 6)


STORE_PAST = """
v_lshlrev_b32 v1, 2, v0
v_add_nc_u32 v1, 4, v1
global_store_b32 v1, v0, s[0:1]
s_endpgm
"""


def _store_past(arena, out, block=33):
    return run_dispatch(arena.mem, Dispatch(code_address=0x40000, code=asm(STORE_PAST), block=(block, 1, 1),
                                            user_sgprs=[out & 0xFFFFFFFF, out >> 32]))


def test_standalone_dispatch_raises_with_the_lane(monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE", "memcheck")
    arena = Arena()
    out = arena.alloc(4 * 33)
    with pytest.raises(SanitizerError) as info:
        _store_past(arena, out)
    e = info.value
    assert (e.address, e.write, e.wave, e.kernel_offset) == (out + 132, True, 1, 8)
    assert "by wave 1 lane 0 of workgroup (0, 0, 0)" in str(e) and e.arch == "gfx1100"
    _store_past(arena, out, block=32)              # in bounds: nothing to say


def test_off_by_default_runs_the_plain_program(monkeypatch):
    monkeypatch.delenv("GPUTWIN_SANITIZE", raising=False)
    arena = Arena()
    out = arena.alloc(4 * 33)
    _store_past(arena, out)                         # past the extent, inside the page: hardware is silent
    assert arena.array(out + 132, np.uint32, 1)[0] == 32
    assert not program_for(asm(STORE_PAST)).sanitize


def test_byte_accesses_race_only_where_their_bytes_overlap():
    r = LdsRaces(64, 1)
    wg = np.zeros(1, np.int64)
    assert r.access(np.array([8]), np.array([1]), wg, 1, True) is None       # wave 1 writes byte 8
    assert r.access(np.array([9]), np.array([2]), wg, 2, True) is None       # wave 2 bytes 9-10: no overlap
    assert r.access(np.array([11]), np.array([3]), wg, 1, False) is None     # byte 11: nobody wrote it
    race = r.access(np.array([8]), np.array([3]), wg, 4, False)               # the whole dword: 9-10 by 2
    assert (race.kind, race.other_wave) == ("read-after-write", 2)
    spill = r.access(np.array([14]), np.array([4]), wg, 4, True)             # misaligned: dwords 3 and 4
    assert spill is None and r.access(np.array([16]), np.array([5]), wg, 1, False).other_wave == 4


def _dispatch(text, **kw):
    return Dispatch(code_address=0x40000, code=asm(text + "\ns_endpgm\n"), **kw)


def test_waves_released_from_different_barriers_are_a_mismatch(monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE", "synccheck")
    text = """
v_readfirstlane_b32 s2, v0
s_cmp_lt_u32 s2, 32
s_cbranch_scc1 first
s_barrier
s_branch done
first:
s_barrier
done:
"""
    with pytest.raises(SanitizerError, match="synccheck: barrier mismatch.*released from different s_barrier"):
        run_dispatch(Arena().mem, _dispatch(text, block=(64, 1, 1)))
    run_dispatch(Arena().mem, _dispatch(text, block=(32, 1, 1)))     # one wave: nothing to pair up


def test_private_access_past_the_lane_size_stays_the_emulators_fault(monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE", "memcheck")
    with pytest.raises(MemoryFault, match="scratch access outside the 16 private bytes"):
        run_dispatch(Arena().mem, _dispatch("v_mov_b32 v1, 0\nscratch_store_b32 off, v1, off offset:16",
                                            block=(32, 1, 1), scratch_bytes_per_lane=16))


def test_buffer_load_inside_num_records_but_past_the_allocation(monkeypatch):
    monkeypatch.setenv("GPUTWIN_SANITIZE", "memcheck")
    arena = Arena()
    va = arena.alloc(100)
    vsharp = [va & 0xFFFFFFFF, (va >> 32) & 0xFFFF, 4096, 3 << 28]     # raw buffer, 4096 bytes in range
    text = "v_lshlrev_b32 v2, 2, v0\nbuffer_load_b32 v1, v2, s[0:3], 0 offen"
    with pytest.raises(SanitizerError) as info:
        run_dispatch(arena.mem, _dispatch(text, block=(32, 1, 1), user_sgprs=vsharp))
    assert info.value.address == va + 100 and "0 bytes past the end of a 100-byte allocation" in str(info.value)
    run_dispatch(arena.mem, _dispatch(text, block=(25, 1, 1), user_sgprs=vsharp))


def test_a_misspelt_checker_stops_open_device(monkeypatch):
    import gputwin
    monkeypatch.setenv("GPUTWIN_SANITIZE", "memchek")
    with pytest.raises(ValueError, match="unknown checker"):
        gputwin.open_device("MOCKAMD")


@pytest.mark.parametrize("offset,found", [(96, None), (100, SanitizerError), (512, MemoryFault)])
def test_flat_lds_access_past_the_declared_segment_but_inside_the_allocation(monkeypatch, offset, found):
    from gputwin.emu.amd.hwreg import SHARED_APERTURE_HI
    monkeypatch.setenv("GPUTWIN_SANITIZE", "memcheck")
    text = f"v_mov_b32 v1, {offset}\nv_mov_b32 v2, {SHARED_APERTURE_HI:#x}\nflat_store_b32 v[1:2], v0"
    d = _dispatch(text, block=(32, 1, 1), lds_bytes=512, group_segment=100)
    if found is None:
        run_dispatch(Arena().mem, d)
        return
    with pytest.raises(found) as info:      # past the allocation: the emulator's own fault, unchanged
        run_dispatch(Arena().mem, d)
    if found is SanitizerError:
        assert "0 bytes past the end of the workgroup's 100-byte group segment" in str(info.value)


def test_standalone_kernels_are_bounded_by_their_declared_lds_and_named(monkeypatch):
    import pathlib

    from gputwin.emu.amd.standalone import load_kernel
    monkeypatch.setenv("GPUTWIN_SANITIZE", "memcheck")
    image = (pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "amd" / "sanitize"
             / "sanitize.gfx1100.hsaco").read_bytes()
    arena = Arena()
    k = load_kernel(arena, image, "lds_small")
    out, src = arena.alloc(400), arena.alloc(400, np.arange(100, dtype=np.uint32))
    k(out, src, 0, block=(100, 1, 1))
    with pytest.raises(SanitizerError) as info:
        k(out, src, 1, block=(100, 1, 1))
    e = info.value
    assert e.kernel == "lds_small" and 0 < e.kernel_offset < 0x200 and e.address == 400
    assert "the workgroup's 400-byte group segment" in str(e)
