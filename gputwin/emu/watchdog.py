"""The emulators' watchdog: when is emulated GPU work hung?

Two limits, either of which raises `GpuHang`:
- an instruction budget per wave (GPUTWIN_WATCHDOG_INSTS, default 2**22): a wave that executes that many
  instructions without ending is hung. It is deterministic (independent of machine load) and catches a
  runaway loop in seconds; a correct wave needing more would take minutes in the emulator anyway.
- a wall-clock limit (GPUTWIN_WATCHDOG_S, default 300 s) on everything one run covers: all batches and
  workgroups of a dispatch, and all packets of one `GPU.run` (a doorbell). It catches what the budget
  cannot (a huge grid of short waves, a write pointer far past the packets) and is generous, because a
  slow shared CI machine must not turn correct work into a hang.

A `scope()` makes one Watchdog current for a block (GPU.run opens one per doorbell), so every dispatch
inside shares its deadline instead of starting its own.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import time

from gputwin.errors import GpuHang

DEFAULT_S = 300.0
DEFAULT_WAVE_INSTS = 1 << 22
CHECK_EVERY = 1024       # steps between wall-clock reads inside one group's run

_current: contextvars.ContextVar["Watchdog | None"] = contextvars.ContextVar("gputwin_watchdog", default=None)


def _env(name: str, default: float, kind):
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return kind(default)
    try:
        value = kind(float(raw))
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number") from None
    if value <= 0:
        raise ValueError(f"{name}={raw!r} must be positive")
    return value


class Watchdog:
    """A wall-clock deadline and a per-wave instruction budget (see the module docstring)."""

    def __init__(self, seconds: float | None = None, wave_insts: int | None = None):
        self.seconds = float(seconds) if seconds is not None else _env("GPUTWIN_WATCHDOG_S", DEFAULT_S, float)
        self.wave_insts = int(wave_insts) if wave_insts is not None else \
            _env("GPUTWIN_WATCHDOG_INSTS", DEFAULT_WAVE_INSTS, int)
        self.start = time.monotonic()
        self.deadline = self.start + self.seconds

    def expired(self) -> bool:
        return time.monotonic() > self.deadline

    def hang(self, cause: str, progress: str) -> GpuHang:
        """The GpuHang for `cause` ("ran past ...") with what progress was seen, naming both knobs."""
        return GpuHang(f"watchdog: {cause}; {progress}; {time.monotonic() - self.start:.1f} s elapsed "
                       f"(limits: GPUTWIN_WATCHDOG_S={self.seconds:g} s wall clock, "
                       f"GPUTWIN_WATCHDOG_INSTS={self.wave_insts} instructions per wave)")

    def time_cause(self) -> str:
        return f"ran past the wall-clock limit of {self.seconds:g} s (GPUTWIN_WATCHDOG_S)"


def current() -> Watchdog | None:
    """The Watchdog of the innermost open scope, if any."""
    return _current.get()


@contextlib.contextmanager
def scope(watchdog: Watchdog | None = None):
    """Make a Watchdog current for the block (an enclosing scope's, if one is open: it keeps its deadline)."""
    wd = _current.get()
    if wd is not None:
        yield wd
        return
    wd = watchdog or Watchdog()
    token = _current.set(wd)
    try:
        yield wd
    finally:
        _current.reset(token)
