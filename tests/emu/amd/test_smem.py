"""SMEM: scalar loads from an SGPR base (immediate and SGPR offsets), buffer loads with a V#, faults."""
from __future__ import annotations

import numpy as np
import pytest

from gputwin.emu.amd.standalone import Arena
from gputwin.errors import MemoryFault
from tests.emu.amd.helpers import run


def setup():
    arena = Arena()
    va = arena.alloc(4096, np.arange(1024, dtype=np.uint32) * 3)
    return arena, va


def test_s_load_immediate_and_sgpr_offsets_per_wave():
    arena, va = setup()
    g = run("s_load_b64 s[4:5], s[0:1], 0x8\ns_load_b128 s[8:11], s[0:1], s2 offset:0x4\n"
            "s_load_b32 s12, s[0:1], 0x6", n=2, mem=arena.mem, sgprs={0: va & 0xFFFFFFFF, 1: va >> 32, 2: [0, 16]})
    assert g.s[4:6, 0].tolist() == [6, 9]
    assert g.s[8:12, 0].tolist() == [3, 6, 9, 12] and g.s[8:12, 1].tolist() == [15, 18, 21, 24]
    assert g.s[12, 0] == 3                                  # the low two address bits are ignored


def test_s_buffer_load_reads_zero_past_num_records():
    arena, va = setup()
    g = run("s_buffer_load_b128 s[12:15], s[4:7], 0x8", n=1, mem=arena.mem,
            sgprs={4: va & 0xFFFFFFFF, 5: va >> 32, 6: 16, 7: 0})
    assert g.s[12:16, 0].tolist() == [6, 9, 0, 0]


def test_s_load_from_unmapped_memory_faults_with_the_wave():
    arena, va = setup()
    with pytest.raises(MemoryFault, match="read of 4 bytes at unmapped address") as e:
        run("s_load_b32 s4, s[0:1], 0x0", n=2, mem=arena.mem,
            sgprs={0: [va & 0xFFFFFFFF, 0x1000], 1: [va >> 32, 0]})
    assert e.value.address == 0x1000 and e.value.wave == 1 and e.value.pc == 0x1000
