"""Instruction streams through the emulator's standalone entry point (gputwin.emu.amd.dispatch.run_dispatch),
per arch (gfx1100, gfx1201, gfx942).

Three kinds of case: random dwords, and dwords drawn from the arch's compiled fixtures in random order, run
as raw code (with plausible user SGPRs: a pointer to a random data buffer); and clang-compiled kernels from fixtures/drivers/ with bits flipped or dwords replaced inside
.text, loaded with their real descriptor and launched with buffers and small values. Allowed outcomes:
finishing, or a gputwin error (IllegalInstruction, MemoryFault, GpuFault, GpuHang from the watchdog).
"""
from __future__ import annotations

import functools
import random
from pathlib import Path

import numpy as np

from gputwin.fuzz.surface import Recorder, Surface, register

ARCHES = ("gfx1100", "gfx1201", "gfx942")
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "drivers"
CODE_OBJECTS = {"gfx1100": ["kernels_gfx1100_v5.hsaco", "kernels_hip_gfx1100.hsaco"],
                "gfx1201": ["kernels_gfx1201_v5.hsaco", "kernels_hip_gfx1201.hsaco"],
                "gfx942": ["kernels_gfx942_v5.hsaco", "kernels_hip_gfx942.hsaco"]}
DATA_BYTES = 1 << 16
WATCHDOG_S = 1.0


@functools.lru_cache(maxsize=None)
def fixture(name: str) -> tuple[bytes, tuple[int, int], tuple[str, ...]]:
    """(image, (.text file offset, size), kernel names) of one fixture code object."""
    from gputwin.abi.code_object import CodeObject
    image = (FIXTURES / name).read_bytes()
    co = CodeObject.parse(image)
    text = next(s for s in co.sections if s.name == ".text")
    return image, (text.offset, text.size), tuple(sorted(co.kernels))


@functools.lru_cache(maxsize=None)
def text_words(arch: str) -> tuple[int, ...]:
    """Every dword of the arch's fixture .text sections (instruction words and literals alike)."""
    words = []
    for name in CODE_OBJECTS[arch]:
        image, (lo, size), _ = fixture(name)
        words += np.frombuffer(image[lo:lo + size - size % 4], "<u4").tolist()
    return tuple(words)


def mutate(rnd: random.Random, blob: bytearray, lo: int, hi: int) -> list:
    """Flip bits / replace dwords in blob[lo:hi] (in place); returns the edits as [offset, new byte] pairs."""
    edits = []
    for _ in range(rnd.choice([1, 1, 2, 3, 8])):
        off = rnd.randrange(lo, hi)
        if rnd.random() < 0.7:
            new = [[off, blob[off] ^ (1 << rnd.randrange(8))]]
        else:
            off &= ~3
            word = rnd.choice([rnd.getrandbits(32), 0, 0xFFFFFFFF, 0xBF800000 | rnd.getrandbits(16)])
            new = [[off + i, (word >> 8 * i) & 0xFF] for i in range(4) if off + i < hi]
        for o, b in new:
            blob[o] = b
        edits += new
    return edits


@register
class Isa(Surface):
    name = "isa"
    doc = "random and bit-flipped instruction streams (clang fixtures) through run_dispatch, per arch"

    def generate(self, rnd: random.Random) -> dict:
        arch = rnd.choice(ARCHES)
        wave = 64 if arch == "gfx942" else rnd.choice([32, 32, 64])
        block = rnd.choice([wave, wave, 2 * wave, 3 * wave // 2, 256])
        case = {"arch": arch, "wave": wave, "block": block, "grid": rnd.choice([1, 1, 2, 5]),
                "data_seed": rnd.getrandbits(32)}
        kind = rnd.random()
        if kind < 0.5:
            if kind < 0.2:    # pure noise: mostly decode errors at the first word
                words = [rnd.getrandbits(32) for _ in range(rnd.randrange(1, 48))]
            else:             # compiler dwords of this arch, shuffled, with a few replaced: deeper execution
                pool = text_words(arch)
                words = [rnd.choice(pool) if rnd.random() < 0.9 else rnd.getrandbits(32)
                         for _ in range(rnd.randrange(1, 48))]
            if rnd.random() < 0.7:
                words.append(0xBFB00000 if arch != "gfx942" else 0xBF810000)   # s_endpgm
            case.update(kind="random", code=b"".join(w.to_bytes(4, "little") for w in words).hex())
        else:
            name = rnd.choice(CODE_OBJECTS[arch])
            image, (lo, size), kernels = fixture(name)
            blob = bytearray(image)
            case.update(kind="flip", fixture=name, kernel=rnd.choice(kernels),
                        edits=mutate(rnd, blob, lo, lo + size))
        return case

    def execute(self, case: dict, rec: Recorder) -> None:
        from gputwin.abi.kernargs import LocalMemory
        from gputwin.emu.amd.dispatch import Dispatch, run_dispatch
        from gputwin.emu.amd.standalone import Arena, load_kernel
        rnd = random.Random(case["data_seed"])
        arena = Arena()
        data = arena.alloc(DATA_BYTES, rnd.randbytes(DATA_BYTES))
        grid, block = (case["grid"], 1, 1), (case["block"], 1, 1)
        arch = case["arch"]
        if case["kind"] == "random":
            kernarg = arena.alloc(256, b"".join(data.to_bytes(8, "little") for _ in range(32)))
            d = Dispatch(0x1000, code=bytes.fromhex(case["code"]), grid=grid, block=block,
                         wave64=case["wave"] == 64, user_sgprs=[kernarg & 0xFFFFFFFF, kernarg >> 32, 16, 0],
                         rsrc1=rnd.randrange(16), rsrc2=rnd.randrange(1 << 13) & ~0x3E | 4 << 1)
            rec.step("dispatch", run_dispatch, arena.mem, d, arch=arch, watchdog_s=WATCHDOG_S)
            return
        image, _, _ = fixture(case["fixture"])
        blob = bytearray(image)
        for off, byte in case["edits"]:
            blob[off] = byte
        kernel = rec.step("load", load_kernel, arena, bytes(blob), case["kernel"])
        if kernel is None:
            return
        args = []
        for a in kernel.info.explicit_args:
            if a.value_kind == "global_buffer":
                args.append(arena.alloc(DATA_BYTES, rnd.randbytes(DATA_BYTES)))
            elif a.value_kind == "dynamic_shared_pointer":
                args.append(LocalMemory(rnd.choice([0, 64, 1024])))
            else:
                args.append(int(rnd.choice([1, 2, 16, 64, 255])).to_bytes(8, "little")[:a.size].ljust(a.size, b"\0"))
        wave64 = not kernel.info.wave32
        lanes = 64 if wave64 else 32
        block = (max(lanes, case["block"] - case["block"] % lanes), 1, 1)
        rec.step("run", kernel, *args, grid=grid, block=block, watchdog_s=WATCHDOG_S)
        np.asarray(arena.mem.read(data, 16))   # the address space is still sound after the run
