"""Shared helpers for the executor-core tests: assemble snippets and run them on hand-made waves."""
from __future__ import annotations

import functools
import os
import pathlib
import shutil
import subprocess
import tempfile

import numpy as np

from gputwin.emu.amd.dispatch import Context
from gputwin.emu.amd.executor import Executor
from gputwin.emu.watchdog import Watchdog
from gputwin.emu.amd.program import Program
from gputwin.emu.amd.scratch import Scratch
from gputwin.emu.amd.standalone import Arena, load_kernel
from gputwin.emu.amd.wave import WaveGroup
from gputwin.emu.memory import AddressSpace

LLVM_MC = shutil.which("llvm-mc-19")
FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "amd" / "cl"
M32, M64 = (1 << 32) - 1, (1 << 64) - 1
OBJCOPY = shutil.which("llvm-objcopy-19")


@functools.lru_cache(maxsize=None)
def asm(text: str) -> bytes:
    """Machine code for gfx1100 assembly `text` (labels allowed): llvm-mc-19, else the team assembler."""
    if LLVM_MC is not None and OBJCOPY is not None:
        with tempfile.TemporaryDirectory() as d:
            obj, bin_ = os.path.join(d, "a.o"), os.path.join(d, "a.bin")
            out = subprocess.run([LLVM_MC, "-triple=amdgcn", "-mcpu=gfx1100", "-filetype=obj", "-o", obj],
                                 input=text, capture_output=True, text=True, check=False)
            if out.returncode:
                raise AssertionError(out.stderr)
            subprocess.run([OBJCOPY, "-O", "binary", "--only-section=.text", obj, bin_], check=True)
            with open(bin_, "rb") as f:
                return f.read()
    from gputwin.emu.amd.isa import assemble
    return assemble(text, "gfx1100")


def make_ctx(mem=None, *, waves_per_group=1, lanes=32, nwg=1, lds_bytes=0, scratch_bytes=0, code_address=0x1000):
    nwaves = nwg * waves_per_group
    return Context(mem=mem or AddressSpace(), code_address=code_address, waves_per_group=waves_per_group,
                   lanes=lanes, lds=np.zeros(nwg * lds_bytes, np.uint8), lds_bytes=lds_bytes,
                   scratch=Scratch(np.zeros(nwaves * lanes * scratch_bytes, np.uint8), scratch_bytes, lanes, 0,
                                   nwaves),
                   first_wave=0, ended=np.zeros(nwg, np.int64))


def run(text: str, *, n=2, wave64=False, sgprs=None, vgprs=None, exec_mask=None, scc=None, mem=None,
        waves_per_group=1, lds_bytes=0, scratch_bytes=0, mode=0, watchdog_s=10.0):
    """Run `text` (s_endpgm appended) on n waves; returns the final state merged into one WaveGroup.

    sgprs: {index: value or per-wave list}; vgprs: {reg: array broadcastable to (n, lanes)}."""
    lanes = 64 if wave64 else 32
    nwg = -(-n // waves_per_group)
    ctx = make_ctx(mem, waves_per_group=waves_per_group, lanes=lanes, nwg=nwg, lds_bytes=lds_bytes,
                   scratch_bytes=scratch_bytes)
    g = WaveGroup(ctx, np.arange(n), np.arange(n) // waves_per_group, wave64=wave64, mode=mode, pc=0)
    g.set_exec(np.ones((n, lanes), bool) if exec_mask is None else exec_mask)
    for i, v in (sgprs or {}).items():
        g.s[i] = v
    for r, v in (vgprs or {}).items():
        g.set_vgpr(r, np.broadcast_to(np.asarray(v, np.uint32), (n, lanes)), mask=np.ones((n, lanes), bool))
    if scc is not None:
        g.scc = np.broadcast_to(np.asarray(scc, bool), (n,)).copy()
    prog = Program(asm(text + "\ns_endpgm\n"), wave64=wave64)
    ended = []
    ex = Executor(ctx, prog, Watchdog(watchdog_s), on_end=ended.append)
    ex.run([g])
    final = WaveGroup.merge(ended)            # groups ended separately or merged: restore wave order
    return final.take(np.argsort(final.waves))


def kernel(obj: str, name: str, wave64: bool):
    """(Arena, Kernel) for fixture code object `obj` (fixtures/amd/cl/obj[.w64].hsaco)."""
    arena = Arena()
    path = FIXTURES / (obj + (".w64" if wave64 else "") + ".hsaco")
    return arena, load_kernel(arena, path.read_bytes(), name)


def sgpr(g, i, wave=0) -> int:
    return int(g.s[i, wave])


def sgpr64(g, i, wave=0) -> int:
    return sgpr(g, i, wave) | sgpr(g, i + 1, wave) << 32
