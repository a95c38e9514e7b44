"""Program: decode once, lazily, cached by content; unmodelled instructions fail only when executed."""
from __future__ import annotations

from gputwin.emu.amd import program
from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
from gputwin.emu.amd.standalone import Arena
from tests.emu.amd.helpers import asm


def test_same_bytes_share_one_program_and_decode_lazily(monkeypatch):
    monkeypatch.delenv("GPUTWIN_SANITIZE", raising=False)   # a sanitized dispatch has a Program of its own
    code = asm("s_branch skip\ns_code_end\nskip:\ns_endpgm")
    p = program.program_for(code)
    assert program.program_for(bytes(code)) is p
    run_dispatch(Arena().mem, Dispatch(code_address=0x1000, code=code))
    assert sorted(p.steps) == [0, 8]                  # the skipped s_code_end was never decoded
    assert program.program_for(code + b"\0\0\0\0") is not p


def test_code_in_memory_is_reused_until_its_bytes_change():
    arena = Arena()
    va = arena.alloc(4096, asm("s_nop 0\ns_endpgm"))
    run_dispatch(arena.mem, Dispatch(code_address=va))
    first = program.program_at(arena.mem.find(va).data, 0)
    arena.mem.write(va + 64, b"\x01" * 64)                 # data after the code: the decode stays valid
    run_dispatch(arena.mem, Dispatch(code_address=va))
    assert program.program_at(arena.mem.find(va).data, 0) is first
    out = arena.alloc(4)
    arena.mem.write(va, asm("v_mov_b32 v1, 5\nv_mov_b32 v2, 0\nglobal_store_b32 v2, v1, s[0:1]\ns_endpgm"))
    run_dispatch(arena.mem, Dispatch(code_address=va, user_sgprs=[out & 0xFFFFFFFF, out >> 32]))
    assert arena.array(out, "<u4", 1)[0] == 5                # new code at the same address is decoded anew
