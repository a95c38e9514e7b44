"""The public device API with hostile arguments: alloc / free / copyin / copyout / load / launch / synchronize
on a MOCKAMD device of each arch, in random order, with arguments of wrong types, sizes, offsets and shapes
mixed among good ones.

Deliberate argument validation (a ValueError or TypeError raised by gputwin code) is an allowed outcome
here, as are gputwin errors. Two things are findings besides leaked exceptions: a call that fails its
argument validation but leaves the device lost (the next synchronize raises DeviceLost although nothing ran
wrong before), and a good copy that does not round-trip after earlier rejected calls.
"""
from __future__ import annotations

import random

import numpy as np

from gputwin.fuzz.surface import Recorder, Surface, register
from gputwin.fuzz.surfaces.codeobj import mock_device
from gputwin.fuzz.surfaces.isa import fixture
from gputwin.fuzz.surfaces.kfd import record_gpu_events

OPS = ["alloc", "alloc", "free", "copyin", "copyin", "copyout", "copyout", "load", "launch", "launch",
       "synchronize", "roundtrip"]
KERNELS = ["empty", "saxpy", "scalars", "reverse", "fault"]
SIZES = [1, 4, 4096, 65536, 0, -1, 1.5, "64", None, True, np.int64(256), np.uint8(7), 2 ** 64, 1 << 40]
OFFSETS = [0, 0, 4, -1, -4096, 1 << 62, 2.0, "1", None, np.int32(8)]
DIMS = [(1, 1, 1), 1, (2,), (1, 2), (1, 1, 1), 0, -1, (1, 1, 1, 1), (1.5, 1, 1), "1", None, (65537, 1, 1),
        (1, 65537, 1), (2 ** 32, 1, 1), [1, 1, 1], (np.int64(2), 1, 1), (True, 1, 1)]
BLOCKS = [(32, 1, 1), (64, 1, 1), (256, 1, 1), (1, 1, 1), (1025, 1, 1), (32, 32, 2), 0, (0, 1, 1), (32,),
          (2 ** 31, 1, 1), (33, 1, 1)]


