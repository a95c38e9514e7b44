"""Findings: what one checker saw at one instruction, as a one-line report, and the process's tally that
is summarised at exit (only when some dispatch ran with a checker on)."""
from __future__ import annotations

import atexit
import os
import sys
from collections import Counter
from dataclasses import dataclass


@dataclass
class Finding:
    checker: str                    # memcheck, initcheck, racecheck, synccheck
    what: str                       # "invalid global write of 4 bytes", "divergent barrier", ...
    pc: int | None = None           # absolute address of the instruction
    kernel_offset: int | None = None   # pc - the dispatch's entry
    instruction: str | None = None  # as LLVM prints it
    wave: int | None = None         # dispatch-global wave id
    lane: int | None = None
    workgroup: tuple[int, int, int] | None = None
    address: int | None = None      # memory findings: the first offending lane's address
    size: int | None = None         # bytes per lane
    write: bool | None = None
    detail: str = ""                # the nearest allocation, the other access of a race, ...
    lanes: int = 1                  # lanes of the instruction with the same finding
    count: int = 1                  # times the instruction was found doing it in the dispatch
    source_line: int | None = None  # PTX: the statement's line (reported instead of a pc offset)
    terms: tuple[str, str, str] = ("wave", "lane", "workgroup")   # NVIDIA: warp, thread, block

    @property
    def key(self) -> tuple:
        """Findings with the same key are one report (repeats are counted)."""
        return self.checker, self.what, self.pc if self.pc is not None else self.source_line

    def line(self) -> str:
        where = []
        if self.address is not None:
            where.append(f"at {self.address:#x}")
        wave, lane, group = self.terms
        if self.wave is not None:
            where.append(f"by {wave} {self.wave}" + (f" {lane} {self.lane}" if self.lane is not None else ""))
        if self.workgroup is not None:
            where.append(f"of {group} ({', '.join(map(str, self.workgroup))})")
        text = f"{self.checker}: {self.what}" + (f" {' '.join(where)}" if where else "")
        if self.instruction is not None or self.kernel_offset is not None:
            text += f", `{self.instruction or '?'}`"
            if self.source_line is not None:
                text += f" at PTX line {self.source_line}"
            elif self.kernel_offset is not None:
                text += f" at pc offset {self.kernel_offset:#x}"
        if self.detail:
            text += f": {self.detail}"
        extra = []
        if self.lanes > 1:
            extra.append(f"{self.lanes} lanes")
        if self.count > 1:
            extra.append(f"{self.count} times")
        return text + (f" ({', '.join(extra)})" if extra else "")


class Tally:
    """Findings and checked dispatches of this process, for the summary printed at exit."""

    def __init__(self):
        self.dispatches = 0
        self.failed = 0
        self.by_checker: Counter[str] = Counter()
        self._registered = False

    def dispatch(self) -> None:
        if not self._registered:
            self._registered = True
            atexit.register(self.print_summary)
        self.dispatches += 1

    def record(self, findings: list[Finding]) -> None:
        if findings:
            self.failed += 1
        for f in findings:
            self.by_checker[f.checker] += 1

    def counts(self) -> dict:
        """The tally as plain data (pytest-xdist workers send it to the controller)."""
        return {"dispatches": self.dispatches, "failed": self.failed, "by_checker": dict(self.by_checker)}

    def add(self, counts: dict) -> None:
        self.dispatches += counts["dispatches"]
        self.failed += counts["failed"]
        self.by_checker.update(counts["by_checker"])

    def summary(self) -> str:
        found = sum(self.by_checker.values())
        per = ", ".join(f"{n} {c}" for c, n in sorted(self.by_checker.items()))
        return (f"gputwin sanitizer: {self.dispatches} dispatches checked, {found} findings"
                + (f" ({per}) in {self.failed} dispatches" if found else ""))

    def print_summary(self) -> None:
        """At exit, while sanitizing is still on: a test that switched it on for itself (and restored the
        environment) leaves nothing to say about the process; pytest's own summary covers --gputwin-sanitize."""
        if os.environ.get("GPUTWIN_SANITIZE"):
            print(self.summary(), file=sys.stderr)


TALLY = Tally()
