"""The emulated GPU as a whole (gputwin.emu.amd.gpu): arch profiles, queues, doorbells, fault routing."""
import re
import time

import pytest

from gputwin.emu.amd.gpu import GPU, PROFILES
from gputwin.errors import GpuHang
from tests.emu.amd.gpu_rig import DATA, Rig, write_data


@pytest.mark.parametrize("arch,target,wave", [("gfx1100", 110000, 32), ("gfx1201", 120001, 32), ("gfx942", 90402, 64)])
def test_profiles_carry_their_target_version_and_wave_size(arch, target, wave):
    p = GPU(arch).profile
    assert (p.gfx_target_version, p.wave_size) == (target, wave)
    assert p.simd_count == p.cu_count * p.simd_per_cu and p.cu_per_simd_array * p.array_count >= p.cu_count


def test_profiles_have_distinct_device_ids():
    assert len({p.device_id for p in PROFILES.values()}) == len(PROFILES)


def test_unknown_arch_lists_the_modelled_ones():
    with pytest.raises(ValueError, match="gfx1100.*gfx942"):
        GPU("gfx9999")


def test_ring_size_must_be_a_power_of_two():
    with pytest.raises(ValueError, match="ring size 6144 is not a power of two"):
        GPU().create_compute_queue(0x1000, 0x1800, 0, 8)


def test_each_gpu_has_its_own_address_space():
    a, b = GPU(), GPU()
    a.mem.map(0x1000, 0x1000)
    assert a.mem.find(0x1000) is not None and b.mem.find(0x1000) is None


def test_destroyed_queue_no_longer_runs():
    r = Rig()
    r.gpu.destroy_queue(r.q)
    r.submit(*write_data(DATA, 1))
    assert r.u32(0)[0] == 0


def test_hang_in_a_dispatch_is_reported_as_hang_and_stops_only_that_queue(monkeypatch):
    import gputwin.emu.amd.cp as cp

    def hang(*a, **k):
        raise GpuHang("watchdog")
    monkeypatch.setattr(cp, "build_dispatch", hang)
    r = Rig()
    q2 = r.gpu.create_compute_queue(DATA + 0x8000, 0x1000, DATA + 0x100, DATA + 0x108)
    r.submit(0xC0031500, 1, 1, 1, 1)      # PACKET3(DISPATCH_DIRECT, 3)
    assert [e.kind for e in r.events] == ["hang"] and r.q.stopped and not q2.stopped


def test_listener_may_poke_the_gpu_from_its_interrupt_handler():
    r = Rig()
    r.gpu.listener = lambda ev: r.gpu.run()   # a driver that pokes the GPU from its interrupt handler
    from tests.emu.amd.gpu_rig import release_mem
    r.submit(*release_mem(DATA, 1, int_sel=2, ctx=3), *write_data(DATA + 8, 2))
    assert r.u32(8)[0] == 2


def test_runaway_write_pointer_hangs_the_queue_at_the_watchdog(monkeypatch):
    from gputwin.abi import amd_pm4 as pm4
    from tests.emu.amd.gpu_rig import RING, RING_BYTES
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "0.2")
    r = Rig()
    nops = [pm4.PACKET3(pm4.PACKET3_NOP, 0), 0] * (RING_BYTES // 8)
    r.gpu.mem.write(RING, b"".join(w.to_bytes(4, "little") for w in nops))
    r.gpu.ring_doorbell(r.q, 1 << 60)        # far beyond anything written: the ring is replayed forever
    assert [e.kind for e in r.events] == ["hang"] and r.q.stopped


def test_a_huge_grid_through_dispatch_direct_hangs_at_the_runs_wall_clock(monkeypatch):
    from tests.emu.amd.test_cp import S_ENDPGM, _dispatch, _program
    monkeypatch.setenv("GPUTWIN_WATCHDOG_S", "0.3")
    r = Rig()
    t0 = time.monotonic()
    r.submit(*_program(r, S_ENDPGM, block=(32, 1, 1)), *_dispatch((1 << 24, 1, 1)))
    assert time.monotonic() - t0 < 5                  # was: the whole 16M-wave grid, then the packet check
    assert [e.kind for e in r.events] == ["hang"] and r.q.stopped
    assert re.search(r"wall-clock limit of 0\.3 s \(GPUTWIN_WATCHDOG_S\); \d+ of 16777216 waves finished",
                     str(r.q.error))
