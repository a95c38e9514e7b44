"""Program: decode once, lazily, cached by content; unmodelled instructions fail only when executed."""
from __future__ import annotations

from gputwin.emu.amd import program
from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.standalone import Arena
from tests.emu.amd.helpers import asm


def test_same_bytes_share_one_program_and_decode_lazily():
    code = asm("s_branch skip\ns_code_end\nskip:\ns_endpgm")
    p = program.program_for(code)
    assert program.program_for(bytes(code)) is p
    run_dispatch(Arena().mem, Dispatch(code_address=0x1000, code=code))
    assert sorted(p.steps) == [0, 8]                  # the skipped s_code_end was never decoded
    assert program.program_for(code + b"\0\0\0\0") is not p


def test_code_loaded_at_two_addresses_reuses_the_decode():
    arena = Arena()
    code = asm("s_nop 0\ns_endpgm")
    a, b = arena.alloc(64, code), arena.alloc(64, code)
    run_dispatch(arena.mem, Dispatch(code_address=a))
    before = len(program._CACHE)
    run_dispatch(arena.mem, Dispatch(code_address=b))
    assert len(program._CACHE) == before
