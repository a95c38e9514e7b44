"""A progress line for long dispatches, shared by the AMD and NV emulators.

A dispatch still running AFTER_S (2 s) after it started shows one line on stderr, rewritten in place
at most every EVERY_S:
    gputwin: gfx1100 dispatch: 0/2048 waves done, 31.2M wave-instructions (11.9M/s), 2.6 s
and erased when the dispatch ends, so finished output is unchanged. Waves count as done when they
end (the AMD emulator counts them inside a batch, the NV one per batch); the instruction count moves
continuously. Shown only when stderr is a terminal, unless
GPUTWIN_PROGRESS says otherwise: 0 never, 1 always (then, when stderr is no terminal, plain lines
instead of a rewritten one, for logs). Reading the clock is the only cost when nothing is shown.
"""
from __future__ import annotations

import os
import sys
import time

AFTER_S = 2.0
EVERY_S = 0.5
ENV = "GPUTWIN_PROGRESS"


def _mode(stream) -> str:
    """'off', 'line' (a terminal: rewrite in place) or 'log' (forced, no terminal: plain lines)."""
    raw = os.environ.get(ENV, "").strip()
    if raw not in ("", "0", "1"):
        raise ValueError(f"{ENV}={raw!r}: use 1 (always show progress), 0 (never) or leave it unset (on a terminal)")
    try:
        tty = bool(stream.isatty())
    except (AttributeError, OSError, ValueError):     # None, or a closed stream
        tty = False
    if raw == "0" or (raw == "" and not tty):
        return "off"
    return "line" if tty else "log"


def _count(n: float) -> str:
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.1f}{unit}"
    return f"{n:.0f}"


class Progress:
    """Counts of one dispatch (`waves_done`, `wave_insts` of finished work, set by the emulator) and the
    line that reports them; `show(running)` adds the instructions of work still in flight."""

    def __init__(self, label: str = "dispatch", waves_total: int = 0, *, unit: str = "waves",
                 inst_unit: str = "wave-instructions", stream=None, after_s: float | None = None):
        self.label, self.unit, self.inst_unit = label, unit, inst_unit
        self.waves_total, self.waves_done, self.wave_insts = waves_total, 0, 0
        self.stream = stream if stream is not None else sys.stderr
        self.mode = _mode(self.stream)
        self.start = time.monotonic()
        self.next = self.start + (AFTER_S if after_s is None else after_s)
        self.shown = False

    def show(self, running: int = 0, ended: int = 0) -> None:
        """Write the line if it is due (cheap otherwise: one clock read). `running`: instructions of the
        work in flight, `ended`: its waves that have already ended."""
        if self.mode == "off":
            return
        now = time.monotonic()
        if now < self.next:
            return
        self.next = now + EVERY_S
        elapsed = now - self.start
        insts = self.wave_insts + running
        text = (f"gputwin: {self.label}: {self.waves_done + ended}/{self.waves_total} {self.unit} done, "
                f"{_count(insts)} {self.inst_unit} ({_count(insts / max(elapsed, 1e-9))}/s), {elapsed:.1f} s")
        self._write(f"\r\x1b[K{text}" if self.mode == "line" else text + "\n")
        self.shown = self.mode != "off"

    def _write(self, text: str) -> None:
        """A stderr that went away (closed, a pipe whose reader quit) ends the reporting, not the dispatch."""
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self.mode = "off"

    def close(self) -> None:
        """Erase the line (a terminal) once the dispatch is over."""
        if self.shown and self.mode == "line":
            self._write("\r\x1b[K")
        self.shown = False
