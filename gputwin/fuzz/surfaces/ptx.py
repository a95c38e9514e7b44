"""PTX from nvcc (fixtures/nv/<sm>/*.ptx) mutated, then loaded and run with gputwin.emu.nv.ptx.

Mutations act on the text a compiler wrote: lines deleted, duplicated or swapped, an integer literal
replaced by an edge value, a register renamed to another of the kernel's, a type suffix or an opcode
swapped for another, a character inserted or removed. A module that loads has each kernel (or a random one)
launched on a small grid with parameters laid out per its `params`: pointers into a mapped buffer, near
its end, to unmapped or kernel addresses, and random scalars. Allowed: PtxError at load or run, MemoryFault,
GpuFault (trap, unmodelled instruction), GpuHang from the watchdog.
"""
from __future__ import annotations

import random
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from gputwin.fuzz.surface import Recorder, Surface, register

ARCHES = ("sm_90", "sm_80")
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "nv"
BUF_VA, BUF_SIZE = 0x10000000, 1 << 16
TYPES = [".u32", ".s32", ".u64", ".s64", ".f32", ".f64", ".b32", ".b64", ".f16", ".pred", ".u8", ".b16", ".bf16"]
OPS = ["add", "sub", "mul", "mad", "div", "rem", "and", "or", "xor", "shl", "shr", "mov", "ld", "st", "cvt",
       "setp", "selp", "bra", "atom", "bar", "min", "max", "neg", "abs", "fma", "rcp", "sqrt", "ex2", "ret", "trap"]
INTS = ["0", "1", "-1", "2147483647", "-2147483648", "4294967295", "65536", "1024", "0x7fffffff",
        "18446744073709551615", "0f7F800000", "0d7FF8000000000000", "33", "64"]


@lru_cache(maxsize=None)
def fixture_names(arch: str) -> tuple[str, ...]:
    return tuple(sorted(p.name for p in (FIXTURES / arch).glob("*.ptx")))


@lru_cache(maxsize=None)
def fixture(arch: str, name: str) -> str:
    return (FIXTURES / arch / name).read_text()


def mutate(rnd: random.Random, text: str) -> tuple[str, list[str]]:
    """1-3 mutations of PTX text; returns the text and what was done (for the reproducer's reader)."""
    lines, done = text.split("\n"), []
    body = [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith(("//", ".version",
                                                                                             ".target", ".address"))]
    for _ in range(rnd.randrange(1, 4)):
        i = rnd.choice(body)
        ln, kind = lines[i], rnd.choice(["delete", "dup", "swap", "int", "reg", "type", "op", "char"])
        if kind == "delete":
            lines[i] = ""
        elif kind == "dup":
            lines[i] = ln + "\n" + ln
        elif kind == "swap":
            j = rnd.choice(body)
            lines[i], lines[j] = lines[j], ln
        elif kind == "int":
            nums = list(re.finditer(r"(?<![%\w])-?\d+\b", ln))
            if nums:
                m = rnd.choice(nums)
                lines[i] = ln[:m.start()] + rnd.choice(INTS) + ln[m.end():]
        elif kind == "reg":
            regs = list(re.finditer(r"%[a-z]+\d+", ln))
            if regs:
                m = rnd.choice(regs)
                prefix = re.match(r"%[a-z]+", m.group()).group()
                other = rnd.choice([prefix, "%r", "%rd", "%f", "%fd", "%p", "%rs"]) + str(rnd.choice([0, 1, 2, 7, 99, 4096]))
                lines[i] = ln[:m.start()] + other + ln[m.end():]
        elif kind == "type":
            ts = [t for t in TYPES if t in ln]
            if ts:
                lines[i] = ln.replace(rnd.choice(ts), rnd.choice(TYPES), 1)
        elif kind == "op":
            m = re.match(r"(\s*(?:@!?%\w+\s+)?)([a-z]+)", ln)
            if m:
                lines[i] = m.group(1) + rnd.choice(OPS) + ln[m.end():]
        else:
            p = rnd.randrange(len(ln) + 1)
            lines[i] = ln[:p] + rnd.choice("{}[]();,.%@!-+0x\"\\\0é") + ln[p:] if rnd.random() < 0.6 else ln[:p] + ln[p + 1:]
        done.append(f"{kind}@{i + 1}")
    return "\n".join(lines), done


def _params(rnd: random.Random, kernel) -> bytes:
    out = bytearray(kernel.params_size)
    for p in kernel.params:
        if p.size == 8:
            v = rnd.choice([BUF_VA, BUF_VA, BUF_VA + 4 * rnd.randrange(BUF_SIZE // 4), BUF_VA + BUF_SIZE - 4, 0,
                            0x1000, 1 << 47, rnd.getrandbits(64)])
        else:
            v = rnd.choice([0, 1, 7, 32, 64, 256, 1 << 20, rnd.getrandbits(8 * min(p.size, 8))])
        v &= (1 << (8 * p.size)) - 1
        out[p.offset:p.offset + p.size] = v.to_bytes(p.size, "little")[:p.size]
    return bytes(out)


@register
class Ptx(Surface):
    name = "ptx"
    doc = "nvcc fixture PTX mutated (lines, literals, registers, types, opcodes, bytes), loaded and run"

    def generate(self, rnd: random.Random) -> dict:
        arch = rnd.choice(ARCHES)
        return {"arch": arch, "fixture": rnd.choice(fixture_names(arch)), "seed": rnd.getrandbits(32),
                "mutate": rnd.random() < 0.9}

    def execute(self, case: dict, rec: Recorder) -> None:
        from gputwin.emu.memory import AddressSpace
        from gputwin.emu.nv.ptx import load_module, run_kernel
        rnd = random.Random(case["seed"])
        text = fixture(case["arch"], case["fixture"])
        if case["mutate"]:
            text, _ = mutate(rnd, text)
        mod = rec.step("load", load_module, text)
        if mod is None or not mod.kernels:
            return
        names = sorted(mod.kernels)
        for name in (names if rnd.random() < 0.3 else [rnd.choice(names)]):
            mem = AddressSpace()
            buf = mem.map(BUF_VA, BUF_SIZE)
            buf[:] = np.frombuffer(rnd.randbytes(BUF_SIZE), np.uint8)
            grid = (rnd.choice([1, 1, 2, 3]), rnd.choice([1, 1, 2]), 1)
            block = (rnd.choice([1, 32, 33, 64, 128]), rnd.choice([1, 1, 2]), 1)
            rec.step(f"run {name}", run_kernel, mem, mod, name, grid=grid, block=block,
                     params=_params(rnd, mod.kernels[name]), dynamic_shared_bytes=rnd.choice([0, 0, 256, 4096]),
                     arch=case["arch"])
