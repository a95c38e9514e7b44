"""The runner's own check: cases that succeed, raise a gputwin error, leak a foreign exception, crash the
worker (SIGSEGV) or hang it. Not part of a default campaign; `--surface canary` shows what each outcome
looks like (tests/fuzz/test_runner.py relies on it)."""
from __future__ import annotations

import ctypes
import random
import time

from gputwin.errors import MemoryFault
from gputwin.fuzz.surface import Recorder, Surface, register

OUTCOMES = ("ok", "gputwin", "leak", "crash", "hang")


@register
class Canary(Surface):
    name = "canary"
    doc = "the runner's self-check: ok / gputwin error / leak / segfault / hang on purpose"
    default = False

    def generate(self, rnd: random.Random) -> dict:
        return {"do": rnd.choice(OUTCOMES)}

    def execute(self, case: dict, rec: Recorder) -> None:
        rec.step("canary", _ACTIONS[case["do"]])


def _gputwin():
    raise MemoryFault("canary fault", address=0x1234)


def _leak():
    return [][1]


def _crash():
    return ctypes.c_uint8.from_address(0).value   # SIGSEGV in the worker


_ACTIONS = {"ok": lambda: None, "gputwin": _gputwin, "leak": _leak, "crash": _crash, "hang": lambda: time.sleep(3600)}
