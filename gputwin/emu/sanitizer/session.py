"""One dispatch's sanitizer state: the checkers on, the findings so far and how they are reported.

With GPUTWIN_SANITIZE_REPORT=first (default) the first finding raises SanitizerError at once: the
dispatch stops there, as a fault would, and the error reaches the host at its next synchronize. With
`all` the dispatch runs to its end (each access doing what the hardware would) and `finish` raises one
SanitizerError listing every finding; repeats of a finding at one instruction are counted, not listed."""
from __future__ import annotations

from gputwin import sanitizer_config as config
from gputwin.emu.sanitizer.racecheck import LdsRaces
from gputwin.emu.sanitizer.report import TALLY, Finding
from gputwin.errors import GpuFault, SanitizerError

MAX_LISTED = 12      # findings spelled out in one error's message; the rest are counted


class Session:
    def __init__(self, checkers: frozenset[str], report_all: bool, entry: int,
                 grid: tuple[int, int, int] = (1, 1, 1), block_items: int = 1, group_segment: int | None = None,
                 kernel: str | None = None):
        self.checkers = checkers
        self.report_all = report_all
        self.entry = entry            # the dispatch's first instruction: pc offsets are relative to it
        self.grid = grid
        self.block_items = block_items   # work-items per workgroup (lanes past it never run)
        self.group_segment = group_segment   # LDS bytes the kernel declared; None: what it was given
        self.kernel = kernel          # its name, where the emulator knows it (PTX)
        self.findings: dict[tuple, Finding] = {}
        self.races = None             # racecheck's LdsRaces of the batch running (start_batch)
        TALLY.dispatch()

    @classmethod
    def from_env(cls, entry: int, grid=(1, 1, 1), block_items: int = 1,
                 group_segment: int | None = None, kernel: str | None = None) -> "Session | None":
        on = config.checkers()
        return cls(on, config.report_all(), entry, grid, block_items, group_segment, kernel) if on else None

    def start_batch(self, lds_bytes_total: int, workgroups: int) -> None:
        """A batch of workgroups starts with fresh LDS: racecheck starts a fresh shadow of it."""
        if self.on("racecheck"):
            self.races = LdsRaces(lds_bytes_total, workgroups)

    def on(self, checker: str) -> bool:
        return checker in self.checkers

    def workgroup(self, flat: int) -> tuple[int, int, int]:
        gx, gy = self.grid[0], self.grid[1]
        return flat % gx, (flat // gx) % gy, flat // (gx * gy)

    def report(self, f: Finding) -> None:
        if f.pc is not None and f.kernel_offset is None:
            f.kernel_offset = f.pc - self.entry
        seen = self.findings.get(f.key)
        if seen is not None:
            seen.count += 1
            return
        self.findings[f.key] = f
        if not self.report_all:
            raise self._error()

    def finish(self, fault: GpuFault | None = None) -> None:
        """End of the dispatch (or a fault ended it): raise what was found; else let `fault` through."""
        findings = list(self.findings.values())
        TALLY.record(findings)
        if findings and (fault is None or not isinstance(fault, SanitizerError)):
            raise self._error(fault) from fault

    def _error(self, fault: GpuFault | None = None) -> SanitizerError:
        found = list(self.findings.values())
        lines = [f.line() for f in found]
        head = f"{len(found)} sanitizer finding{'s' * (len(found) != 1)}"
        listed = lines[:MAX_LISTED] + ([f"... and {len(lines) - MAX_LISTED} more"] if len(lines) > MAX_LISTED else [])
        message = head + ":\n  " + "\n  ".join(listed) if len(found) > 1 or fault else lines[0]
        if fault is not None:
            message += f"\n  then the dispatch faulted: {fault}"
        first = found[0]
        return SanitizerError(message, findings=lines, address=first.address, write=first.write, pc=first.pc,
                              wave=first.wave, instruction=first.instruction, kernel_offset=first.kernel_offset,
                              kernel=self.kernel, line=first.source_line)
