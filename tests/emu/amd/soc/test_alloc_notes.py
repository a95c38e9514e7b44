"""gputwin's allocation notes (abi/am_alloc_notes.py) between the AM driver and the emulated GMC: with a
sanitizer on, regions are cut at the driver's allocations with their exact sizes, and initcheck's record of
written VRAM survives the GMC's rebuild at every TLB invalidate; with the sanitizers off nothing changes."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gputwin.abi.am_alloc_notes import NOTE, NOTE_ALLOCATED, NOTE_FREED, NOTE_OFFSET
from gputwin.abi.amdgpu import versions
from gputwin.drivers.amd.am.gmc import VRAM_VA, Gmc
from gputwin.drivers.amd.am.notes import AllocationNotes
from gputwin.emu.amd.soc.alloc_notes import AllocationNotes as BoardNotes
from gputwin.emu.amd.soc.regfile import RegisterError
from gputwin.emu.sanitizer import initcheck, memcheck
from tests.emu.amd.soc.am_rig import booted

MIB = 1 << 20


def _gmc(monkeypatch, sanitize: str, arch: str = "gfx1100"):
    monkeypatch.setenv("GPUTWIN_SANITIZE", sanitize)   # before the board is built: it keeps the VRAM record
    f, pci, chip = booted(arch)
    g = Gmc(chip.mmio, chip.vram, arch, chip.reserved[0] + chip.reserved[1], 256 * MIB, 1 << 30,
            versions.gc(arch), versions.mmhub(arch))
    return f, g


def _region(f, va):
    return f.gpu.mem.find(va)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_regions_are_cut_at_allocations_with_their_exact_sizes(monkeypatch, arch):
    f, g = _gmc(monkeypatch, "memcheck", arch)
    assert g.notes.present
    a, b = g.alloc(100), g.alloc(5000)             # adjacent pages: one run of the page walk
    assert b == a + 4096
    ra, rb = _region(f, VRAM_VA + a), _region(f, VRAM_VA + b)
    assert (ra.base, ra.data.size, ra.alloc_end) == (VRAM_VA + a, 4096, VRAM_VA + a + 100)
    assert (rb.base, rb.data.size, rb.alloc_end) == (VRAM_VA + b, 8192, VRAM_VA + b + 5000)
    past = memcheck.outside_allocations(f.gpu.mem, np.array([VRAM_VA + a + 96, VRAM_VA + a + 100], np.uint64), 4)
    assert past.tolist() == [False, True]
    where = memcheck.nearest_allocation(f.gpu.mem, VRAM_VA + a + 100, 4)
    assert where.startswith(f"0 bytes past the end of a 100-byte allocation at {VRAM_VA + a:#x}")
    g.free(a, 100)
    assert _region(f, VRAM_VA + a) is None and _region(f, VRAM_VA + b).alloc_end == VRAM_VA + b + 5000


def test_with_the_sanitizers_off_the_regions_are_the_page_walk_runs(monkeypatch):
    f, g = _gmc(monkeypatch, "")
    a, b = g.alloc(100), g.alloc(5000)
    r = _region(f, VRAM_VA + a)
    assert r is _region(f, VRAM_VA + b) and r.extent is None and r.shadow is None and f.vram_written is None


def test_the_written_record_lives_with_vram_across_rebuilds_and_a_fresh_allocation_clears_it(monkeypatch):
    f, g = _gmc(monkeypatch, "initcheck")
    a = g.alloc(256)
    mem, va = f.gpu.mem, VRAM_VA + a
    addrs = np.array([va, va + 128], np.uint64)
    assert initcheck.uninitialised(mem, addrs, 4).tolist() == [True, True]
    g.vram.write(a, bytes(64))                      # the host, through BAR0
    initcheck.mark(f.gpu.mem, addrs[1:], 4)         # a shader store
    g.alloc(4096)                                   # another allocation: the GMC rebuilds its regions
    assert _region(f, va) is not mem.find(va)
    assert initcheck.uninitialised(f.gpu.mem, np.array([va, va + 60, va + 64, va + 128], np.uint64), 4).tolist() \
        == [False, False, True, False]
    g.free(a, 256)
    again = g.alloc(256)                            # first fit: the same VRAM, which held the old bytes
    assert again == a
    assert initcheck.uninitialised(f.gpu.mem, addrs, 4).tolist() == [True, True]


@pytest.mark.parametrize("visible", [True, False], ids=["bar0", "mm-data"])
def test_host_writes_through_bar0_or_the_mm_data_window_mark_vram_written(monkeypatch, visible):
    f, g = _gmc(monkeypatch, "initcheck")
    a = g.alloc_visible(4096) if visible else g.alloc(4096)
    assert (a + 4096 <= g.vram.bar.size) == visible   # the driver reaches the rest through MM_INDEX/MM_DATA
    g.vram.write(a + 8, bytes(4))
    got = initcheck.uninitialised(f.gpu.mem, np.array([VRAM_VA + a + 8, VRAM_VA + a + 12], np.uint64), 4)
    assert got.tolist() == [False, True]


def test_notes_fail_closed(monkeypatch):
    f, g = _gmc(monkeypatch, "memcheck")
    a = g.alloc(100)
    for va, size, command in ((VRAM_VA + a, 100, NOTE_ALLOCATED), (VRAM_VA + 3 * MIB, 0, NOTE_FREED),
                              (VRAM_VA + 5 * MIB, 0, NOTE_ALLOCATED), (VRAM_VA + 5 * MIB, 8, 7)):
        with pytest.raises(RegisterError, match="allocation note"):
            g.mmio.bar.write(NOTE_OFFSET, NOTE.pack(va, size, command))


class _RealBoardBar:
    """A BAR5 whose notes window holds no gputwin magic, as on a real board: records every write."""
    size = 1 << 20

    def __init__(self):
        self.writes = []

    def read(self, offset, size):
        return bytes(size)

    def write(self, offset, data):
        self.writes.append(offset)


def test_a_driver_writes_no_notes_on_a_board_without_the_window():
    bar = _RealBoardBar()
    notes = AllocationNotes(bar)
    notes.allocated(VRAM_VA, 4096)
    notes.freed(VRAM_VA)
    assert not notes.present and bar.writes == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 3 * 4096)), max_size=8),
       st.integers(0, 20 * 4096), st.integers(1, 30 * 4096))
def test_pieces_tile_the_run_and_stay_inside_their_allocation_pages(allocs, va, size):
    notes = BoardNotes.__new__(BoardNotes)   # only the bookkeeping: no board
    notes.reset()
    end_of_last = 0
    for page, asked in allocs:                          # disjoint allocations in page order
        start = max(page * 4096, end_of_last)
        notes._starts.append(start)
        notes.sizes[start] = asked
        end_of_last = -(-(start + asked) // 4096) * 4096
    pieces = notes.pieces(va, size)
    assert pieces[0][0] == va and sum(p[1] for p in pieces) == size
    assert all(a[0] + a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
    for at, n, extent, owner in pieces:
        if owner is None:
            assert extent is None and not any(s <= at < -(-(s + notes.sizes[s]) // 4096) * 4096 for s in notes.sizes)
        else:
            assert owner <= at and at + n <= -(-(owner + notes.sizes[owner]) // 4096) * 4096
            assert extent == max(0, owner + notes.sizes[owner] - at)
