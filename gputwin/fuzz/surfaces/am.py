"""The kernel-less AMD boot path (gputwin/drivers/amd/am/ over gputwin/emu/amd/soc/): an emulated board,
attached in-process, gets hostile MMIO traffic on the registers its blocks model (and on random dwords),
scribbles over the discovery table and the boot memory, and the driver's boot in between, on a cold or a
half-booted chip. Every register access must succeed or raise RegisterError; every boot must succeed or
raise BootError naming its step; nothing else may escape, and nothing may spin.
"""
from __future__ import annotations

import functools
import gc
import random

from gputwin.abi.amdgpu import discovery as d
from gputwin.fuzz.surface import Recorder, Surface, register

ARCHES = ("gfx1100", "gfx1201")
VRAM = 256 << 20   # the smallest board: BAR0 shows all of it
FB_BASE = 0x80_0000_0000


@functools.cache
def _modelled(arch: str) -> tuple[int, ...]:
    from gputwin.emu.amd.soc.board import build
    return tuple(build(arch, vram_size=VRAM).regs.dwords())


def _value(rnd: random.Random) -> int:
    return rnd.choice([0, 1, 2, 4, 0x10, 0x3C, 0x20000, 0x30000, 0x80000000, 0xFFFFFFFF, FB_BASE >> 20, FB_BASE >> 32,
                       (FB_BASE + 0x100000) & 0xFFFFFFFF, 0x7F000, rnd.getrandbits(32), rnd.getrandbits(8)])


def _step(rnd: random.Random, arch: str) -> list:
    kind = rnd.choice(["write", "write", "write", "read", "wild", "boot", "scribble"])
    if kind in ("write", "read"):
        dword = rnd.choice(_modelled(arch))
        return [kind, dword, _value(rnd)] if kind == "write" else [kind, dword]
    if kind == "wild":
        return ["write", rnd.randrange(0, 1 << 20), _value(rnd)]
    if kind == "scribble":   # the discovery binary, or the boot memory (staging buffer, ring, TMR)
        where = rnd.choice([VRAM - d.DISCOVERY_TMR_OFFSET + rnd.randrange(512), rnd.randrange(0x300000)])
        return ["scribble", where, rnd.getrandbits(8)]
    return ["boot"]


@register
class AmBoot(Surface):
    name = "am"
    doc = "AM boot: hostile MMIO to the emulated board's PSP/SMU/NBIO registers, table scribbles, driver boots"

    def generate(self, rnd: random.Random) -> dict:
        arch = rnd.choice(ARCHES)
        steps = [_step(rnd, arch) for _ in range(rnd.randrange(1, 24))]
        if rnd.random() < 0.5:
            steps.insert(0, ["boot"])   # start from a booted chip: then the traffic meets a running sOS/SMU
        return {"arch": arch, "steps": steps}

    def execute(self, case: dict, rec: Recorder) -> None:
        from gputwin.drivers.amd.am.boot import boot
        from gputwin.emu.amd.soc.board import build
        from gputwin.mock.pci import DirectPciDevice
        f = build(case["arch"], vram_size=VRAM)
        pci = DirectPciDevice(f)
        for i, step in enumerate(case["steps"]):
            kind = step[0]
            if kind == "write":
                rec.step(i, f.regs.write, step[1], step[2])
            elif kind == "read":
                rec.step(i, f.regs.read, step[1])
            elif kind == "scribble":
                f.vram[step[1]] = step[2]
                rec.ok()
            else:
                rec.step(i, boot, pci, timeout=0.002)
        del f, pci
        gc.collect()   # the board's blocks refer back to it: free its VRAM mapping now, not at some later GC
