"""Which checkers run: GPUTWIN_SANITIZE and GPUTWIN_SANITIZE_REPORT, read when a device maps memory or a
dispatch starts (so a test may set them for one run; the pytest option does). Outside gputwin/emu/ because
the drivers read it too: gputwin's AMD driver announces its host waits to emulated queues only while
racecheck is on.

GPUTWIN_SANITIZE: comma-separated subset of CHECKERS, or `all`; empty or unset turns every checker off.
GPUTWIN_SANITIZE_REPORT: `first` (default: the first finding stops the dispatch) or `all` (the dispatch
runs to its end and every finding is reported together)."""
from __future__ import annotations

import os

CHECKERS = ("memcheck", "initcheck", "racecheck", "synccheck")
REPORTS = ("first", "all")


def checkers(environ=os.environ) -> frozenset[str]:
    """The checkers GPUTWIN_SANITIZE turns on; ValueError naming the valid ones for anything else."""
    raw = environ.get("GPUTWIN_SANITIZE", "").strip()
    if not raw:
        return frozenset()
    names = {n.strip().lower() for n in raw.split(",") if n.strip()}
    if "all" in names:
        names = (names - {"all"}) | set(CHECKERS)
    bad = sorted(names - set(CHECKERS))
    if bad:
        raise ValueError(f"GPUTWIN_SANITIZE={raw!r}: unknown checker(s) {', '.join(bad)}; "
                         f"valid: {', '.join(CHECKERS)} or all")
    return frozenset(names)


def report_all(environ=os.environ) -> bool:
    raw = environ.get("GPUTWIN_SANITIZE_REPORT", "first").strip().lower() or "first"
    if raw not in REPORTS:
        raise ValueError(f"GPUTWIN_SANITIZE_REPORT={raw!r}: valid: {', '.join(REPORTS)}")
    return raw == "all"