def _data(rnd: random.Random):
    n = rnd.choice([0, 1, 4, 100, 4096, 70000])
    return rnd.choice([
        lambda: rnd.randbytes(n), lambda: bytearray(rnd.randbytes(n)), lambda: memoryview(rnd.randbytes(n)),
        lambda: np.arange(n, dtype=rnd.choice([np.uint8, np.float32, np.int64, np.float16])),
        lambda: np.arange(2 * n, dtype=np.uint32)[::2], lambda: np.zeros((3, n // 3 + 1), np.float64),
        lambda: [1, 2, 3], lambda: "text", lambda: None, lambda: 2.0, lambda: np.float32(1)])()


def _out(rnd: random.Random):
    n = rnd.choice([0, 1, 4, 100, 4096, 70000])
    return rnd.choice([
        lambda: bytearray(n), lambda: np.empty(n, np.uint8), lambda: np.empty(n // 4 + 1, np.float32),
        lambda: np.empty(2 * n + 2, np.uint16)[::2], lambda: bytes(n), lambda: memoryview(bytearray(n)),
        lambda: np.empty(0, np.uint8), lambda: None,
        lambda: [0] * 4, lambda: np.empty((2, 0), np.uint8)])()


def _arg(rnd: random.Random, bufs: list, foreign):
    return rnd.choice([lambda: rnd.choice(bufs) if bufs else None, lambda: foreign, lambda: 1.0, lambda: 3,
                       lambda: -1, lambda: 2 ** 70, lambda: "x", lambda: None, lambda: np.float32(2.5),
                       lambda: b"\0" * 4, lambda: np.zeros(2, np.float32), lambda: True])()


@register
class Api(Surface):
    name = "api"
    doc = "hostile arguments to the public device API (alloc/free/copyin/copyout/load/launch/synchronize)"
    validation = True

    def generate(self, rnd: random.Random) -> dict:
        return {"arch": rnd.choice(["gfx1100", "gfx1201", "gfx942"]),
                "steps": [[rnd.choice(OPS), rnd.getrandbits(32)] for _ in range(rnd.randrange(1, 25))]}

    def execute(self, case: dict, rec: Recorder) -> None:
        dev, mock = mock_device(case["arch"])
        other, _ = mock_device(case["arch"])
        state = {"bufs": [], "prgs": {}, "foreign": other.alloc(64)}
        try:
            for i, (op, seed) in enumerate(case["steps"]):
                # settle earlier work first, so a failure after a rejected call is that call's doing
                healthy = rec.step(f"{i}:settle", dev.synchronize) is None and dev._lost is None
                try:
                    self.step(dev, state, op, random.Random(seed), case["arch"])
                except Exception as e:   # noqa: BLE001 - classified below
                    rec.error(f"{i}:{op}", e)
                    if healthy and isinstance(e, (ValueError, TypeError)):
                        self._still_usable(dev, rec, f"{i}:{op}", e)
                else:
                    rec.ok()
            record_gpu_events(rec, mock)
        finally:
            dev.close()
            other.close()

    @staticmethod
    def _still_usable(dev, rec: Recorder, step: str, e: BaseException) -> None:
        """A rejected argument must leave the device as it was (issue 11 defect 10)."""
        try:
            dev.synchronize()
        except Exception as after:   # noqa: BLE001
            rec.leak(step, "lost-by-validation", f"{type(e).__name__}: {e} -- then synchronize raised "
                     f"{type(after).__name__}: {after}")

    def step(self, dev, state: dict, op: str, rnd: random.Random, arch: str) -> None:
        bufs = state["bufs"]
        pick = lambda: _arg(rnd, bufs, state["foreign"]) if rnd.random() < 0.2 else (  # noqa: E731
            rnd.choice(bufs) if bufs else state["foreign"])
        if op == "alloc":
            bufs.append(dev.alloc(rnd.choice(SIZES) if rnd.random() < 0.6 else rnd.choice([64, 4096, 70000])))
        elif op == "free":
            buf = pick()
            dev.free(buf)
            if buf in bufs and rnd.random() < 0.7:
                bufs.remove(buf)
        elif op == "copyin":
            dev.copyin(pick(), _data(rnd), *([rnd.choice(OFFSETS)] if rnd.random() < 0.5 else []))
        elif op == "copyout":
            dev.copyout(_out(rnd), pick(), *([rnd.choice(OFFSETS)] if rnd.random() < 0.5 else []))
        elif op == "load":
            name = rnd.choice(KERNELS) if rnd.random() < 0.85 else rnd.choice(["nope", "", None, 5])
            image = fixture(f"kernels_{arch}_v5.hsaco")[0]
            image = rnd.choice([image] * 6 + [image[:100], b"", "hsaco", None, bytearray(image), 7])
            state["prgs"][name] = dev.load(image, name)
        elif op == "launch" and state["prgs"]:
            name = rnd.choice(sorted(state["prgs"], key=str))
            prg = state["prgs"][name]
            n = len(prg.kernel.info.explicit_args)
            good = [pick() if a.value_kind == "global_buffer" else rnd.choice([1, 16, 1.5])
                    for a in prg.kernel.info.explicit_args]
            if name == "fault" and len(good) == 2:
                good[1] = rnd.choice([0, 1 << 40])
            args = good if rnd.random() < 0.7 else [_arg(rnd, bufs, state["foreign"]) for _ in
                                                    range(rnd.choice([n, n, n - 1, n + 1, 0]))]
            kw = {"grid": rnd.choice(DIMS) if rnd.random() < 0.4 else (rnd.choice([1, 2, 8]), 1, 1),
                  "block": rnd.choice(BLOCKS) if rnd.random() < 0.4 else (64, 1, 1)}
            if rnd.random() < 0.2:
                kw["lds"] = rnd.choice([0, 64, -1, 1 << 20, 1.5])
            prg(*args, **kw)
        elif op == "synchronize":
            dev.synchronize()
        elif op == "roundtrip" and dev._lost is None:
            buf = dev.alloc(4096)
            data = np.frombuffer(rnd.randbytes(4096), np.uint8)
            dev.copyin(buf, data)
            out = np.empty(4096, np.uint8)
            dev.copyout(out, buf)
            if not np.array_equal(out, data):
                raise AssertionError("a good copyin/copyout did not round-trip after the earlier calls")
